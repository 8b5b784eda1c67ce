//go:build !race

package servertest_test

import (
	"testing"
	"time"

	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
)

// On a real server: a requested delay is the NextRetryDelay, bounded by
// max_retry_after; an error rule's backoff and attempt limit apply to its
// type past the policy's max_attempts, the scheduled RetryPolicy allowing
// the rule's attempts.
func TestServerExtensions(t *testing.T) {
	ts := newServer(t, timerShift)
	rk := temporalretry.New(nil)
	e := newEnv(t, ts, 2, rk)
	pol := `{"max_attempts": 3, "initial_interval": "PT0.05S", "jitter": false, "max_retry_after": "PT0.3S",
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 5, "initial_interval": "PT0.2S", "backoff_strategy": "none", "jitter": false}]}`
	res := e.run(t, "extensions", []call{{Type: "scripted", Policy: pol,
		Script: []string{"after:10s:upstream.busy", "type:rate_limit.x", "type:rate_limit.x", "type:rate_limit.x", "ok"}}})
	if res[0].Value != "done at 5" || res[0].Err != "" {
		t.Fatalf("result %+v, want done at 5 (the rule's limit, past the policy's 3)", res[0])
	}
	sched, _, _ := e.activityEvents(t, "extensions", "0")
	if got := sched.GetActivityTaskScheduledEventAttributes().GetRetryPolicy().GetMaximumAttempts(); got != 5 {
		t.Errorf("scheduled MaximumAttempts %d, want the rule's 5", got)
	}
	want := []time.Duration{300 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}
	recs := e.rec.get("extensions/0")
	if len(recs) != len(want)+1 {
		t.Fatalf("%d attempts ran, want %d", len(recs), len(want)+1)
	}
	// On the server's own records: the delay it granted, never early, and
	// how late as a figure (judgeServerDelays).
	judgeServerDelays(t, "", recs, want)
}
