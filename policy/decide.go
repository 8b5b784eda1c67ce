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

	// The fields below are the retry extensions of docs/extensions.md;
	// their zero values decide as OJS 1.0 does.

	// Request is a delay the handler asked for (errmatch.RetryAfter) or a
	// snooze (errmatch.Snooze); its Delay must not be negative.
	Request errmatch.Request
	// PrevDelay is the delay the job waited before the attempt that
	// failed (0 before the first retry): decorrelated jitter grows from
	// it. It must not be negative.
	PrevDelay time.Duration
	// Snoozes is how many snoozes the job has taken; not negative.
	Snoozes int
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
	// ReasonRetryAfter: the policy allows another attempt, after the
	// delay the handler asked for, bounded (docs/extensions.md §3.3).
	ReasonRetryAfter
	// ReasonSnoozed: the job snoozes: it runs again after the delay and
	// its attempt is not spent (docs/extensions.md §3.5).
	ReasonSnoozed
)

// String returns "retry", "handler_code", "non_retryable", "exhausted",
// "retry_after" or "snoozed"; any other value prints as "Reason(N)".
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
	case ReasonRetryAfter:
		return "retry_after"
	case ReasonSnoozed:
		return "snoozed"
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
// (spec §7.2, docs/decisions.md RK-13, docs/extensions.md §3.1):
//
//  1. f.Attempt < 1, a Code that is not "", RETRY, DISCARD, DEAD_LETTER
//     or FAIL, a negative f.Request.Delay, f.PrevDelay or f.Snoozes, or an
//     unknown f.Request.Kind: an error (*FailureError, errors.Is
//     ErrInvalidFailure; an unknown code also matches
//     errmatch.ErrUnknownCode).
//  2. DISCARD or FAIL: Discard, whatever the policy says.
//  3. DEAD_LETTER: DeadLetter, whatever the policy says.
//  4. A snooze (f.Request.Kind errmatch.Snooze) while f.Snoozes <
//     max_snoozes: Retry after min(f.Request.Delay, max_snooze or else
//     max_interval), ReasonSnoozed: the attempt is not spent. A snooze
//     past max_snoozes is a requested delay from here on (rule 8).
//  5. RETRY or no code, and f.ErrorType matches non_retryable_errors: the
//     on_exhaustion action (ReasonNonRetryable).
//  6. The first error rule whose match matches f.ErrorType is in force
//     (Policy.RuleFor); none: the policy itself.
//  7. f.Attempt >= max(max_attempts, 1) of the rule in force: the
//     on_exhaustion action (ReasonExhausted). RETRY never extends a job
//     past max_attempts, and max_attempts 0 behaves as 1 (RK-04).
//  8. A requested delay: Retry after min(f.Request.Delay, B),
//     ReasonRetryAfter, B the max_retry_after of the rule, else of the
//     policy, else the max_interval in force; never jittered.
//  9. Otherwise Retry, with Delay the backoff of the rule in force:
//     DelayAfterAt(f.Attempt, f.PrevDelay, r) (DelayAt for every jitter
//     mode but decorrelated).
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
	d, bo, err := p.decide(f)
	if err == nil && bo != nil {
		d.Delay = bo.DelayAfterAt(f.Attempt, f.PrevDelay, r)
	}
	return d, err
}

// Decide is DecideAt with the jitter drawn from src: src.Float64() is called
// once, only when the decision is a backoff Retry and the policy (or the
// rule in force) has jitter. A nil src uses backoff.Random().
func (p *Policy) Decide(f Failure, src backoff.Source) (Decision, error) {
	p = p.get()
	d, bo, err := p.decide(f)
	if err == nil && bo != nil {
		if src == nil {
			src = backoff.Random()
		}
		d.Delay = bo.DelayAfter(f.Attempt, f.PrevDelay, src)
	}
	return d, err
}

// decide applies the rules of DecideAt. For a backoff Retry it returns the
// Backoff that computes the delay; for every other decision nil.
func (p *Policy) decide(f Failure) (Decision, *backoff.Backoff, error) {
	if f.Attempt < 1 {
		return Decision{}, nil, &FailureError{Field: "attempt", Value: f.Attempt,
			Reason: "must be at least 1, got " + strconv.Itoa(f.Attempt)}
	}
	if err := checkExtensionFailure(&f); err != nil {
		return Decision{}, nil, err
	}
	switch f.Code {
	case "", errmatch.CodeRetry:
	case errmatch.CodeDiscard, errmatch.CodeFail:
		return Decision{Action: Discard, Reason: ReasonHandlerCode}, nil, nil
	case errmatch.CodeDeadLetter:
		return Decision{Action: DeadLetter, Reason: ReasonHandlerCode}, nil, nil
	default:
		_, err := errmatch.ParseCode(string(f.Code))
		return Decision{}, nil, &FailureError{Field: "code", Value: f.Code,
			Reason: "unknown handler code " + strconv.Quote(string(f.Code)) + " (want RETRY, DISCARD, DEAD_LETTER or FAIL)",
			Err:    err}
	}
	s := &p.spec
	if f.Request.Kind == errmatch.Snooze && f.Snoozes < s.MaxSnoozes {
		return Decision{Action: Retry, Delay: min(f.Request.Delay, boundOr(s.MaxSnooze, s.MaxInterval)), Reason: ReasonSnoozed}, nil, nil
	}
	if p.m.Match(f.ErrorType) {
		return Decision{Action: s.OnExhaustion, Reason: ReasonNonRetryable}, nil, nil
	}
	i := p.ruleFor(f.ErrorType)
	limit, bo, maxInterval, retryAfter := s.MaxAttempts, p.bo, s.MaxInterval, s.MaxRetryAfter
	if i > 0 {
		r := &s.ErrorRules[i-1]
		limit, bo, maxInterval, retryAfter = r.MaxAttempts, p.rules[i-1].bo, r.MaxInterval, boundOr(r.MaxRetryAfter, s.MaxRetryAfter)
	}
	if f.Attempt >= max(limit, 1) {
		return Decision{Action: s.OnExhaustion, Reason: ReasonExhausted}, nil, nil
	}
	if f.Request.Kind != errmatch.NoRequest {
		return Decision{Action: Retry, Delay: min(f.Request.Delay, boundOr(retryAfter, maxInterval)), Reason: ReasonRetryAfter}, nil, nil
	}
	return Decision{Action: Retry, Reason: ReasonRetry}, bo, nil
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
