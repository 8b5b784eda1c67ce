package jetstreamretry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/errmatch"
	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// script is a message payload: step i is what attempt i+1 does ("ok",
// "fail", "TYPE" or "TYPE/CODE" for an errmatch error, "sleep:DURATION"
// then fail, "slowok:DURATION" then ok); past the end the last step repeats.
type script struct {
	ID    string   `json:"id"`
	Steps []string `json:"steps"`
}

func (s script) step(attempt int) string {
	if len(s.Steps) == 0 {
		return "fail"
	}
	return s.Steps[min(attempt, len(s.Steps))-1]
}

// scripted is the handler of the tests: it follows the message's script and
// records each delivery in j.
func scripted(j *journal) jetstreamretry.HandlerFunc {
	return func(ctx context.Context, msg jetstream.Msg) error {
		start := time.Now()
		var s script
		if err := json.Unmarshal(msg.Data(), &s); err != nil {
			return fmt.Errorf("bad payload: %w", err)
		}
		md, _ := msg.Metadata()
		attempt := int(md.NumDelivered)
		st := s.step(attempt)
		var err error
		switch {
		case st == "ok":
		case st == "fail":
			err = fmt.Errorf("%w on attempt %d", errScript, attempt)
		case strings.HasPrefix(st, "sleep:"), strings.HasPrefix(st, "slowok:"):
			kind, dur, _ := strings.Cut(st, ":")
			d, _ := time.ParseDuration(dur)
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
			if kind == "sleep" {
				err = fmt.Errorf("%w after sleeping on attempt %d", errScript, attempt)
			}
		default:
			typ, code, _ := strings.Cut(st, "/")
			err = errmatch.Wrap(fmt.Errorf("attempt %d: %s", attempt, st), typ, errmatch.Code(code))
		}
		j.add(s.ID, delivery{attempt: attempt, start: start, end: time.Now()})
		return err
	}
}

func publish(t testing.TB, js jetstream.JetStream, subject string, s script, policyJSON string) {
	t.Helper()
	data, _ := json.Marshal(s)
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	if policyJSON != "" {
		msg.Header.Set(jetstreamretry.HeaderPolicy, policyJSON)
	}
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := js.PublishMsg(ctx, msg, jetstream.WithMsgID(s.ID))
		cancel()
		if err == nil {
			return
		}
		if try == 50 {
			t.Fatalf("publish %s: %v", s.ID, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// env is one test's streams and consumer on a JetStream server.
type env struct {
	t    *testing.T
	js   jetstream.JetStream
	work jetstream.Stream
	dlq  jetstream.Stream
	j    journal
}

func newEnv(t *testing.T, replicas int, nodes []*node) *env {
	_, js := connect(t, nodes...)
	e := &env{t: t, js: js}
	e.work = createStream(t, js, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}, Replicas: replicas, Duplicates: time.Minute})
	e.dlq = createStream(t, js, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.>"}, Replicas: replicas})
	return e
}

// consume starts workers Consume loops on one durable consumer configured by
// rk, and stops them at the end of the test.
func (e *env) consume(rk *jetstreamretry.Plugin, ackWait time.Duration, workers int) {
	e.t.Helper()
	cfg := rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers", AckWait: ackWait})
	var cons jetstream.Consumer
	waitFor(e.t, 30*time.Second, "consumer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		cons, err = e.work.CreateOrUpdateConsumer(ctx, cfg)
		return err == nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	e.t.Cleanup(cancel)
	for range workers {
		cc, err := cons.Consume(rk.Handler(ctx, scripted(&e.j)), jetstream.PullMaxMessages(64))
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(cc.Stop)
	}
}

// deadLetters returns the messages of the DLQ stream by script id.
func (e *env) deadLetters(want int) map[string]*nats.Msg {
	e.t.Helper()
	out := map[string]*nats.Msg{}
	waitFor(e.t, 60*time.Second, fmt.Sprintf("%d dead letters", want), func() bool {
		info, err := e.dlq.Info(context.Background())
		return err == nil && int(info.State.Msgs) >= want
	})
	info, _ := e.dlq.Info(context.Background())
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := e.dlq.GetMsg(context.Background(), seq)
		if err != nil {
			e.t.Fatalf("dlq message %d: %v", seq, err)
		}
		var s script
		_ = json.Unmarshal(m.Data, &s)
		out[s.ID] = &nats.Msg{Subject: m.Subject, Data: m.Data, Header: m.Header}
	}
	return out
}

// settled waits until the consumers (default: "workers") have no message
// pending or unacked.
func (e *env) settled(timeout time.Duration, names ...string) {
	e.t.Helper()
	if len(names) == 0 {
		names = []string{"workers"}
	}
	waitFor(e.t, timeout, "the consumers to settle every message", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, name := range names {
			c, err := e.work.Consumer(ctx, name)
			if err != nil {
				return false
			}
			info, err := c.Info(ctx)
			if err != nil || info.NumPending != 0 || info.NumAckPending != 0 || info.NumRedelivered != 0 {
				return false
			}
		}
		return true
	})
}

// TestScheduleExhaustionDeadLetter: a message that always fails is
// delivered max_attempts times, each redelivery no earlier than the
// policy's delay after the failure (and not much later), then published to
// the dead-letter subject with its error history, and never delivered
// again.
func TestScheduleExhaustionDeadLetter(t *testing.T) {
	nodes := startNodes(t, 1)
	e := newEnv(t, 1, nodes)
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts":4,"initial_interval":"PT0.15S","jitter":false,"on_exhaustion":"dead_letter"}`),
		jetstreamretry.WithDeadLetter(e.js, "dlq.work"))
	if err != nil {
		t.Fatal(err)
	}
	e.consume(rk, 5*time.Second, 1)
	publish(t, e.js, "work.a", script{ID: "always", Steps: []string{"fail"}}, "")
	publish(t, e.js, "work.a", script{ID: "twice", Steps: []string{"fail", "fail", "ok"}}, "")
	// A per-message policy: 2 attempts, 300ms apart, exhausted to discard.
	publish(t, e.js, "work.a", script{ID: "own", Steps: []string{"fail"}}, `{"max_attempts":2,"initial_interval":"PT0.3S","jitter":false}`)
	dl := e.deadLetters(1)
	e.settled(20 * time.Second)
	time.Sleep(500 * time.Millisecond) // anything delivered after the end shows up here

	delays := []time.Duration{150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond}
	const late = 400 * time.Millisecond
	check := func(id string, attempts int, delays []time.Duration) {
		runs := e.j.get(id)
		if len(runs) != attempts {
			t.Errorf("%s: %d deliveries, want %d", id, len(runs), attempts)
			return
		}
		for k := range attempts - 1 {
			gap := runs[k+1].start.Sub(runs[k].end)
			if runs[k].attempt != k+1 || gap < delays[k] || gap > delays[k]+late {
				t.Errorf("%s: attempt %d came %v after attempt %d failed, want %v (+%v at most)", id, runs[k+1].attempt, gap, k+1, delays[k], late)
			}
			t.Logf("%s: retry %d requested %v, observed %v (+%v)", id, k+1, delays[k], gap, gap-delays[k])
		}
	}
	check("always", 4, delays)
	check("twice", 3, delays)
	check("own", 2, []time.Duration{300 * time.Millisecond})

	if len(dl) != 1 || dl["always"] == nil {
		t.Fatalf("dead letters %v, want only 'always'", keys(dl))
	}
	h := dl["always"].Header
	if h.Get(jetstreamretry.HeaderAttempt) != "4" || h.Get(jetstreamretry.HeaderReason) != "exhausted" ||
		h.Get(jetstreamretry.HeaderStream) != "WORK" || h.Get(jetstreamretry.HeaderSubject) != "work.a" ||
		!strings.Contains(h.Get(jetstreamretry.HeaderError), "scripted failure on attempt 4") {
		t.Errorf("dead-letter headers %v", h)
	}
	var hist []jetstreamretry.Attempt
	if err := json.Unmarshal([]byte(h.Get(jetstreamretry.HeaderHistory)), &hist); err != nil || len(hist) != 4 {
		t.Fatalf("history %q: %v", h.Get(jetstreamretry.HeaderHistory), err)
	}
	for i, a := range hist {
		if a.Attempt != i+1 || !strings.Contains(a.Error, fmt.Sprintf("attempt %d", i+1)) {
			t.Errorf("history entry %d: %+v", i, a)
		}
	}
}

// TestOutcomes: non-retryable types (exact and ".*" prefix), handler codes
// and success each end a message as the policy says, after one delivery.
func TestOutcomes(t *testing.T) {
	nodes := startNodes(t, 1)
	e := newEnv(t, 1, nodes)
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts":5,"initial_interval":"PT0.1S","jitter":false,
		"non_retryable_errors":["validation.bad","auth.*"],"on_exhaustion":"dead_letter"}`),
		jetstreamretry.WithDeadLetter(e.js, "dlq.work"))
	if err != nil {
		t.Fatal(err)
	}
	e.consume(rk, 5*time.Second, 2)
	cases := []struct {
		id       string
		steps    []string
		attempts int
		dead     string // the dead-letter reason, "" for none
	}{
		{"ok", []string{"ok"}, 1, ""},
		{"exact", []string{"validation.bad"}, 1, "non_retryable"},
		{"prefix", []string{"auth.token_expired"}, 1, "non_retryable"},
		{"authx", []string{"authx", "ok"}, 2, ""}, // "auth.*" is a prefix with its dot, not a regex
		{"discard-code", []string{"external.gone/DISCARD"}, 1, ""},
		{"deadletter-code", []string{"payment.declined/DEAD_LETTER"}, 1, "handler_code"},
		{"retry-code", []string{"external.flaky/RETRY", "ok"}, 2, ""},
	}
	for _, c := range cases {
		publish(t, e.js, "work.b", script{ID: c.id, Steps: c.steps}, "")
	}
	dl := e.deadLetters(3)
	e.settled(20 * time.Second)
	time.Sleep(300 * time.Millisecond)
	for _, c := range cases {
		if n := len(e.j.get(c.id)); n != c.attempts {
			t.Errorf("%s: %d deliveries, want %d", c.id, n, c.attempts)
		}
		m := dl[c.id]
		switch {
		case c.dead == "" && m != nil:
			t.Errorf("%s: dead-lettered, want not", c.id)
		case c.dead != "" && m == nil:
			t.Errorf("%s: not dead-lettered", c.id)
		case c.dead != "" && m.Header.Get(jetstreamretry.HeaderReason) != c.dead:
			t.Errorf("%s: reason %q, want %q", c.id, m.Header.Get(jetstreamretry.HeaderReason), c.dead)
		}
	}
	if typ := dl["prefix"].Header.Get(jetstreamretry.HeaderType); typ != "auth.token_expired" {
		t.Errorf("prefix: dead-letter error type %q", typ)
	}
}

// TestAckTimeoutIsAnAttempt: a delivery nobody answers within AckWait (a
// worker that died holding it) is a failed attempt. A dead worker takes
// delivery 1 of one message and deliveries 1 and 2 of another, and never
// answers; the plugin's worker then gets attempt 2 of the first (and
// runs it) and delivery 3 of the second, beyond max_attempts 2, which it
// dead-letters as exhausted without running the handler. With a heartbeat,
// a handler longer than AckWait keeps its delivery.
func TestAckTimeoutIsAnAttempt(t *testing.T) {
	nodes := startNodes(t, 1)
	e := newEnv(t, 1, nodes)
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts":2,"initial_interval":"PT0.1S","jitter":false,"on_exhaustion":"dead_letter"}`),
		jetstreamretry.WithDeadLetter(e.js, "dlq.work"))
	if err != nil {
		t.Fatal(err)
	}
	const ackWait = 300 * time.Millisecond
	cons, err := e.work.CreateOrUpdateConsumer(context.Background(), rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers", AckWait: ackWait}))
	if err != nil {
		t.Fatal(err)
	}
	publish(t, e.js, "work.c", script{ID: "lost-once", Steps: []string{"ok"}}, "")
	publish(t, e.js, "work.c", script{ID: "lost-twice", Steps: []string{"ok"}}, "")
	// The dead worker: it fetches and never answers.
	take := func(n int) []int {
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for m := range batch.Messages() {
			md, _ := m.Metadata()
			got = append(got, int(md.NumDelivered))
		}
		return got
	}
	if got := take(2); len(got) != 2 {
		t.Fatalf("dead worker got deliveries %v, want both messages", got)
	}
	time.Sleep(ackWait + 100*time.Millisecond)
	// Redelivered after AckWait: the dead worker takes one of the two again
	// (delivery 2); whichever it is becomes the message lost twice.
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var twiceID string
	for m := range batch.Messages() {
		var s script
		_ = json.Unmarshal(m.Data(), &s)
		md, _ := m.Metadata()
		if md.NumDelivered != 2 {
			t.Fatalf("second take: delivery %d, want 2", md.NumDelivered)
		}
		twiceID = s.ID
	}
	onceID := map[string]string{"lost-once": "lost-twice", "lost-twice": "lost-once"}[twiceID]
	if onceID == "" {
		t.Fatalf("second take got %q", twiceID)
	}
	time.Sleep(ackWait + 100*time.Millisecond)
	e.consume(rk, ackWait, 1)
	dl := e.deadLetters(1)
	e.settled(10 * time.Second)
	if runs := e.j.get(onceID); len(runs) != 1 || runs[0].attempt != 2 {
		t.Errorf("%s: handler runs %+v, want one, attempt 2", onceID, runs)
	}
	if runs := e.j.get(twiceID); len(runs) != 0 {
		t.Errorf("%s: handler ran %d times, want 0 (its third delivery only exhausts)", twiceID, len(runs))
	}
	m := dl[twiceID]
	if m == nil || m.Header.Get(jetstreamretry.HeaderReason) != "exhausted" || m.Header.Get(jetstreamretry.HeaderAttempt) != "3" ||
		!strings.Contains(m.Header.Get(jetstreamretry.HeaderError), "unanswered delivery") {
		t.Errorf("%s dead letter: %v", twiceID, m)
	}
	if dl[onceID] != nil {
		t.Errorf("%s was dead-lettered", onceID)
	}

	// With a heartbeat, a handler longer than AckWait keeps its delivery.
	e2 := newEnvNamed(t, nodes, "HB")
	rkHB, _ := jetstreamretry.Parse([]byte(`{"max_attempts":2}`), jetstreamretry.WithHeartbeat(100*time.Millisecond))
	e2.consume(rkHB, ackWait, 1)
	publish(t, e2.js, "hb.x", script{ID: "slow-hb", Steps: []string{"slowok:1200ms", "fail"}}, "")
	waitFor(t, 10*time.Second, "slow-hb to finish", func() bool { return len(e2.j.get("slow-hb")) == 1 })
	e2.settled(10 * time.Second)
	time.Sleep(600 * time.Millisecond)
	if runs := e2.j.get("slow-hb"); len(runs) != 1 {
		t.Errorf("slow-hb with a heartbeat: %d deliveries, want 1", len(runs))
	}
}

// newEnvNamed is newEnv for a second stream (prefix NAME, subjects
// lower(NAME).>) on the same server.
func newEnvNamed(t *testing.T, nodes []*node, name string) *env {
	_, js := connect(t, nodes...)
	e := &env{t: t, js: js}
	e.work = createStream(t, js, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}})
	return e
}

func keys(m map[string]*nats.Msg) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
