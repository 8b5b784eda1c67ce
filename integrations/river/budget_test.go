package riverretry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/budget"
	riverretry "github.com/retrykit/retrykit/integrations/river"
)

func mustBudget(t testing.TB, js string) *budget.Budget {
	t.Helper()
	b, err := budget.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTotalTimeoutLeavesNoTimeForRetry: a job with attempts left is ended
// after its second attempt because the next one could not finish before
// created_at + total_timeout (ojs-timeouts §9.1), in the state its
// on_exhaustion maps to; with a longer total timeout the same job uses all
// its attempts.
//
// Policy: 5 attempts, fixed 1 s delays, no jitter; budget: timeout 1 s.
// With total_timeout 3 s: attempt 1 fails at ε, a retry would end at
// ε + 1 + 1 ≤ 3 s, retried; attempt 2 fails at 1 s + ε, a retry would end at
// 3 s + ε > 3 s, ended (no_time_left). With total_timeout 60 s: 5 attempts.
func TestTotalTimeoutLeavesNoTimeForRetry(t *testing.T) {
	e := newEnv(t)
	rk := riverretry.New(nil)
	c := e.client(rk, scriptWorkers(nil), 5)
	pol := func(onExhaustion string) string {
		return `{"max_attempts":5,"initial_interval":"PT1S","backoff_strategy":"none","jitter":false,"on_exhaustion":"` + onExhaustion + `"}`
	}
	insert := func(onExhaustion, budgetJSON string) int64 {
		md, err := riverretry.WithBudget(riverretry.Metadata(mustPolicy(pol(onExhaustion))), mustBudget(t, budgetJSON))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Insert(context.Background(), ScriptArgs{Script: []string{"fail"}}, &river.InsertOpts{Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	discard := insert("discard", `{"timeout":1,"total_timeout":3}`)
	deadLetter := insert("dead_letter", `{"timeout":1,"total_timeout":3}`)
	roomy := insert("discard", `{"timeout":1,"total_timeout":60}`)
	e.waitFinal(30 * time.Second)

	for _, tc := range []struct {
		id      int64
		state   rivertype.JobState
		attempt int
		last    string
	}{
		{discard, rivertype.JobStateCancelled, 2, "JobCancelError: riverretry: discard (no_time_left): attempt 2 failed"},
		{deadLetter, rivertype.JobStateDiscarded, 2, "riverretry: dead_letter (no_time_left): attempt 2 failed"},
		{roomy, rivertype.JobStateCancelled, 5, "JobCancelError: riverretry: discard (exhausted): attempt 5 failed"},
	} {
		job := getJob(t, c, tc.id)
		if job.State != tc.state || job.Attempt != tc.attempt || len(job.Errors) != tc.attempt {
			t.Errorf("job %d: state %s attempt %d errors %d, want %s %d %d", tc.id, job.State, job.Attempt, len(job.Errors), tc.state, tc.attempt, tc.attempt)
			continue
		}
		if got := job.Errors[len(job.Errors)-1].Error; got != tc.last {
			t.Errorf("job %d: last error %q, want %q", tc.id, got, tc.last)
		}
	}
}

// TestBudgetTimeoutBoundsAttempt: the budget's timeout is the attempt's
// context deadline in the worker.
func TestBudgetTimeoutBoundsAttempt(t *testing.T) {
	rk := riverretry.New(nil)
	md, err := riverretry.WithBudget(nil, mustBudget(t, `{"timeout":7}`))
	if err != nil {
		t.Fatal(err)
	}
	job := &rivertype.JobRow{ID: 1, Attempt: 1, CreatedAt: time.Now(), Metadata: md}
	var left time.Duration
	_ = rk.Work(context.Background(), job, func(ctx context.Context) error {
		dl, ok := ctx.Deadline()
		if !ok {
			t.Fatal("no deadline in the attempt's context")
		}
		left = time.Until(dl)
		return nil
	})
	if left <= 6*time.Second || left > 7*time.Second {
		t.Errorf("deadline %v ahead, want about 7 s", left)
	}
}

// TestBudgetDecisionsInWork: the middleware's decisions with a budget, with
// a job created long enough ago for each rule; an invalid budget is refused
// at insert and, written around the hook, ignored with its error recorded.
func TestBudgetDecisionsInWork(t *testing.T) {
	rk := riverretry.New(mustPolicy(`{"max_attempts":5,"initial_interval":"PT60S","backoff_strategy":"none","jitter":false}`))
	md, err := riverretry.WithBudget(nil, mustBudget(t, `{"timeout":60,"total_timeout":600}`))
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("boom")
	for _, tc := range []struct {
		age  time.Duration
		want string // "" = retried
	}{
		{100 * time.Second, ""},
		{470 * time.Second, ""},
		{490 * time.Second, "riverretry: discard (no_time_left): boom"},
		{610 * time.Second, "riverretry: discard (total_timeout): boom"},
	} {
		job := &rivertype.JobRow{ID: 1, Attempt: 1, CreatedAt: time.Now().Add(-tc.age), Metadata: md}
		err := rk.Work(context.Background(), job, func(context.Context) error { return fail })
		var end *riverretry.EndError
		switch {
		case tc.want == "" && err != fail:
			t.Errorf("age %v: err = %v, want the worker's error (retry)", tc.age, err)
		case tc.want != "" && (!errors.As(err, &end) || end.Error() != tc.want):
			t.Errorf("age %v: err = %v, want %q", tc.age, err, tc.want)
		}
	}

	bad := []byte(`{"retrykit_timeouts":{"timeout":0}}`)
	err = rk.InsertBegin(context.Background(), &rivertype.JobInsertParams{Kind: "k", Metadata: bad})
	if !errors.Is(err, budget.ErrInvalidBudget) || !strings.Contains(err.Error(), "riverretry: insert k: metadata retrykit_timeouts: budget: timeout") {
		t.Errorf("insert with invalid budget: err = %v", err)
	}
	job := &rivertype.JobRow{ID: 1, Attempt: 1, CreatedAt: time.Now(), Metadata: bad}
	err = rk.Work(context.Background(), job, func(context.Context) error { return fail })
	if !errors.Is(err, fail) || !errors.Is(err, budget.ErrInvalidBudget) {
		t.Errorf("work with invalid budget: err = %v, want the worker's error joined with the budget's", err)
	}
}
