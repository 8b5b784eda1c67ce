package suggest

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var policyFields = []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval", "jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy"}

func TestClosest(t *testing.T) {
	for _, tc := range []struct {
		name, want string
	}{
		{"jiter", "jitter"},
		{"jittter", "jitter"},
		{"jtiter", "jitter"}, // a swap is one edit
		{"Max_Attempts", "max_attempts"},
		{"maxAttempts", "max_attempts"},
		{"max-attempts", "max_attempts"},
		{"initial_intervl", "initial_interval"},
		{"max_interva", "max_interval"},
		{"backoff_coeficient", "backoff_coefficient"},
		{"onexhaustion", "on_exhaustion"},
		{"max_retries", ""},
		{"retries", ""},
		{"x", ""},
		{"", ""},
		{"jitter", ""}, // exact: nothing to suggest
		{strings.Repeat("j", 10000) + "jitter", ""},
		{"\xff\xfe", ""},
	} {
		got, ok := Closest(tc.name, policyFields)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Closest(%.40q) = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
	if got, _ := Closest("shedule", []string{"schedule", "simulate", "compare"}); got != "schedule" {
		t.Errorf("shedule: got %q", got)
	}
	if h := Hint("jiter", policyFields); h != ` (did you mean "jitter"?)` {
		t.Errorf("Hint = %q", h)
	}
	if h := Hint("zzz", policyFields); h != "" {
		t.Errorf("Hint = %q", h)
	}
}

// osa is the textbook optimal string alignment distance, full table, no
// cut-off: the reference the bounded distance is checked against.
func osa(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// The cut-off distance agrees with the full one up to the limit, and a
// suggestion is always a candidate within the limit, the nearest one.
func TestDistanceProperty(t *testing.T) {
	word := rapid.StringOfN(rapid.RuneFrom([]rune("abcé_-XY")), 0, MaxLen/2, MaxLen)
	rapid.Check(t, func(t *rapid.T) {
		a, b := []rune(word.Draw(t, "a")), []rune(word.Draw(t, "b"))
		limit := rapid.IntRange(0, 70).Draw(t, "limit")
		want := osa(a, b)
		got := distance(a, b, limit)
		if want <= limit && got != want || want > limit && got <= limit {
			t.Fatalf("distance(%q, %q, %d) = %d, full %d", string(a), string(b), limit, got, want)
		}
		cands := rapid.SliceOfN(word, 0, 6).Draw(t, "candidates")
		name := string(a)
		s, ok := Closest(name, cands)
		if !ok {
			for _, c := range cands {
				f := fold(c, nil)
				if c != name && len(f) > 0 && osa(fold(name, nil), f) <= max(1, len(f)/3) && len(name) > 0 {
					t.Fatalf("no suggestion for %q, but %q is near", name, c)
				}
			}
			return
		}
		fs := fold(s, nil)
		ds := osa(fold(name, nil), fs)
		if ds > max(1, len(fs)/3) {
			t.Fatalf("suggested %q for %q at distance %d", s, name, ds)
		}
		for _, c := range cands {
			if c != name && len(fold(c, nil)) > 0 && osa(fold(name, nil), fold(c, nil)) < ds && osa(fold(name, nil), fold(c, nil)) <= max(1, len(fold(c, nil))/3) {
				t.Fatalf("suggested %q for %q, but %q is nearer", s, name, c)
			}
		}
	})
}

func BenchmarkClosestHostile(b *testing.B) {
	name := strings.Repeat("ab", MaxLen/2)
	long := []string{strings.Repeat("ba", MaxLen/2), strings.Repeat("ab", MaxLen/2-1) + "ba"}
	b.ReportAllocs()
	for b.Loop() {
		Closest(name, append(policyFields, long...))
	}
}
