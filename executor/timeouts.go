package executor

import (
	"time"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Time budgets (ojs-timeouts). A job enqueued with JobSpec.Budget has, on
// top of its visibility timeout, an execution timeout, a heartbeat timeout
// and optionally a total timeout. Its reservation ends at the earliest of:
//
//  1. now + the visibility timeout (an expiry of type TimeoutErrorType, as
//     for every job);
//  2. started_at + timeout + grace_period + 1 ns: an execution timeout,
//     error type "timeout" (§7.1: now − started_at > timeout + grace_period);
//  3. the last heartbeat (or the fetch) + heartbeat_timeout + 1 ns: a stall,
//     error type "stalled" (§7.3);
//  4. created_at + total_timeout + 1 ns: the total timeout, error type
//     "total_timeout" (§5.2), which ends the job whatever attempts remain.
//
// Expiries 2–4 are failed attempts like any other (their types are matched
// against non_retryable_errors, unlike TimeoutErrorType); the error entry's
// Details hold the §8 error object (type, message, timeout_kind,
// limit_seconds, elapsed_seconds). Every decision of a budgeted job goes
// through budget.Budget.Decide, so a retry that could not finish before the
// total timeout ends the job at once (§9.1). A job still waiting when its
// total timeout passes is ended when a fetch reaches it.

// leaseEnd returns the reservation deadline of the active job j fetched or
// heartbeaten at now: the earliest of the ends listed above. A sum past the
// largest representable time saturates there.
func (e *Executor) leaseEnd(j *job, now int64) int64 {
	d := sat.AddInt(now, j.vis)
	bud := j.rare().bud
	if bud == nil {
		return d
	}
	s := bud.Spec()
	d = min(d, sat.AddInt(sat.AddInt(j.started, int64(s.Timeout+s.GracePeriod)), 1))
	d = min(d, sat.AddInt(sat.AddInt(now, int64(s.HeartbeatTimeout)), 1))
	if s.TotalTimeout != 0 {
		d = min(d, sat.AddInt(sat.AddInt(j.created, int64(s.TotalTimeout)), 1))
	}
	return d
}

// heartbeat records a fetch or heartbeat of j at now for its budget's
// stall deadline (a job without a budget has none).
func (j *job) heartbeat(now int64) {
	if r := j.x; r != nil && r.bud != nil {
		r.beat = now
	}
}

// budgetExpiry returns the limit of j's budget that had passed when its
// reservation ended at at, in the order total, execution, stall; ok is
// false for a job without a budget or a plain visibility timeout.
func (j *job) budgetExpiry(at int64) (budget.Expiry, bool) {
	r := j.rare()
	if r.bud == nil {
		return budget.Expiry{}, false
	}
	if x, ok := r.bud.Total(nsTime(j.created), nsTime(at)); ok {
		return x, true
	}
	if x, ok := r.bud.Execution(nsTime(j.started), nsTime(at)); ok {
		return x, true
	}
	return r.bud.Stalled(nsTime(r.beat), nsTime(at))
}

// decide is the retry decision for the failed attempt of j at at: the
// policy's, through the budget when j has one.
func (e *Executor) decide(j *job, typ string, code errmatch.Code, req errmatch.Request, at int64) (policy.Decision, error) {
	r := j.rare()
	f := policy.Failure{Attempt: int(j.attempt), ErrorType: typ, Code: code, Request: req,
		PrevDelay: time.Duration(r.prevDelay), Snoozes: int(r.snoozes)}
	bud := j.rare().bud
	if bud == nil {
		return j.pol.Decide(f, e.cfg.rand)
	}
	d, err := bud.Decide(j.pol, budget.Failure{Failure: f, CreatedAt: nsTime(j.created), At: nsTime(at)}, e.cfg.rand)
	return policy.Decision{Action: d.Action, Delay: d.Delay, Reason: d.Policy.Reason}, err
}

// expired records the expiry x of j's budget at at as its latest error,
// with the §8 object as details, and tells the observer (TimedOut).
func (e *Executor) expired(j *job, x budget.Expiry, at int64) {
	details, _ := x.MarshalJSON()
	e.addError(j, ErrorEntry{Attempt: int(j.attempt), Type: x.Type(), Message: x.Message(),
		Code: errmatch.CodeRetry, Time: nsTime(at), Details: details})
	if o := e.cfg.observer; o != nil {
		o.TimedOut(j.snapshot(e.cfg.history))
	}
}

// next returns the job of q a fetch claims at now: the first of its
// available list that its rate limits let start (see ratelimit.go), after
// ending the jobs before it whose total timeout has passed (the policy's
// on_exhaustion action, error type "total_timeout"); nil when the queue's
// own rate limit lets none start.
func (e *Executor) next(q *queue, now int64) *job {
	if len(e.qlimits) > 0 && e.queueBlocked(q, now) {
		return nil
	}
	for j := q.next(); j != nil; {
		nx := j.link[byKind].next // j may leave the list below
		if r := j.rare(); r.bud != nil {
			if x, over := r.bud.Total(nsTime(j.created), nsTime(now)); over {
				e.expired(j, x, now)
				e.apply(j, policy.Decision{Action: j.pol.Spec().OnExhaustion}, now)
				j = nx
				continue
			}
		}
		if j.rare().rl != nil && e.holdBack(q, j, now) {
			j = nx
			continue
		}
		return j
	}
	return nil
}
