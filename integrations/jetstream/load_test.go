package jetstreamretry_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// loadMessages is the number of messages of the load tests;
// RETRYKIT_JS_LOAD overrides it.
func loadMessages(def int) int {
	if n, err := strconv.Atoi(os.Getenv("RETRYKIT_JS_LOAD")); err == nil && n > 0 {
		return n
	}
	return def
}

// outcomes records how each message ended, from the plugin's own outcomes,
// and every handler run after a message's end.
type outcomes struct {
	mu    sync.Mutex
	ended map[string]string // id -> "done" or "term"
	after []string          // runs of messages already ended
	dup   []string          // messages ended twice
}

// handler wraps Process so that every outcome is recorded.
func (o *outcomes) handler(t testing.TB, ctx context.Context, rk *jetstreamretry.Plugin, h jetstreamretry.HandlerFunc) jetstream.MessageHandler {
	return func(msg jetstream.Msg) {
		var s script
		_ = json.Unmarshal(msg.Data(), &s)
		ran := false
		out, _ := rk.Process(ctx, msg, func(ctx context.Context, m jetstream.Msg) error {
			ran = true
			o.mu.Lock()
			if _, ok := o.ended[s.ID]; ok {
				o.after = append(o.after, s.ID)
			}
			o.mu.Unlock()
			return h(ctx, m)
		})
		if out.Resettled || (!out.Done && out.Decision.Action == 0 && ran) {
			return // not an end: a retry, or a settlement sent again
		}
		end := "term"
		if out.Done {
			end = "done"
		}
		o.mu.Lock()
		if _, ok := o.ended[s.ID]; ok {
			o.dup = append(o.dup, s.ID)
		}
		o.ended[s.ID] = end
		o.mu.Unlock()
	}
}

// loadRun publishes n scripted messages with random failures and works
// them with several consumers (Consume loops on one durable consumer, each
// its own plugin-wrapped handler); midway, disrupt runs if not nil. Every
// message must end exactly once, as its script says, and no handler may
// run for a message after its end.
func loadRun(t *testing.T, nodes []*node, replicas, n, workers int, disrupt func(*env)) {
	e := newEnv(t, replicas, nodes)
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts":3,"initial_interval":"PT0.05S","max_interval":"PT0.2S","non_retryable_errors":["bad.*"]}`),
		jetstreamretry.WithDeadLetter(e.js, "dlq.work"))
	if err != nil {
		t.Fatal(err)
	}
	// Two durable consumers, each with its own subject filter, each worked
	// by workers/2 Consume loops (at least one).
	consumers := []string{"workers-a", "workers-b"}
	o := &outcomes{ended: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range consumers {
		cfg := rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: name, FilterSubject: "work.load." + name,
			AckWait: 10 * time.Second, MaxAckPending: 5000})
		var cons jetstream.Consumer
		waitFor(t, 30*time.Second, "consumer "+name, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			cons, err = e.work.CreateOrUpdateConsumer(ctx, cfg)
			return err == nil
		})
		for range max(workers/len(consumers), 1) {
			cc, err := cons.Consume(o.handler(t, ctx, rk, scripted(&e.j)), jetstream.PullMaxMessages(100))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Stop()
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]string{}
	runs := map[string]int{} // handler runs each script takes
	start := time.Now()
	for i := range n {
		id := "m" + strconv.Itoa(i)
		var steps []string
		switch r := rng.IntN(10); {
		case r < 6:
			steps, want[id], runs[id] = []string{"ok"}, "done", 1
		case r < 8:
			steps, want[id], runs[id] = []string{"fail", "ok"}, "done", 2
		case r < 9:
			steps, want[id], runs[id] = []string{"bad.input"}, "term", 1
		default:
			steps, want[id], runs[id] = []string{"fail"}, "term", 3 // exhausted
		}
		publish(t, e.js, "work.load."+consumers[i%len(consumers)], script{ID: id, Steps: steps}, "")
		if disrupt != nil && i == n/2 {
			disrupt(e)
		}
	}
	waitFor(t, 5*time.Minute, "every message to end", func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return len(o.ended) >= n
	})
	elapsed := time.Since(start)
	e.settled(time.Minute, consumers...) // the server agrees: nothing pending or unacked
	time.Sleep(time.Second)              // late deliveries show up here
	o.mu.Lock()
	defer o.mu.Unlock()
	var wrong, lost int
	for id, w := range want {
		// Without a disruption every delivery reaches a handler. A node
		// killed mid-run may lose deliveries in flight: each counts as a
		// failed attempt (JetStream's delivery count goes up), so the
		// handler may run fewer times, never more, and the message still
		// ends as its script says at the attempt it reached.
		got := len(e.j.get(id))
		if got > runs[id] || got < 1 || (disrupt == nil && got != runs[id]) {
			wrong++
			if wrong < 10 {
				t.Errorf("%s: handler ran %d times, want %d (runs %+v)", id, got, runs[id], e.j.get(id))
			}
		} else if got < runs[id] {
			lost++
		}
		if got := o.ended[id]; got != w {
			wrong++
			if wrong < 10 {
				t.Errorf("%s ended %q, want %q (runs %+v)", id, got, w, e.j.get(id))
			}
		}
	}
	if len(o.after) > 0 || len(o.dup) > 0 {
		t.Errorf("%d handler runs after a message's end (%v…), %d messages ended twice (%v…)", len(o.after), first(o.after), len(o.dup), first(o.dup))
	}
	info, _ := e.dlq.Info(context.Background())
	var exhausted int
	for _, w := range want {
		if w == "term" {
			exhausted++
		}
	}
	t.Logf("%d messages, 2 consumers, %d workers, replicas %d: all ended in %v (%.0f msg/s); %d wrong; %d with deliveries lost in flight; %d dead letters (on_exhaustion discard: 0 expected)",
		n, workers, replicas, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), wrong, lost, info.State.Msgs)
	if info.State.Msgs != 0 {
		t.Errorf("%d dead letters, want 0 (on_exhaustion is discard)", info.State.Msgs)
	}
	_ = exhausted
}

func first(s []string) []string { return s[:min(len(s), 5)] }

// TestLoadSingleNode: 5 000 messages over two consumers (two workers each)
// on one server.
func TestLoadSingleNode(t *testing.T) {
	nodes := startNodes(t, 1)
	loadRun(t, nodes, 1, loadMessages(5000), 4, nil)
}

// TestClusterNodeKilled: a 3-node JetStream cluster with a replicated (R3)
// stream; halfway through publishing, the node leading the stream is killed
// (SIGKILL). Clients reconnect to the others, a new leader takes over, and
// nothing is lost and nothing runs after its end.
func TestClusterNodeKilled(t *testing.T) {
	nodes := startNodes(t, 3)
	loadRun(t, nodes, 3, loadMessages(2000), 4, func(e *env) {
		info, err := e.work.Info(context.Background())
		if err != nil || info.Cluster == nil {
			t.Fatalf("stream info: %v", err)
		}
		for _, n := range nodes {
			if n.name == info.Cluster.Leader {
				n.kill()
				t.Logf("killed %s, the stream's leader, mid-run", n.name)
				return
			}
		}
		t.Fatalf("leader %q is none of the nodes", info.Cluster.Leader)
	})
}
