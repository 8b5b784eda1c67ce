package executor

import "time"

// Observer receives the executor's lifecycle events. The executor calls it
// synchronously while holding its lock, in the order the events happen, so
// an Observer must be fast and must not call back into the Executor (that
// deadlocks). The Job values are snapshots and may be kept. A panic in a
// callback is recovered and dropped: the operation that raised the event
// completes as if the callback had returned, so an Observer bug can neither
// leave the executor half-updated nor end a [Worker] goroutine (and with it
// the process).
//
// Embed NopObserver to implement only some of the methods.
type Observer interface {
	// Retrying: attempt failed (handler failure or timeout) and the job is
	// now retryable; it becomes available after delay, at j.NextRetryAt.
	Retrying(j Job, attempt int, delay time.Duration)
	// Discarded: the job reached discarded without entering the dead letter
	// set (DISCARD or FAIL code, or exhaustion with on_exhaustion discard).
	Discarded(j Job)
	// DeadLettered: the job reached discarded and entered the dead letter set.
	DeadLettered(j Job)
	// Completed: the job was acknowledged.
	Completed(j Job)
	// TimedOut: the job's reservation expired. Retrying, Discarded or
	// DeadLettered follows for the same job.
	TimedOut(j Job)
	// Cancelled: the job was cancelled (from any state that is not
	// terminal; a running handler's context is cancelled just after).
	Cancelled(j Job)
	// Pruned: retention removed the finished job; it no longer exists.
	Pruned(j Job)
}

// NopObserver implements every Observer method as a no-op; embed it in an
// observer that cares about only a few events. The zero value is ready.
type NopObserver struct{}

// Retrying does nothing.
func (NopObserver) Retrying(Job, int, time.Duration) {}

// Discarded does nothing.
func (NopObserver) Discarded(Job) {}

// DeadLettered does nothing.
func (NopObserver) DeadLettered(Job) {}

// Completed does nothing.
func (NopObserver) Completed(Job) {}

// TimedOut does nothing.
func (NopObserver) TimedOut(Job) {}

// Cancelled does nothing.
func (NopObserver) Cancelled(Job) {}

// Pruned does nothing.
func (NopObserver) Pruned(Job) {}

var _ Observer = NopObserver{}

// guarded runs an Observer's callbacks with their panics recovered (see
// Observer); WithObserver installs it.
type guarded struct{ o Observer }

func swallow() { recover() } //nolint:errcheck // a callback's panic is dropped by design

func (g guarded) Retrying(j Job, attempt int, delay time.Duration) {
	defer swallow()
	g.o.Retrying(j, attempt, delay)
}

func (g guarded) Discarded(j Job)    { defer swallow(); g.o.Discarded(j) }
func (g guarded) DeadLettered(j Job) { defer swallow(); g.o.DeadLettered(j) }
func (g guarded) Completed(j Job)    { defer swallow(); g.o.Completed(j) }
func (g guarded) TimedOut(j Job)     { defer swallow(); g.o.TimedOut(j) }
func (g guarded) Cancelled(j Job)    { defer swallow(); g.o.Cancelled(j) }
func (g guarded) Pruned(j Job)       { defer swallow(); g.o.Pruned(j) }
