package policy

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrorType is the OJS error type of every rejected retry policy (spec §11.1).
const ErrorType = "validation.retry_policy_invalid"

// ErrInvalidPolicy is the errors.Is target for every validation failure of
// Parse and New. The concrete error is a *ValidationError holding one
// *FieldError per problem.
var ErrInvalidPolicy = errors.New("policy: invalid retry policy")

// ErrUnknownField is the cause (FieldError.Err) of every unknown-key
// problem of Parse, so errors.Is(err, ErrUnknownField) tells a typo from a
// bad value; the FieldError's Suggestion holds the known field it is
// closest to, if any.
var ErrUnknownField = errors.New("policy: unknown field")

// ErrInvalidFailure is the errors.Is target for a Failure that Decide cannot
// judge: an attempt below 1 or an unknown handler code. The concrete error is
// a *FailureError.
var ErrInvalidFailure = errors.New("policy: invalid failure")

// FieldError is one problem with one field of a retry policy. It matches
// ErrInvalidPolicy with errors.Is, and Unwrap returns the underlying cause
// when there is one (a *DurationError, an *errmatch.PatternError, a
// backoff error, a JSON syntax error).
//
// FieldErrors are built by Parse and New and never mutated afterwards, so
// they are safe to read from several goroutines. The zero value describes a
// problem with the whole document and no reason.
type FieldError struct {
	// Field is the JSON path of the field: "max_attempts",
	// "non_retryable_errors[2]", the name of an unknown key (`""` for
	// the empty key), or "" for a problem with the document as a whole
	// (not an object, bad JSON, trailing data).
	Field string
	// Value is the offending value: for Parse the decoded JSON value
	// (json.Number, string, bool, nil for null, or json.Delim('[') or
	// json.Delim('{') for an array or object); for New the Go value of the Spec field.
	Value any
	// Reason says what is wrong and shows the value, e.g.
	// "must be a non-negative integer, got -1".
	Reason string
	// Err is the underlying cause, or nil. For an unknown key it is
	// ErrUnknownField.
	Err error
	// Suggestion is, for an unknown key, the known field it is closest to
	// (case, '_' and '-' ignored, a few typed letters off: "jiter" gives
	// "jitter"), also shown in Reason as `did you mean "jitter"?`; "" when
	// none is close or the problem is not an unknown key.
	Suggestion string
}

// Error returns "policy: FIELD: REASON", e.g.
// "policy: max_attempts: must be a non-negative integer, got -1".
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("policy: ")
	e.write(&b)
	return b.String()
}

func (e *FieldError) write(b *strings.Builder) {
	if e.Field != "" {
		b.WriteString(fieldLabel(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
}

// Is reports whether target is ErrInvalidPolicy.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidPolicy }

// Unwrap returns the underlying cause, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// clipLen is the longest input echoed whole in an error message; longer
// values are cut (see clip) so that a huge input cannot make a huge message.
const clipLen = 64

// clip returns s unchanged when it is at most clipLen bytes long, else its
// first bytes (cut at a UTF-8 boundary) followed by "…" and the full
// length, e.g. "99999…(100000 bytes)". Error values keep the full input in
// their Value fields; only the message text is shortened.
func clip(s string) string {
	if len(s) <= clipLen {
		return s
	}
	n := clipLen - 16
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// fieldLabel quotes field names that are not plain paths (unknown keys can be
// any string).
func fieldLabel(f string) string {
	if f == `""` { // the empty key, already quoted
		return f
	}
	if len(f) > clipLen {
		return strconv.Quote(clip(f))
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '[' || c == ']' || c == '.' || c == '-') {
			return strconv.Quote(f)
		}
	}
	return f
}

// ValidationError is a rejected retry policy with every problem found, not
// only the first: the first MaxListedErrors as FieldErrors, the number of
// the others in Omitted (so that a hostile document cannot make a huge
// error). It matches ErrInvalidPolicy with errors.Is, errors.As finds
// it and each of its listed *FieldError values, and Type returns ErrorType.
//
// ValidationErrors are built by Parse and New and never mutated afterwards,
// so they are safe to read from several goroutines. The zero value holds no
// problems; its message is "policy: invalid retry policy".
type ValidationError struct {
	Errors  []*FieldError // at least one, in the order found; at most MaxListedErrors
	Omitted int           // further problems found but not listed
}

// MaxListedErrors is the largest number of FieldErrors a ValidationError
// lists; further problems are only counted, in Omitted.
const MaxListedErrors = 20

// Error lists the problems: with one, the same text as that FieldError;
// with several, "policy: N problems: A; B; ..." ending in "; and K more"
// when some are not listed.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("policy: ")
	switch n := len(e.Errors) + e.Omitted; {
	case len(e.Errors) == 0:
		b.WriteString("invalid retry policy")
	case n == 1:
		e.Errors[0].write(&b)
	default:
		b.WriteString(strconv.Itoa(n))
		b.WriteString(" problems: ")
		for i, fe := range e.Errors {
			if i > 0 {
				b.WriteString("; ")
			}
			fe.write(&b)
		}
		if e.Omitted > 0 {
			b.WriteString("; and ")
			b.WriteString(strconv.Itoa(e.Omitted))
			b.WriteString(" more")
		}
	}
	return b.String()
}

// Type returns ErrorType, the OJS error type for an invalid retry policy.
func (e *ValidationError) Type() string { return ErrorType }

// Is reports whether target is ErrInvalidPolicy.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidPolicy }

// Unwrap returns the FieldErrors, so that errors.Is and errors.As reach them
// and their causes.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		errs[i] = fe
	}
	return errs
}

// FailureError is a Failure that Decide cannot judge. It matches
// ErrInvalidFailure with errors.Is; for an unknown code Unwrap returns the
// cause, which matches errmatch.ErrUnknownCode. Decide never modifies one
// after returning it, so it is safe to share between goroutines; the zero
// value names no field and has no cause.
type FailureError struct {
	Field  string // "attempt" or "code"
	Value  any    // the offending Failure.Attempt (int) or Failure.Code
	Reason string // e.g. "must be at least 1, got 0"
	Err    error  // the cause, or nil
}

// Error returns "policy: failure FIELD: REASON".
func (e *FailureError) Error() string {
	return "policy: failure " + e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalidFailure.
func (e *FailureError) Is(target error) bool { return target == ErrInvalidFailure }

// Unwrap returns the cause, or nil.
func (e *FailureError) Unwrap() error { return e.Err }
