//go:build !race

package servertest_test

import (
	"strings"
	"testing"
	"time"

	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
)

// TestServerTotalTimeoutLeavesNoTimeForRetry: on a real Temporal server, an
// activity with attempts left fails now, non-retryable, because its next
// attempt could not finish before ScheduledTime + ScheduleToCloseTimeout
// (ojs-timeouts §9.1); the budget given with WithBudget becomes the
// activity's StartToClose and ScheduleToClose timeouts in the history.
//
// Policy: 5 attempts, fixed 1 s delays, no jitter, dead_letter; budget:
// timeout 1 s, total_timeout 3 s. Attempt 1 fails at ε: a retry would end by
// ε + 1 + 1 ≤ 3 s, retried; attempt 2 fails at 1 s + ε: a retry would end at
// 3 s + ε, so dead_letter (no_time_left) with 3 attempts left. With
// total_timeout 60 s the same call runs all 5 attempts.
func TestServerTotalTimeoutLeavesNoTimeForRetry(t *testing.T) {
	ts := newServer(t, timerShift)
	rk := temporalretry.New(nil)
	e := newEnv(t, ts, 1, rk)
	const pol = `{"max_attempts":5,"initial_interval":"PT1S","backoff_strategy":"none","jitter":false,"on_exhaustion":"dead_letter"}`
	res := e.run(t, "budget", []call{
		{Type: "scripted", Policy: pol, Script: []string{"fail"}, Budget: `{"timeout":1,"total_timeout":3}`},
		{Type: "scripted", Policy: pol, Script: []string{"fail"}, Budget: `{"timeout":1,"total_timeout":60}`},
	})
	for i, tc := range []struct {
		attempts int
		reason   string
		s2c      time.Duration
	}{
		{2, "no_time_left", 3 * time.Second},
		{5, "exhausted", 60 * time.Second},
	} {
		o := res[i].Outcome
		if !res[i].HasOut || o.Action != "dead_letter" || o.Reason != tc.reason || o.Attempt != tc.attempts {
			t.Errorf("call %d: workflow saw %+v (%v): %s, want dead_letter (%s) at attempt %d", i, o, res[i].HasOut, res[i].Err, tc.reason, tc.attempts)
		}
		if !strings.Contains(res[i].Err, "temporalretry: dead_letter ("+tc.reason+")") {
			t.Errorf("call %d: error %s", i, res[i].Err)
		}
		id := string(rune('0' + i))
		if n := len(e.rec.get("budget/" + id)); n != tc.attempts {
			t.Errorf("call %d: %d attempts ran, want %d", i, n, tc.attempts)
		}
		sched, _, _ := e.activityEvents(t, "budget", id)
		a := sched.GetActivityTaskScheduledEventAttributes()
		if got := a.GetScheduleToCloseTimeout().AsDuration(); got != tc.s2c {
			t.Errorf("call %d: ScheduleToCloseTimeout %v, want %v", i, got, tc.s2c)
		}
		if got := a.GetStartToCloseTimeout().AsDuration(); got != time.Second {
			t.Errorf("call %d: StartToCloseTimeout %v, want 1s", i, got)
		}
	}
}
