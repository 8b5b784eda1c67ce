package executor_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// settle waits until the number of goroutines drops to at most n (goroutines
// that signalled their end still need to be scheduled to exit) and returns
// the last count seen. It bounds the wait by polls, not by a timing claim.
func settle(n int) int {
	got := runtime.NumGoroutine()
	for i := 0; i < 5000 && got > n; i++ {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		got = runtime.NumGoroutine()
	}
	return got
}

// After Stop returns nil, none of the worker's goroutines is left: not the
// fetching goroutines, not the timekeeper, not a heartbeat.
func TestWorkerStopLeavesNoGoroutine(t *testing.T) {
	base := runtime.NumGoroutine()
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("default", 50), executor.WithConcurrency("b", 20),
		executor.WithHeartbeatInterval(time.Millisecond))
	var ran atomic.Int32
	w.Handle("t", func(ctx context.Context, j executor.Job) error {
		ran.Add(1)
		time.Sleep(3 * time.Millisecond) // a few heartbeats
		return nil
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		mustEnqueue(t, e, executor.JobSpec{Type: "t"})
	}
	for i := 0; i < 100; i++ {
		waitState(t, e, "job-"+itoa(i+1), executor.Completed)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := settle(base); n > base {
		t.Errorf("%d goroutines after Stop, %d before Start", n, base)
	}
}

// waitErrors polls the real-clock executor until job id has n error entries.
func waitErrors(t *testing.T, e *executor.Executor, id string, n int) executor.Job {
	t.Helper()
	for i := 0; i < 5000; i++ {
		if j, err := e.Get(id); err == nil && len(j.Errors) >= n {
			return j
		}
		time.Sleep(time.Millisecond)
	}
	j, _ := e.Get(id)
	t.Fatalf("job %s: %d errors, want %d", id, len(j.Errors), n)
	return j
}

func itoa(i int) string {
	b := []byte{}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// When Stop's deadline passes, the heartbeats of handlers that ignore their
// context stop: their jobs' reservations expire and the jobs are retried
// (here fetched again by a second worker). The stuck handler's late result
// is stale and dropped; once it returns, its goroutine ends too.
func TestWorkerStopDeadlineStopsHeartbeats(t *testing.T) {
	base := runtime.NumGoroutine()
	e := executor.New()
	w := executor.NewWorker(e, executor.WithHeartbeatInterval(5*time.Millisecond))
	release := make(chan struct{})
	running := make(chan struct{}, 1)
	w.Handle("stuck", func(ctx context.Context, j executor.Job) error {
		running <- struct{}{}
		<-release // ignores ctx
		return nil
	})
	w.Start()
	mustEnqueue(t, e, executor.JobSpec{ID: "s", Type: "stuck", VisibilityTimeout: 60 * time.Millisecond,
		Retry: []byte(`{"max_attempts":3,"initial_interval":"PT0.001S","jitter":false}`)})
	<-running
	first, _ := e.Get("s")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := w.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop: %v", err)
	}
	// No heartbeat extends the lease any more: it expires.
	j := waitErrors(t, e, "s", 1)
	if x := j.Errors[0]; x.Type != executor.TimeoutErrorType || x.Attempt != 1 {
		t.Fatalf("first attempt ended by %+v, want its timeout", x)
	}
	w2 := executor.NewWorker(e)
	second := make(chan executor.Job, 1)
	done := make(chan struct{})
	w2.Handle("stuck", func(ctx context.Context, j executor.Job) error {
		second <- j
		<-done
		return nil
	})
	w2.Start()
	b := <-second
	if b.Delivery == first.Delivery || b.Attempt != 2 {
		t.Fatalf("redelivery: %+v", b)
	}
	close(release) // the stuck handler returns nil: its Ack is stale
	close(done)
	j = waitState(t, e, "s", executor.Completed)
	if j.Attempt != 2 || j.Delivery != b.Delivery {
		t.Errorf("completed by attempt %d delivery %d, want the second run's", j.Attempt, j.Delivery)
	}
	if err := w2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := settle(base); n > base {
		t.Errorf("%d goroutines at the end, %d at the start", n, base)
	}
}

// A handler calling runtime.Goexit ends its run: the heartbeat stops, the
// reservation expires, the job is retried, and the concurrency slot is not
// lost (with concurrency 1 the retry runs only if a new goroutine took it).
func TestWorkerGoexit(t *testing.T) {
	base := runtime.NumGoroutine()
	e := executor.New()
	w := executor.NewWorker(e, executor.WithHeartbeatInterval(5*time.Millisecond))
	var calls atomic.Int32
	w.Handle("t", func(ctx context.Context, j executor.Job) error {
		if calls.Add(1) == 1 {
			runtime.Goexit()
		}
		return nil
	})
	w.Start()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: 50 * time.Millisecond,
		Retry: []byte(`{"max_attempts":2,"initial_interval":"PT0.001S","jitter":false}`)})
	j := waitState(t, e, "a", executor.Completed)
	if j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Type != executor.TimeoutErrorType {
		t.Errorf("after Goexit: attempt %d errors %+v", j.Attempt, j.Errors)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := settle(base); n > base {
		t.Errorf("%d goroutines after Stop, %d before Start", n, base)
	}
}

// Worker mode across a manual retry: run A of attempt 1 outlives its
// reservation, the job is discarded, retried by hand and run again as
// attempt 1 (B). A's late failure is stale: it neither fails B's attempt
// nor reaches the history; B's result is the one applied.
func TestWorkerStaleAcrossManualRetry(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("default", 2), executor.WithHeartbeatInterval(time.Hour))
	releaseA := make(chan struct{})
	releaseB := make(chan struct{})
	runs := make(chan executor.Job, 2)
	var n atomic.Int32
	w.Handle("t", func(ctx context.Context, j executor.Job) error {
		runs <- j
		if n.Add(1) == 1 {
			<-releaseA
			return errors.New("run A failed late")
		}
		<-releaseB
		return nil
	})
	w.Start()
	defer w.Stop(context.Background())
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: 30 * time.Millisecond, Retry: []byte(`{"max_attempts":1}`)})
	a := <-runs
	waitState(t, e, "a", executor.Discarded) // A's reservation expired (no heartbeat within the hour)
	if _, err := e.Retry("a", nil); err != nil {
		t.Fatal(err)
	}
	// Make B's reservation long enough: extend it by hand as B's holder.
	b := <-runs
	if b.Attempt != a.Attempt || b.Delivery == a.Delivery {
		t.Fatalf("A %d/%d, B %d/%d", a.Attempt, a.Delivery, b.Attempt, b.Delivery)
	}
	close(releaseA) // A fails late with its own delivery
	for i := 0; i < 1000; i++ {
		if j, _ := e.Get("a"); j.State != executor.Active || len(j.Errors) != 1 {
			t.Fatalf("A's late failure reached B's run: %s %+v", j.State, j.Errors)
		}
		if _, err := e.Heartbeat("a", b.Delivery); err != nil {
			t.Fatal(err)
		}
		if n.Load() == 2 && len(runs) == 0 {
			break
		}
		runtime.Gosched()
	}
	close(releaseB)
	j := waitState(t, e, "a", executor.Completed)
	if len(j.Errors) != 1 || j.Errors[0].Type != executor.TimeoutErrorType {
		t.Errorf("history %+v, want only A's timeout", j.Errors)
	}
}
