package executor

import (
	"context"
	"slices"
)

// WaitIdle waits until none of the given queues (DefaultQueue when none is
// given; "" also means DefaultQueue) holds a job that is scheduled,
// available, active or retryable, and returns nil; it returns ctx.Err() if
// ctx ends first. So it returns once every job there has reached a terminal
// state — completed, cancelled or discarded — or is pending (waiting for
// [Executor.Activate], which only the caller can do).
//
// Waiting for "all work done" means waiting for future work too: a job
// scheduled for later, or a retry whose backoff has not ended, keeps the
// queue busy until it has run and finished (bound the wait with ctx). So
// does an available job of a paused queue, until the queue is resumed and
// the job runs. Jobs enqueued while WaitIdle waits count as well.
//
// WaitIdle makes nothing happen: jobs finish because consumers (a [Worker]
// or callers of Fetch) run them and, for scheduled jobs, backoffs and
// expired reservations, because an operation or a Worker's timekeeper
// applies what became due. Under a [FakeClock] it returns only once the
// caller has moved the clock and driven the jobs to the end. It is safe to
// call from any goroutine, any number of times at once.
func (e *Executor) WaitIdle(ctx context.Context, queues ...string) error {
	names := make([]string, 0, max(len(queues), 1))
	for _, q := range queues {
		if q == "" {
			q = DefaultQueue
		}
		names = append(names, q)
	}
	if len(names) == 0 {
		names = append(names, DefaultQueue)
	}
	e.mu.Lock()
	e.advance(e.now())
	if e.idle(names) {
		e.mu.Unlock()
		return nil
	}
	w := &idleWaiter{queues: names, ch: make(chan struct{})}
	e.waiters = append(e.waiters, w)
	e.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
	}
	e.mu.Lock()
	if i := slices.Index(e.waiters, w); i >= 0 {
		e.waiters = slices.Delete(e.waiters, i, i+1)
	}
	e.mu.Unlock()
	select {
	case <-w.ch: // became idle just as ctx ended
		return nil
	default:
		return ctx.Err()
	}
}

// idleWaiter is one WaitIdle call: ch is closed once its queues are idle.
type idleWaiter struct {
	queues []string
	ch     chan struct{}
}

// open reports whether a job in state s still has work ahead of it that
// WaitIdle waits for.
func open(s State) bool {
	return s == Scheduled || s == Available || s == Active || s == Retryable
}

// busy reports whether q holds a job in an open state.
func (q *queue) busy() bool {
	return q.kinds[Scheduled].n+q.kinds[Available].n+q.kinds[Active].n+q.kinds[Retryable].n > 0
}

// idle reports whether none of the named queues is busy (called with e.mu
// held).
func (e *Executor) idle(names []string) bool {
	for _, n := range names {
		if q := e.queues[n]; q != nil && q.busy() {
			return false
		}
	}
	return true
}

// wakeIdle releases the WaitIdle calls whose queues became idle: move
// calls it when a job of q leaves the open states and q has no open job
// left (called with e.mu held).
func (e *Executor) wakeIdle() {
	e.waiters = slices.DeleteFunc(e.waiters, func(w *idleWaiter) bool {
		if !e.idle(w.queues) {
			return false
		}
		close(w.ch)
		return true
	})
}
