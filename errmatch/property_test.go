package errmatch

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// smallString draws strings over an alphabet small enough that dots, stars,
// shared prefixes and exact collisions are common.
func smallString(minLen, maxLen int) *rapid.Generator[string] {
	return rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', '.', '*', 'A'}), minLen, maxLen, -1)
}

// namespace draws a non-empty string for use before ".*" or as a type part.
func namespace() *rapid.Generator[string] {
	return rapid.OneOf(
		smallString(1, 6),
		smallString(1, 40), // long enough to cross several 8-byte words
	)
}

func validPatterns() *rapid.Generator[[]string] {
	pat := rapid.OneOf(
		smallString(1, 24).Filter(func(s string) bool { return s != ".*" }),
		rapid.Map(namespace(), func(s string) string { return s + ".*" }),
	)
	return rapid.SliceOfN(pat, 0, 12)
}

func TestPropExactEntriesMatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		patterns := validPatterns().Draw(t, "patterns")
		m, err := Compile(patterns)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		for _, p := range patterns {
			if !m.Match(p) {
				t.Fatalf("Match(%q) = false for a listed entry", p)
			}
		}
	})
}

func TestPropPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := namespace().Draw(t, "prefix")
		m, err := Compile([]string{p + ".*"})
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		rest := smallString(0, 30).Draw(t, "rest")
		if !m.Match(p + "." + rest) {
			t.Fatalf("%q does not match %q", p+".*", p+"."+rest)
		}
		other := smallString(0, 50).Draw(t, "other")
		if got, want := m.Match(other), strings.HasPrefix(other, p+"."); got != want {
			t.Fatalf("pattern %q: Match(%q) = %v, want %v", p+".*", other, got, want)
		}
	})
}

func TestPropAgreesWithNaive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		patterns := validPatterns().Draw(t, "patterns")
		m, err := Compile(patterns)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		// Types built from pattern pieces hit the interesting cases far more
		// often than independent random strings.
		candidates := []string{smallString(0, 50).Draw(t, "random")}
		for _, p := range patterns {
			suffix := smallString(0, 10).Draw(t, "suffix")
			cut := rapid.IntRange(0, len(p)).Draw(t, "cut")
			candidates = append(candidates, p, p+suffix, p[:cut], strings.TrimSuffix(p, "*")+suffix, strings.TrimSuffix(p, ".*")+suffix)
		}
		for _, typ := range candidates {
			if got, want := m.Match(typ), naiveMatch(patterns, typ); got != want {
				t.Fatalf("patterns %q: Match(%q) = %v, naive %v", patterns, typ, got, want)
			}
		}
	})
}

func TestPropCompileRejectsExactlyEmptyAndBareWildcard(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		patterns := rapid.SliceOfN(rapid.OneOf(smallString(0, 4), rapid.Just(".*"), rapid.Just("")), 0, 10).Draw(t, "patterns")
		var bad []int
		for i, p := range patterns {
			if p == "" || p == ".*" {
				bad = append(bad, i)
			}
		}
		m, err := Compile(patterns)
		if len(bad) == 0 {
			if err != nil || m == nil {
				t.Fatalf("Compile(%q) = %v, %v; want a Matcher", patterns, m, err)
			}
			if got := m.Patterns(); strings.Join(got, "\x00") != strings.Join(patterns, "\x00") || len(got) != len(patterns) {
				t.Fatalf("Patterns() = %q, want %q", got, patterns)
			}
			return
		}
		if err == nil || m != nil {
			t.Fatalf("Compile(%q) = %v, %v; want an error", patterns, m, err)
		}
		errs := err.(interface{ Unwrap() []error }).Unwrap()
		if len(errs) != len(bad) {
			t.Fatalf("got %d errors, want %d", len(errs), len(bad))
		}
		for i, e := range errs {
			var pe *PatternError
			if !errors.As(e, &pe) || pe.Index != bad[i] || pe.Pattern != patterns[bad[i]] {
				t.Fatalf("error %d = %v, want pattern index %d", i, e, bad[i])
			}
			if !errors.Is(e, ErrInvalidPattern) || errors.Is(e, ErrEmptyPattern) != (pe.Pattern == "") {
				t.Fatalf("error %d = %v has the wrong sentinels", i, e)
			}
		}
	})
}

func TestPropHashIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringN(1, 100, -1).Draw(t, "s")
		if k := incrementalHashMismatch(s); k != 0 {
			t.Fatalf("incremental hash of %q differs at length %d", s, k)
		}
	})
}
