package executor_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
)

// TestWorkerLongInvalidMessage pins the message bound in worker mode: a handler
// error whose message is over MaxMessageLen bytes with invalid UTF-8 near
// the cut used to panic in the worker goroutine and end the process.
func TestWorkerLongInvalidMessage(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e)
	msgs := map[string]string{
		"a": strings.Repeat("a", 4090) + strings.Repeat("\xff", 7),
		"b": strings.Repeat("\xff", 4100),
	}
	w.Handle("t", func(ctx context.Context, j executor.Job) error { return errors.New(msgs[j.ID]) })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	for id := range msgs {
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: "t", Retry: []byte(`{"max_attempts":1}`)})
	}
	for id := range msgs {
		j := waitState(t, e, id, executor.Discarded)
		if m := j.Errors[0].Message; !strings.HasSuffix(m, "…") || len(m) > executor.MaxMessageLen {
			t.Errorf("%s: message of %d bytes, ends in … %v", id, len(m), strings.HasSuffix(m, "…"))
		}
	}
}

// panicky is an Observer whose every callback panics.
type panicky struct{}

func (panicky) Retrying(executor.Job, int, time.Duration) { panic("observer") }
func (panicky) Discarded(executor.Job)                    { panic("observer") }
func (panicky) DeadLettered(executor.Job)                 { panic("observer") }
func (panicky) Completed(executor.Job)                    { panic("observer") }
func (panicky) TimedOut(executor.Job)                     { panic("observer") }
func (panicky) Cancelled(executor.Job)                    { panic("observer") }
func (panicky) Pruned(executor.Job)                       { panic("observer") }

// TestWorkerSurvivesPanicsOnFailurePath: a panic reached from a handler's
// outcome (here the Observer's) ends neither the worker goroutine nor the
// process, and the executor's state stays consistent.
func TestWorkerSurvivesPanicsOnFailurePath(t *testing.T) {
	e := executor.New(executor.WithObserver(panicky{}))
	w := executor.NewWorker(e, executor.WithConcurrency("default", 2))
	w.Handle("ok", func(ctx context.Context, j executor.Job) error { return nil })
	w.Handle("bad", func(ctx context.Context, j executor.Job) error { return errors.New("no") })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	one := []byte(`{"max_attempts":1}`)
	fast := []byte(`{"max_attempts":3,"initial_interval":"PT0.001S","jitter":false}`)
	mustEnqueue(t, e, executor.JobSpec{ID: "ok", Type: "ok"})
	mustEnqueue(t, e, executor.JobSpec{ID: "bad1", Type: "bad", Retry: one})
	mustEnqueue(t, e, executor.JobSpec{ID: "bad3", Type: "bad", Retry: fast})
	waitState(t, e, "ok", executor.Completed)
	waitState(t, e, "bad1", executor.Discarded)
	if j := waitState(t, e, "bad3", executor.Discarded); j.Attempt != 3 || len(j.Errors) != 3 {
		t.Errorf("bad3: attempt %d, %d errors, want 3 and 3", j.Attempt, len(j.Errors))
	}
	if n := e.Count(executor.Filter{}); n != 3 {
		t.Errorf("Count = %d, want 3", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// TestWorkerMessageWithoutTypePrefix: the recorded
// message of a typed handler error does not repeat its type.
func TestWorkerMessageWithoutTypePrefix(t *testing.T) {
	e := executor.New()
	w := executor.NewWorker(e)
	cause := errors.New("payload missing field x")
	typed := errmatch.Wrap(cause, "validation.payload_invalid", errmatch.CodeDiscard)
	errs := map[string]error{
		"direct":   typed,
		"wrapped":  fmt.Errorf("charge: %w", typed),
		"no type":  errmatch.Wrap(cause, "", errmatch.CodeDiscard),
		"no cause": &errmatch.Error{Type: "validation.empty", Code: errmatch.CodeDiscard},
	}
	want := map[string]string{
		"direct":   "payload missing field x",
		"wrapped":  "charge: payload missing field x",
		"no type":  "payload missing field x",
		"no cause": "validation.empty",
	}
	w.Handle("t", func(ctx context.Context, j executor.Job) error { return errs[j.ID] })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	for id := range errs {
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: "t"})
	}
	for id := range errs {
		j := waitState(t, e, id, executor.Discarded)
		if got := j.Errors[0].Message; got != want[id] {
			t.Errorf("%s: message %q, want %q", id, got, want[id])
		}
	}
	if j, _ := e.Get("direct"); j.Errors[0].Type != "validation.payload_invalid" {
		t.Errorf("direct: type %q", j.Errors[0].Type)
	}
}
