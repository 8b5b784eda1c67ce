package asynqretry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/budget"
)

func mustBudget(t testing.TB, js string) *budget.Budget {
	t.Helper()
	b, err := budget.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBudgetDecisionsInHandler: the middleware's decisions for a task with
// timeout 60 s, total_timeout 600 s and fixed 60 s delays, created long
// enough ago for each rule (the table of budget.Budget.DecideAt).
func TestBudgetDecisionsInHandler(t *testing.T) {
	p := New(mustParse(t, `{"max_attempts":5,"initial_interval":"PT60S","backoff_strategy":"none","jitter":false}`))
	b := mustBudget(t, `{"timeout":60,"total_timeout":600}`)
	fail := errors.New("boom")
	for _, tc := range []struct {
		age  time.Duration
		want string // "" = retried
	}{
		{100 * time.Second, ""},
		{470 * time.Second, ""},
		{490 * time.Second, "asynqretry: discard (no_time_left): boom"},
		{610 * time.Second, "asynqretry: discard (total_timeout): boom"},
	} {
		task := asynq.NewTaskWithHeaders("t", nil, BudgetHeaders(nil, b, time.Now().Add(-tc.age)))
		err := handle(p, task, 0, fail)
		var end *EndError
		switch {
		case tc.want == "" && err != fail:
			t.Errorf("age %v: err = %v, want the handler's error (retry)", tc.age, err)
		case tc.want != "" && (!errors.As(err, &end) || end.Error() != tc.want || !errors.Is(err, asynq.SkipRetry)):
			t.Errorf("age %v: err = %v, want %q matching asynq.SkipRetry", tc.age, err, tc.want)
		}
	}
	// Unreadable budget headers: the policy decides, the error is kept.
	for _, h := range []map[string]string{
		{BudgetHeaderKey: `{"timeout":0}`, CreatedAtHeaderKey: time.Now().Format(time.RFC3339Nano)},
		{BudgetHeaderKey: `{"timeout":1}`},
		{BudgetHeaderKey: `{"timeout":1}`, CreatedAtHeaderKey: "yesterday"},
	} {
		err := handle(p, asynq.NewTaskWithHeaders("t", nil, h), 0, fail)
		if !errors.Is(err, fail) || !strings.Contains(err.Error(), "asynqretry: task t header retrykit-") {
			t.Errorf("headers %v: err = %v, want the handler's error joined with the header's", h, err)
		}
	}
}

// TestBudgetBoundsAttemptContext: the attempt's context ends at the
// budget's timeout, or at created_at + total_timeout when that is sooner.
func TestBudgetBoundsAttemptContext(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := mustBudget(t, `{"timeout":60,"total_timeout":600}`)
	for _, tc := range []struct {
		created time.Time
		want    time.Time
	}{
		{now.Add(-100 * time.Second), now.Add(60 * time.Second)},
		{now.Add(-570 * time.Second), now.Add(30 * time.Second)},
	} {
		task := asynq.NewTaskWithHeaders("t", nil, BudgetHeaders(nil, b, tc.created))
		ctx, cancel := attemptContext(context.Background(), task, now)
		dl, ok := ctx.Deadline()
		cancel()
		if !ok || !dl.Equal(tc.want) {
			t.Errorf("created %v: deadline %v (%v), want %v", tc.created, dl, ok, tc.want)
		}
	}
	if _, ok := context.Background().Deadline(); ok {
		t.Fatal("background has a deadline")
	}
	ctx, cancel := attemptContext(context.Background(), asynq.NewTask("t", nil), now)
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a task without a budget got a deadline")
	}
}
