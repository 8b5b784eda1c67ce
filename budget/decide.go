package budget

import (
	"errors"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Failure is a failed attempt with the times a budget needs.
//
// The zero value is not valid (Attempt must be at least 1). A Failure is a
// plain value, safe to copy.
type Failure struct {
	policy.Failure
	// CreatedAt is the job's created_at; required (non-zero) when the
	// budget has a total timeout.
	CreatedAt time.Time
	// At is the decision time, when the failure is judged; required
	// (non-zero, not before CreatedAt) when the budget has a total timeout.
	At time.Time
}

// Reason says which rule produced a Decision.
//
// The zero value is ReasonPolicy. A Reason is a plain value.
type Reason uint8

const (
	// ReasonPolicy: the retry policy decided alone (see Decision.Policy).
	ReasonPolicy Reason = iota
	// ReasonTotalTimeout: the total timeout had passed (§5.2).
	ReasonTotalTimeout
	// ReasonNoTimeLeft: a retry could not finish before the total timeout
	// ends (§9.1).
	ReasonNoTimeLeft
)

// String returns "policy", "total_timeout" or "no_time_left"; any other
// value prints as "Reason(N)".
func (r Reason) String() string {
	switch r {
	case ReasonPolicy:
		return "policy"
	case ReasonTotalTimeout:
		return "total_timeout"
	case ReasonNoTimeLeft:
		return "no_time_left"
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Decision is what to do with a failed job whose time budget is known.
//
// The zero value means "retry at once, as the policy said". A Decision is
// a plain value, safe to copy.
type Decision struct {
	Action policy.Action   // Retry, Discard or DeadLetter
	Delay  time.Duration   // the backoff delay; 0 unless Action is Retry
	Reason Reason          // the rule that decided
	Policy policy.Decision // what the retry policy alone decided
}

// ErrInvalidFailure is the errors.Is target of a Failure whose times a
// budget with a total timeout cannot judge; the concrete error is a
// *FailureError. Errors of the retry policy's own checks (attempt, code)
// match policy.ErrInvalidFailure instead.
var ErrInvalidFailure = errors.New("budget: invalid failure")

// FailureError is a Failure field a budget cannot judge.
//
// It is never mutated after it is returned; the zero value names no field.
type FailureError struct {
	Field  string // "created_at" or "at"
	Value  time.Time
	Reason string
}

// Error returns "budget: FIELD: REASON".
func (e *FailureError) Error() string { return "budget: " + e.Field + ": " + e.Reason }

// Is reports whether target is ErrInvalidFailure.
func (e *FailureError) Is(target error) bool { return target == ErrInvalidFailure }

// DecideAt decides after failure f of a job under retry policy p and this
// budget, drawing the jitter from r as policy.Policy.DecideAt does. It is
// pure. The rules, in order:
//
//  1. With a total timeout, a zero f.CreatedAt or f.At, or f.At before
//     f.CreatedAt: an error (*FailureError, ErrInvalidFailure).
//  2. The retry policy decides (p.DecideAt); its error is returned as is.
//  3. A handler code (DISCARD, FAIL, DEAD_LETTER) decided: that decision.
//  4. The total timeout has passed, f.At − f.CreatedAt > total_timeout:
//     the policy's on_exhaustion action, whatever attempts remain and
//     before non_retryable_errors and max_attempts (§5.2, RK-217,
//     ReasonTotalTimeout).
//  5. The policy retries but created_at + total_timeout < f.At + delay +
//     timeout: the next attempt could not finish in time, so the
//     on_exhaustion action now (§9.1, ReasonNoTimeLeft). At equality the
//     attempt ends exactly at the deadline and is retried (RK-215).
//  6. Otherwise the policy's decision.
//
// For a job with timeout 60 s, total_timeout 600 s, created at 0 s, and a
// policy of fixed 1-minute delays and many attempts:
//
//	failure at   retry due   its attempt ends   decision
//	100 s        160 s       220 s              retry after 60 s
//	480 s        540 s       600 s (= deadline) retry after 60 s
//	481 s        541 s       601 s              discard (no_time_left)
//	601 s        —           —                  discard (total_timeout)
//
// A nil p decides as policy.Default(); a nil or zero Budget as Default().
// Timeouts and stalls are failures like any other: f.ErrorType "timeout"
// or "stalled" is retried unless p lists it in non_retryable_errors.
func (b *Budget) DecideAt(p *policy.Policy, f Failure, r float64) (Decision, error) {
	return b.decide(p, f, func(pf policy.Failure) (policy.Decision, error) { return p.DecideAt(pf, r) })
}

// Decide is DecideAt with the jitter drawn from src as policy.Policy.Decide
// draws it (once, only when the policy retries and has jitter; nil src:
// backoff.Random()).
func (b *Budget) Decide(p *policy.Policy, f Failure, src backoff.Source) (Decision, error) {
	return b.decide(p, f, func(pf policy.Failure) (policy.Decision, error) { return p.Decide(pf, src) })
}

// DecideBeforeDraw is the decision for a queue that draws the retry delay
// itself, after this decision (River's NextRetry, asynq's RetryDelayFunc):
// the decision cannot see that draw, so the rule of §9.1 is judged at the
// top of the jitter range, r = 1, the longest delay the queue can draw,
// and a retry it allows always has time to finish (RK-233). Where the
// budget does not decide (Reason ReasonPolicy, or no total timeout), the
// decision is the policy's own at the middle draw 0.5, its Delay included.
//
// f.At before f.CreatedAt (a worker's clock behind the one that stamped
// created_at) is read as f.CreatedAt: no time spent yet, not an error.
// A zero f.CreatedAt or f.At with a total timeout is still an error, as
// for DecideAt.
func (b *Budget) DecideBeforeDraw(p *policy.Policy, f Failure) (Decision, error) {
	middle := func() (Decision, error) {
		pd, err := p.DecideAt(f.Failure, 0.5)
		if err != nil {
			return Decision{}, err
		}
		return Decision{Action: pd.Action, Delay: pd.Delay, Reason: ReasonPolicy, Policy: pd}, nil
	}
	if b.get().spec.TotalTimeout == 0 {
		return middle()
	}
	if f.At.Before(f.CreatedAt) {
		f.At = f.CreatedAt
	}
	d, err := b.DecideAt(p, f, 1)
	if err != nil || d.Reason != ReasonPolicy {
		return d, err
	}
	return middle()
}

func (b *Budget) decide(p *policy.Policy, f Failure, pol func(policy.Failure) (policy.Decision, error)) (Decision, error) {
	s := b.get().spec
	if s.TotalTimeout != 0 {
		switch {
		case f.CreatedAt.IsZero():
			return Decision{}, &FailureError{Field: "created_at", Reason: "required when total_timeout is set"}
		case f.At.IsZero():
			return Decision{}, &FailureError{Field: "at", Reason: "required when total_timeout is set"}
		case f.At.Before(f.CreatedAt):
			return Decision{}, &FailureError{Field: "at", Value: f.At,
				Reason: "is before created_at (" + f.At.UTC().Format(time.RFC3339Nano) + " < " + f.CreatedAt.UTC().Format(time.RFC3339Nano) + ")"}
		}
	}
	pd, err := pol(f.Failure)
	if err != nil {
		return Decision{}, err
	}
	d := Decision{Action: pd.Action, Delay: pd.Delay, Reason: ReasonPolicy, Policy: pd}
	if s.TotalTimeout == 0 || pd.Reason == policy.ReasonHandlerCode {
		return d, nil
	}
	if _, over := b.Total(f.CreatedAt, f.At); over {
		return Decision{Action: onExhaustion(p), Reason: ReasonTotalTimeout, Policy: pd}, nil
	}
	if pd.Action == policy.Retry {
		// Times as durations since created_at: at most MaxSeconds apart
		// except f.At, whose distance saturates.
		used := sat.AddInt(sat.AddInt(f.At.Sub(f.CreatedAt), pd.Delay), s.Timeout)
		if s.TotalTimeout < used {
			return Decision{Action: onExhaustion(p), Reason: ReasonNoTimeLeft, Policy: pd}, nil
		}
	}
	return d, nil
}

func onExhaustion(p *policy.Policy) policy.Action {
	if p == nil {
		return policy.Default().Spec().OnExhaustion
	}
	return p.Spec().OnExhaustion
}
