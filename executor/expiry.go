package executor

import (
	"math"

	"github.com/retrykit/retrykit/internal/sat"
)

// Expiry: a job that has not started in time is discarded without running
// (RK-179).
//
// A job has up to two deadlines to start:
//
//  1. ExpiresAt (ojs-core §5.2 expires_at): "if the current time is past
//     expires_at when the job would be fetched, … discarded". It bounds
//     every start, retries included.
//  2. EnqueueTTL (ojs-timeouts §5.3): counted from the job's creation, it
//     bounds the wait for the first start only ("has not transitioned to
//     active before the TTL expires").
//
// The job's start deadline is the earlier of those that apply. A job is
// expired once the clock is past it ("past expires_at", ojs-core §5.2;
// "now − created_at > enqueue_ttl", as budget.EnqueueTTL reads §5.3), so
// a FETCH at the deadline itself still gets the job. The deadline is
// watched while the job waits (scheduled, available, pending or
// retryable): at the first instant past it (deadline + 1 ns) on the
// executor's clock the job becomes discarded, with that instant as
// FinishedAt and Expired saying which deadline ended it; no error entry
// is recorded, since no attempt ran. Among things due at one instant the
// expiry goes first: a job due (scheduled_at, next_retry_at) 1 ns past its
// deadline expires rather than becoming available. A job that is active
// past its deadline is left to finish its attempt; if that attempt fails
// and is retried, the passed ExpiresAt discards it at once, at the
// failure's instant. A manual retry (Retry) clears both deadlines: the
// operator decides anew.

// Expiry says which start deadline discarded a job.
type Expiry uint8

// The reasons of Job.Expired.
const (
	// NotExpired: the job was not discarded by a start deadline.
	NotExpired Expiry = iota
	// ExpiredAt: the job's ExpiresAt passed before it started.
	ExpiredAt
	// ExpiredEnqueueTTL: the job's EnqueueTTL ran out before its first
	// start.
	ExpiredEnqueueTTL
	// DroppedByRateLimit: its rate limit held it back at a fetch and its
	// OnLimit is [LimitDrop] (ojs-rate-limiting §6.2).
	DroppedByRateLimit
)

// String returns "", "expires_at", "enqueue_ttl" or "rate_limit".
func (x Expiry) String() string {
	switch x {
	case ExpiredAt:
		return "expires_at"
	case ExpiredEnqueueTTL:
		return "enqueue_ttl"
	case DroppedByRateLimit:
		return "rate_limit"
	}
	return ""
}

// waiting reports whether a job in state s waits to start.
func waiting(s State) bool {
	return s == Scheduled || s == Available || s == Pending || s == Retryable
}

// startBy returns the first instant past j's start deadline and which
// deadline it is; math.MaxInt64 when none applies.
func (j *job) startBy() (int64, Expiry) {
	at, why := int64(math.MaxInt64), NotExpired
	r := j.rare()
	if r.expires != never {
		at, why = r.expires, ExpiredAt
	}
	if r.ttl > 0 && j.delivery == 0 {
		if t := sat.AddInt(j.created, r.ttl); t < at {
			at, why = t, ExpiredEnqueueTTL
		}
	}
	if why != NotExpired {
		at = sat.AddInt(at, 1)
	}
	return at, why
}

// arm puts a waiting job with a start deadline into the expiry heap; the
// job must not be in it.
func (e *Executor) arm(j *job) {
	at, why := j.startBy()
	if why == NotExpired {
		return
	}
	r := j.more() // already there: a job with a deadline has one
	r.edue, r.ewhy = at, why
	e.expiries.push(j)
	e.dueChanged(at)
}

// expireDue discards j at once if it waits with a start deadline at or
// before at, the instant it began to wait: a job that was active at its
// deadline, or enqueued past it, is discarded when it would wait, at that
// instant rather than at the deadline already gone by.
func (e *Executor) expireDue(j *job, at int64) {
	r := j.x
	if r == nil || r.eidx < 0 || r.edue > at {
		return
	}
	e.expiries.remove(j)
	r.edue = max(r.edue, at)
	e.expire(j)
}

// disarm takes j out of the expiry heap, if it is there.
func (e *Executor) disarm(j *job) {
	if j.x != nil {
		e.expiries.remove(j)
	}
}

// expire discards the waiting job j at its start deadline.
func (e *Executor) expire(j *job) {
	r := j.more()
	at, why := r.edue, r.ewhy
	e.unschedule(j) // a scheduled or retryable job leaves the timer heap
	e.move(j, Discarded)
	j.finished = at
	j.started = never
	r.expired = why
	if o := e.cfg.observer; o != nil {
		o.Discarded(j.snapshot(e.cfg.history))
	}
	e.retire(j)
}

// expiryHeap is a binary min-heap of waiting jobs ordered by (edue, seq),
// each recording its index in eidx (-1 when absent). Only jobs with
// out-of-line fields (x) enter it; disarm leaves the others alone.
type expiryHeap = jobHeap[byExpiry]

// byExpiry orders an expiryHeap: start deadline, then enqueue order.
type byExpiry struct{}

func (byExpiry) less(a, b *job) bool {
	return a.x.edue < b.x.edue || (a.x.edue == b.x.edue && a.seq < b.seq)
}
func (byExpiry) index(j *job) *int32 { return &j.x.eidx }
