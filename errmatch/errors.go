package errmatch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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

	// ErrPatternTooLong is matched by the error for a pattern longer than
	// MaxPatternLen bytes.
	ErrPatternTooLong = errors.New("errmatch: pattern too long")

	// ErrTooManyPatterns is matched by the error for a list of more than
	// MaxPatterns entries.
	ErrTooManyPatterns = errors.New("errmatch: too many patterns")

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
// `errmatch: pattern 2 "": must not be empty`. A pattern longer than 64
// bytes is shown cut, with its length.
func (e *PatternError) Error() string {
	if e == nil {
		return "errmatch: <nil PatternError>"
	}
	return fmt.Sprintf("errmatch: pattern %d %q: %s", e.Index, clip(e.Pattern), e.Reason)
}

// clip returns s, or for s longer than 64 bytes its first bytes (cut at a
// UTF-8 boundary) and its length, so that messages stay short.
func clip(s string) string {
	const n = 48
	if len(s) <= 64 {
		return s
	}
	k := n
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Is reports whether target is [ErrInvalidPattern], or the sentinel for the
// specific condition of this pattern ([ErrEmptyPattern], [ErrEmptyPrefix],
// [ErrPatternTooLong]).
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
	case ErrPatternTooLong:
		return len(e.Pattern) > MaxPatternLen
	}
	return false
}

// CompileError is the error [Compile] returns for a list with rejected
// entries: the first 20 of them, in index order, and how many more there
// were. errors.Is and errors.As reach each listed *PatternError. It is
// never mutated after Compile returns it, so it is safe to share; the zero
// value lists nothing.
type CompileError struct {
	Errors  []*PatternError // the first rejected entries, at most 20
	Omitted int             // rejected entries not listed
}

// Error returns one line per listed entry, then
// "errmatch: and K more invalid patterns" when some were omitted.
func (e *CompileError) Error() string {
	var b strings.Builder
	for i, pe := range e.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(pe.Error())
	}
	if e.Omitted > 0 {
		if len(e.Errors) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("errmatch: and " + strconv.Itoa(e.Omitted) + " more invalid patterns")
	}
	if b.Len() == 0 {
		return ErrInvalidPattern.Error()
	}
	return b.String()
}

// Unwrap returns the listed *PatternError values.
func (e *CompileError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, pe := range e.Errors {
		errs[i] = pe
	}
	return errs
}

// Is reports whether target is ErrInvalidPattern (also when every rejected
// entry was omitted from the list).
func (e *CompileError) Is(target error) bool { return target == ErrInvalidPattern }

// limitError is the error for a list of more than MaxPatterns entries.
type limitError struct{ n int }

func (e *limitError) Error() string {
	return "errmatch: " + strconv.Itoa(e.n) + " patterns, more than the limit of " + strconv.Itoa(MaxPatterns) + " (errmatch.MaxPatterns)"
}

func (e *limitError) Unwrap() error { return ErrTooManyPatterns }

// unknownCodeError is what ParseCode returns; it unwraps to ErrUnknownCode.
type unknownCodeError struct{ code string }

func (e *unknownCodeError) Error() string {
	return fmt.Sprintf("errmatch: unknown handler code %q (want RETRY, DISCARD, DEAD_LETTER or FAIL)", e.code)
}

func (e *unknownCodeError) Unwrap() error { return ErrUnknownCode }
