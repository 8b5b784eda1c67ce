package executor

import (
	"context"
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
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
		if j := e.next(q, now); j != nil {
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
	q := e.queues[name]
	if q == nil {
		return // woken, and the queue's record went with its last job
	}
	defer e.release(q)
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

// keeperWait is one timekeeper's registration: it plans to look at the
// executor again at at, and ch is closed if something becomes due sooner.
type keeperWait struct {
	at int64
	ch chan struct{}
	on bool // registered in Executor.keepers
}

// dueChanged notes that something is now due at t (called with e.mu held):
// every timekeeper planning to look later than t is woken.
func (e *Executor) dueChanged(t int64) {
	for i := 0; i < len(e.keepers); {
		k := e.keepers[i]
		if t < k.at {
			close(k.ch)
			k.ch, k.on = nil, false
			e.keepers[i] = e.keepers[len(e.keepers)-1]
			e.keepers[len(e.keepers)-1] = nil
			e.keepers = e.keepers[:len(e.keepers)-1]
			continue
		}
		i++
	}
}

// untilDue applies what is due and returns how long, on the executor's
// clock, until the next thing is (at most limit), and a channel closed if
// something becomes due sooner than that. k is the calling timekeeper's
// registration, replaced by each call.
func (e *Executor) untilDue(k *keeperWait, limit time.Duration) (time.Duration, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	d := limit
	if next := e.nextDue(); next != math.MaxInt64 && next-now < int64(limit) {
		d = time.Duration(max(next-now, 0))
	}
	k.at = sat.AddInt(now, int64(d))
	if k.ch == nil {
		k.ch = make(chan struct{})
	}
	if !k.on {
		k.on = true
		e.keepers = append(e.keepers, k)
	}
	return d, k.ch
}

// unkeep removes a timekeeper's registration (its Worker stopped).
func (e *Executor) unkeep(k *keeperWait) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, x := range e.keepers {
		if x == k {
			e.keepers = append(e.keepers[:i], e.keepers[i+1:]...)
			break
		}
	}
	k.on = false
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
