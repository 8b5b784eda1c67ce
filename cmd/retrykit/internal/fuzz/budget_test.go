package fuzz_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// slow is the reference answering after a pause, as a slow adapter does.
type slow struct{ pause time.Duration }

func (s slow) Hello(ctx context.Context) (protocol.Hello, error) {
	return conformance.Reference().Hello(ctx)
}

func (s slow) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	time.Sleep(s.pause)
	return conformance.Reference().Do(ctx, req)
}

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A slow implementation took cases × latency, with no bound
// and nothing on the way. With Config.Time the run stops sending at its
// budget, says which ops were cut short and how far they got, and writes
// progress while it runs. (10 000 cases at 20 ms each would take 200 s.)
func TestRunTimeBudget(t *testing.T) {
	var prog syncBuffer
	res, err := fuzz.Run(context.Background(), slow{20 * time.Millisecond}, fuzz.Config{
		Cases: 10000, Seed: 1, Parallel: 4, Time: 600 * time.Millisecond,
		Progress: &prog, ProgressEvery: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OutOfTime || !res.OK() {
		t.Fatalf("OutOfTime %v, OK %v: %+v", res.OutOfTime, res.OK(), res.Ops)
	}
	sent, planned := 0, 0
	for _, o := range res.Ops {
		sent += o.Cases
		planned += o.Planned
		if o.Cases < o.Planned && !o.OutOfTime {
			t.Errorf("%s: %d of %d cases sent, not marked out of time", o.Op, o.Cases, o.Planned)
		}
	}
	if planned != 10000 || sent == 0 || sent >= planned {
		t.Errorf("%d of %d cases sent", sent, planned)
	}
	out := prog.String()
	for _, want := range []string{"fuzz: parse_duration: ", "cases sent", "left)", "done,", "out of time"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

// Config.Stop (an interrupt) ends the run as the budget does, with a
// report of what was sent.
func TestRunStop(t *testing.T) {
	stop := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(stop) })
	res, err := fuzz.Run(context.Background(), slow{20 * time.Millisecond}, fuzz.Config{Cases: 10000, Seed: 1, Parallel: 4, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, o := range res.Ops {
		sent += o.Cases
	}
	if !res.Stopped || res.OutOfTime || !res.OK() || sent == 0 || sent >= 10000 || !res.Ops[len(res.Ops)-1].OutOfTime {
		t.Errorf("Stopped %v, OutOfTime %v, OK %v, %d cases sent: %+v", res.Stopped, res.OutOfTime, res.OK(), sent, res.Ops)
	}
}
