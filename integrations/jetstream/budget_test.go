package jetstreamretry_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/budget"
	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// publishWithBudget publishes script s with policyJSON and the budget
// budgetJSON in its headers.
func publishWithBudget(t *testing.T, js jetstream.JetStream, s script, policyJSON, budgetJSON string) {
	t.Helper()
	b, err := budget.Parse([]byte(budgetJSON))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(s)
	msg := &nats.Msg{Subject: "work.a", Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstreamretry.HeaderPolicy, policyJSON)
	jetstreamretry.SetBudget(msg.Header, b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(s.ID)); err != nil {
		t.Fatalf("publish %s: %v", s.ID, err)
	}
}

// TestTotalTimeoutLeavesNoTimeForRetry: a message with attempts left is
// dead-lettered after its second delivery because the next one could not
// finish before created_at (the stream's timestamp) + total_timeout
// (ojs-timeouts §9.1); with a longer total timeout the same message uses
// all its attempts.
//
// Policy: 5 attempts, fixed 1 s delays, no jitter, dead_letter; budget:
// timeout 1 s. With total_timeout 3 s: delivery 1 fails at ε, a retry would
// end by ε + 1 + 1 ≤ 3 s: nakked for 1 s; delivery 2 fails at 1 s + ε, a
// retry would end at 3 s + ε: dead-lettered (no_time_left) with 3 attempts
// left. With total_timeout 60 s: 5 deliveries, then exhausted.
func TestTotalTimeoutLeavesNoTimeForRetry(t *testing.T) {
	nodes := startNodes(t, 1)
	e := newEnv(t, 1, nodes)
	const pol = `{"max_attempts":5,"initial_interval":"PT1S","backoff_strategy":"none","jitter":false,"on_exhaustion":"dead_letter"}`
	// The consumer's MaxDeliver comes from the plugin's default policy.
	rk, err := jetstreamretry.Parse([]byte(pol), jetstreamretry.WithDeadLetter(e.js, "dlq.work"))
	if err != nil {
		t.Fatal(err)
	}
	e.consume(rk, 5*time.Second, 1)
	publishWithBudget(t, e.js, script{ID: "tight", Steps: []string{"fail"}}, pol, `{"timeout":1,"total_timeout":3}`)
	publishWithBudget(t, e.js, script{ID: "roomy", Steps: []string{"fail"}}, pol, `{"timeout":1,"total_timeout":60}`)
	dl := e.deadLetters(2)
	e.settled(20 * time.Second)
	time.Sleep(500 * time.Millisecond) // a delivery after the end shows up here

	for _, tc := range []struct {
		id       string
		attempts int
		reason   string
	}{
		{"tight", 2, "no_time_left"},
		{"roomy", 5, "exhausted"},
	} {
		if n := len(e.j.get(tc.id)); n != tc.attempts {
			t.Errorf("%s: %d deliveries, want %d", tc.id, n, tc.attempts)
		}
		m := dl[tc.id]
		if m == nil {
			t.Errorf("%s: not dead-lettered (dead letters %v)", tc.id, keys(dl))
			continue
		}
		if got := m.Header.Get(jetstreamretry.HeaderReason); got != tc.reason {
			t.Errorf("%s: dead-letter reason %q, want %q", tc.id, got, tc.reason)
		}
		if got := m.Header.Get(jetstreamretry.HeaderAttempt); got != strconv.Itoa(tc.attempts) {
			t.Errorf("%s: dead-letter attempt %q, want %d", tc.id, got, tc.attempts)
		}
	}
}
