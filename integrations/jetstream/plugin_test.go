package jetstreamretry

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// fakeMsg is a jetstream.Msg that records how it was settled.
type fakeMsg struct {
	jetstream.Msg // nil: methods not overridden panic
	md            jetstream.MsgMetadata
	h             nats.Header
	settled       []string
	delay         time.Duration
	inProgress    int
}

func (m *fakeMsg) Metadata() (*jetstream.MsgMetadata, error) { return &m.md, nil }
func (m *fakeMsg) Headers() nats.Header                      { return m.h }
func (m *fakeMsg) Data() []byte                              { return []byte("payload") }
func (m *fakeMsg) Subject() string                           { return "work.x" }
func (m *fakeMsg) Ack() error                                { m.settled = append(m.settled, "ack"); return nil }
func (m *fakeMsg) Term() error                               { m.settled = append(m.settled, "term"); return nil }
func (m *fakeMsg) InProgress() error                         { m.inProgress++; return nil }
func (m *fakeMsg) NakWithDelay(d time.Duration) error {
	m.settled, m.delay = append(m.settled, "nak"), d
	return nil
}

var stored = time.Unix(1700000000, 0)

func msgAt(seq, delivered uint64) *fakeMsg {
	return &fakeMsg{md: jetstream.MsgMetadata{Stream: "S", Sequence: jetstream.SequencePair{Stream: seq}, NumDelivered: delivered, Timestamp: stored}, h: nats.Header{}}
}

func fails(err error) HandlerFunc { return func(context.Context, jetstream.Msg) error { return err } }

func mustParse(t testing.TB, js string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Process settles each outcome as the package doc's table says.
func TestProcessOutcomes(t *testing.T) {
	pol := mustParse(t, `{"max_attempts":3,"initial_interval":"PT1S","non_retryable_errors":["auth.*"]}`)
	rk := New(pol, WithSource(backoff.Fixed(0.25)))
	for i, tc := range []struct {
		delivered uint64
		err       error
		settle    string
		action    policy.Action
		reason    policy.Reason
		delay     time.Duration
	}{
		{1, nil, "ack", policy.Retry, policy.ReasonRetry, 0},
		// r = 0.25: the jittered delay is 1s * (0.5 + 0.25) = 750ms.
		{1, errors.New("boom"), "nak", policy.Retry, policy.ReasonRetry, 750 * time.Millisecond},
		{2, errors.New("boom"), "nak", policy.Retry, policy.ReasonRetry, 1500 * time.Millisecond},
		{3, errors.New("boom"), "term", policy.Discard, policy.ReasonExhausted, 0},
		{1, errmatch.Wrap(errors.New("x"), "auth.expired", ""), "term", policy.Discard, policy.ReasonNonRetryable, 0},
		{1, errmatch.Wrap(errors.New("x"), "authx", ""), "nak", policy.Retry, policy.ReasonRetry, 750 * time.Millisecond},
		{1, errmatch.Wrap(errors.New("x"), "t", errmatch.CodeDiscard), "term", policy.Discard, policy.ReasonHandlerCode, 0},
		{4, nil, "term", policy.Discard, policy.ReasonExhausted, 0}, // beyond max_attempts: the handler is not run
	} {
		m := msgAt(uint64(i+1), tc.delivered)
		ran := false
		out, err := rk.Process(context.Background(), m, func(context.Context, jetstream.Msg) error { ran = true; return tc.err })
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if strings.Join(m.settled, ",") != tc.settle || m.delay != tc.delay || out.Attempt != int(tc.delivered) {
			t.Errorf("case %d: settled %v after %v (attempt %d), want %s after %v", i, m.settled, m.delay, out.Attempt, tc.settle, tc.delay)
		}
		if tc.settle != "ack" && (out.Decision.Action != tc.action || out.Decision.Reason != tc.reason) {
			t.Errorf("case %d: decision %+v, want %v (%v)", i, out.Decision, tc.action, tc.reason)
		}
		if tc.delivered == 4 && (ran || !errors.Is(out.Err, ErrExhausted)) {
			t.Errorf("case %d: ran %v, err %v; want the handler not run and ErrExhausted", i, ran, out.Err)
		}
	}
}

// dead_letter without a destination terminates and says so; a panic is a
// failure of type runtime.panic; a redelivery of a settled message is
// settled again without running the handler.
func TestProcessEdges(t *testing.T) {
	rk := New(mustParse(t, `{"max_attempts":1,"on_exhaustion":"dead_letter"}`))
	m := msgAt(1, 1)
	out, _ := rk.Process(context.Background(), m, fails(errors.New("boom")))
	if out.Decision.Action != policy.DeadLetter || !errors.Is(out.Err, ErrNoDeadLetter) || strings.Join(m.settled, ",") != "term" {
		t.Errorf("dead_letter without a subject: %+v settled %v", out, m.settled)
	}
	again := msgAt(1, 2)
	out, _ = rk.Process(context.Background(), again, func(context.Context, jetstream.Msg) error { t.Error("handler ran for a settled message"); return nil })
	if !out.Resettled || out.Done || strings.Join(again.settled, ",") != "term" {
		t.Errorf("redelivery of a terminated message: %+v settled %v", out, again.settled)
	}
	p := msgAt(2, 1)
	out, _ = rk.Process(context.Background(), p, func(context.Context, jetstream.Msg) error { panic("oops") })
	if out.ErrorType != "runtime.panic" || !strings.Contains(out.Err.Error(), "jetstreamretry: handler panic: oops") {
		t.Errorf("panic: %+v", out)
	}
	// A message header policy wins, an invalid one gives way to the default.
	h := msgAt(3, 1)
	h.h.Set(HeaderPolicy, `{"max_attempts":5,"initial_interval":"PT2S","jitter":false}`)
	out, _ = rk.Process(context.Background(), h, fails(errors.New("x")))
	if out.Decision.Action != policy.Retry || h.delay != 2*time.Second {
		t.Errorf("header policy: %+v delay %v", out, h.delay)
	}
	bad := msgAt(4, 1)
	bad.h.Set(HeaderPolicy, `{"max_attempts":-1}`)
	out, _ = rk.Process(context.Background(), bad, fails(errors.New("x")))
	if !errors.Is(out.Err, policy.ErrInvalidPolicy) || out.Decision.Reason != policy.ReasonExhausted {
		t.Errorf("invalid header policy: %+v", out)
	}
	// A heartbeat while the handler runs.
	hb := New(nil, WithHeartbeat(10*time.Millisecond))
	slow := msgAt(5, 1)
	_, _ = hb.Process(context.Background(), slow, func(context.Context, jetstream.Msg) error { time.Sleep(80 * time.Millisecond); return nil })
	if slow.inProgress < 2 {
		t.Errorf("heartbeat: %d InProgress calls in 80ms at 10ms", slow.inProgress)
	}
}

// MaxDeliver never wraps: for every max_attempts an OJS policy allows (up
// to 2^63-1), it is -1 (unlimited) or max(n,1)+1, and grows with n.
func TestMaxDeliverSaturates(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 2}, {1, 2}, {5, 6}, {math.MaxInt - 2, math.MaxInt - 1}, {math.MaxInt - 1, -1}, {math.MaxInt, -1}} {
		if got := MaxDeliver(tc.n); got != tc.want {
			t.Errorf("MaxDeliver(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, math.MaxInt).Draw(t, "max_attempts")
		got := MaxDeliver(n)
		if got != -1 && (got < 2 || got != max(n, 1)+1) {
			t.Fatalf("MaxDeliver(%d) = %d", n, got)
		}
		if got == -1 && n < math.MaxInt-1 {
			t.Fatalf("MaxDeliver(%d) = unlimited", n)
		}
	})
}

// Header text is one line of valid UTF-8 within the limit, cut at a rune
// boundary.
func TestCut(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s") + string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		n := rapid.IntRange(0, 64).Draw(t, "n")
		got := cut(s, n)
		if len(got) > n || !utf8.ValidString(got) || strings.ContainsAny(got, "\r\n") {
			t.Fatalf("cut(%q, %d) = %q", s, n, got)
		}
	})
	if got := cut(strings.Repeat("é", 10), 5); got != "éé" {
		t.Errorf("cut at a rune boundary: %q", got)
	}
}

// The caches are bounded in entries and key size; the memories of
// histories and settled messages are bounded in entries.
func TestMemoryIsBounded(t *testing.T) {
	var c policyCache
	pad := strings.Repeat(" ", 8<<10)
	for i := range cacheLimit + 40 {
		raw := `{"max_attempts":` + strings.Repeat("1", 1+i%5) + `}`
		if i%2 == 1 {
			raw += pad
		}
		if _, err := c.get(raw); err != nil {
			t.Fatal(err)
		}
	}
	for k := range c.m {
		if len(k) > cacheKeyLimit {
			t.Errorf("cached a %d-byte key", len(k))
		}
	}
	var s settledSet
	for i := range settledLimit + 100 {
		s.put(historyKey{"S", uint64(i), 0}, true)
	}
	if len(s.m) != settledLimit {
		t.Errorf("settled memory holds %d, want %d", len(s.m), settledLimit)
	}
	if _, ok := s.get(historyKey{"S", 0, 0}); ok {
		t.Error("the oldest settled message was not evicted")
	}
	if _, ok := s.get(historyKey{"S", settledLimit + 99, 0}); !ok {
		t.Error("the newest settled message was evicted")
	}
	var h history
	for i := range historyMessages + 10 {
		for a := range historyErrors + 3 {
			h.add(historyKey{"S", uint64(i), 0}, a+1, "t", errors.New(strings.Repeat("x", 2*historyErrorLen)))
		}
	}
	if len(h.m) != historyMessages {
		t.Errorf("history holds %d messages, want %d", len(h.m), historyMessages)
	}
	got := h.peek(historyKey{"S", 0, 0})
	if len(got) != historyErrors || got[len(got)-1].Attempt != historyErrors+3 || len(got[0].Error) > historyErrorLen {
		t.Errorf("one message's history: %d entries, last attempt %d", len(got), got[len(got)-1].Attempt)
	}
}
