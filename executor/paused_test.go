package executor_test

import (
	"errors"
	"testing"

	"github.com/retrykit/retrykit/executor"
)

// TestRefusePausedLeavesNothing: a job asking to be refused by a paused
// queue is refused while the queue is paused, alone or in a batch, and
// nothing is created; the same job without the flag, or after the resume,
// is accepted.
func TestRefusePausedLeavesNothing(t *testing.T) {
	e := executor.New()
	if err := e.PauseQueue("email"); err != nil {
		t.Fatal(err)
	}
	spec := executor.JobSpec{ID: "a", Type: "t", Queue: "email", RefusePaused: true}
	if _, err := e.Enqueue(spec); !errors.Is(err, executor.ErrQueuePaused) {
		t.Fatalf("Enqueue to a paused queue: err = %v, want ErrQueuePaused", err)
	}
	other := executor.JobSpec{ID: "b", Type: "t", Queue: "other", RefusePaused: true}
	_, err := e.EnqueueBatch([]executor.JobSpec{other, spec})
	var be *executor.BatchError
	if !errors.As(err, &be) || be.Index != 1 || !errors.Is(err, executor.ErrQueuePaused) {
		t.Fatalf("batch with a paused queue: err = %v, want BatchError index 1 wrapping ErrQueuePaused", err)
	}
	if n := e.Len(); n != 0 {
		t.Fatalf("refused enqueues left %d jobs, want 0", n)
	}
	// The default queue is named by "".
	if err := e.PauseQueue(""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Enqueue(executor.JobSpec{Type: "t", RefusePaused: true}); !errors.Is(err, executor.ErrQueuePaused) {
		t.Fatalf("Enqueue to the paused default queue: err = %v, want ErrQueuePaused", err)
	}
	spec.RefusePaused = false
	if j, err := e.Enqueue(spec); err != nil || j.State != executor.Available {
		t.Fatalf("without RefusePaused: %v, %v; want an available job", j.State, err)
	}
	if err := e.ResumeQueue("email"); err != nil {
		t.Fatal(err)
	}
	spec.ID, spec.RefusePaused = "c", true
	if _, err := e.Enqueue(spec); err != nil {
		t.Fatalf("after the resume: %v", err)
	}
}
