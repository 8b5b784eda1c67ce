package riverretry_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/errmatch"
	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// ExtArgs is a job whose worker follows Steps by run (not by attempt, which
// a snooze keeps): "ok", "snooze:D", "after:D:TYPE" (a requested delay D on
// an error of TYPE), "TYPE" (an error of TYPE). Past the end the last step
// repeats.
type ExtArgs struct {
	Steps []string `json:"steps"`
}

func (ExtArgs) Kind() string { return "ext" }

// extRun is one run of an ExtArgs job as the worker saw it.
type extRun struct {
	Attempt     int
	ScheduledAt time.Time
	EndedAt     time.Time
}

type extJournal struct {
	mu   sync.Mutex
	runs map[int64][]extRun
}

func (j *extJournal) add(job *rivertype.JobRow) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.runs == nil {
		j.runs = map[int64][]extRun{}
	}
	j.runs[job.ID] = append(j.runs[job.ID], extRun{Attempt: job.Attempt, ScheduledAt: job.ScheduledAt, EndedAt: time.Now()})
	return len(j.runs[job.ID]) - 1
}

func (j *extJournal) get(id int64) []extRun {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]extRun(nil), j.runs[id]...)
}

func extWorkers(j *extJournal) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[ExtArgs]) error {
		i := j.add(job.JobRow)
		s := job.Args.Steps[min(i, len(job.Args.Steps)-1)]
		kind, rest, _ := strings.Cut(s, ":")
		switch kind {
		case "ok":
			return nil
		case "snooze":
			d, _ := time.ParseDuration(rest)
			return errmatch.Snoozed(d)
		case "after":
			ds, typ, _ := strings.Cut(rest, ":")
			d, _ := time.ParseDuration(ds)
			return errmatch.WithRetryAfter(errmatch.Wrap(errors.New("rate limited"), typ, ""), d)
		}
		return errmatch.Wrap(errors.New("failed"), s, "")
	}))
	return w
}

// extJob runs one ExtArgs job under the policy to its end, on a real River
// client, and returns its final row and runs.
func extJob(t *testing.T, pol string, steps ...string) (*rivertype.JobRow, []extRun) {
	t.Helper()
	e := newEnv(t)
	rk, err := riverretry.Parse([]byte(pol))
	if err != nil {
		t.Fatal(err)
	}
	var j extJournal
	c := e.client(rk, extWorkers(&j), 2)
	res, err := c.Insert(context.Background(), ExtArgs{Steps: steps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, c, res.Job.ID, 30*time.Second)
	return getJob(t, c, res.Job.ID), j.get(res.Job.ID)
}

// A snooze runs the job again after the snooze's wait, bounded by
// max_snooze, with River's attempt unchanged; past max_snoozes a snooze
// spends the attempt like a failure with a requested delay.
func TestSnoozeKeepsTheAttempt(t *testing.T) {
	job, runs := extJob(t, `{"max_attempts": 3, "initial_interval": "PT0.05S", "jitter": false, "max_snoozes": 2, "max_snooze": "PT0.3S"}`,
		"snooze:200ms", "snooze:5s", "snooze:100ms", "ok")
	if job.State != rivertype.JobStateCompleted || len(runs) != 4 {
		t.Fatalf("state %s after %d runs, want completed after 4", job.State, len(runs))
	}
	// Runs 1-3 are attempt 1 (two snoozes); the third snooze is past
	// max_snoozes, so run 4 is attempt 2.
	for i, want := range []int{1, 1, 1, 2} {
		if runs[i].Attempt != want {
			t.Errorf("run %d: attempt %d, want %d", i+1, runs[i].Attempt, want)
		}
	}
	// The waits: 200ms; 5s bounded by max_snooze to 300ms; 100ms as a
	// requested delay (bounded by max_interval 5m).
	for i, want := range []time.Duration{200 * time.Millisecond, 300 * time.Millisecond, 100 * time.Millisecond} {
		if got := runs[i+1].ScheduledAt.Sub(runs[i].EndedAt); got < want-50*time.Millisecond || got > want+slack {
			t.Errorf("run %d scheduled %v after run %d ended, want %v", i+2, got, i+1, want)
		}
	}
	if !strings.Contains(string(job.Metadata), `"snoozes": 2`) && !strings.Contains(string(job.Metadata), `"snoozes":2`) {
		t.Errorf("metadata %s: River's snooze count is not 2", job.Metadata)
	}
}

// A requested delay reaches River's NextRetry, bounded by max_retry_after,
// and is not jittered; an error rule's own backoff and attempt limit apply
// to its error type, even past the max_attempts River was given at insert.
func TestRequestedDelayAndErrorRules(t *testing.T) {
	job, runs := extJob(t, `{"max_attempts": 2, "initial_interval": "PT0.05S", "jitter": true, "max_retry_after": "PT0.4S",
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 4, "initial_interval": "PT0.25S", "backoff_strategy": "none", "jitter": false}]}`,
		"after:2s:upstream.busy", "rate_limit.exceeded", "rate_limit.exceeded", "ok")
	if job.State != rivertype.JobStateCompleted || len(runs) != 4 || runs[3].Attempt != 4 {
		t.Fatalf("state %s after %d runs (attempts %v), want completed at attempt 4 (the rule's limit, past the policy's 2)", job.State, len(runs), runs)
	}
	for i, want := range []time.Duration{400 * time.Millisecond, 250 * time.Millisecond, 250 * time.Millisecond} {
		if got := runs[i+1].ScheduledAt.Sub(runs[i].EndedAt); got < want-50*time.Millisecond || got > want+slack {
			t.Errorf("retry %d scheduled %v after the failure, want %v", i+1, got, want)
		}
	}
}

// An error rule's attempt limit ends the job when its type keeps failing,
// past the max_attempts River was given at insert.
func TestErrorRuleLimitEndsTheJob(t *testing.T) {
	job, runs := extJob(t, `{"max_attempts": 2, "initial_interval": "PT0.05S", "jitter": false,
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 3, "initial_interval": "PT0.05S"}]}`, "rate_limit.exceeded")
	if job.State != rivertype.JobStateCancelled || len(runs) != 3 {
		t.Fatalf("state %s after %d runs, want cancelled (discard) after the rule's 3", job.State, len(runs))
	}
}
