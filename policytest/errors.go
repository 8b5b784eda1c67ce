package policytest

import (
	"strings"

	"pgregory.net/rapid"
)

// Segments of generated error types and patterns: a small vocabulary, so
// that types and patterns meet often, with case variants of one word.
var segments = []string{"a", "auth", "b", "io", "x", "Auth", "AUTH", "timeout", "é"}

func errorTypeOf(t *rapid.T, dots int) string {
	parts := make([]string, dots+1)
	for i := range parts {
		parts[i] = pick(t, segments, "segment")
	}
	return strings.Join(parts, ".")
}

var errorType = rapid.Custom(drawErrorType)

func drawErrorType(t *rapid.T) string {
	if intRange(0, 5).Draw(t, "type_kind") == 0 {
		return errorsPick1.Draw(t, "odd_type")
	}
	return errorTypeOf(t, intRange(0, 4).Draw(t, "dots"))
}

// ErrorType generates error types with 0 to 4 dots from a small vocabulary
// with case variants ("auth", "Auth", "AUTH"), and odd ones: "", ".",
// a leading or trailing dot, an empty segment, "*" and ".*" inside the type.
// Shrinks toward "a".
func ErrorType() *rapid.Generator[string] { return errorType }

var pattern = rapid.Custom(drawPattern)

func drawPattern(t *rapid.T) string {
	switch intRange(0, 5).Draw(t, "pattern_kind") {
	case 0, 1: // exact
		return errorTypeOf(t, intRange(0, 4).Draw(t, "dots"))
	case 2, 3: // prefix: 0 to 3 dots before ".*"
		return errorTypeOf(t, intRange(0, 3).Draw(t, "dots")) + ".*"
	case 4: // stars a regular-expression or glob reading would honour
		return errorsPick2.Draw(t, "star")
	default: // rejected entries
		return errorsPick3.Draw(t, "invalid_pattern")
	}
}

var patterns = rapid.Custom(drawPatterns)

func drawPatterns(t *rapid.T) []string {
	ps := make([]string, intRange(0, 4).Draw(t, "entries"))
	for i := range ps {
		ps[i] = drawPattern(t)
	}
	return ps
}

// drawValidPatterns draws a list without the two rejected entries.
func drawValidPatterns(t *rapid.T) []string {
	ps := drawPatterns(t)
	out := ps[:0]
	for _, p := range ps {
		if p != "" && p != ".*" {
			out = append(out, p)
		}
	}
	return out
}

// Patterns generates non_retryable_errors lists of 0 to 4 entries: exact
// types and prefixes ending in ".*" with 0 to 4 dots, entries with stars
// elsewhere (exact strings under RK-15), duplicates, and the two entries
// every implementation must reject, "" and ".*" alone. Shrinks toward the
// empty list.
func Patterns() *rapid.Generator[[]string] { return patterns }

// ErrorTypeFor generates error types that test the list ps: an entry
// itself, an entry's prefix extended by one segment, the prefix without its
// dot or with nothing after it ("auth", "auth."), an entry with a case
// change, or any [ErrorType].
func ErrorTypeFor(ps []string) *rapid.Generator[string] {
	if len(ps) == 0 {
		return errorType
	}
	return rapid.Custom(func(t *rapid.T) string { return errorTypeFor(t, ps) })
}

func errorTypeFor(t *rapid.T, ps []string) string {
	if len(ps) == 0 {
		return drawErrorType(t)
	}
	p := ps[intRange(0, len(ps)-1).Draw(t, "entry")]
	stem, isPrefix := strings.CutSuffix(p, ".*")
	switch intRange(0, 5).Draw(t, "derive") {
	case 0:
		return p
	case 1:
		return stem + "." + errorTypeOf(t, intRange(0, 2).Draw(t, "dots"))
	case 2:
		if isPrefix {
			return stem
		}
		return stem + "x"
	case 3:
		return stem + "."
	case 4: // flip the case of the first letter
		if p != "" && p[0] >= 'a' && p[0] <= 'z' {
			return strings.ToUpper(p[:1]) + p[1:]
		}
		if p != "" && p[0] >= 'A' && p[0] <= 'Z' {
			return strings.ToLower(p[:1]) + p[1:]
		}
		return p
	default:
		return drawErrorType(t)
	}
}

var code = errorsPick4

// Code generates handler response codes: "" (no code, which means RETRY),
// each of the four codes, and unknown ones a lenient parser might accept
// (lower case, white space, a dash). Shrinks toward "".
func Code() *rapid.Generator[string] { return code }

// Generators of fixed choices, built once.
var errorsPick1 = rapid.SampledFrom([]string{"", ".", "a.", ".a", "a..b", "auth.*", "*", "auth*", "a.b*"})
var errorsPick2 = rapid.SampledFrom([]string{"*", "auth*", "a.*.b", "a.b*", "auth.**", "auth.*.*", "a.?", ".*a", "auth.[a-z]*"})
var errorsPick3 = rapid.SampledFrom([]string{"", ".*"})
var errorsPick4 = rapid.SampledFrom([]string{"", "RETRY", "DISCARD", "DEAD_LETTER", "FAIL", "retry", "Retry", "UNKNOWN", " RETRY", "DEAD-LETTER"})
