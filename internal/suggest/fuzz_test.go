package suggest

import (
	"slices"
	"strings"
	"testing"
)

// Closest never panics, suggests only a candidate different from the name,
// and ignores names over MaxLen bytes, for any input.
func FuzzClosest(f *testing.F) {
	for _, s := range []string{"jiter", "Max_Attempts", "", "\xff", strings.Repeat("é", 40), "max attempts"} {
		f.Add(s, "jitter")
	}
	f.Fuzz(func(t *testing.T, name, cand string) {
		cands := append([]string{cand}, policyFields...)
		s, ok := Closest(name, cands)
		if ok != (s != "") {
			t.Fatalf("Closest(%q) = %q, %v", name, s, ok)
		}
		if ok && (!slices.Contains(cands, s) || s == name || len(name) > MaxLen) {
			t.Fatalf("Closest(%q) = %q", name, s)
		}
	})
}
