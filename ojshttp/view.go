package ojshttp

import (
	"encoding/json"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/policy"
)

// view renders a job snapshot and its extra as the binding's Job object.
// Unknown envelope fields come first and never override a known one.
func (s *Server) view(j executor.Job, x *extra) map[string]any {
	if x == nil {
		x = &extra{}
	}
	v := make(map[string]any, 24)
	for k, raw := range x.unknown {
		v[k] = raw
	}
	pol := j.Policy
	if x.shown != nil {
		pol = x.shown
	}
	args := j.Args
	if len(args) == 0 {
		args = json.RawMessage("[]")
	}
	v["specversion"] = ojsVersion
	v["id"] = j.ID
	v["type"] = j.Type
	v["queue"] = j.Queue
	v["args"] = args
	v["state"] = j.State.String()
	v["attempt"] = s.attempt(j.Attempt) + s.plantedSkips(j.ID)
	v["max_attempts"] = maxAttempts(pol)
	v["priority"] = j.Priority
	if j.Snoozes > 0 {
		v["snoozes"] = j.Snoozes // the retry extensions' snooze count (docs/extensions.md §3.5)
	}
	if pj, err := pol.MarshalJSON(); err == nil {
		v["retry"] = json.RawMessage(pj)
	}
	if m := metaView(j, x.meta); len(m) > 0 {
		v["meta"] = m
	}
	if x.unique != nil {
		v["unique"] = x.unique.raw
	}
	if x.tags != nil {
		v["tags"] = x.tags
	}
	if j.RateLimit != nil {
		v["rate_limit"] = rateLimitView(j.RateLimit)
	}
	if x.timeoutMS != nil {
		v["timeout_ms"] = *x.timeoutMS
	}
	v["visibility_timeout_ms"] = j.VisibilityTimeout.Milliseconds()
	setTime(v, "created_at", j.CreatedAt)
	setTime(v, "enqueued_at", j.EnqueuedAt)
	setTime(v, "scheduled_at", j.ScheduledAt)
	started := j.StartedAt
	if started.IsZero() && j.Attempt > 0 {
		started = x.started
	}
	setTime(v, "started_at", started)
	switch j.State {
	case executor.Completed:
		setTime(v, "completed_at", j.FinishedAt)
		if len(x.result) > 0 {
			v["result"] = x.result
		}
	case executor.Discarded:
		s.replayView(j, v)
		// completed_at is when the job finished, as the official suite
		// reads it for discarded jobs too (RK-105).
		setTime(v, "completed_at", j.FinishedAt)
		setTime(v, "discarded_at", j.FinishedAt)
		if j.DeadLetter {
			v["dead_letter"] = true
		}
	case executor.Cancelled:
		setTime(v, "cancelled_at", j.FinishedAt)
	case executor.Active:
		setTime(v, "reserved_until", j.ReservedUntil)
	case executor.Retryable:
		next, _ := s.nextAttempt(j)
		setTime(v, "next_attempt_at", next)
		if j.NextRetryAt.Equal(lastInstant) {
			// The policy's delay ends past the executor's last instant:
			// the retry is due then, and the answer says so (RK-166).
			v["next_attempt_at_capped"] = true
		}
	}
	if d, ok := s.retryDelay(j); ok {
		v["retry_delay_ms"] = d.Milliseconds()
	}
	if n := len(j.Errors); n > 0 {
		errs := make([]map[string]any, n)
		for i, e := range j.Errors {
			errs[i] = errorView(e, x.sent)
		}
		v["errors"] = errs
		if j.State != executor.Completed {
			v["error"] = errs[n-1]
		}
	}
	expiryView(v, j)
	return v
}

// lastInstant is the latest time the executor represents (int64 Unix
// nanoseconds, April 2262).
var lastInstant = time.Unix(0, 1<<63-1).UTC()

func errorView(e executor.ErrorEntry, sent []sentCode) map[string]any {
	m := map[string]any{
		"attempt":     e.Attempt,
		"type":        e.Type,
		"code":        wireCode(e, sent),
		"message":     e.Message,
		"occurred_at": stamp(e.Time),
	}
	if len(e.Details) > 0 {
		m["details"] = e.Details
	}
	timeoutErrorFields(e, m)
	return m
}

func setTime(v map[string]any, k string, t time.Time) {
	if !t.IsZero() {
		v[k] = stamp(t)
	}
}

// maxAttempts is the policy's max_attempts as the client gave it.
func maxAttempts(p *policy.Policy) int { return p.Spec().MaxAttempts }

// attempt is the attempt shown on the wire (planted fault
// AttemptOffByOne shows it one lower).
func (s *Server) attempt(n int) int {
	if s.faults().Has(ojsfault.AttemptOffByOne) && n > 0 {
		return n - 1
	}
	return n
}

// nextAttempt returns the time a retryable job becomes available as the
// server announces it, and the delay from the failure that made it
// retryable. Planted fault EarlyRetry announces twice the delay the job
// really waits (a delay of its halved policy; one a retry extension asked
// for is announced as it runs).
func (s *Server) nextAttempt(j executor.Job) (time.Time, time.Duration) {
	if j.State == executor.Retryable && j.Snoozed {
		return j.NextRetryAt, 0 // a snooze's end, not a backoff after an error
	}
	if j.State != executor.Retryable || len(j.Errors) == 0 {
		return time.Time{}, 0
	}
	failed := j.Errors[len(j.Errors)-1].Time
	d := s.plantAnnounced(j, j.NextRetryAt.Sub(failed))
	return failed.Add(d), d
}

// retryDelay returns the backoff delay that preceded or will precede the
// job's current availability: while retryable the wait that runs, and
// after a retry (available or active again) the wait that ran.
func (s *Server) retryDelay(j executor.Job) (time.Duration, bool) {
	n := len(j.Errors)
	if n == 0 {
		return 0, false
	}
	last := j.Errors[n-1]
	switch j.State {
	case executor.Retryable:
		if j.Snoozed {
			return 0, false
		}
		_, d := s.nextAttempt(j)
		return d, true
	case executor.Available:
		if last.Attempt != j.Attempt {
			return 0, false
		}
	case executor.Active:
		if last.Attempt != j.Attempt-1 {
			return 0, false
		}
	default:
		return 0, false
	}
	if j.EnqueuedAt.Before(last.Time) {
		return 0, false
	}
	return s.plantAnnounced(j, j.EnqueuedAt.Sub(last.Time)), true
}
