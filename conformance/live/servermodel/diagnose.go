package servermodel

import (
	"math"
	"math/bits"
	"sort"
	"time"

	"github.com/retrykit/retrykit/internal/cover"
)

// Finding is one model taken by [Diagnose]: the failed checks it explains
// (in the order of the observations), the passing checks that contradict
// it, and the models this run cannot tell apart from it.
type Finding struct {
	Model        Model
	Explains     []string
	Contradicted []string
	Equivalent   []string
}

// MaxObservations bounds the observations Diagnose reads; more are ignored.
const MaxObservations = 100_000

// Diagnose attributes the failed checks of a run to the models of the
// catalogue that reproduce the server's answers, by the rules of the
// package documentation. failed names every judged check: true for a
// failure, false for a pass; a check absent from it (errored, not run,
// skipped) is neither explained nor a contradiction. It returns the models
// taken, most checks explained first, and the failed checks none
// explains, in the order of first observation.
func Diagnose(obs []Obs, failed map[string]bool) (found []Finding, unexplained []string) {
	if len(obs) > MaxObservations {
		obs = obs[:MaxObservations]
	}
	refused := map[string]bool{}
	kinds := map[string]string{} // check → kindOf its deviation, once
	kind := func(c string) string {
		k, ok := kinds[c]
		if !ok {
			_, g, _ := deviationOf(obs, c)
			k = kindOf(g)
			kinds[c] = k
		}
		return k
	}
	for { // each round refuses a model found in the last: a finite pool
		found, unexplained = diagnose(obs, failed, refused)
		more := false
		for _, f := range found {
			if partial(f, unexplained, kind) {
				refused[f.Model.Name], more = true, true
			}
		}
		if !more {
			return found, unexplained
		}
	}
}

// partial reports whether the model of f is a small part of a wider
// deviation (rule 4 of the package documentation): more failed checks
// than it explains (a fitted family) or more than four times as many (a
// catalogue model) are left unexplained with a deviation of the same kind
// as those it explains (see kindOf: a delay that differs, a retry handed
// out early). The deviation is then evidently wider than the model, which
// reproduces its checks by coincidence: a per-job clock skew whose delays
// fall, on one check, where an unmerged coefficient puts them; or whose
// jittered delays, seen through a loaded host's windows, a jitter range
// read off those very delays reproduces while the skew in every delay
// without jitter stays unexplained. A family's parameters are read off
// the failures, so it must account for most of its kind.
// kind gives a failed check's kind of deviation.
func partial(f Finding, unexplained []string, kind func(check string) string) bool {
	mine := map[string]bool{}
	for _, c := range f.Explains {
		if k := kind(c); k != "" {
			mine[k] = true
		}
	}
	if len(mine) == 0 {
		return false
	}
	n := 0
	for _, c := range unexplained {
		if mine[kind(c)] {
			n++
		}
	}
	if f.Model.Family != "" {
		return n > len(f.Explains)
	}
	return n > 4*len(f.Explains)
}

// diagnose is one round of [Diagnose] with the models named in refused
// left out.
func diagnose(obs []Obs, failed map[string]bool, refused map[string]bool) (found []Finding, unexplained []string) {
	var checks []string
	byCheck := map[string][]int{}
	for i := range obs {
		c := obs[i].Check
		if _, judged := failed[c]; !judged {
			continue
		}
		if _, ok := byCheck[c]; !ok {
			checks = append(checks, c)
		}
		byCheck[c] = append(byCheck[c], i)
	}
	ref := make([]answer, len(obs))
	for i := range obs {
		ref[i] = predict(set{}, &obs[i])
	}
	// explained reports whether the server with quirks s explains check c
	// (rule 1); contradicts whether it contradicts a passing c (rule 2).
	explained := func(s set, c string) bool {
		differs := false
		for _, i := range byCheck[c] {
			a := predict(s, &obs[i])
			if !consistent(a, &obs[i]) {
				return false
			}
			differs = differs || !same(a, ref[i])
		}
		return differs && !drawsConstant(s, obs, byCheck[c])
	}
	contradicts := func(s set, c string) bool {
		for _, i := range byCheck[c] {
			if a := predict(s, &obs[i]); !same(a, ref[i]) && !consistent(a, &obs[i]) {
				return true
			}
		}
		return false
	}
	var failedObs []int
	for _, c := range checks {
		if failed[c] {
			failedObs = append(failedObs, byCheck[c]...)
		}
	}
	pool := append(Models(), fitted(obs, failedObs)...)
	index := map[string]int{}
	for i, c := range checks {
		index[c] = i
	}
	// on returns the server taken so far with m added: a catalogue quirk
	// joins the others, a fitted family replaces none (one per server).
	on := func(taken set, m Model) set {
		if m.Family != "" {
			taken.dev = m.dev
			return taken
		}
		return taken.with(m.q)
	}
	var taken set
	used := map[string]bool{}
	done := map[string]bool{}
	for {
		var open []int
		for _, c := range checks {
			if failed[c] && !done[c] {
				open = append(open, index[c])
			}
		}
		if len(open) == 0 {
			break
		}
		var cands []cover.Candidate
		var models []Model
		for _, m := range pool {
			if used[m.Name] || refused[m.Name] || m.Family != "" && taken.dev != (deviation{}) {
				continue
			}
			s := on(taken, m)
			cd := cover.Candidate{Name: m.Name, Rank: rankOf(m)}
			for _, c := range checks {
				if failed[c] && !done[c] && explained(s, c) {
					cd.Reproduces = append(cd.Reproduces, index[c])
				}
			}
			if len(cd.Reproduces) == 0 {
				continue
			}
			for _, c := range checks {
				if !failed[c] && contradicts(m.server(), c) {
					cd.Contradicts = append(cd.Contradicts, index[c])
				}
			}
			cands = append(cands, cd)
			models = append(models, m)
		}
		picks, _ := cover.Greedy(cands, open)
		if len(picks) == 0 {
			break
		}
		p := picks[0]
		m := models[p.Index]
		f := Finding{Model: m}
		for _, k := range p.Claims {
			f.Explains = append(f.Explains, checks[k])
			done[checks[k]] = true
		}
		for _, e := range p.Equivalent {
			if n := models[e].Name; n != m.Name && !contains(f.Equivalent, n) {
				f.Equivalent = append(f.Equivalent, n)
			}
		}
		used[m.Name] = true
		taken = on(taken, m)
		found = append(found, f)
	}
	sort.SliceStable(found, func(i, j int) bool { return len(found[i].Explains) > len(found[j].Explains) })
	for _, c := range checks {
		if failed[c] && !done[c] {
			unexplained = append(unexplained, c)
		}
	}
	return found, unexplained
}

// rankOf is a model's tie-break rank: the catalogue in its order (a
// default merge before a matcher, as a server that ignores a field shows
// it in more checks), then families by their count of fitted values (each
// strategy computed otherwise counts).
func rankOf(m Model) int {
	if m.Family == "" {
		return int(m.q)
	}
	// a narrower jitter range fitted is the tighter reading of the same
	// draws: taken before a wider one that reproduces as much
	return int(numQuirks) + bits.OnesCount8(m.dev.stratFrom) + int(math.Round((m.dev.jitterHi-m.dev.jitterLo)*20))
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// drawsConstant reports whether the server s draws jittered delays for at
// least 4 of the observations idx over one range, yet the delays observed
// all lie within 2 ms of each other: a range that wide does not give that
// (a server without jitter does), so s does not reproduce them. Delays
// that all sit at the range's upper end, where the cap after jitter puts
// a share p of the draws (see effective.draws), are such draws with
// chance pⁿ, not a proof: they count as constant only when that chance is
// below constantChance.
func drawsConstant(s set, obs []Obs, idx []int) bool {
	var rng answer
	n := 0
	lo, hi := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	atCap, share := true, 1.0
	for _, i := range idx {
		o := &obs[i]
		if o.Kind != FailAnswer || !o.HasDelay {
			continue
		}
		a := predict(s, o)
		if !a.hasDelay || a.hi-a.lo < 100*resolution {
			continue
		}
		if n > 0 && (a.lo != rng.lo || a.hi != rng.hi) {
			return false
		}
		rng, n = a, n+1
		mid := o.DelayLo + (o.DelayHi-o.DelayLo)/2
		lo, hi = min(lo, mid), max(hi, mid)
		_, _, p := read(s, o.Policy).draws(s, o.N)
		share *= p
		atCap = atCap && p > 0 && o.DelayLo <= a.hi+resolution && o.DelayHi >= a.hi-resolution
	}
	if n < 4 || hi-lo > 2*resolution {
		return false
	}
	return !atCap || share < constantChance
}

// constantChance is the chance below which delays that all sit where a
// model draws them with some probability prove that it does not draw them.
const constantChance = 1e-6
