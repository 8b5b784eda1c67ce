package errmatch

import (
	"errors"
	"fmt"
)

// Sentinel errors for [errors.Is].
var (
	// ErrInvalidPattern is matched by every error Compile reports about a
	// pattern, whatever the reason.
	ErrInvalidPattern = errors.New("errmatch: invalid pattern")

	// ErrEmptyPattern is matched by the error for an empty pattern "".
	ErrEmptyPattern = errors.New("errmatch: empty pattern")

	// ErrEmptyPrefix is matched by the error for the pattern ".*", a prefix
	// pattern with nothing before the wildcard.
	ErrEmptyPrefix = errors.New("errmatch: empty prefix before \".*\"")

	// ErrUnknownCode is matched by the error ParseCode returns for a string
	// that is not one of the four handler codes.
	ErrUnknownCode = errors.New("errmatch: unknown handler code")
)

// PatternError describes one pattern that Compile rejected.
//
// It matches [ErrInvalidPattern] with [errors.Is] in every case, and also
// [ErrEmptyPattern] when Pattern is "" and [ErrEmptyPrefix] when Pattern is
// ".*". The zero value describes an empty pattern at index 0. A PatternError
// is a plain value and safe to share once built.
type PatternError struct {
	Index   int    // position of the pattern in the list given to Compile
	Pattern string // the rejected pattern, verbatim
	Reason  string // why it was rejected, in words
}

// Error returns a message of the form
// `errmatch: pattern 2 "": must not be empty`.
func (e *PatternError) Error() string {
	if e == nil {
		return "errmatch: <nil PatternError>"
	}
	return fmt.Sprintf("errmatch: pattern %d %q: %s", e.Index, e.Pattern, e.Reason)
}

// Is reports whether target is [ErrInvalidPattern], or the sentinel for the
// specific condition of this pattern ([ErrEmptyPattern], [ErrEmptyPrefix]).
func (e *PatternError) Is(target error) bool {
	if e == nil {
		return false
	}
	switch target {
	case ErrInvalidPattern:
		return true
	case ErrEmptyPattern:
		return e.Pattern == ""
	case ErrEmptyPrefix:
		return e.Pattern == ".*"
	}
	return false
}

// unknownCodeError is what ParseCode returns; it unwraps to ErrUnknownCode.
type unknownCodeError struct{ code string }

func (e *unknownCodeError) Error() string {
	return fmt.Sprintf("errmatch: unknown handler code %q (want RETRY, DISCARD, DEAD_LETTER or FAIL)", e.code)
}

func (e *unknownCodeError) Unwrap() error { return ErrUnknownCode }
