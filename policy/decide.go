package policy

import (
	"iter"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
)

// Failure describes a failed attempt, the input of Decide.
//
// The zero value is not a valid Failure (Attempt must be at least 1).
// A Failure is a plain value and safe to copy.
type Failure struct {
	// Attempt is the 1-based number of the attempt that just failed.
	Attempt int
	// ErrorType is the dot-namespaced OJS error type, matched against
	// non_retryable_errors; "" (e.g. a timeout) matches no pattern.
	ErrorType string
	// Code is the handler's response code; "" means errmatch.CodeRetry.
	Code errmatch.Code
}

// Reason says which rule produced a Decision.
//
// The zero value is ReasonRetry. A Reason is a plain value, safe to copy and
// share.
type Reason uint8

const (
	// ReasonRetry: the policy allows another attempt.
	ReasonRetry Reason = iota
	// ReasonHandlerCode: the handler's DISCARD, FAIL or DEAD_LETTER code decided.
	ReasonHandlerCode
	// ReasonNonRetryable: the error type matched non_retryable_errors.
	ReasonNonRetryable
	// ReasonExhausted: the attempt was the last one max_attempts allows.
	ReasonExhausted
)

// String returns "retry", "handler_code", "non_retryable" or "exhausted";
// any other value prints as "Reason(N)".
func (r Reason) String() string {
	switch r {
	case ReasonRetry:
		return "retry"
	case ReasonHandlerCode:
		return "handler_code"
	case ReasonNonRetryable:
		return "non_retryable"
	case ReasonExhausted:
		return "exhausted"
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Decision is what to do with a failed job.
//
// The zero value means "retry at once". A Decision is a plain value, safe
// to copy and to share between goroutines.
type Decision struct {
	Action Action        // Retry, Discard or DeadLetter
	Delay  time.Duration // the backoff delay before the next attempt; 0 unless Action is Retry
	Reason Reason        // the rule that decided
}

// DecideAt decides what happens after failure f, drawing the jitter from r
// (a number in [0,1), clamped; ignored when the policy has no jitter). It is
// pure: the same f and r always give the same Decision. The rules, in order
// (spec §7.2, docs/decisions.md RK-13):
//
//  1. f.Attempt < 1, or a Code that is not "", RETRY, DISCARD, DEAD_LETTER
//     or FAIL: an error (*FailureError, errors.Is ErrInvalidFailure; an
//     unknown code also matches errmatch.ErrUnknownCode).
//  2. DISCARD or FAIL: Discard, whatever the policy says.
//  3. DEAD_LETTER: DeadLetter, whatever the policy says.
//  4. RETRY or no code, and f.ErrorType matches non_retryable_errors: the
//     on_exhaustion action (ReasonNonRetryable).
//  5. f.Attempt >= max(max_attempts, 1): the on_exhaustion action
//     (ReasonExhausted). RETRY never extends a job past max_attempts, and
//     max_attempts 0 behaves as 1 (RK-04).
//  6. Otherwise Retry, with Delay = Backoff().DelayAt(f.Attempt, r).
//
// For the default policy (3 attempts, exponential, PT1S, jitter):
//
//	attempt  code         error type    decision
//	1        ""           "x.timeout"   retry, 1s × (0.5+r)
//	2        RETRY        "x.timeout"   retry, 2s × (0.5+r)
//	3        ""           "x.timeout"   discard (exhausted)
//	1        DEAD_LETTER  "x.timeout"   dead_letter (handler code)
//
// A nil or zero Policy decides as Default(). DecideAt does not allocate
// unless it returns an error.
func (p *Policy) DecideAt(f Failure, r float64) (Decision, error) {
	p = p.get()
	d, err := p.decide(f)
	if err == nil && d.Action == Retry {
		d.Delay = p.bo.DelayAt(f.Attempt, r)
	}
	return d, err
}

// Decide is DecideAt with the jitter drawn from src: src.Float64() is called
// once, only when the decision is Retry and the policy has jitter. A nil src
// uses backoff.Random().
func (p *Policy) Decide(f Failure, src backoff.Source) (Decision, error) {
	p = p.get()
	d, err := p.decide(f)
	if err == nil && d.Action == Retry {
		if src == nil {
			src = backoff.Random()
		}
		d.Delay = p.bo.Delay(f.Attempt, src)
	}
	return d, err
}

// decide applies the rules of DecideAt without the delay.
func (p *Policy) decide(f Failure) (Decision, error) {
	if f.Attempt < 1 {
		return Decision{}, &FailureError{Field: "attempt", Value: f.Attempt,
			Reason: "must be at least 1, got " + strconv.Itoa(f.Attempt)}
	}
	switch f.Code {
	case "", errmatch.CodeRetry:
	case errmatch.CodeDiscard, errmatch.CodeFail:
		return Decision{Action: Discard, Reason: ReasonHandlerCode}, nil
	case errmatch.CodeDeadLetter:
		return Decision{Action: DeadLetter, Reason: ReasonHandlerCode}, nil
	default:
		_, err := errmatch.ParseCode(string(f.Code))
		return Decision{}, &FailureError{Field: "code", Value: f.Code,
			Reason: "unknown handler code " + strconv.Quote(string(f.Code)) + " (want RETRY, DISCARD, DEAD_LETTER or FAIL)",
			Err:    err}
	}
	if p.m.Match(f.ErrorType) {
		return Decision{Action: p.spec.OnExhaustion, Reason: ReasonNonRetryable}, nil
	}
	if f.Attempt >= max(p.spec.MaxAttempts, 1) {
		return Decision{Action: p.spec.OnExhaustion, Reason: ReasonExhausted}, nil
	}
	return Decision{Action: Retry, Reason: ReasonRetry}, nil
}

// Schedule returns the delays of a job whose every attempt fails with a
// retryable error: for each attempt n from 1 to max(max_attempts, 1) - 1
// (the attempts that are retried) it yields n and the delay before attempt
// n+1, drawn from src as Decide draws it (nil src: backoff.Random()). After
// the last yielded attempt the next failure ends the job with the
// on_exhaustion action. It is shorthand for
// p.Backoff().Schedule(max(p.Spec().MaxAttempts, 1)-1, src); with a huge
// max_attempts the sequence is that long, so break out of the loop when
// you have seen enough. A nil or zero Policy yields Default()'s schedule.
func (p *Policy) Schedule(src backoff.Source) iter.Seq2[int, time.Duration] {
	p = p.get()
	return p.bo.Schedule(max(p.spec.MaxAttempts, 1)-1, src)
}
