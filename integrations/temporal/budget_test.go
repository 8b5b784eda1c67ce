package temporalretry

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
)

// TestHandleScheduleToCloseIsTotalTimeout: an activity's
// ScheduleToCloseTimeout is its total timeout, counted from its first
// ScheduledTime, and StartToCloseTimeout its timeout: with 60 s, 600 s and
// fixed 60 s delays, the table of budget.Budget.DecideAt (a retry ending
// at the deadline is made, one after it is not, past the deadline the
// policy's on_exhaustion whatever attempts remain).
func TestHandleScheduleToCloseIsTotalTimeout(t *testing.T) {
	pol := mustParse(t, `{"max_attempts":5,"initial_interval":"PT60S","backoff_strategy":"none","jitter":false,"on_exhaustion":"dead_letter"}`)
	fail := errors.New("boom")
	for _, tc := range []struct {
		name        string
		age         time.Duration
		s2c, start  time.Duration
		wantRetry   bool
		wantMessage string
	}{
		{"early", 100 * time.Second, 600 * time.Second, 60 * time.Second, true, ""},
		{"retry ends by the deadline", 470 * time.Second, 600 * time.Second, 60 * time.Second, true, ""},
		{"retry would end after it", 490 * time.Second, 600 * time.Second, 60 * time.Second, false, "temporalretry: dead_letter (no_time_left)"},
		{"past the deadline", 610 * time.Second, 600 * time.Second, 60 * time.Second, false, "temporalretry: dead_letter (total_timeout)"},
		{"no schedule-to-close: the policy alone", 100000 * time.Second, 0, 60 * time.Second, true, ""},
		// Only a schedule-to-close timeout (the SDK reports it as the
		// start-to-close too): the next attempt counts as 1 s.
		{"start-to-close equal to schedule-to-close", 530 * time.Second, 600 * time.Second, 600 * time.Second, true, ""},
		{"start-to-close unset, retry too late", 540500 * time.Millisecond, 600 * time.Second, 0, false, "temporalretry: dead_letter (no_time_left)"},
		// A fractional timeout rounds up (61 s), the total down (600 s):
		// 479.5 + 60 + 61 > 600 (with 60 s exactly, 599.5 <= 600: retried).
		{"retry just before the deadline", 479500 * time.Millisecond, 600 * time.Second, 60 * time.Second, true, ""},
		{"fractional timeouts", 479500 * time.Millisecond, 600900 * time.Millisecond, 60100 * time.Millisecond, false, "temporalretry: dead_letter (no_time_left)"},
	} {
		now := time.Now()
		i := New(pol)
		i.infoOf = func(context.Context) (activity.Info, bool) {
			return activity.Info{ActivityType: activity.Type{Name: "a"}, Attempt: 1, ActivityID: "a1",
				ScheduledTime: now.Add(-tc.age), ScheduleToCloseTimeout: tc.s2c, StartToCloseTimeout: tc.start}, true
		}
		app := appErr(t, i.Handle(context.Background(), fail))
		if tc.wantRetry {
			if app.NonRetryable() || app.NextRetryDelay() != 60*time.Second {
				t.Errorf("%s: %v (non-retryable %v, delay %v), want a retry after 60s", tc.name, app, app.NonRetryable(), app.NextRetryDelay())
			}
			continue
		}
		if !app.NonRetryable() || app.Message() != tc.wantMessage {
			t.Errorf("%s: %q (non-retryable %v), want %q, non-retryable", tc.name, app.Message(), app.NonRetryable(), tc.wantMessage)
		}
	}
}
