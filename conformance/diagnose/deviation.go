package diagnose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// Deviation is a group of failures that no model reproduces, grouped by
// what was observed of them (never by a vector's flags): "every delay is
// 2× the expected one", "matches differ only in letter case".
type Deviation struct {
	Name        string   // "delay-ratio(×2)", "case-folded-match", ...
	Explanation string   // one line: what every failure of the group shows
	IDs         []string // the failures, in case order
	// Reproduction is the smallest failure of the group (its request the
	// shortest): the request, the answer and the reference's answer.
	Reproduction string
}

// key is one way to describe a failure's deviation. fit, for a
// description of delays (a ratio, an offset, a zero delay), says how to
// tell whether a delay the implementation drew itself shows it too.
type key struct {
	name, expl string
	fit        drawFit
}

// mkey returns the key of a description that no drawn delay can show.
func mkey(name, expl string) key { return key{name: name, expl: expl} }

// drawFit is a deviation of delays that a drawn delay can be held
// against: a constant ratio or offset to the spec's, or a zero delay.
type drawFit struct {
	kind uint8 // fitNone, fitRatio, fitOffset, fitZero
	val  float64
}

const (
	fitNone = iota
	fitRatio
	fitOffset
	fitZero
	fitCoef       // a ratio of the policy's backoff_coefficient
	fitPerAttempt // an offset of val per attempt
)

// shows reports whether got, a delay drawn by the implementation where
// the spec's range is [lo, hi], can show the deviation f.
func (f drawFit) shows(lo, hi, got int64) bool {
	const tol = 1e-3
	g, l, h := float64(got), float64(lo), float64(hi)
	switch f.kind {
	case fitRatio:
		return l*f.val*(1-tol) <= g && g <= h*f.val*(1+tol)
	case fitOffset:
		return l+f.val <= g && g <= h+f.val
	case fitZero:
		return got <= 0 && lo > 0
	}
	return false
}

// Deviations groups the failures ids (of cases) by the deviation observed
// between each answer and the reference's: for each failure the most
// specific descriptions shared by at least two failures are tried first
// (a constant ratio or offset of delays, a rounding, a letter-case
// difference, one attempt past max_attempts), the largest group first;
// a failure sharing none is grouped by its generic description ("a delay
// larger than the expected one"). Every id is in exactly one group.
func Deviations(cases []Case, ids []string) []Deviation {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	type item struct {
		c        *Case
		specific []key
		generic  key
	}
	var items []item
	for i := range cases {
		if want[cases[i].ID] {
			s, g := describe(&cases[i])
			items = append(items, item{&cases[i], s, g})
			delete(want, cases[i].ID)
		}
	}
	done := make([]bool, len(items))
	var out []Deviation
	groupGeneric := map[string]key{} // specific group name → generic key
	var outMembers [][]int           // the items of each group of out
	take := func(k key, members []int) {
		d := Deviation{Name: k.name, Explanation: k.expl}
		smallest, size := -1, 0
		for _, i := range members {
			done[i] = true
			d.IDs = append(d.IDs, items[i].c.ID)
			n := len(items[i].c.Request.AppendJSON(nil))
			if smallest < 0 || n < size {
				smallest, size = i, n
			}
		}
		d.Reproduction = reproduction(items[smallest].c)
		out = append(out, d)
		outMembers = append(outMembers, members)
	}
	for {
		count := map[key][]int{}
		for i, it := range items {
			if done[i] {
				continue
			}
			for _, k := range it.specific {
				count[k] = append(count[k], i)
			}
		}
		var best key
		bestN := 0
		// the largest group taken so far of each generic description: a
		// handful of failures sharing a second description beside it
		// prove nothing and stay with the generic one
		taken := map[key]int{}
		for _, d := range out {
			if g, ok := groupGeneric[d.Name]; ok {
				taken[g] = max(taken[g], len(d.IDs))
			}
		}
		// a specific description is taken only for most of the open
		// failures with the same generic one: a few delays that happen to
		// share an offset prove nothing
		dim := map[key]int{}
		for i, it := range items {
			// a drawn delay that no description fits yet is not held
			// against one: it may join the group afterwards (below)
			if !done[i] && (!it.c.Drawn || len(it.specific) > 0) {
				dim[it.generic]++
			}
		}
		for k, m := range count {
			if 2*len(m) <= dim[items[m[0]].generic] || 8*len(m) < taken[items[m[0]].generic] {
				continue
			}
			if len(m) > bestN || len(m) == bestN && k.name < best.name {
				best, bestN = k, len(m)
			}
		}
		if bestN < 2 {
			break
		}
		members := count[best]
		if best.fit.kind != fitNone {
			// the delays the implementation drew that show it too
			for i, it := range items {
				if !done[i] && it.c.Drawn && !slices.Contains(members, i) && it.generic == items[members[0]].generic && drawnShows(it.c, best.fit) {
					members = append(members, i)
				}
			}
			sort.Ints(members)
		}
		groupGeneric[best.name] = items[members[0]].generic
		take(best, members)
	}
	generic := map[key][]int{}
	var order []key
	for i, it := range items {
		if done[i] {
			continue
		}
		k := it.generic
		if _, ok := generic[k]; !ok {
			order = append(order, k)
		}
		generic[k] = append(generic[k], i)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(generic[order[i]]) > len(generic[order[j]]) })
	for _, k := range order {
		// a remnant of a quarter or less of the largest specific group
		// of its kind joins it, said so: one bug, one group
		big := -1
		for j, d := range out {
			if g, ok := groupGeneric[d.Name]; ok && g == k && (big < 0 || len(d.IDs) > len(out[big].IDs)) {
				big = j
			}
		}
		if rest := generic[k]; big >= 0 && 4*len(rest) <= len(out[big].IDs) {
			n := len(out[big].IDs)
			members := append(append([]int(nil), outMembers[big]...), rest...)
			sort.Ints(members)
			out[big].IDs = out[big].IDs[:0]
			for _, i := range members {
				done[i] = true
				out[big].IDs = append(out[big].IDs, items[i].c.ID)
			}
			outMembers[big] = members
			out[big].Explanation += fmt.Sprintf(" (%d of these %d; the other %d: %s)", n, len(members), len(rest), k.expl)
			continue
		}
		take(k, generic[k])
	}
	pos := make(map[string]int, len(items))
	side := map[string]uint8{}
	kind := map[string]key{}
	failed := make([]*Case, len(items))
	for i, it := range items {
		failed[i] = it.c
	}
	shared := sharedComponents(failed)
	for i, it := range items {
		pos[it.c.ID] = i
		kind[it.c.ID] = it.generic
		if durationSide(it.c, shared) {
			side[it.c.ID] = 2
			if it.c.Request.Op == protocol.OpParseDuration {
				side[it.c.ID] = 1
			}
		}
	}
	return joinSides(joinDurations(out, pos, side, kind), pos)
}

// joinDurations gathers the failures that show a duration read otherwise
// than the spec reads it (side: 1 a parse_duration answer, 2 an answer
// to a policy) into one group when both kinds are there: one reading of
// durations, seen from parse_duration and from the intervals of
// policies, is one group. It is the group holding most of them, named as
// it was; a group left empty is dropped, and a remnant of a quarter or
// less of it whose kind (generic description) it holds joins it, as in
// [Deviations].
func joinDurations(out []Deviation, order map[string]int, side map[string]uint8, kind map[string]key) []Deviation {
	// a group with a description of its own (an offset per attempt)
	// keeps its failures unless every one of them shows a duration
	movable := make([]bool, len(out))
	var kinds uint8
	big, bigN := -1, 0
	for i, d := range out {
		n := 0
		for _, id := range d.IDs {
			if side[id] != 0 {
				n++
			}
		}
		movable[i] = n == len(d.IDs) || len(d.IDs) > 0 && d.Name == kind[d.IDs[0]].name
		if !movable[i] {
			continue
		}
		for _, id := range d.IDs {
			kinds |= side[id]
		}
		if n > bigN {
			big, bigN = i, n
		}
	}
	if kinds != 3 || big < 0 {
		return out
	}
	moved := 0
	var from []string
	for i := range out {
		if i == big || !movable[i] {
			continue
		}
		keep := out[i].IDs[:0:0]
		for _, id := range out[i].IDs {
			if side[id] != 0 {
				out[big].IDs = append(out[big].IDs, id)
				moved++
			} else {
				keep = append(keep, id)
			}
		}
		if len(keep) < len(out[i].IDs) {
			from = append(from, out[i].Name)
		}
		out[i].IDs = keep
	}
	if moved == 0 {
		return out
	}
	held := map[key]bool{}
	for _, id := range out[big].IDs {
		held[kind[id]] = true
	}
	for i := range out {
		if i == big || !movable[i] || len(out[i].IDs) == 0 || 4*len(out[i].IDs) > len(out[big].IDs) {
			continue
		}
		same := true
		for _, id := range out[i].IDs {
			same = same && held[kind[id]]
		}
		if same {
			out[big].IDs = append(out[big].IDs, out[i].IDs...)
			moved += len(out[i].IDs)
			from = append(from, out[i].Name)
			out[i].IDs = nil
		}
	}
	sort.SliceStable(out[big].IDs, func(a, b int) bool { return order[out[big].IDs[a]] < order[out[big].IDs[b]] })
	out[big].Explanation += fmt.Sprintf(" (and %d more, %s: the same durations read otherwise in parse_duration and in the intervals of policies)",
		moved, strings.Join(from, ", "))
	keep := out[:0:0]
	for _, d := range out {
		if len(d.IDs) > 0 {
			keep = append(keep, d)
		}
	}
	return keep
}

// sharedComponents returns the duration components (durComponents bits)
// that every failed parse_duration answer that gives another
// length than the spec's holds: what the reading that differs is about.
func sharedComponents(failed []*Case) uint8 {
	all, seen := uint8(0xff), false
	for _, c := range failed {
		if c.Request.Op != protocol.OpParseDuration || c.Answer.NS == nil {
			continue
		}
		ref, ok := engine{}.do(c.Request)
		if !ok || ref.NS == nil || *ref.NS == *c.Answer.NS {
			continue
		}
		all &= components(c.Request.Value)
		seen = true
	}
	if !seen {
		return 0
	}
	return all
}

// components returns the bits of the components the duration text v
// holds with a value other than 0.
func components(v string) uint8 {
	vals, _ := durationValues(v)
	var out uint8
	for i, x := range vals {
		if x != nil && x.Sign() != 0 {
			out |= 1 << i
		}
	}
	return out
}

// durationSide reports whether c's failure shows a duration read
// otherwise than the spec reads it: a parse_duration answer that differs
// or refuses; a policy refused for an interval; an effective policy whose
// interval alone differs; a delay that is the spec's for the same policy
// with initial_interval or max_interval read as another length, when
// that interval holds a component every differing parse_duration answer
// holds (shared): a delay alone could be solved for any interval.
func durationSide(c *Case, shared uint8) bool {
	req, got := c.Request, c.Answer
	ref, ok := engine{}.do(req)
	if !ok || c.Drawn || ref.Error != nil {
		return false
	}
	if got.Error != nil {
		k, ok := refusedField(req, got.Error.Message)
		return ok && k == rejectsDuration
	}
	switch req.Op {
	case protocol.OpParseDuration:
		return got.NS != nil && ref.NS != nil && *got.NS != *ref.NS
	case protocol.OpValidate:
		f := failingDiff(c, ref.Effective, got.Effective)
		return f == "initial_interval" || f == "max_interval"
	case protocol.OpDelay, protocol.OpDecide:
		return req.Profile == "" && got.DelayNS != nil && ref.DelayNS != nil && got.Action == ref.Action && intervalReread(c, *got.DelayNS, shared)
	}
	return false
}

// intervalReread reports whether the spec's delay for c's policy with
// initial_interval, or else max_interval, read as another length is got:
// the length solved from got and the formula, then replayed.
func intervalReread(c *Case, got int64, shared uint8) bool {
	s, err := (engine{}).parsePolicy(c.Request.Policy)
	if err != nil || s.initial <= 0 {
		return false
	}
	strat, err := backoff.ParseStrategy(s.strategy)
	if err != nil {
		return false
	}
	f := floatBase(strat, s, c.Request.Attempt) / float64(s.initial)
	if s.jitter && c.Request.Rand != nil {
		f *= 0.5 + *c.Request.Rand
	}
	var tries []map[string]int64
	if f > 0 && !math.IsInf(f, 0) {
		tries = append(tries, map[string]int64{"initial_interval": satNS(math.Round(float64(got) / f))})
	}
	tries = append(tries, map[string]int64{"max_interval": got})
	for _, t := range tries {
		var m map[string]json.RawMessage
		if json.Unmarshal(c.Request.Policy, &m) != nil || m == nil {
			return false
		}
		for k, ns := range t {
			var text string
			if ns <= 0 || json.Unmarshal(m[k], &text) != nil || components(text)&shared == 0 {
				continue
			}
			m[k], _ = json.Marshal(formatNS(ns))
		}
		q := c.Request
		q.Policy, _ = json.Marshal(m)
		if a, ok := (engine{}).do(q); ok && a.Error == nil && a.DelayNS != nil && c.Same(a) {
			return true
		}
	}
	return false
}

// sides maps a group of decisions to the group of match answers that
// shows the same deviation of the matcher: when both are found, the
// decisions join the matches' group (one matcher, seen from two ops).
var sides = [][2]string{{"non-retryable-retried", "matches-too-little"}, {"non-retryable-matched", "matches-too-much"}, {"non-retryable-matched", "case-folded-match"}}

// joinSides merges each group of decisions into the group of match
// answers that shows the same deviation, when both are in out.
// order is each id's position among the cases.
func joinSides(out []Deviation, order map[string]int) []Deviation {
	for _, side := range sides {
		from, to := side[0], side[1]
		i := slices.IndexFunc(out, func(d Deviation) bool { return d.Name == from })
		j := slices.IndexFunc(out, func(d Deviation) bool { return d.Name == to })
		if i < 0 || j < 0 {
			continue
		}
		n := len(out[i].IDs)
		out[j].IDs = append(out[j].IDs, out[i].IDs...)
		sort.SliceStable(out[j].IDs, func(a, b int) bool { return order[out[j].IDs[a]] < order[out[j].IDs[b]] })
		out[j].Explanation += fmt.Sprintf(" (and %d decisions: %s)", n, out[i].Explanation)
		out = slices.Delete(out, i, i+1)
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a].IDs) > len(out[b].IDs) })
	// one exhaustion: attempts retried 1, 2, … past max_attempts (or given
	// up 1, 2 early) are one group, named by the offsets seen
	for _, pre := range []string{"retried-past-max-attempts(", "exhausted-early("} {
		var idx []int
		for i, d := range out {
			if strings.HasPrefix(d.Name, pre) {
				idx = append(idx, i)
			}
		}
		if len(idx) < 2 {
			continue
		}
		big := idx[0] // the groups are largest first
		var ks []string
		for _, i := range idx {
			ks = append(ks, strings.TrimSuffix(strings.TrimPrefix(out[i].Name, pre), ")"))
		}
		sort.Strings(ks)
		for j := len(idx) - 1; j >= 1; j-- {
			out[big].IDs = append(out[big].IDs, out[idx[j]].IDs...)
			out = slices.Delete(out, idx[j], idx[j]+1)
		}
		sort.SliceStable(out[big].IDs, func(a, b int) bool { return order[out[big].IDs[a]] < order[out[big].IDs[b]] })
		out[big].Name = pre + strings.Join(ks, ",") + ")"
		out[big].Explanation = strings.Join(ks, " or ") + " attempt(s) " + map[bool]string{true: "past max_attempts retried", false: "before max_attempts given up"}[strings.HasPrefix(pre, "retried")]
	}
	sort.SliceStable(out, func(a, b int) bool { return len(out[a].IDs) > len(out[b].IDs) })
	// one matcher: a group of match answers a quarter or less the size
	// of the largest joins it (too much beside a few too little)
	big := slices.IndexFunc(out, func(d Deviation) bool { return matcherGroups[d.Name] })
	for i := len(out) - 1; big >= 0 && i > big; i-- {
		if matcherGroups[out[i].Name] && 4*len(out[i].IDs) <= len(out[big].IDs) {
			n := len(out[big].IDs)
			out[big].IDs = append(out[big].IDs, out[i].IDs...)
			sort.SliceStable(out[big].IDs, func(a, b int) bool { return order[out[big].IDs[a]] < order[out[big].IDs[b]] })
			out[big].Explanation += fmt.Sprintf(" (%d of these %d; the other %d: %s)", n, len(out[big].IDs), len(out[i].IDs), out[i].Explanation)
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// matcherGroups are the groups of match answers.
var matcherGroups = map[string]bool{"matches-too-much": true, "matches-too-little": true, "case-folded-match": true}

// drawnShows reports whether c's delay, drawn by the implementation,
// shows the deviation f against the spec's range over every draw.
func drawnShows(c *Case, f drawFit) bool {
	if c.Answer.DelayNS == nil || c.Request.Rand != nil {
		return false
	}
	req := c.Request
	lo, hi := 0.0, math.Nextafter(1, 0)
	req.Rand = &lo
	a, ok1 := engine{}.do(req)
	req.Rand = &hi
	b, ok2 := engine{}.do(req)
	if !ok1 || !ok2 || a.DelayNS == nil || b.DelayNS == nil {
		return false
	}
	if f.kind == fitPerAttempt {
		f = drawFit{fitOffset, f.val * float64(req.Attempt)}
	}
	if f.kind == fitCoef {
		s, err := (engine{}).parsePolicy(req.Policy)
		if err != nil || s.coef <= 1 {
			return false
		}
		f = drawFit{fitRatio, s.coef}
	}
	return f.shows(min(*a.DelayNS, *b.DelayNS), max(*a.DelayNS, *b.DelayNS), *c.Answer.DelayNS)
}

// reproduction writes a failure as a replayable line. The spec's answer
// to a request whose delay the implementation draws itself has no
// delay_ns of its own: the line gives the spec's range over every draw.
func reproduction(c *Case) string {
	ref, _ := engine{}.do(c.Request)
	got, _ := json.Marshal(c.Answer)
	exp, _ := json.Marshal(ref)
	line := fmt.Sprintf("%s: %s → answered %s; the spec answers %s", c.ID, c.Request.AppendJSON(nil), got, exp)
	if ref.Error == nil && ref.DelayNS == nil && c.Request.Rand == nil {
		req := c.Request
		lo, hi := 0.0, math.Nextafter(1, 0)
		req.Rand = &lo
		a, ok1 := engine{}.do(req)
		req.Rand = &hi
		b, ok2 := engine{}.do(req)
		if ok1 && ok2 && a.DelayNS != nil && b.DelayNS != nil {
			line += fmt.Sprintf(" with a delay_ns drawn in [%d, %d]", min(*a.DelayNS, *b.DelayNS), max(*a.DelayNS, *b.DelayNS))
		}
	}
	return line
}

// aboveMax is the description of a delay longer than the policy's
// max_interval, which every draw shows alike.
var aboveMax = mkey("delay-above-max-interval", "a delay is longer than max_interval: the cap is missing, misplaced or scaled")

// coefStep is the description of a delay one backoff_coefficient step
// above the spec's, whatever the coefficient.
var coefStep = key{"delay-ratio(×coefficient)", "every delay is backoff_coefficient× the spec's: one step of the exponent too many", drawFit{kind: fitCoef}}

// describe returns the specific descriptions of c's deviation from the
// reference's answer, and its generic one.
func describe(c *Case) (specific []key, generic key) {
	specific, generic = describeAnswer(c)
	req, got := c.Request, c.Answer
	if (req.Op == protocol.OpDelay || req.Op == protocol.OpDecide) && req.Profile == "" && got.Error == nil && got.DelayNS != nil {
		if s, err := (engine{}).parsePolicy(req.Policy); err == nil {
			if *got.DelayNS > s.max && s.max > 0 {
				specific = append(specific, aboveMax)
			}
			ref, ok := engine{}.do(req)
			if s.coef > 1 && !c.Drawn && ok && ref.DelayNS != nil && *ref.DelayNS > 0 &&
				math.Abs(float64(*got.DelayNS)/float64(*ref.DelayNS)-s.coef) <= 1e-3*s.coef {
				specific = append(specific, coefStep)
			}
			if !c.Drawn && ok && ref.DelayNS != nil && s.initial > 0 {
				// one initial_interval more or less: a linear step
				if diff := *got.DelayNS - *ref.DelayNS; diff == s.initial || diff == -s.initial {
					sign := map[bool]string{true: "+", false: "-"}[diff > 0]
					specific = append(specific, mkey("delay-offset("+sign+"initial_interval)",
						"every delay is the spec's "+sign+" initial_interval: one linear step too many or too few"))
				}
			}
			if !c.Drawn && ok && ref.DelayNS != nil && req.Attempt >= 1 {
				// an offset that grows with the attempt
				if diff := *got.DelayNS - *ref.DelayNS; (diff > 0) == (*got.DelayNS > *ref.DelayNS) && diff != 0 && diff%req.Attempt == 0 {
					per := time.Duration(diff / req.Attempt)
					specific = append(specific, key{fmt.Sprintf("delay-offset-per-attempt(%s)", signed(per)),
						fmt.Sprintf("every delay is the spec's %s per attempt", signed(per)), drawFit{fitPerAttempt, float64(per)}})
				}
			}
		}
	}
	return specific, generic
}

// describeAnswer returns the descriptions of describe but the cap's.
func describeAnswer(c *Case) (specific []key, generic key) {
	req, got := c.Request, c.Answer
	ref, ok := engine{}.do(req)
	if !ok {
		return nil, mkey("answer-differs("+req.Op+")", "the "+req.Op+" answer differs from the spec's")
	}
	if c.Drawn {
		return nil, delayDiffers
	}
	switch {
	case ref.Error != nil && got.Error == nil:
		if f := badField(req); f != "" {
			return []key{mkey("accepts-invalid("+f+")", "accepts a policy whose "+f+" the spec rejects")},
				mkey("accepts-invalid", "accepts input the spec rejects")
		}
		return nil, mkey("accepts-invalid("+req.Op+")", "accepts "+req.Op+" input the spec rejects")
	case ref.Error == nil && got.Error != nil:
		generic := mkey("rejects-valid("+req.Op+")", "rejects "+req.Op+" input the spec accepts")
		if k, ok := refusedField(req, got.Error.Message); ok {
			return []key{k}, generic
		}
		return nil, generic
	case ref.Error != nil && got.Error != nil && got.Error.Type == ref.Error.Type:
		return nil, mkey("message-lacks-field", "rejected with the right error type, but the message does not name the offending field")
	case ref.Error != nil && got.Error != nil:
		return nil, mkey("error-type("+got.Error.Type+"≠"+ref.Error.Type+")",
			"rejects with error type "+got.Error.Type+" where the spec says "+ref.Error.Type)
	}
	switch req.Op {
	case protocol.OpMatch:
		if ref.Match != nil && got.Match != nil {
			if *got.Match {
				if folded, err := (deviation{match: matchFold}).devMatch(req.Patterns, req.ErrorType); err == nil && folded {
					return []key{mkey("case-folded-match", "matches differ only in letter case: the type matches a pattern ignoring case")},
						mkey("matches-too-much", "an error type matches where the spec says it does not")
				}
				return nil, mkey("matches-too-much", "an error type matches where the spec says it does not")
			}
			return nil, mkey("matches-too-little", "an error type does not match where the spec says it does")
		}
	case protocol.OpParseDuration:
		if ref.NS != nil && got.NS != nil {
			return timeKeys("duration", *ref.NS, *got.NS)
		}
	case protocol.OpValidate:
		if f := failingDiff(c, ref.Effective, got.Effective); f != "" {
			return nil, mkey("effective("+f+")", "the effective policy's "+f+" differs from the spec's")
		}
		return nil, mkey("effective", "the effective policy differs from the spec's")
	case protocol.OpDelay:
		if ref.DelayNS != nil && got.DelayNS != nil {
			return timeKeys("delay", *ref.DelayNS, *got.DelayNS)
		}
	case protocol.OpDecide:
		return decideKeys(req, ref, got)
	case protocol.OpTimeoutDecide, protocol.OpTimeoutExpiry, protocol.OpReplay, protocol.OpExtensionDecide:
		if f := effectiveDiff(ref.Result, got.Result); f != "" {
			return nil, mkey(req.Op+"("+f+")", "the "+req.Op+" result's "+f+" differs from the spec's")
		}
	}
	return nil, mkey("answer-differs("+req.Op+")", "the "+req.Op+" answer differs from the spec's")
}

// delayDiffers is the generic description of every wrong delay, drawn by
// the implementation or injected.
var delayDiffers = mkey("delay-differs", "a delay differs from the spec's, or a delay the implementation drew itself lies outside the spec's range")

// timeKeys describes a wrong delay or duration got where want was due.
func timeKeys(what string, want, got int64) (specific []key, generic key) {
	generic = mkey(what+"-differs", "a "+what+" differs from the spec's")
	if what == "delay" {
		generic = delayDiffers
	}
	if got <= 0 && want > 0 {
		specific = append(specific, key{what + "-zero", "every " + what + " is 0 (or negative) where the spec's is not: a retry at once", drawFit{kind: fitZero}})
	}
	for _, u := range []time.Duration{time.Microsecond, time.Millisecond, time.Second} {
		for _, m := range []struct {
			mode uint8
			verb string
		}{{roundNearest, "rounded"}, {roundDown, "truncated"}, {roundUp, "rounded up"}} {
			if (deviation{roundUnit: int64(u), roundMode: m.mode}).round(want) == got {
				specific = append(specific, mkey(fmt.Sprintf("%s-%s(%v)", what, strings.ReplaceAll(m.verb, " ", "-"), u),
					fmt.Sprintf("every %s is %s to whole %v where the spec keeps nanoseconds", what, m.verb, u)))
			}
		}
	}
	if got-want == 1 {
		specific = append(specific, mkey(what+"-rounded(1ns)", "every "+what+" is 1 ns above the spec's: rounded where the spec truncates"))
	}
	if want > 0 && got > 0 {
		r := float64(got) / float64(want)
		p := math.Pow(10, 2-math.Floor(math.Log10(r)))
		r = math.Round(r*p) / p
		if r != 1 { // a ratio of 1 (to 3 digits) says nothing
			specific = append(specific, key{fmt.Sprintf("%s-ratio(×%g)", what, r), fmt.Sprintf("every %s is %g× the spec's", what, r), drawFit{fitRatio, r}})
		}
	}
	if diff := got - want; (diff > 0) == (got > want) && diff != 0 { // no wrap
		specific = append(specific, key{fmt.Sprintf("%s-offset(%s)", what, signed(time.Duration(diff))),
			fmt.Sprintf("every %s is the spec's %s", what, signed(time.Duration(diff))), drawFit{fitOffset, float64(diff)}})
	}
	return specific, generic
}

// decideKeys describes a wrong decision.
func decideKeys(req protocol.Request, ref, got protocol.Response) (specific []key, generic key) {
	if ref.Action == got.Action {
		if ref.DelayNS != nil && got.DelayNS != nil {
			return timeKeys("delay", *ref.DelayNS, *got.DelayNS)
		}
		return nil, mkey("decision-delay", "the decision's delay differs from the spec's")
	}
	code := ""
	if req.Error != nil {
		code = req.Error.Code
	}
	s, _ := engine{}.parsePolicy(req.Policy)
	last := max(s.maxAttempts, 1)
	if got.Action == "retry" {
		// one name, one group, whatever the spec's action (the
		// reproduction shows it)
		generic = mkey("retried-where-spec-gives-up", "retried where the spec gives up (discards or dead-letters)")
		switch {
		case code != "" && code != "RETRY":
			return []key{mkey("handler-code-ignored("+code+")", "the handler code "+code+" is ignored: the job is retried")}, generic
		case req.Attempt < last:
			return []key{mkey("non-retryable-retried", "an error non_retryable_errors names is retried")}, generic
		case req.Attempt >= last:
			k := req.Attempt - last + 1
			return []key{mkey(fmt.Sprintf("retried-past-max-attempts(%d)", k), fmt.Sprintf("%d attempt(s) past max_attempts retried", k))}, generic
		}
		return nil, generic
	}
	if ref.Action == "retry" {
		generic = mkey("gave-up-where-spec-retries", "gave up (discarded or dead-lettered) where the spec retries")
		if code == "" || code == "RETRY" {
			var specific []key
			if k := last - req.Attempt; k > 0 && k <= 2 {
				specific = append(specific, mkey(fmt.Sprintf("exhausted-early(%d)", k), fmt.Sprintf("gave up %d attempt(s) before max_attempts", k)))
			}
			if len(s.patterns) > 0 && req.Attempt < last {
				specific = append(specific, nonRetryableMatched)
			}
			return specific, generic
		}
		return nil, generic
	}
	return nil, mkey("exhaustion-action("+got.Action+"≠"+ref.Action+")", "a job given up is "+got.Action+" where the spec says "+ref.Action)
}

// nonRetryableMatched is the description of an error given up before
// max_attempts under a policy that lists non_retryable_errors: the type
// matched a pattern that the spec's matching does not match it to.
var nonRetryableMatched = mkey("non-retryable-matched", "an error non_retryable_errors does not name is given up as non-retryable")

// rejectsDuration is the description of a valid duration refused,
// alone or as a policy's interval: one reading of durations, seen from
// every op that reads one.
var rejectsDuration = mkey("rejects-valid-duration", "refuses a duration the spec accepts: in parse_duration, or as a policy's initial_interval or max_interval")

// refusedField describes a valid input refused, by what the refusal
// names: a duration (parse_duration's value, or the interval field the
// message names), or the policy field the message names, so that one
// refusal seen from validate, delay and decide is one group.
func refusedField(req protocol.Request, msg string) (key, bool) {
	if req.Op == protocol.OpParseDuration {
		return rejectsDuration, true
	}
	if req.Op != protocol.OpValidate && req.Op != protocol.OpDelay && req.Op != protocol.OpDecide || len(req.Policy) == 0 {
		return key{}, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(req.Policy, &m) != nil {
		return key{}, false
	}
	at, field := -1, ""
	for _, f := range policyKeys {
		if i := strings.Index(msg, f); i >= 0 && (at < 0 || i < at) && m[f] != nil {
			at, field = i, f
		}
	}
	switch field {
	case "":
		return key{}, false
	case "initial_interval", "max_interval":
		return rejectsDuration, true
	}
	return mkey("rejects-valid("+field+")", "refuses a valid policy, naming its "+field), true
}

// badField returns the first field the reference rejects a policy for, ""
// when the request's policy is not the reason.
func badField(req protocol.Request) string {
	if len(req.Policy) == 0 {
		return ""
	}
	_, err := policy.Parse(req.Policy)
	var ve *policy.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 {
		f := ve.Errors[0].Field
		if i := strings.IndexByte(f, '['); i > 0 {
			f = f[:i]
		}
		return f
	}
	return ""
}

// failingDiff returns the first top-level key of the effective policies
// a (the reference's) and b (c's answer) whose difference alone fails c:
// b with every other differing key set to a's value. A key whose
// difference the judge accepts (a field the implementation declared
// unclaimed) does not name the deviation. It falls back to
// [effectiveDiff] when no key fails alone or c has no judge.
func failingDiff(c *Case, a, b json.RawMessage) string {
	var ma, mb map[string]json.RawMessage
	if c.Judge == nil || json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return effectiveDiff(a, b)
	}
	var diff []string
	for k := range ma {
		if !sameJSON(ma[k], mb[k]) {
			diff = append(diff, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	for _, k := range diff {
		only := map[string]json.RawMessage{}
		for kk, v := range mb {
			only[kk] = v
		}
		for _, o := range diff {
			if o == k {
				continue
			}
			if v, ok := ma[o]; ok {
				only[o] = v
			} else {
				delete(only, o)
			}
		}
		raw, err := json.Marshal(only)
		if err != nil {
			continue
		}
		ans := c.Answer
		ans.Effective = raw
		if !c.Judge(ans) {
			return k
		}
	}
	return effectiveDiff(a, b)
}

// effectiveDiff returns the first top-level key whose JSON value differs
// between two objects, "" when none does or either is not an object.
func effectiveDiff(a, b json.RawMessage) string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return ""
	}
	keys := make([]string, 0, len(ma)+len(mb))
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !sameJSON(ma[k], mb[k]) {
			return k
		}
	}
	return ""
}

// sameJSON reports whether two JSON values are equal by value: numbers
// by value (2 and 2.0), strings that are durations by length (PT90S and
// PT1M30S), the rest by their compact text.
func sameJSON(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes()) {
		return true
	}
	var fa, fb float64
	if json.Unmarshal(a, &fa) == nil && json.Unmarshal(b, &fb) == nil {
		return fa == fb
	}
	var sa, sb string
	if json.Unmarshal(a, &sa) == nil && json.Unmarshal(b, &sb) == nil {
		return SameDuration(sa, sb)
	}
	return false
}
