package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
)

// hugeID is a hostile 10 MB job id.
var hugeID = strings.Repeat("x", 10<<20)

// heapDelta returns the bytes allocated by fn (runtime.MemStats.TotalAlloc),
// averaged over a few runs so that unrelated runtime allocations wash out.
func heapDelta(fn func()) uint64 {
	const runs = 4
	var before, after runtime.MemStats
	fn() // warm up
	runtime.ReadMemStats(&before)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// TestEnqueueLimits pins RK-46: every hostile field is refused with an
// error wrapping ErrInvalidJob that names the field and the limit, the
// message stays short (a 10 MB id is not echoed) and the refusal
// allocates a bounded amount, independent of the input size.
func TestEnqueueLimits(t *testing.T) {
	tests := []struct {
		name string
		spec executor.JobSpec
		want []string // substrings of the message
	}{
		{"10MB id", executor.JobSpec{ID: hugeID, Type: "t"},
			[]string{"id: at most 255 bytes (executor.MaxIDLen), got 10485760"}},
		{"256 byte id", executor.JobSpec{ID: strings.Repeat("a", 256), Type: "t"},
			[]string{"id: at most 255 bytes (executor.MaxIDLen), got 256"}},
		{"invalid UTF-8 id", executor.JobSpec{ID: "a\xffb", Type: "t"},
			[]string{"id: not valid UTF-8"}},
		{"empty type", executor.JobSpec{ID: "a"}, []string{"type: is empty"}},
		{"invalid UTF-8 type", executor.JobSpec{ID: "a", Type: "email.\xc3("},
			[]string{"type: not valid UTF-8"}},
		{"10MB type", executor.JobSpec{ID: "a", Type: hugeID},
			[]string{"type: at most 255 bytes (executor.MaxTypeLen), got 10485760"}},
		{"10MB queue", executor.JobSpec{ID: "a", Type: "t", Queue: hugeID},
			[]string{"queue: at most 255 bytes (executor.MaxQueueLen), got 10485760"}},
		{"invalid UTF-8 queue", executor.JobSpec{ID: "a", Type: "t", Queue: "\x80"},
			[]string{"queue: not valid UTF-8"}},
		{"malformed args", executor.JobSpec{ID: "a", Type: "t", Args: json.RawMessage(`{"to": `)},
			[]string{"args: not valid JSON"}},
		{"two values in args", executor.JobSpec{ID: "a", Type: "t", Args: json.RawMessage(`1 2`)},
			[]string{"args: not valid JSON"}},
		{"oversized args", executor.JobSpec{ID: "a", Type: "t",
			Args: json.RawMessage(`"` + strings.Repeat("x", executor.MaxArgsSize-1) + `"`)},
			[]string{"args: at most 1048576 bytes (executor.MaxArgsSize), got 1048577"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newFake()
			j, err := e.Enqueue(tc.spec)
			if !errors.Is(err, executor.ErrInvalidJob) {
				t.Fatalf("Enqueue: got %v, want an error wrapping ErrInvalidJob", err)
			}
			if j.ID != "" {
				t.Errorf("Enqueue returned job %q with the error", j.ID)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "executor: ") || len(msg) > 300 {
				t.Errorf("message %q (%d bytes): want prefix \"executor: \" and at most 300 bytes", msg, len(msg))
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			if n := e.Count(executor.Filter{}); n != 0 {
				t.Errorf("Count after refusal = %d, want 0", n)
			}
			// Bounded work: refusing the input allocates a few hundred
			// bytes at most, whatever its size (the 10 MB inputs included).
			if got := heapDelta(func() { e.Enqueue(tc.spec) }); got > 4096 { //nolint:errcheck
				t.Errorf("refusal allocated %d bytes per call, want at most 4096", got)
			}
		})
	}
}

// TestEnqueueAtLimits checks that values exactly at each limit are accepted
// and kept as given.
func TestEnqueueAtLimits(t *testing.T) {
	e, _ := newFake()
	args := json.RawMessage(`"` + strings.Repeat("x", executor.MaxArgsSize-2) + `"`)
	spec := executor.JobSpec{
		ID:    strings.Repeat("i", executor.MaxIDLen),
		Type:  strings.Repeat("t", executor.MaxTypeLen),
		Queue: strings.Repeat("é", executor.MaxQueueLen/2), // 254 bytes of 2-byte runes
		Args:  args,
	}
	j, err := e.Enqueue(spec)
	if err != nil {
		t.Fatalf("Enqueue at the limits: %v", err)
	}
	if j.ID != spec.ID || j.Type != spec.Type || j.Queue != spec.Queue || len(j.Args) != executor.MaxArgsSize {
		t.Errorf("job fields changed: id %d bytes, type %d, queue %d, args %d",
			len(j.ID), len(j.Type), len(j.Queue), len(j.Args))
	}
}

// TestFailLimits pins the Fail half of RK-46: a bad Type or Details is
// refused (the attempt is not used up, the same delivery can fail again
// with a fixed failure); a huge or invalid UTF-8 Message is recorded cut.
func TestFailLimits(t *testing.T) {
	refused := []struct {
		name string
		f    executor.Failure
		want string
	}{
		{"10MB type", executor.Failure{Type: hugeID},
			"type: at most 1024 bytes (executor.MaxFailureTypeLen), got 10485760"},
		{"invalid UTF-8 type", executor.Failure{Type: "db.\xff"}, "type: not valid UTF-8"},
		{"malformed details", executor.Failure{Type: "db.down", Details: json.RawMessage(`{"a":`)},
			"details: not valid JSON"},
		{"oversized details", executor.Failure{Details: json.RawMessage(`"` + strings.Repeat("d", executor.MaxDetailsSize) + `"`)},
			"details: at most 65536 bytes (executor.MaxDetailsSize), got 65538"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newFake()
			mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
			j, ok := e.Fetch()
			if !ok {
				t.Fatal("Fetch: nothing available")
			}
			_, err := e.Fail("a", j.Delivery, tc.f)
			if !errors.Is(err, executor.ErrInvalidJob) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Fail: got %v, want ErrInvalidJob naming %q", err, tc.want)
			}
			if len(err.Error()) > 300 {
				t.Errorf("message is %d bytes, want at most 300", len(err.Error()))
			}
			if got := heapDelta(func() { e.Fail("a", j.Delivery, tc.f) }); got > 4096 { //nolint:errcheck
				t.Errorf("refusal allocated %d bytes per call, want at most 4096", got)
			}
			after, err := e.Fail("a", j.Delivery, executor.Failure{Type: "db.down"})
			if err != nil {
				t.Fatalf("Fail after the refusal: %v", err)
			}
			if after.State != executor.Retryable || len(after.Errors) != 1 || after.Errors[0].Type != "db.down" {
				t.Errorf("after refusal and a good Fail: state %v, errors %+v; want retryable with one db.down entry",
					after.State, after.Errors)
			}
		})
	}

	messages := []struct {
		name, in, want string
	}{
		{"short", "boom", "boom"},
		{"at the limit", strings.Repeat("m", executor.MaxMessageLen), strings.Repeat("m", executor.MaxMessageLen)},
		{"10MB", hugeID, strings.Repeat("x", executor.MaxMessageLen-len("…")) + "…"},
		{"invalid UTF-8", "bad \xff byte", "bad \uFFFD byte"},
		// A 2-byte rune straddling the cut is dropped whole.
		{"cut inside a rune", "a" + strings.Repeat("é", executor.MaxMessageLen),
			"a" + strings.Repeat("é", (executor.MaxMessageLen-len("…")-1)/2) + "…"},
		// Replacement characters (3 bytes for 1) do not push it past the limit.
		{"invalid bytes at the limit", strings.Repeat("\xffa", executor.MaxMessageLen/2),
			strings.Repeat("\uFFFDa", (executor.MaxMessageLen-len("…"))/4) + "…"},
		// A run of invalid bytes becomes one U+FFFD (strings.ToValidUTF8).
		{"invalid run", strings.Repeat("\xff", executor.MaxMessageLen), "\uFFFD"},
	}
	for _, tc := range messages {
		t.Run("message "+tc.name, func(t *testing.T) {
			e, _ := newFake()
			mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
			j, _ := e.Fetch()
			got, err := e.Fail("a", j.Delivery, executor.Failure{Type: "x.y", Message: tc.in})
			if err != nil {
				t.Fatalf("Fail: %v", err)
			}
			m := got.Errors[0].Message
			if m != tc.want {
				t.Errorf("recorded message: %d bytes %.40q…, want %d bytes %.40q…", len(m), m, len(tc.want), tc.want)
			}
			if len(m) > executor.MaxMessageLen || !utf8.ValidString(m) {
				t.Errorf("recorded message is %d bytes (valid UTF-8: %v), want at most %d of valid UTF-8",
					len(m), utf8.ValidString(m), executor.MaxMessageLen)
			}
		})
	}
}

// TestHugeIDLookups checks that operations given a 10 MB unknown id answer
// ErrNotFound with a short message instead of echoing the id.
func TestHugeIDLookups(t *testing.T) {
	e, _ := newFake()
	for name, op := range map[string]func() error{
		"get":    func() error { _, err := e.Get(hugeID); return err },
		"cancel": func() error { _, err := e.Cancel(hugeID); return err },
		"ack":    func() error { _, err := e.Ack(hugeID, 1); return err },
		"delete": func() error { return e.Delete(hugeID) },
	} {
		err := op()
		if !errors.Is(err, executor.ErrNotFound) || len(err.Error()) > 200 {
			t.Errorf("%s: got %d-byte error %.100v, want a short ErrNotFound", name, len(err.Error()), err)
		}
		if got := heapDelta(func() { op() }); got > 4096 { //nolint:errcheck
			t.Errorf("%s: allocated %d bytes per call, want at most 4096", name, got)
		}
	}
}

// TestPauseQueueRefusesImpossibleNames checks that pausing a name no job
// can have stores nothing, returns a short ErrInvalidQueue, and does not
// affect real queues.
func TestPauseQueueRefusesImpossibleNames(t *testing.T) {
	e, _ := newFake()
	for name, op := range map[string]func(string) error{"pause": e.PauseQueue, "resume": e.ResumeQueue} {
		for _, q := range []string{hugeID, "\xff"} {
			err := op(q)
			if !errors.Is(err, executor.ErrInvalidQueue) || len(err.Error()) > 200 {
				t.Errorf("%s(%.20q): got %.100v, want a short ErrInvalidQueue", name, q, err)
			}
		}
	}
	if got := heapDelta(func() { e.PauseQueue(hugeID); e.ResumeQueue(hugeID) }); got > 2048 { //nolint:errcheck
		t.Errorf("PauseQueue/ResumeQueue of a 10 MB name allocated %d bytes per call", got)
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	if _, ok := e.Fetch(); !ok {
		t.Error("default queue not fetchable after pausing impossible names")
	}
}

// TestWorkerConcurrencyQueueLimit checks WithConcurrency's queue check.
func TestWorkerConcurrencyQueueLimit(t *testing.T) {
	e, _ := newFake()
	w := executor.NewWorker(e, executor.WithConcurrency(hugeID, 1))
	err := w.Start()
	if !errors.Is(err, executor.ErrInvalidWorkerConfig) || !strings.Contains(err.Error(), "executor.MaxQueueLen") || len(err.Error()) > 300 {
		t.Fatalf("Start: got %.200v, want a short ErrInvalidWorkerConfig naming executor.MaxQueueLen", err)
	}
}

// TestWorkerHostileHandlerError checks that in worker mode a handler error
// with an over-long or invalid UTF-8 type and a 10 MB message is still
// recorded (not lost to a refused Fail): the type becomes HandlerErrorType,
// the code is kept and the message is cut to MaxMessageLen.
func TestWorkerHostileHandlerError(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("default", 2))
	for typ, errType := range map[string]string{"long": strings.Repeat("a", executor.MaxFailureTypeLen+1), "utf8": "db.\xff"} {
		w.Handle(typ, func(ctx context.Context, j executor.Job) error {
			return errmatch.Wrap(errors.New(hugeID), errType, errmatch.CodeDiscard)
		})
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background()) //nolint:errcheck
	for _, id := range []string{"long", "utf8"} {
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: id})
		j := waitState(t, e, id, executor.Discarded)
		x := j.Errors[0]
		if x.Type != executor.HandlerErrorType || x.Code != errmatch.CodeDiscard ||
			len(x.Message) != executor.MaxMessageLen || !strings.HasSuffix(x.Message, "…") {
			t.Errorf("%s: recorded type %.40q code %s message %d bytes; want %s, DISCARD, %d bytes ending in …",
				id, x.Type, x.Code, len(x.Message), executor.HandlerErrorType, executor.MaxMessageLen)
		}
	}
}

// BenchmarkEnqueueArgs measures Enqueue with a typical 200-byte Args
// document, which Enqueue now checks with encoding/json.Valid (RK-46).
func BenchmarkEnqueueArgs(b *testing.B) {
	args := json.RawMessage(`{"to":"user@example.com","subject":"Your receipt","template":"receipt-v2","locale":"en-GB","amount_cents":129900,"currency":"EUR","order":"ord_8f3a2c","tags":["billing","email"]}`)
	e, _ := newFake()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := e.Enqueue(executor.JobSpec{Type: "t", Args: args}); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			b.StopTimer()
			for range 1024 {
				j, _ := e.Fetch()
				e.Ack(j.ID, j.Delivery) //nolint:errcheck
			}
			b.StartTimer()
		}
	}
}

// BenchmarkEnqueueRefused measures refusing a 10 MB job id:
// the cost is one length check, whatever the size.
func BenchmarkEnqueueRefused(b *testing.B) {
	e, _ := newFake()
	spec := executor.JobSpec{ID: hugeID, Type: "t"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Enqueue(spec); err == nil {
			b.Fatal("accepted a 10 MB id")
		}
	}
}
