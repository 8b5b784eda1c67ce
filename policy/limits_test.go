package policy

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/errmatch"
)

// allocated runs f once and returns the bytes it allocated, as
// runtime.MemStats.TotalAlloc counts them: a benchmark-style measure of
// work, independent of the machine's speed.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileDuration is a hostile duration: "PT1." + a million zeros +
// "1S" (it took 204 s to parse inside a 1 MB policy).
func hostileDuration() string { return "PT1." + strings.Repeat("0", 1_000_000) + "1S" }

func TestHostileDuration(t *testing.T) {
	s := hostileDuration()
	_, err := ParseDuration(s)
	var de *DurationError
	if !errors.Is(err, ErrDurationTooLong) || !errors.Is(err, ErrInvalidDuration) || !errors.As(err, &de) {
		t.Fatalf("ParseDuration(hostile) = %v, want ErrDurationTooLong", err)
	}
	want := `policy: invalid ISO 8601 duration "PT1.` + strings.Repeat("0", 44) + `…(1000006 bytes)": longer than the limit of 256 bytes (policy.MaxDurationLen): 1000006 bytes`
	if err.Error() != want {
		t.Errorf("message\n%q, want\n%q", err, want)
	}
	if n := testing.AllocsPerRun(10, func() { ParseDuration(s) }); n > 4 {
		t.Errorf("ParseDuration(hostile) makes %v allocations, want at most 4 (the error and its message)", n)
	}

	// The same string in a 1 MB policy: one clear error, and the work is
	// a small multiple of the input (the lexer's copy of the string and
	// the FieldError's Value), not the quadratic cost of building the
	// number one character at a time.
	doc := []byte(`{"initial_interval": "` + s + `"}`)
	var perr error
	alloc := allocated(func() { _, perr = Parse(doc) })
	if !errors.Is(perr, ErrInvalidPolicy) || !errors.Is(perr, ErrDurationTooLong) {
		t.Fatalf("Parse: %v, want ErrInvalidPolicy and ErrDurationTooLong", perr)
	}
	if !strings.HasPrefix(perr.Error(), `policy: initial_interval: invalid ISO 8601 duration "PT1.000`) || len(perr.Error()) > 300 {
		t.Errorf("message (%d bytes): %q", len(perr.Error()), perr)
	}
	if limit := uint64(3 * len(doc)); alloc > limit {
		t.Errorf("Parse of the 1 MB policy allocated %d bytes, want at most %d (3 bytes per input byte)", alloc, limit)
	}
	// Below the limit the duration is read: leading zeros and long
	// fractions cost one pass.
	if d, err := ParseDuration("PT1." + strings.Repeat("0", MaxDurationLen-7) + "1S"); err != nil || d != 1e9 {
		t.Errorf("a %d-byte duration: %v, %v", MaxDurationLen, d, err)
	}
}

// A policy with 2 000 000 empty patterns used 1 GB and printed a
// 115 MB error line.
func TestTwoMillionEmptyPatterns(t *testing.T) {
	const n = 2_000_000
	var b strings.Builder
	b.WriteString(`{"non_retryable_errors": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`""`)
	}
	b.WriteString(`]}`)
	doc := []byte(b.String())
	var err error
	alloc := allocated(func() { _, err = Parse(doc) })
	if !errors.Is(err, ErrInvalidPolicy) || !errors.Is(err, errmatch.ErrTooManyPatterns) {
		t.Fatalf("Parse: %v, want ErrTooManyPatterns", err)
	}
	want := "policy: non_retryable_errors: at most 100000 patterns (errmatch.MaxPatterns), got 2000000"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// At most MaxPatterns strings are kept: 16 bytes each, about five
	// times over while the slice grows (1.6 MB; it was 1 GB).
	if limit := uint64(16 << 20); alloc > limit {
		t.Errorf("Parse allocated %d bytes for %d empty patterns, want at most %d", alloc, n, limit)
	}
	spec := DefaultSpec()
	spec.NonRetryableErrors = make([]string, n)
	if _, err := New(spec); err == nil || err.Error() != want {
		t.Errorf("New: %v, want %q", err, want)
	}
}

// Within the count limit every bad entry is a problem; the error lists
// MaxListedErrors and counts the rest, so its size is bounded.
func TestErrorListIsCapped(t *testing.T) {
	doc := []byte(`{"non_retryable_errors": [""` + strings.Repeat(`,""`, errmatch.MaxPatterns-1) + `], "max_attempts": -1}`)
	var err error
	alloc := allocated(func() { _, err = Parse(doc) })
	var ve *ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, errmatch.ErrEmptyPattern) {
		t.Fatalf("Parse: %v", err)
	}
	if len(ve.Errors) != MaxListedErrors || ve.Omitted != errmatch.MaxPatterns+1-MaxListedErrors {
		t.Errorf("listed %d, omitted %d", len(ve.Errors), ve.Omitted)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `policy: 100001 problems: non_retryable_errors[0]: must not be empty, got ""; `) ||
		!strings.HasSuffix(msg, "; and 99981 more") || len(msg) > 2000 {
		t.Errorf("message (%d bytes) = %.200q…", len(msg), msg)
	}
	if limit := uint64(16 << 20); alloc > limit {
		t.Errorf("Parse allocated %d bytes, want at most %d", alloc, limit)
	}
}

func TestDocumentTooLarge(t *testing.T) {
	doc := make([]byte, MaxDocumentSize+1)
	for i := range doc {
		doc[i] = ' '
	}
	var err error
	alloc := allocated(func() { _, err = Parse(doc) })
	if !errors.Is(err, ErrDocumentTooLarge) || !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("Parse: %v, want ErrDocumentTooLarge", err)
	}
	if want := "policy: the document is 16777217 bytes, more than the limit of 16777216 bytes (policy.MaxDocumentSize)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if alloc > 4096 {
		t.Errorf("refusing the document allocated %d bytes", alloc)
	}
	doc = doc[:MaxDocumentSize]
	if p, err := Parse(doc); err != nil || !p.Equal(Default()) {
		t.Errorf("a document of exactly MaxDocumentSize bytes of white space: %v", err)
	}
}

// Invalid UTF-8 in non_retryable_errors was replaced by U+FFFD in
// Parse while New rejected it. Both reject it now, with the same problem.
func TestInvalidUTF8PatternsParseAndNew(t *testing.T) {
	for _, c := range []struct {
		json, pattern string // the JSON text of the entry; the Go string New gets
	}{
		{"\"a.\xff\"", "a.\xff"},
		{"\"\xc3\"", "\xc3"},
		{`"\ud800.x"`, "\xed\xa0\x80.x"},
		{`"x\udfff"`, "x\xed\xbf\xbf"},
	} {
		_, perr := Parse([]byte(`{"non_retryable_errors": ["ok.*", ` + c.json + `]}`))
		spec := DefaultSpec()
		spec.NonRetryableErrors = []string{"ok.*", c.pattern}
		_, nerr := New(spec)
		if perr == nil || nerr == nil {
			t.Errorf("%s: Parse %v, New %v; want both to reject", c.json, perr, nerr)
			continue
		}
		if perr.Error() != nerr.Error() {
			t.Errorf("%s: Parse says %q, New says %q", c.json, perr, nerr)
		}
		if !strings.HasPrefix(perr.Error(), "policy: non_retryable_errors[1]: must be valid UTF-8, got ") {
			t.Errorf("%s: %v", c.json, perr)
		}
	}
	// A valid surrogate pair is one code point, accepted by both.
	p, err := Parse([]byte(`{"non_retryable_errors": ["\ud83d\ude00.*"]}`))
	if err != nil || p.Spec().NonRetryableErrors[0] != "😀.*" {
		t.Errorf("surrogate pair: %v", err)
	}
}
