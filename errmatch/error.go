package errmatch

// Error attaches an OJS error type and a handler response code to an
// ordinary Go error, so that a job runtime can classify what a handler
// returned (see [Classify]).
//
// Type is the dot-namespaced error type ("external.stripe.card_declined")
// that non_retryable_errors patterns are matched against. Code is the
// handler's response code; "" means [CodeRetry]. Err is the cause and is what
// [Error.Unwrap] returns, so [errors.Is] and [errors.As] see through an
// *Error to the cause.
//
// Neither field is validated: an unknown Code is carried as is, and callers
// that need a valid one check it with [ParseCode]. The zero value is usable
// and describes an untyped failure with no cause. An *Error is not modified
// by this package and is safe to share once built.
type Error struct {
	Type string // dot-namespaced OJS error type; may be empty
	Code Code   // handler response code; "" means CodeRetry
	Err  error  // the cause; may be nil
	// Request is a delay the handler asked for, or a snooze
	// (docs/extensions.md); the zero value asks for nothing. See
	// [WithRetryAfter], [Snoozed] and [RequestOf].
	Request Request
}

// Error returns "<type>: <cause message>". When Type is empty it returns just
// the cause's message, and when Err is nil just the type; with neither it
// returns "errmatch: untyped error", or "errmatch: snooze DELAY" for a
// snooze ([Snoozed]).
func (e *Error) Error() string {
	switch {
	case e == nil:
		return "errmatch: <nil Error>"
	case e.Err == nil && e.Type == "" && e.Request.Kind == Snooze:
		return "errmatch: snooze " + e.Request.Delay.String()
	case e.Err == nil && e.Type == "":
		return "errmatch: untyped error"
	case e.Err == nil:
		return e.Type
	case e.Type == "":
		return e.Err.Error()
	}
	return e.Type + ": " + e.Err.Error()
}

// Unwrap returns the cause, Err.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// Wrap returns err annotated with an error type and a handler code, as an
// [*Error]. A nil err yields nil, so that `return errmatch.Wrap(err, ...)`
// is safe on the success path. code is stored as given, even if it is not one
// of the four known codes; Wrap never panics.
func Wrap(err error, errType string, code Code) error {
	if err == nil {
		return nil
	}
	return &Error{Type: errType, Code: code, Err: err}
}

// MaxUnwrapDepth and MaxUnwrapErrors bound the walk of an error tree by
// [Classify] and [Find]: errors more than MaxUnwrapDepth Unwrap steps below
// the root are not looked at, and the walk stops after MaxUnwrapErrors
// errors. An Unwrap method that returns its own receiver, or any cycle of
// errors, thus costs at most MaxUnwrapErrors steps instead of a hang, and
// a tree that grows exponentially (an Unwrap() []error that repeats its
// children) is cut at the same count. Real error chains are a handful of
// errors deep.
const (
	MaxUnwrapDepth  = 100
	MaxUnwrapErrors = 1000
)

// Find returns the first [*Error] in err's tree, in the order [errors.As]
// uses (the error itself, then depth first through Unwrap() error and
// Unwrap() []error, honouring As(any) bool methods), or nil when there is
// none, err is nil, or the *Error found is nil. Unlike errors.As the walk
// is bounded ([MaxUnwrapDepth], [MaxUnwrapErrors]), so a cyclic tree
// returns instead of looping forever.
func Find(err error) *Error {
	budget := MaxUnwrapErrors
	return find(err, 0, &budget)
}

func find(err error, depth int, budget *int) *Error {
	for err != nil && depth <= MaxUnwrapDepth && *budget > 0 {
		*budget--
		if e, ok := err.(*Error); ok {
			return e
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var e *Error
			if x.As(&e) {
				return e
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
			depth++
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				if e := find(c, depth+1, budget); e != nil {
					return e
				}
				if *budget <= 0 {
					break
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}

// Classify finds the first [*Error] in err's tree (the one [errors.As] would
// find, see [Find]) and returns its type and code, with ok true. An empty
// code is reported as [CodeRetry]; any other code is returned as stored,
// unvalidated. When err is nil or holds no *Error, Classify returns "",
// CodeRetry, false: a plain error is an untyped failure that follows the
// normal retry policy. The walk is bounded by [MaxUnwrapDepth] and
// [MaxUnwrapErrors], so an error whose Unwrap returns itself, or any cycle,
// is classified in bounded time (as untyped if no *Error was reached).
func Classify(err error) (errType string, code Code, ok bool) {
	e := Find(err)
	if e == nil {
		return "", CodeRetry, false
	}
	code = e.Code
	if code == "" {
		code = CodeRetry
	}
	return e.Type, code, true
}

// Type returns the error type [Classify] finds in err, or "" when there is
// none. It is shorthand for the first result of Classify.
func Type(err error) string {
	t, _, _ := Classify(err)
	return t
}
