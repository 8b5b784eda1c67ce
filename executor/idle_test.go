package executor_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// TestWorkerServesDefaultQueue: naming another queue
// keeps "default" served; only WithConcurrency(DefaultQueue, 0) stops it.
func TestWorkerServesDefaultQueue(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("emails", 2))
	if got := w.Queues(); !slices.Equal(got, []string{"default", "emails"}) {
		t.Errorf("Queues() = %q", got)
	}
	w.Handle("t", func(ctx context.Context, j executor.Job) error { return nil })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	mustEnqueue(t, e, executor.JobSpec{ID: "d", Type: "t"})
	mustEnqueue(t, e, executor.JobSpec{ID: "m", Type: "t", Queue: "emails"})
	waitState(t, e, "d", executor.Completed)
	waitState(t, e, "m", executor.Completed)

	only := executor.NewWorker(e, executor.WithConcurrency("emails", 1), executor.WithConcurrency(executor.DefaultQueue, 0))
	if got := only.Queues(); !slices.Equal(got, []string{"emails"}) {
		t.Errorf("with default at 0: Queues() = %q", got)
	}
	for name, opts := range map[string][]executor.WorkerOption{
		"default at 0 only": {executor.WithConcurrency("", 0)},
		"all at 0":          {executor.WithConcurrency("", 0), executor.WithConcurrency("x", 0)},
		"negative":          {executor.WithConcurrency("x", -1)},
	} {
		if err := executor.NewWorker(e, opts...).Start(); !errors.Is(err, executor.ErrInvalidWorkerConfig) {
			t.Errorf("%s: Start = %v, want ErrInvalidWorkerConfig", name, err)
		}
	}
}

// TestWaitIdle checks what WaitIdle waits for on a fake clock, where
// nothing happens unless the test does it.
func TestWaitIdle(t *testing.T) {
	e, c := newFake()
	bg := context.Background()
	if err := e.WaitIdle(bg); err != nil {
		t.Fatalf("empty executor: %v", err)
	}
	short := func() error {
		ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
		defer cancel()
		return e.WaitIdle(ctx, "q")
	}
	retry := []byte(`{"max_attempts":2,"initial_interval":"PT1M","jitter":false}`)
	mustEnqueue(t, e, executor.JobSpec{ID: "p", Type: "t", Queue: "q", Pending: true})
	if err := short(); err != nil {
		t.Errorf("only a pending job: %v", err)
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", Queue: "q", Retry: retry})
	mustEnqueue(t, e, executor.JobSpec{ID: "other", Type: "t"}) // another queue
	if err := short(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an available job: %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() { done <- e.WaitIdle(bg, "q", "") }()
	j, _ := e.Fetch("q")
	if _, err := e.Fail(j.ID, j.Delivery, executor.Failure{Message: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := short(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a retry in a minute: %v, want DeadlineExceeded", err)
	}
	c.Advance(time.Minute)
	j, _ = e.Fetch("q")
	e.Ack(j.ID, j.Delivery) //nolint:errcheck
	if err := short(); err != nil {
		t.Errorf("after the retry completed: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("WaitIdle(q, default) returned %v while default holds a job", err)
	case <-time.After(20 * time.Millisecond):
	}
	if _, err := e.Cancel("other"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("WaitIdle(q, default): %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitIdle(q, default) still waiting after both queues went idle")
	}
}

// TestWorkerWaitIdle: in worker mode WaitIdle returns once every job has
// finished, retries included.
func TestWorkerWaitIdle(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("emails", 3))
	w.Handle("ok", func(ctx context.Context, j executor.Job) error { return nil })
	w.Handle("flaky", func(ctx context.Context, j executor.Job) error {
		if j.Attempt < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	w.Handle("bad", func(ctx context.Context, j executor.Job) error { return errors.New("never") })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	fast := []byte(`{"max_attempts":3,"initial_interval":"PT0.01S","jitter":false}`)
	for i, typ := range []string{"ok", "flaky", "bad", "ok", "flaky", "bad"} {
		q := "emails"
		if i%2 == 0 {
			q = ""
		}
		mustEnqueue(t, e, executor.JobSpec{Type: typ, Queue: q, Retry: fast})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	for _, j := range e.List(executor.Filter{}) {
		want := executor.Completed
		if j.Type == "bad" {
			want = executor.Discarded
		}
		if j.State != want {
			t.Errorf("%s (%s): %s after WaitIdle, want %s", j.ID, j.Type, j.State, want)
		}
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}
