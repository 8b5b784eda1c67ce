package servermodel

import "sort"

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
		ref[i] = predict(0, &obs[i])
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
		return differs
	}
	contradicts := func(s set, c string) bool {
		for _, i := range byCheck[c] {
			if a := predict(s, &obs[i]); !same(a, ref[i]) && !consistent(a, &obs[i]) {
				return true
			}
		}
		return false
	}
	var taken set
	done := map[string]bool{}
	dropped := map[quirk]bool{}
	for {
		best, bestGain := -1, 0
		var bestEx, bestCon []string
		for mi, m := range catalogue {
			if taken.has(m.q) || dropped[m.q] {
				continue
			}
			s := taken | 1<<m.q
			var ex, con []string
			for _, c := range checks {
				switch {
				case failed[c] && !done[c] && explained(s, c):
					ex = append(ex, c)
				case !failed[c] && contradicts(1<<m.q, c):
					con = append(con, c)
				}
			}
			if len(ex) == 0 {
				continue
			}
			if len(con) > len(ex) {
				dropped[m.q] = true
				continue
			}
			gain := len(ex) - len(con)
			if best < 0 || gain > bestGain || gain == bestGain && len(ex) > len(bestEx) {
				best, bestGain, bestEx, bestCon = mi, gain, ex, con
			}
		}
		if best < 0 {
			break
		}
		m := catalogue[best]
		f := Finding{Model: m, Explains: bestEx, Contradicted: bestCon}
		// Equivalent: another model that, in place of this one, explains
		// the same checks and is contradicted by the same passes.
		for _, o := range catalogue {
			if o.q == m.q || taken.has(o.q) || dropped[o.q] {
				continue
			}
			s := taken | 1<<o.q
			eq := true
			for _, c := range checks {
				switch {
				case failed[c] && !done[c]:
					eq = explained(s, c) == contains(bestEx, c)
				case !failed[c]:
					eq = contradicts(1<<o.q, c) == contains(bestCon, c)
				}
				if !eq {
					break
				}
			}
			if eq {
				f.Equivalent = append(f.Equivalent, o.Name)
			}
		}
		taken |= 1 << m.q
		for _, c := range bestEx {
			done[c] = true
		}
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

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
