package cover_test

import (
	"slices"
	"testing"

	"github.com/retrykit/retrykit/internal/cover"
	"pgregory.net/rapid"
)

// A candidate contradicted by one pass is never taken, however many
// failures it reproduces; the largest uncontradicted one is taken first.
func TestContradictedCandidateIsNeverTaken(t *testing.T) {
	cands := []cover.Candidate{
		{Name: "wide", Reproduces: []int{0, 1, 2, 3}, Contradicts: []int{9}},
		{Name: "small", Reproduces: []int{3}},
		{Name: "big", Reproduces: []int{0, 1, 2}},
	}
	picks, left := cover.Greedy(cands, []int{0, 1, 2, 3, 4})
	if len(picks) != 2 || picks[0].Index != 2 || picks[1].Index != 1 {
		t.Fatalf("picks %+v", picks)
	}
	if !slices.Equal(left, []int{4}) {
		t.Fatalf("left %v, want [4]", left)
	}
}

// On a tie the lower rank (a catalogue entry before a fitted family)
// is taken, and the other is listed as equivalent.
func TestTieTakesTheLowerRank(t *testing.T) {
	cands := []cover.Candidate{
		{Name: "a-family", Rank: 1, Reproduces: []int{0, 1}},
		{Name: "z-catalogue", Rank: 0, Reproduces: []int{1, 0}},
	}
	picks, _ := cover.Greedy(cands, []int{0, 1})
	if len(picks) != 1 || picks[0].Index != 1 || !slices.Equal(picks[0].Equivalent, []int{0}) {
		t.Fatalf("picks %+v", picks)
	}
}

// Properties: every claim is a failure the pick reproduces, no pick is
// contradicted, no failure is claimed twice, claims and left partition
// the failures, and each pick claims at least as many as the next.
func TestGreedyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nf := rapid.IntRange(0, 30).Draw(t, "failures")
		failures := make([]int, nf)
		for i := range failures {
			failures[i] = i
		}
		cands := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) cover.Candidate {
			return cover.Candidate{
				Name:        rapid.StringMatching(`[a-z]{1,4}`).Draw(t, "name"),
				Rank:        rapid.IntRange(0, 2).Draw(t, "rank"),
				Reproduces:  rapid.SliceOf(rapid.IntRange(0, 35)).Draw(t, "repro"),
				Contradicts: rapid.SliceOfN(rapid.IntRange(100, 110), 0, 1).Draw(t, "contra"),
			}
		}), 0, 12).Draw(t, "cands")
		picks, left := cover.Greedy(cands, failures)
		seen := map[int]bool{}
		prev := -1
		for _, p := range picks {
			c := cands[p.Index]
			if len(c.Contradicts) != 0 {
				t.Fatalf("contradicted candidate %d taken", p.Index)
			}
			if prev >= 0 && len(p.Claims) > prev {
				t.Fatalf("a later pick claims more: %d > %d", len(p.Claims), prev)
			}
			prev = len(p.Claims)
			for _, f := range p.Claims {
				if seen[f] || !slices.Contains(c.Reproduces, f) || f >= nf {
					t.Fatalf("claim %d: seen %v, reproduced %v", f, seen[f], slices.Contains(c.Reproduces, f))
				}
				seen[f] = true
			}
		}
		for _, f := range left {
			if seen[f] {
				t.Fatalf("failure %d both claimed and left", f)
			}
			seen[f] = true
			for _, c := range cands {
				if len(c.Contradicts) == 0 && slices.Contains(c.Reproduces, f) {
					t.Fatalf("failure %d left though an uncontradicted candidate reproduces it", f)
				}
			}
		}
		if len(seen) != nf {
			t.Fatalf("%d of %d failures accounted for", len(seen), nf)
		}
	})
}
