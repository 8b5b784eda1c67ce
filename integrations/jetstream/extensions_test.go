package jetstreamretry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/errmatch"
	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// extRun is one delivery of a message as Process settled it.
type extRun struct {
	attempt    int // Outcome.Attempt: deliveries less the snoozes
	start, end time.Time
}

// extConsume runs one Consume loop whose handler follows each message's
// steps by delivery ("ok", "snooze:D", "after:D:TYPE", or "TYPE"),
// settling through Process so that each Outcome is recorded.
func extConsume(t *testing.T, e *env, rk *jetstreamretry.Plugin) func(id string) []extRun {
	var mu sync.Mutex
	runs := map[string][]extRun{}
	cfg := rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "ext", AckWait: 5 * time.Second})
	var cons jetstream.Consumer
	waitFor(t, 30*time.Second, "consumer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		cons, err = e.work.CreateOrUpdateConsumer(ctx, cfg)
		return err == nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := func(ctx context.Context, msg jetstream.Msg) error {
		var s script
		_ = json.Unmarshal(msg.Data(), &s)
		mu.Lock()
		st := s.Steps[min(len(runs[s.ID]), len(s.Steps)-1)]
		mu.Unlock()
		kind, rest, _ := strings.Cut(st, ":")
		switch kind {
		case "ok":
			return nil
		case "snooze":
			d, _ := time.ParseDuration(rest)
			return errmatch.Snoozed(d)
		case "after":
			ds, typ, _ := strings.Cut(rest, ":")
			d, _ := time.ParseDuration(ds)
			return errmatch.WithRetryAfter(errmatch.Wrap(errors.New("busy"), typ, ""), d)
		}
		return errmatch.Wrap(errors.New("failed"), st, "")
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) {
		start := time.Now()
		out, _ := rk.Process(ctx, msg, h)
		var s script
		_ = json.Unmarshal(msg.Data(), &s)
		mu.Lock()
		runs[s.ID] = append(runs[s.ID], extRun{attempt: out.Attempt, start: start, end: time.Now()})
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return func(id string) []extRun {
		mu.Lock()
		defer mu.Unlock()
		return append([]extRun(nil), runs[id]...)
	}
}

// A snooze is a nak after min(snooze, max_snooze) that spends no attempt;
// past max_snoozes it is a requested delay and spends one. A requested
// delay is the nak's delay, bounded by max_retry_after; an error rule's
// backoff and attempt limit apply past the policy's max_attempts, the
// consumer's MaxDeliver covering them.
func TestSnoozeRequestedDelayAndRulesOnNak(t *testing.T) {
	nodes := startNodes(t, 1)
	e := newEnv(t, 1, nodes)
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts": 3, "initial_interval": "PT0.1S", "jitter": false,
		"max_snoozes": 1, "max_snooze": "PT0.3S", "max_retry_after": "PT0.5S",
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 5, "initial_interval": "PT0.2S", "backoff_strategy": "none", "jitter": false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if md := rk.ConsumerConfig(jetstream.ConsumerConfig{}).MaxDeliver; md != 7 {
		t.Fatalf("MaxDeliver %d, want 5 attempts + 1 + 1 snooze", md)
	}
	get := extConsume(t, e, rk)
	publish(t, e.js, "work.a", script{ID: "snoozy", Steps: []string{"snooze:1s", "snooze:100ms", "ok"}}, "")
	publish(t, e.js, "work.a", script{ID: "limited", Steps: []string{"after:5s:upstream.busy", "rate_limit.x", "rate_limit.x", "rate_limit.x", "ok"}}, "")
	waitFor(t, 30*time.Second, "both messages done", func() bool { return len(get("snoozy")) == 3 && len(get("limited")) == 5 })
	const late = 400 * time.Millisecond
	for _, c := range []struct {
		id       string
		attempts []int
		gaps     []time.Duration
	}{
		// snoozed 1s bounded to 300ms, attempt kept; the second snooze is
		// past max_snoozes: a requested delay of 100ms, attempt spent.
		{"snoozy", []int{1, 1, 2}, []time.Duration{300 * time.Millisecond, 100 * time.Millisecond}},
		// 5s requested, bounded to 500ms; then the rule's 200ms, to attempt
		// 5, past the policy's 3.
		{"limited", []int{1, 2, 3, 4, 5}, []time.Duration{500 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}},
	} {
		runs := get(c.id)
		for i, r := range runs {
			if r.attempt != c.attempts[i] {
				t.Errorf("%s delivery %d: attempt %d, want %d", c.id, i+1, r.attempt, c.attempts[i])
			}
		}
		for k, want := range c.gaps {
			if gap := runs[k+1].start.Sub(runs[k].end); gap < want-50*time.Millisecond || gap > want+late {
				t.Errorf("%s: delivery %d came %v after delivery %d, want %v", c.id, k+2, gap, k+1, want)
			}
		}
	}
}
