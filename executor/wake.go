package executor

import (
	"context"
	"math"
	"time"
)

// Worker-mode wake-ups. An idle worker goroutine parks on its queue with
// its own channel; a job becoming available in that queue wakes exactly one
// parked goroutine (a thousand idle goroutines cost nothing per job). Time
// is watched by one timekeeper goroutine per Worker, woken only when
// something becomes due earlier than it planned to look.

// fetchOrPark claims a job of queue name like Fetch; when there is none it
// parks wake on the queue, in the same critical section, so a job made
// available afterwards wakes it. wake must have a buffer of one.
func (e *Executor) fetchOrPark(name string, wake chan struct{}) (Job, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	q := e.queue(name)
	if !q.paused {
		if j := q.ready.pop(); j != nil {
			e.claim(j, now)
			return j.snapshot(e.cfg.history), true
		}
	}
	q.idle = append(q.idle, wake)
	e.parks++
	return Job{}, false
}

// unpark removes wake from the queue's parked goroutines. If it was no
// longer there it has been woken for a job it will not fetch, so the
// wake-up passes to another parked goroutine.
func (e *Executor) unpark(name string, wake chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queue(name)
	for i, c := range q.idle {
		if c == wake {
			q.idle = append(q.idle[:i], q.idle[i+1:]...)
			q.idle = q.idle[:len(q.idle):len(q.idle)]
			return
		}
	}
	e.wakeOne(q)
}

// wakeOne wakes the most recently parked goroutine of q, if q is not
// paused (called with e.mu held).
func (e *Executor) wakeOne(q *queue) {
	n := len(q.idle)
	if n == 0 || q.paused {
		return
	}
	c := q.idle[n-1]
	q.idle[n-1] = nil
	q.idle = q.idle[:n-1]
	select {
	case c <- struct{}{}:
	default:
	}
}

// dueChanged notes that something is now due at t (called with e.mu held):
// a timekeeper planning to look later is woken.
func (e *Executor) dueChanged(t int64) {
	if e.dueCh != nil && t < e.dueAt {
		close(e.dueCh)
		e.dueCh, e.dueAt = nil, math.MaxInt64
	}
}

// untilDue applies what is due and returns how long, on the executor's
// clock, until the next thing is (at most limit), and a channel closed if
// something becomes due sooner than that.
func (e *Executor) untilDue(limit time.Duration) (time.Duration, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	d := limit
	if next := e.nextDue(); next != math.MaxInt64 && next-now < int64(limit) {
		d = time.Duration(max(next-now, 0))
	}
	at := satAdd(now, int64(d))
	if e.dueCh == nil {
		e.dueCh = make(chan struct{})
	}
	e.dueAt = min(e.dueAt, at)
	return d, e.dueCh
}

// watch registers stop to be called when the job leaves active under
// delivery d (Ack, Fail, Cancel, timeout). It returns false, registering
// nothing, when that delivery already ended.
func (e *Executor) watch(id string, d uint64, stop context.CancelFunc) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	j := e.active[id]
	if j == nil || j.delivery != d {
		return false
	}
	j.stop = stop
	return true
}
