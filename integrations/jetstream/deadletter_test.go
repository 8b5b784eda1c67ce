package jetstreamretry_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	jetstreamretry "github.com/retrykit/retrykit/integrations/jetstream"
)

// settleErrors collects what the plugin's Handler could not return.
type settleErrors struct {
	mu   sync.Mutex
	errs []error
}

func (s *settleErrors) add(_ jetstream.Msg, _ jetstreamretry.Outcome, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
}

func (s *settleErrors) all() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// bigEnv is a server with a 16 KiB max_payload, a work stream, a
// dead-letter stream (dlqMax: its max_msg_size, 0 for none) and a plugin
// that dead-letters after 2 attempts of a handler failing with a 3 KiB
// error, reporting settle errors to errs.
func bigEnv(t *testing.T, dlqMax int32) (*env, *jetstreamretry.Plugin, *settleErrors) {
	t.Helper()
	nodes := startNodesWith(t, 1, "max_payload: 16384")
	_, js := connect(t, nodes...)
	e := &env{t: t, js: js}
	e.work = createStream(t, js, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work.>"}})
	e.dlq = createStream(t, js, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.>"}, MaxMsgSize: dlqMax})
	errs := &settleErrors{}
	rk, err := jetstreamretry.Parse([]byte(`{"max_attempts":2,"initial_interval":"PT0.1S","jitter":false,"on_exhaustion":"dead_letter"}`),
		jetstreamretry.WithDeadLetter(js, "dlq.work"), jetstreamretry.WithErrorHandler(errs.add))
	if err != nil {
		t.Fatal(err)
	}
	cfg := rk.ConsumerConfig(jetstream.ConsumerConfig{Durable: "workers", AckWait: 5 * time.Second})
	cons, err := e.work.CreateOrUpdateConsumer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	long := errors.New(strings.Repeat("the handler failed at length; ", 100))
	cc, err := cons.Consume(rk.Handler(context.Background(), func(context.Context, jetstream.Msg) error { return long }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return e, rk, errs
}

// publishRaw publishes data with headers h to subject.
func publishRaw(t *testing.T, js jetstream.JetStream, subject string, h nats.Header, data []byte) uint64 {
	t.Helper()
	ack, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: subject, Header: h, Data: data})
	if err != nil {
		t.Fatalf("publish %d bytes: %v", len(data), err)
	}
	return ack.Sequence
}

// TestDeadLetterCopyIsCutToFit: a message within a few hundred bytes of
// max_payload, which must be dead-lettered, reaches the dead-letter stream
// (with the stream's own max_msg_size too) with its data cut to fit, the
// original size and what was cut in headers, the original's headers kept,
// and the original terminated; nothing is left pending. (The copy, data
// plus 3 KiB of error headers, never fit before: after MaxDeliver the
// message was in neither place, and no error was reported.)
func TestDeadLetterCopyIsCutToFit(t *testing.T) {
	for _, dlqMax := range []int32{0, 12000} {
		t.Run("max_msg_size="+strconv.Itoa(int(dlqMax)), func(t *testing.T) {
			e, _, errs := bigEnv(t, dlqMax)
			data := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16000 bytes
			h := nats.Header{"Tenant": []string{"acme"}}
			publishRaw(t, e.js, "work.big", h, data)
			waitFor(t, 30*time.Second, "the dead-letter copy", func() bool {
				info, err := e.dlq.Info(context.Background())
				return err == nil && info.State.Msgs == 1
			})
			e.settled(20 * time.Second)
			m, err := e.dlq.GetLastMsgForSubject(context.Background(), "dlq.work")
			if err != nil {
				t.Fatal(err)
			}
			limit := 16384
			if dlqMax > 0 {
				limit = int(dlqMax)
			}
			if n := len(m.Data); n == 0 || n >= len(data) || !bytes.Equal(m.Data, data[:n]) {
				t.Errorf("copy data: %d bytes, want a prefix of the %d-byte original", n, len(data))
			}
			if got := m.Header.Get(jetstreamretry.HeaderDataSize); got != strconv.Itoa(len(data)) {
				t.Errorf("%s = %q, want %d", jetstreamretry.HeaderDataSize, got, len(data))
			}
			if got := m.Header.Get(jetstreamretry.HeaderCut); !strings.Contains(got, "data") {
				t.Errorf("%s = %q, want it to name data", jetstreamretry.HeaderCut, got)
			}
			if m.Header.Get("Tenant") != "acme" || m.Header.Get(jetstreamretry.HeaderReason) != "exhausted" ||
				m.Header.Get(jetstreamretry.HeaderAttempt) != "2" || !strings.HasPrefix(m.Header.Get(jetstreamretry.HeaderError), "the handler failed") {
				t.Errorf("copy headers %v", m.Header)
			}
			size := len(m.Data)
			for k, vs := range m.Header {
				for _, v := range vs {
					size += len(k) + len(v) + 4
				}
			}
			if size > limit {
				t.Errorf("copy takes %d bytes, over the %d-byte limit", size, limit)
			}
			if _, err := e.work.GetMsg(context.Background(), 1); err != nil {
				t.Logf("original: %v", err)
			}
			if got := errs.all(); len(got) != 0 {
				t.Errorf("settle errors: %v", got)
			}
		})
	}
}

// TestDeadLetterTooLargeIsReported: a message whose own headers alone do
// not fit beside the dead-letter headers cannot be copied: it is not
// terminated (it stays in its stream) and the Handler reports
// ErrDeadLetterTooLarge for it instead of dropping the error.
func TestDeadLetterTooLargeIsReported(t *testing.T) {
	e, _, errs := bigEnv(t, 0)
	h := nats.Header{"Big": []string{strings.Repeat("h", 16300)}}
	seq := publishRaw(t, e.js, "work.big", h, []byte("x"))
	waitFor(t, 30*time.Second, "a reported settle error", func() bool { return len(errs.all()) > 0 })
	for _, err := range errs.all() {
		if !errors.Is(err, jetstreamretry.ErrDeadLetterTooLarge) {
			t.Errorf("settle error %v, want ErrDeadLetterTooLarge", err)
		}
	}
	if _, err := e.work.GetMsg(context.Background(), seq); err != nil {
		t.Errorf("the original is gone: %v", err)
	}
	if info, err := e.dlq.Info(context.Background()); err != nil || info.State.Msgs != 0 {
		t.Errorf("dead-letter stream: %v, %v", info, err)
	}
}
