package executor_test

import (
	"context"
	"errors"
	"strings"
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
	w := executor.NewWorker(e, executor.WithConcurrency("default", 3), executor.WithPollInterval(10*time.Millisecond))
	var calls atomic.Int32
	w.Handle("ok", func(ctx context.Context, j executor.Job) error { return nil })
	w.Handle("typed", func(ctx context.Context, j executor.Job) error {
		return errmatch.Wrap(errors.New("card stolen"), "card.stolen", errmatch.Discard)
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
	if x := j.Errors[0]; x.Type != "card.stolen" || x.Code != errmatch.Discard || !strings.Contains(x.Message, "card stolen") {
		t.Errorf("typed: %+v", x)
	}
	j = waitState(t, e, "plain", executor.Discarded)
	if x := j.Errors[0]; x.Type != executor.HandlerErrorType || x.Code != errmatch.Retry || x.Message != "boom" {
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

// Cancel of a running job reaches the handler through its context (the
// worker learns it from the failed heartbeat).
func TestWorkerCancellation(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithHeartbeatInterval(5*time.Millisecond))
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
