package errmatch

import (
	"strconv"
	"time"
)

// RequestKind says what a handler asked for beside its failure: nothing, a
// delay before the next attempt, or a snooze (docs/extensions.md §3.3 and
// §3.5).
//
// The zero value is [NoRequest]. A RequestKind is a plain value, safe to
// copy and share.
type RequestKind uint8

const (
	// NoRequest: the retry policy alone sets the delay.
	NoRequest RequestKind = iota
	// RetryAfter: the handler asks that the next attempt wait Delay (an
	// HTTP Retry-After, Temporal's NextRetryDelay), bounded by the policy.
	RetryAfter
	// Snooze: the handler asks to run the job again after Delay without
	// spending an attempt (River's JobSnooze), bounded by the policy.
	Snooze
)

// String returns "none", "retry_after" or "snooze"; any other value prints
// as "RequestKind(N)".
func (k RequestKind) String() string {
	switch k {
	case NoRequest:
		return "none"
	case RetryAfter:
		return "retry_after"
	case Snooze:
		return "snooze"
	}
	return "RequestKind(" + strconv.Itoa(int(k)) + ")"
}

// Request is what a handler asked for beside its failure: a kind and its
// delay. Delay is meaningful only when Kind is not NoRequest; a negative
// one is invalid, and package policy refuses it. A Request carries no
// bound: the retry policy bounds it when it decides.
//
// The zero value asks for nothing. A Request is a plain value, safe to
// copy and share.
type Request struct {
	Kind  RequestKind
	Delay time.Duration
}

// WithRetryAfter returns err asking that the next attempt wait d: an
// [*Error] with Request {RetryAfter, d} whose cause is err. The type and
// code are those of the first *Error in err's tree ([Find]), so [Classify]
// reads the same type and code through it. A nil err yields nil. d is
// stored as given, even when negative; WithRetryAfter never panics.
func WithRetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	e := &Error{Request: Request{Kind: RetryAfter, Delay: d}, Err: err}
	if inner := Find(err); inner != nil {
		e.Type, e.Code = inner.Type, inner.Code
	}
	return e
}

// Snoozed returns an error asking to run the job again after d without
// spending an attempt: an [*Error] with Request {Snooze, d}, no type, no
// code and no cause. Its message is "errmatch: snooze " followed by d. d is
// stored as given, even when negative.
func Snoozed(d time.Duration) error {
	return &Error{Request: Request{Kind: Snooze, Delay: d}}
}

// RequestOf returns the Request of the first [*Error] in err's tree (the
// one [Classify] reads), or the zero Request when err is nil or holds no
// *Error. The walk is bounded as Find's is.
func RequestOf(err error) Request {
	if e := Find(err); e != nil {
		return e.Request
	}
	return Request{}
}
