package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/retrybudget"
)

// enqueueRetry enqueues job id under the retry policy text and fetches it.
func enqueueAndFetch(t *testing.T, e *executor.Executor, id, retry string) executor.Job {
	t.Helper()
	if _, err := e.Enqueue(executor.JobSpec{ID: id, Type: "t", Retry: json.RawMessage(retry)}); err != nil {
		t.Fatal(err)
	}
	j, ok := e.Fetch()
	if !ok || j.ID != id {
		t.Fatalf("fetch: %+v %v", j, ok)
	}
	return j
}

// refetch waits d on the clock and fetches the job again.
func refetch(t *testing.T, e *executor.Executor, clk *executor.FakeClock, id string, d time.Duration) executor.Job {
	t.Helper()
	if d > 0 {
		clk.Advance(d - time.Nanosecond)
		if j, ok := e.Fetch(); ok {
			t.Fatalf("job %s fetched 1ns before its delay of %v ended", j.ID, d)
		}
		clk.Advance(time.Nanosecond)
	}
	j, ok := e.Fetch()
	if !ok || j.ID != id {
		t.Fatalf("refetch after %v: %+v %v", d, j, ok)
	}
	return j
}

func snooze(d time.Duration) errmatch.Request {
	return errmatch.Request{Kind: errmatch.Snooze, Delay: d}
}

// A snooze waits its delay, gives the attempt back and records no error;
// past max_snoozes a snooze spends the attempt (docs/extensions.md §3.5).
func TestSnoozedJobKeepsItsAttempt(t *testing.T) {
	e, clk := budgetExecutor(t)
	j := enqueueAndFetch(t, e, "a", `{"max_attempts": 3, "max_snoozes": 2, "max_snooze": "PT1M", "jitter": false}`)
	g, err := e.Fail("a", j.Delivery, executor.Failure{Request: snooze(30 * time.Second)})
	if err != nil || g.State != executor.Retryable || g.Attempt != 0 || len(g.Errors) != 0 || g.Snoozes != 1 {
		t.Fatalf("after a snooze: %s attempt %d errors %d snoozes %d, %v; want retryable, attempt 0, no error, 1 snooze", g.State, g.Attempt, len(g.Errors), g.Snoozes, err)
	}
	j = refetch(t, e, clk, "a", 30*time.Second)
	if j.Attempt != 1 {
		t.Fatalf("the snoozed attempt runs again as attempt %d, want 1", j.Attempt)
	}
	g, _ = e.Fail("a", j.Delivery, executor.Failure{Request: snooze(time.Hour)}) // bounded by max_snooze
	j = refetch(t, e, clk, "a", time.Minute)
	if j.Attempt != 1 || g.Snoozes != 2 {
		t.Fatalf("second snooze: attempt %d, snoozes %d", j.Attempt, g.Snoozes)
	}
	// The third snooze is past max_snoozes: a requested delay bounded by
	// max_interval (PT5M), spending attempt 1.
	g, _ = e.Fail("a", j.Delivery, executor.Failure{Type: "x.busy", Request: snooze(time.Hour)})
	if g.Attempt != 1 || len(g.Errors) != 1 || g.Snoozes != 2 || !g.NextRetryAt.Equal(clk.Now().Add(5*time.Minute)) {
		t.Fatalf("third snooze: attempt %d errors %d snoozes %d next %v", g.Attempt, len(g.Errors), g.Snoozes, g.NextRetryAt)
	}
	j = refetch(t, e, clk, "a", 5*time.Minute)
	if j.Attempt != 2 {
		t.Fatalf("attempt %d, want 2", j.Attempt)
	}
}

// Per-error-type rules: each type gets its rule's delay and attempt limit.
func TestErrorRulesOnTheClock(t *testing.T) {
	e, clk := budgetExecutor(t)
	j := enqueueAndFetch(t, e, "a", `{"max_attempts": 2, "jitter": false,
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 4, "initial_interval": "PT1M", "backoff_strategy": "none"}]}`)
	for n := 1; n <= 3; n++ {
		g, _ := e.Fail("a", j.Delivery, executor.Failure{Type: "rate_limit.exceeded"})
		if g.State != executor.Retryable {
			t.Fatalf("rate limit at attempt %d: %s, want retryable (the rule's 4 attempts)", n, g.State)
		}
		j = refetch(t, e, clk, "a", time.Minute)
	}
	g, _ := e.Fail("a", j.Delivery, executor.Failure{Type: "rate_limit.exceeded"})
	if g.State != executor.Discarded || g.Attempt != 4 {
		t.Fatalf("attempt 4: %s, want discarded", g.State)
	}
	// Another type under the policy's own 2 attempts and PT1S backoff.
	j = enqueueAndFetch(t, e, "b", `{"max_attempts": 2, "jitter": false,
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 4, "initial_interval": "PT1M"}]}`)
	e.Fail("b", j.Delivery, executor.Failure{Type: "db.down"}) //nolint:errcheck
	j = refetch(t, e, clk, "b", time.Second)
	if g, _ := e.Fail("b", j.Delivery, executor.Failure{Type: "db.down"}); g.State != executor.Discarded {
		t.Fatalf("db.down at attempt 2 of 2: %s", g.State)
	}
}

// A requested delay replaces the backoff, bounded by max_retry_after.
func TestRetryAfterOnTheClock(t *testing.T) {
	e, clk := budgetExecutor(t)
	j := enqueueAndFetch(t, e, "a", `{"max_attempts": 5, "max_retry_after": "PT2M"}`)
	ra := errmatch.Request{Kind: errmatch.RetryAfter, Delay: 45 * time.Second}
	e.Fail("a", j.Delivery, executor.Failure{Type: "http.503", Request: ra}) //nolint:errcheck
	j = refetch(t, e, clk, "a", 45*time.Second)
	ra.Delay = time.Hour
	e.Fail("a", j.Delivery, executor.Failure{Type: "http.503", Request: ra}) //nolint:errcheck
	refetch(t, e, clk, "a", 2*time.Minute)
}

// Decorrelated jitter grows from the delay the job last waited: with the
// draw 0.5 each delay is (I + 3p)/2: 2s, 3.5s, 5.75s.
func TestDecorrelatedJitterFollowsThePreviousDelay(t *testing.T) {
	e, clk := budgetExecutor(t) // draws 0.5
	j := enqueueAndFetch(t, e, "a", `{"max_attempts": 9, "jitter_mode": "decorrelated"}`)
	for _, d := range []time.Duration{2 * time.Second, 3500 * time.Millisecond, 5750 * time.Millisecond} {
		e.Fail("a", j.Delivery, executor.Failure{Type: "x"}) //nolint:errcheck
		j = refetch(t, e, clk, "a", d)
	}
}

func TestFailRefusesANegativeRequest(t *testing.T) {
	e, _ := budgetExecutor(t)
	j := enqueueAndFetch(t, e, "a", `{}`)
	_, err := e.Fail("a", j.Delivery, executor.Failure{Request: snooze(-time.Second)})
	if !errors.Is(err, executor.ErrInvalidJob) {
		t.Fatalf("negative snooze: %v, want ErrInvalidJob", err)
	}
	if g, _ := e.Get("a"); g.State != executor.Active {
		t.Fatalf("state %s after a refused Fail, want active", g.State)
	}
}

// A manual retry of a dead letter starts its snooze count afresh.
func TestManualRetryResetsSnoozes(t *testing.T) {
	e, clk := budgetExecutor(t)
	j := enqueueAndFetch(t, e, "a", `{"max_attempts": 1, "max_snoozes": 1, "on_exhaustion": "dead_letter"}`)
	e.Fail("a", j.Delivery, executor.Failure{Request: snooze(time.Second)}) //nolint:errcheck
	j = refetch(t, e, clk, "a", time.Second)
	if g, _ := e.Fail("a", j.Delivery, executor.Failure{Type: "x"}); !g.DeadLetter || g.Snoozes != 1 {
		t.Fatalf("after the failure: %+v", g)
	}
	if g, err := e.Retry("a", nil); err != nil || g.Snoozes != 0 {
		t.Fatalf("manual retry: snoozes %d, %v", g.Snoozes, err)
	}
}

// In worker mode a handler snoozes by returning errmatch.Snoozed: the job
// waits without an error entry and its attempt is given back.
func TestWorkerHandlerSnoozes(t *testing.T) {
	e, _ := budgetExecutor(t)
	w := executor.NewWorker(e)
	ran := make(chan struct{}, 1)
	w.Handle("t", func(context.Context, executor.Job) error {
		ran <- struct{}{}
		return errmatch.Snoozed(time.Minute)
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background()) //nolint:errcheck
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", Retry: json.RawMessage(`{"max_snoozes": 3}`)})
	<-ran
	g := waitState(t, e, "a", executor.Retryable)
	if g.Attempt != 0 || g.Snoozes != 1 || len(g.Errors) != 0 {
		t.Fatalf("after the handler snoozed: attempt %d snoozes %d errors %d", g.Attempt, g.Snoozes, len(g.Errors))
	}
}

// A snooze is bounded by the total timeout too (ojs-timeouts §9.1): one
// whose wait plus the next attempt cannot end before created_at +
// total_timeout ends the job now, recorded as a failure of the attempt.
func TestSnoozeCannotOutliveTheTotalTimeout(t *testing.T) {
	e, clk := budgetExecutor(t)
	if _, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t", Retry: json.RawMessage(`{"max_snoozes": 5, "max_snooze": "PT1H"}`),
		Budget: mustBudget(t, `{"timeout": 60, "total_timeout": 600, "heartbeat_timeout": 600}`)}); err != nil {
		t.Fatal(err)
	}
	j, _ := e.Fetch()
	clk.Advance(10 * time.Second)
	g, _ := e.Fail("a", j.Delivery, executor.Failure{Request: snooze(530 * time.Second)}) // 10 + 530 + 60 = 600: fits
	if g.State != executor.Retryable || g.Snoozes != 1 {
		t.Fatalf("a snooze that fits: %s snoozes %d", g.State, g.Snoozes)
	}
	j = refetch(t, e, clk, "a", 530*time.Second)
	clk.Advance(time.Second)
	g, _ = e.Fail("a", j.Delivery, executor.Failure{Type: "x", Request: snooze(time.Second)}) // 541 + 1 + 60 > 600
	if g.State != executor.Discarded || g.Attempt != 1 || len(g.Errors) != 1 {
		t.Fatalf("a snooze past the deadline: %s attempt %d errors %d, want discarded with the attempt's entry", g.State, g.Attempt, len(g.Errors))
	}
}

// A retry budget (docs/extensions.md §3.6) refuses a retry when it is
// spent: the job takes its on_exhaustion action with attempts left; a
// success puts a token back, and a snooze draws nothing.
func TestRetryBudgetRefusesRetriesOnceSpent(t *testing.T) {
	b, err := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1, CreditPerSuccess: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, clk := budgetExecutor(t, executor.WithRetryBudget(b))
	pol := `{"max_attempts": 5, "jitter": false, "max_snoozes": 3, "on_exhaustion": "dead_letter"}`
	a := enqueueAndFetch(t, e, "a", pol)
	c := enqueueAndFetch(t, e, "b", pol)
	if g, _ := e.Fail("a", a.Delivery, executor.Failure{Type: "x"}); g.State != executor.Retryable {
		t.Fatalf("the first retry, paid by the bucket's token: %s", g.State)
	}
	if g, _ := e.Fail("b", c.Delivery, executor.Failure{Request: snooze(time.Second)}); g.State != executor.Retryable || g.Snoozes != 1 {
		t.Fatalf("a snooze with the bucket empty: %s, snoozes %d (a snooze draws nothing)", g.State, g.Snoozes)
	}
	clk.Advance(time.Second)
	a, _ = e.Fetch()
	c, _ = e.Fetch()
	if g, _ := e.Fail(c.ID, c.Delivery, executor.Failure{Type: "x"}); g.State != executor.Discarded || !g.DeadLetter || g.Attempt != 1 || len(g.Errors) != 1 {
		t.Fatalf("a retry the empty bucket refuses: %s dead %v attempt %d errors %d, want dead-lettered at attempt 1", g.State, g.DeadLetter, g.Attempt, len(g.Errors))
	}
	if _, err := e.Ack(a.ID, a.Delivery); err != nil {
		t.Fatal(err)
	}
	d := enqueueAndFetch(t, e, "d", pol)
	if g, _ := e.Fail("d", d.Delivery, executor.Failure{Type: "x"}); g.State != executor.Retryable {
		t.Fatalf("after a success refilled the bucket: %s, want retryable", g.State)
	}
}
