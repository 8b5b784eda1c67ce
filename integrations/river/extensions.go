package riverretry

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The retry extensions (docs/extensions.md) on River's own mechanisms:
//
//   - a snooze (errmatch.Snoozed) becomes river.JobSnooze, which River runs
//     again without spending the attempt (it gives the attempt back and
//     counts the snooze in the job's metadata under "snoozes", which is the
//     count max_snoozes is judged by);
//   - a requested delay (errmatch.WithRetryAfter) and an error rule's own
//     backoff reach River's NextRetry, which sees only the job row: the
//     middleware hands the failure to NextRetry through the plugin, keyed by
//     the job's id, and NextRetry decides it again with its jitter draw;
//   - an error rule that allows more attempts than the job's max_attempts
//     raises River's in-memory max_attempts for this failure, so that River
//     schedules the retry instead of discarding the job.

// maxPending bounds the failures held between the middleware and
// NextRetry. River calls NextRetry right after the middleware returns, in
// the same process, so an entry lives for microseconds; past the bound a
// failure is not held and NextRetry falls back to the policy's own delay
// for the attempt.
const maxPending = 1 << 16

// pendingFailures is what the middleware hands to NextRetry.
type pendingFailures struct {
	mu sync.Mutex
	m  map[int64]policy.Failure
}

func (p *pendingFailures) put(id int64, f policy.Failure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[int64]policy.Failure{}
	}
	if len(p.m) < maxPending {
		p.m[id] = f
	}
}

func (p *pendingFailures) take(id int64) (policy.Failure, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.m[id]
	delete(p.m, id)
	return f, ok
}

// snoozesOf is the snooze count River keeps in a job's metadata.
func snoozesOf(job *rivertype.JobRow) int {
	var md struct {
		Snoozes int `json:"snoozes"`
	}
	if len(job.Metadata) == 0 || json.Unmarshal(job.Metadata, &md) != nil || md.Snoozes < 0 {
		return 0
	}
	return md.Snoozes
}

// prevDelayOf is the delay the job waited before its current attempt, for
// decorrelated jitter: from the last recorded error to this attempt's
// start (River records no scheduled delay, so the fetch latency is
// included); 0 before the first retry.
func prevDelayOf(job *rivertype.JobRow) time.Duration {
	if len(job.Errors) == 0 || job.AttemptedAt == nil {
		return 0
	}
	return max(job.AttemptedAt.Sub(job.Errors[len(job.Errors)-1].At), 0)
}

// failureOf is the policy.Failure of the error a worker returned.
func failureOf(job *rivertype.JobRow, err error) policy.Failure {
	errType, code, _ := errmatch.Classify(err)
	return policy.Failure{Attempt: max(job.Attempt, 1), ErrorType: errType, Code: code,
		Request: errmatch.RequestOf(err), PrevDelay: prevDelayOf(job), Snoozes: snoozesOf(job)}
}

// needsHandOver says whether NextRetry must see the failure itself: a
// requested delay, an error rule in force, or decorrelated jitter reading
// the previous delay; otherwise the policy's delay for the attempt is the
// same without it.
func needsHandOver(pol *policy.Policy, f policy.Failure, d policy.Decision) bool {
	return d.Reason == policy.ReasonRetryAfter || pol.RuleFor(f.ErrorType) != 0 || pol.Spec().JitterMode != 0 && f.PrevDelay > 0
}
