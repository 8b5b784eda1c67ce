package asynqretry_test

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/budget"
	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
)

func mustBudget(t testing.TB, js string) *budget.Budget {
	t.Helper()
	b, err := budget.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTotalTimeoutLeavesNoTimeForRetry: a task with retries left is
// archived after its second attempt because the next one could not finish
// before created_at + total_timeout (ojs-timeouts §9.1); with a longer
// total timeout the same task uses all its attempts.
//
// Policy: 5 attempts, fixed 1 s delays, no jitter; budget: timeout 1 s.
// With total_timeout 3 s: attempt 1 fails at ε, a retry would end by
// ε + 1 + 1 ≤ 3 s, retried (asynq runs it at a whole second, 1 to 2 s in);
// attempt 2 fails at 1 s or later, a retry would end after 3 s: archived
// (no_time_left) with 3 retries left. With total_timeout 60 s: 5 attempts.
func TestTotalTimeoutLeavesNoTimeForRetry(t *testing.T) {
	e := newEnv(t, 8)
	rk := asynqretry.New(nil)
	e.server(rk, 4)
	pol := func(onExhaustion string) string {
		return `{"max_attempts":5,"initial_interval":"PT1S","backoff_strategy":"none","jitter":false,"on_exhaustion":"` + onExhaustion + `"}`
	}
	enqueue := func(onExhaustion, budgetJSON string) string {
		return e.enqueue(asynqretry.NewTaskWithBudget("script", payload("fail"), mustPolicy(pol(onExhaustion)), mustBudget(t, budgetJSON), time.Now()))
	}
	discard := enqueue("discard", `{"timeout":1,"total_timeout":3}`)
	deadLetter := enqueue("dead_letter", `{"timeout":1,"total_timeout":3,"grace_period":0}`)
	roomy := enqueue("discard", `{"timeout":1,"total_timeout":60}`)
	e.waitDone(3, 30*time.Second)

	for _, tc := range []struct {
		id      string
		retried int
		lastErr string
		timeout time.Duration // asynq's own cut: timeout + grace_period, at least timeout + 1 s
	}{
		{discard, 1, "asynqretry: discard (no_time_left): attempt 2 failed", 31 * time.Second},
		{deadLetter, 1, "asynqretry: dead_letter (no_time_left): attempt 2 failed", 2 * time.Second},
		{roomy, 4, "asynqretry: discard (exhausted): attempt 5 failed", 31 * time.Second},
	} {
		ti := e.info(tc.id)
		if ti.State != asynq.TaskStateArchived || ti.Retried != tc.retried || ti.MaxRetry != 4 || ti.LastErr != tc.lastErr {
			t.Errorf("task %s: state %v retried %d max_retry %d last error %q, want archived %d 4 %q",
				tc.id, ti.State, ti.Retried, ti.MaxRetry, ti.LastErr, tc.retried, tc.lastErr)
		}
		if ti.Timeout != tc.timeout {
			t.Errorf("task %s: asynq timeout %v, want %v", tc.id, ti.Timeout, tc.timeout)
		}
		if n := len(e.runs.get(tc.id)); n != tc.retried+1 {
			t.Errorf("task %s: %d runs, want %d", tc.id, n, tc.retried+1)
		}
	}
}
