package errmatch

import (
	"errors"
	"strings"
	"testing"
)

// FuzzCompile splits patterns on '\n', compiles them and checks that Compile
// never panics, that it fails exactly for "" and ".*" entries, and that a
// compiled Matcher agrees with naiveMatch on errType and on every entry.
func FuzzCompile(f *testing.F) {
	f.Add("validation.payload_invalid\nauth.*", "auth.token_expired")
	f.Add("validation.payload_invalid\nauth.*", "external.auth.failure")
	f.Add("auth.*", "auth")
	f.Add("auth.*", "authx")
	f.Add("*\nauth*\na.*.b", "a.x.b")
	f.Add("", "x")
	f.Add(".*", ".x")
	f.Add("a\n\nb", "a")
	f.Add("external.stripe.*\nexternal.*", "external.stripe.card_declined")
	f.Add("aaaaaaaaaaaaaaa.*", "aaaaaaaaaaaaaaa.b")
	f.Fuzz(func(t *testing.T, list, errType string) {
		patterns := strings.Split(list, "\n")
		m, err := Compile(patterns)
		wantErr := false
		for _, p := range patterns {
			if p == "" || p == ".*" || len(p) > MaxPatternLen {
				wantErr = true
			}
		}
		if wantErr != (err != nil) {
			t.Fatalf("Compile(%q) error = %v, want error: %v", patterns, err, wantErr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidPattern) {
				t.Fatalf("Compile(%q) error %v does not match ErrInvalidPattern", patterns, err)
			}
			return
		}
		if got, want := m.Match(errType), naiveMatch(patterns, errType); got != want {
			t.Fatalf("patterns %q: Match(%q) = %v, naive %v", patterns, errType, got, want)
		}
		for _, p := range patterns {
			if !m.Match(p) {
				t.Fatalf("patterns %q: entry %q does not match itself", patterns, p)
			}
		}
	})
}
