package suggest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest name, in bytes, that Closest compares; a longer one
// (or a longer candidate) gets no suggestion.
const MaxLen = 64

// Closest returns the candidate nearest to name and true, or "" and false
// when none is near enough: within max(1, len/3) edits of the candidate's
// folded length, with ties going to the earlier candidate. An exact
// candidate is not a suggestion (name equal to one, as given, returns
// false), nor is one that folds to nothing ("", "_").
func Closest(name string, candidates []string) (string, bool) {
	if len(name) == 0 || len(name) > MaxLen || !utf8.ValidString(name) {
		return "", false
	}
	var nb, cb [MaxLen]rune
	n := fold(name, nb[:0])
	best, bestD := "", -1
	for _, c := range candidates {
		if c == name || len(c) > MaxLen {
			continue
		}
		f := fold(c, cb[:0])
		if len(f) == 0 { // "_": nothing to suggest
			continue
		}
		limit := max(1, len(f)/3)
		if diff := len(f) - len(n); diff > limit || -diff > limit {
			continue
		}
		if d := distance(n, f, limit); d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best, bestD >= 0
}

// fold appends the runes of s to dst, lower-cased, without '_', '-' and
// spaces.
func fold(s string, dst []rune) []rune {
	for _, r := range s {
		switch r {
		case '_', '-', ' ':
			continue
		}
		dst = append(dst, unicode.ToLower(r))
	}
	return dst
}

// distance is the optimal string alignment distance of a and b (both at
// most MaxLen runes), or a value above limit once every path exceeds it.
func distance(a, b []rune, limit int) int {
	// Three rows of the dynamic programme: two back (for swaps), one back,
	// and the current one.
	var r0, r1, r2 [MaxLen + 1]int
	prev2, prev, cur := r0[:len(b)+1], r1[:len(b)+1], r2[:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Hint returns ` (did you mean "X"?)` for the candidate nearest to name, or
// "" when there is none; a convenience for error messages.
func Hint(name string, candidates []string) string {
	s, ok := Closest(name, candidates)
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteString(` (did you mean "`)
	b.WriteString(s)
	b.WriteString(`"?)`)
	return b.String()
}
