package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
)

// waitState polls the real-clock executor until job id is in state s.
func waitState(t *testing.T, e *executor.Executor, id string, s executor.State) executor.Job {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if j, err := e.Get(id); err == nil && j.State == s {
			return j
		}
		time.Sleep(2 * time.Millisecond)
	}
	j, _ := e.Get(id)
	t.Fatalf("job %s: state %s, want %s", id, j.State, s)
	return j
}

func TestWorkerClassification(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("default", 3))
	var calls atomic.Int32
	w.Handle("ok", func(ctx context.Context, j executor.Job) error { return nil })
	w.Handle("typed", func(ctx context.Context, j executor.Job) error {
		return errmatch.Wrap(errors.New("card stolen"), "card.stolen", errmatch.CodeDiscard)
	})
	w.Handle("plain", func(ctx context.Context, j executor.Job) error { return errors.New("boom") })
	w.Handle("panic", func(ctx context.Context, j executor.Job) error { panic("kaboom") })
	w.Handle("flaky", func(ctx context.Context, j executor.Job) error {
		if calls.Add(1) == 1 {
			return errors.New("first try fails")
		}
		return nil
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); !errors.Is(err, executor.ErrWorkerState) {
		t.Errorf("second Start: %v", err)
	}
	one := []byte(`{"max_attempts":1}`)
	fast := []byte(`{"max_attempts":2,"initial_interval":"PT0.01S","jitter":false}`)
	for _, s := range []executor.JobSpec{
		{ID: "ok", Type: "ok"}, {ID: "typed", Type: "typed"}, {ID: "plain", Type: "plain", Retry: one},
		{ID: "panic", Type: "panic", Retry: one}, {ID: "none", Type: "unknown", Retry: one}, {ID: "flaky", Type: "flaky", Retry: fast},
	} {
		mustEnqueue(t, e, s)
	}
	waitState(t, e, "ok", executor.Completed)
	j := waitState(t, e, "typed", executor.Discarded)
	if x := j.Errors[0]; x.Type != "card.stolen" || x.Code != errmatch.CodeDiscard || !strings.Contains(x.Message, "card stolen") {
		t.Errorf("typed: %+v", x)
	}
	j = waitState(t, e, "plain", executor.Discarded)
	if x := j.Errors[0]; x.Type != executor.HandlerErrorType || x.Code != errmatch.CodeRetry || x.Message != "boom" {
		t.Errorf("plain: %+v", x)
	}
	j = waitState(t, e, "panic", executor.Discarded)
	if x := j.Errors[0]; x.Type != executor.PanicErrorType || !strings.Contains(x.Message, "kaboom") || !strings.Contains(string(x.Details), "stack") {
		t.Errorf("panic: %+v", x)
	}
	j = waitState(t, e, "none", executor.Discarded)
	if x := j.Errors[0]; x.Type != executor.NoHandlerErrorType {
		t.Errorf("no handler: %+v", x)
	}
	j = waitState(t, e, "flaky", executor.Completed)
	if j.Attempt != 2 || len(j.Errors) != 1 {
		t.Errorf("flaky: attempt %d errors %d", j.Attempt, len(j.Errors))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(ctx); !errors.Is(err, executor.ErrWorkerState) {
		t.Errorf("second Stop: %v", err)
	}
}

// Cancel of a running job reaches the handler through its context at once:
// the heartbeat interval is an hour, so the test would hang if the worker
// learnt it from a failed heartbeat.
func TestWorkerCancellation(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithHeartbeatInterval(time.Hour))
	started := make(chan struct{})
	stopped := make(chan error, 1)
	w.Handle("long", func(ctx context.Context, j executor.Job) error {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return ctx.Err()
	})
	w.Start()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "long"})
	<-started
	if _, err := e.Cancel("a"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ctx err %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler not cancelled")
	}
	if j, _ := e.Get("a"); j.State != executor.Cancelled || len(j.Errors) != 0 {
		t.Errorf("after cancel: %s %v", j.State, j.Errors)
	}
	w.Stop(context.Background())
}

// Stop waits for in-flight jobs, and cancels them when its deadline passes.
func TestWorkerGracefulStop(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("default", 2))
	release := make(chan struct{})
	running := make(chan struct{}, 2)
	w.Handle("finish", func(ctx context.Context, j executor.Job) error {
		running <- struct{}{}
		<-release
		return nil
	})
	w.Handle("stuck", func(ctx context.Context, j executor.Job) error {
		running <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	w.Start()
	mustEnqueue(t, e, executor.JobSpec{ID: "f", Type: "finish"})
	<-running
	go func() { time.Sleep(20 * time.Millisecond); close(release) }()
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if j, _ := e.Get("f"); j.State != executor.Completed {
		t.Errorf("in-flight job not finished: %s", j.State)
	}

	w2 := executor.NewWorker(e)
	w2.Handle("stuck", func(ctx context.Context, j executor.Job) error {
		running <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	w2.Start()
	mustEnqueue(t, e, executor.JobSpec{ID: "s", Type: "stuck", Retry: []byte(`{"max_attempts":1}`)})
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := w2.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Stop past deadline: %v", err)
	}
	j := waitState(t, e, "s", executor.Discarded) // the cancelled handler's error is recorded
	if j.Errors[0].Type != executor.HandlerErrorType {
		t.Errorf("%+v", j.Errors[0])
	}
}

// Each queue runs at most its configured number of handlers at once, and
// reaches it when enough jobs wait; a busy queue does not starve another.
func TestWorkerPerQueueConcurrency(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("a", 2), executor.WithConcurrency("b", 3))
	var mu sync.Mutex
	running, peak := map[string]int{}, map[string]int{}
	release := make(chan struct{})
	w.Handle("block", func(ctx context.Context, j executor.Job) error {
		mu.Lock()
		running[j.Queue]++
		peak[j.Queue] = max(peak[j.Queue], running[j.Queue])
		mu.Unlock()
		<-release
		mu.Lock()
		running[j.Queue]--
		mu.Unlock()
		return nil
	})
	for i := 0; i < 8; i++ {
		mustEnqueue(t, e, executor.JobSpec{ID: fmt.Sprint("a", i), Type: "block", Queue: "a"})
		mustEnqueue(t, e, executor.JobSpec{ID: fmt.Sprint("b", i), Type: "block", Queue: "b"})
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		ra, rb := running["a"], running["b"]
		mu.Unlock()
		if ra == 2 && rb == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running a=%d b=%d, want 2 and 3", ra, rb)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // room for an excess fetch to show up
	if n := e.Count(executor.Filter{States: []executor.State{executor.Active}}); n != 5 {
		t.Errorf("%d active jobs, want 2 + 3", n)
	}
	close(release)
	for i := 0; i < 8; i++ {
		waitState(t, e, fmt.Sprint("a", i), executor.Completed)
		waitState(t, e, fmt.Sprint("b", i), executor.Completed)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if peak["a"] != 2 || peak["b"] != 3 {
		t.Errorf("peak concurrency a=%d b=%d, want 2 and 3", peak["a"], peak["b"])
	}
}

// Handler codes attached with errmatch.Wrap reach the policy: DEAD_LETTER
// dead-letters at attempt 1 of 3, FAIL discards, RETRY retries; an unknown
// code leaves the decision to the policy.
func TestWorkerHandlerCodes(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e)
	codes := map[string]errmatch.Code{"dl": errmatch.CodeDeadLetter, "fail": errmatch.CodeFail, "retry": errmatch.CodeRetry, "odd": "SOMETIMES"}
	w.Handle("coded", func(ctx context.Context, j executor.Job) error {
		return errmatch.Wrap(errors.New("no"), "billing.declined", codes[j.ID])
	})
	slow := []byte(`{"max_attempts":3,"initial_interval":"PT1H","max_interval":"PT1H"}`)
	for id := range codes {
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: "coded", Retry: slow})
	}
	w.Start()
	defer w.Stop(context.Background())
	if j := waitState(t, e, "dl", executor.Discarded); !j.DeadLetter || j.Errors[0].Code != errmatch.CodeDeadLetter {
		t.Errorf("DEAD_LETTER: %+v", j)
	}
	if j := waitState(t, e, "fail", executor.Discarded); j.DeadLetter || j.Errors[0].Code != errmatch.CodeFail {
		t.Errorf("FAIL: %+v", j)
	}
	for _, id := range []string{"retry", "odd"} {
		if j := waitState(t, e, id, executor.Retryable); j.Errors[0].Type != "billing.declined" || j.Errors[0].Code != errmatch.CodeRetry {
			t.Errorf("%s: %+v", id, j.Errors[0])
		}
	}
}

func TestWorkerInvalidConcurrency(t *testing.T) {
	e := executor.New()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	// n = 0 means "do not serve the queue" (see TestWorkerServesDefaultQueue);
	// with no other queue the worker would serve nothing, which Start
	// refuses too.
	for _, n := range []int{0, -1, 1<<16 + 1} {
		var ran atomic.Int32
		w := executor.NewWorker(e, executor.WithConcurrency("default", n))
		w.Handle("t", func(ctx context.Context, j executor.Job) error { ran.Add(1); return nil })
		err := w.Start()
		want := fmt.Sprintf(`WithConcurrency("default", %d)`, n)
		if n == 0 {
			want = "serve nothing"
		}
		if !errors.Is(err, executor.ErrInvalidWorkerConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("n=%d: Start: %v", n, err)
		}
		if err2 := w.Start(); !errors.Is(err2, executor.ErrInvalidWorkerConfig) {
			t.Errorf("n=%d: second Start: %v", n, err2)
		}
		if err := w.Stop(context.Background()); !errors.Is(err, executor.ErrWorkerState) {
			t.Errorf("n=%d: Stop of a worker that never started: %v", n, err)
		}
		time.Sleep(5 * time.Millisecond)
		if ran.Load() != 0 {
			t.Errorf("n=%d: a handler ran", n)
		}
	}
	if j, _ := e.Get("a"); j.State != executor.Available {
		t.Errorf("job is %s, want it untouched", j.State)
	}
	// Invalid for one queue, even next to a valid one, still fails.
	w := executor.NewWorker(e, executor.WithConcurrency("a", 2), executor.WithConcurrency("b", -1))
	if err := w.Start(); !errors.Is(err, executor.ErrInvalidWorkerConfig) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("mixed: %v", err)
	}
}
