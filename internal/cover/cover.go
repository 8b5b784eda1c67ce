// Package cover is the one greedy set cover behind both diagnoses of
// retrykit's conformance checker: the library side
// (conformance/diagnose, bug models answering protocol requests) and the
// server side (conformance/live/servermodel, bug models answering
// observations of a live OJS server).
//
// A [Candidate] is one hypothesis about the implementation: the failures
// replaying it reproduces and the passes it contradicts (a pass the
// hypothesis would have failed). [Greedy] applies these rules, in order:
//
//  1. a candidate contradicted by any pass is never taken: a cause is
//     claimed only when it reproduces every failure it claims and
//     contradicts no pass;
//  2. among the rest, the one reproducing the most failures not yet
//     claimed is taken first, then the one of the lowest Rank (a fixed
//     catalogue entry before a fitted family, fewer fitted parameters
//     before more), then by name;
//  3. each failure is claimed by the first candidate taken that reproduces
//     it, and candidates are taken until none reproduces a failure left.
//
// Failures no candidate claims are returned apart, for the caller to
// group by what was observed. The package knows nothing of answers; it
// works on indexes. It is safe for concurrent use (no state).
package cover

import (
	"slices"
	"sort"
)

// Candidate is one hypothesis: failures it reproduces and passes it
// contradicts, both as the caller's indexes.
type Candidate struct {
	Name        string
	Rank        int   // lower is simpler: taken first on a tie
	Reproduces  []int // failures replaying the candidate gives exactly
	Contradicts []int // passes replaying the candidate would have failed
}

// Pick is one candidate taken by [Greedy].
type Pick struct {
	Index  int   // into the candidates given
	Claims []int // failures claimed, in increasing order
	// Equivalent holds the other uncontradicted candidates that reproduce
	// exactly the failures claimed and no other failure left: the run
	// cannot tell them apart from this one.
	Equivalent []int
}

// Greedy covers failures with candidates by the rules of the package
// documentation. failures lists the failure indexes to cover; claimed
// ones are left out of later picks and returned by no pick twice. It
// returns the picks in the order taken and the failures none claims, in
// increasing order.
func Greedy(cands []Candidate, failures []int) (picks []Pick, left []int) {
	open := map[int]bool{}
	for _, f := range failures {
		open[f] = true
	}
	live := make([]int, 0, len(cands))
	for i, c := range cands {
		if len(c.Contradicts) == 0 && len(c.Reproduces) > 0 {
			live = append(live, i)
		}
	}
	gain := func(i int) []int {
		var out []int
		for _, f := range cands[i].Reproduces {
			if open[f] {
				out = append(out, f)
			}
		}
		sort.Ints(out)
		return slices.Compact(out)
	}
	for {
		best, bestN := -1, 0
		var bestClaims []int
		for _, i := range live {
			g := gain(i)
			n := len(g)
			if n == 0 {
				continue
			}
			if best < 0 || n > bestN || n == bestN && (cands[i].Rank < cands[best].Rank ||
				cands[i].Rank == cands[best].Rank && cands[i].Name < cands[best].Name) {
				best, bestN, bestClaims = i, n, g
			}
		}
		if best < 0 {
			break
		}
		p := Pick{Index: best, Claims: bestClaims}
		for _, i := range live {
			if i != best && slices.Equal(gain(i), bestClaims) {
				p.Equivalent = append(p.Equivalent, i)
			}
		}
		for _, f := range bestClaims {
			delete(open, f)
		}
		picks = append(picks, p)
	}
	for f := range open {
		left = append(left, f)
	}
	sort.Ints(left)
	return picks, left
}
