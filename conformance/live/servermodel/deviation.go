package servermodel

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Deviation is a group of failed checks no model explains, grouped by the
// deviation observed between the server's answers and the reference's
// ("one attempt past max_attempts retried", "every delay is 2× the
// spec's"), never by a check's class flag.
type Deviation struct {
	Name        string   // "retried-past-max-attempts(1)", "own-observation", ...
	Explanation string   // what every check of the group showed
	Checks      []string // in the order given
	// Example is the first observation of the group's first check that
	// shows the deviation, written out ("" for a check with none).
	Example string
}

// obsKey is one description of a deviation. A weak description (its name
// begins with "~") is one an observation is consistent with but cannot
// show (a delay seen through a window too wide to tell): it joins a group
// its strong form founds, and does not vote on it.
type obsKey struct{ name, expl string }

// weak reports whether k is a weak description.
func (k obsKey) weak() bool { return strings.HasPrefix(k.name, "~") }

// strong returns k's strong form.
func (k obsKey) strong() obsKey { k.name = strings.TrimPrefix(k.name, "~"); return k }

// terminal are the states in which a FAIL answer gives a job up.
var terminal = map[string]bool{"discarded": true, "dead": true, "dead_letter": true, "failed": true, "cancelled": true, "completed": true}

// ownObservation is the generic description of a check none of whose
// observations deviates from the reference's answer.
var ownObservation = obsKey{"own-observation", "each check failed on what it observed itself (see its reason), which no model reads"}

// deviationOf describes the first observation of check c that the
// reference answers otherwise (see describe), with its example; a check
// with none has only the generic description ownObservation.
func deviationOf(obs []Obs, c string) (specific []obsKey, generic obsKey, ex string) {
	for j := range obs {
		o := &obs[j]
		if o.Check != c {
			continue
		}
		if ref := predict(set{}, o); !consistent(ref, o) {
			specific, generic = describe(o, ref)
			if o.Kind == HistoryAttempt && newestFirst(obs, c) {
				specific = []obsKey{historyOrder}
			}
			return specific, generic, example(o, ref)
		}
	}
	return nil, ownObservation, ""
}

// historyOrder describes an error history shown newest first.
var historyOrder = obsKey{"history-order", "the error history is shown newest first: entry 1 is the last attempt's, entry n the first's"}

// newestFirst reports whether the error history entries check c observed
// show attempts n, n−1, …, 1 for entries 1, 2, …, n (two entries or more).
func newestFirst(obs []Obs, c string) bool {
	shown := map[int]int{} // entry → attempt
	for i := range obs {
		if o := &obs[i]; o.Check == c && o.Kind == HistoryAttempt && o.Attempt != nil {
			shown[o.N] = *o.Attempt
		}
	}
	n := len(shown)
	if n < 2 {
		return false
	}
	for e := 1; e <= n; e++ {
		if a, ok := shown[e]; !ok || a != n+1-e {
			return false
		}
	}
	return true
}

// wholeSeconds describes a delay that is a whole number of seconds where
// the spec's is not one: truncated, rounded or rounded up to the second.
var wholeSeconds = obsKey{"delay-whole-seconds", "delays are whole numbers of seconds (0s, 1s, 2s, …) less than a second from the spec's: a delay truncated or rounded to the second, or a whole-second default used in place of the policy's interval"}

// wholeSecondsOf describes the delay window [lo, hi] against the spec's
// [wlo, whi] by wholeSeconds (see inWholeSeconds): strong for a window at
// most a quarter of a second wide, weak for a wider one, which a whole
// second lies in by chance too (a loaded host's round trips).
func wholeSecondsOf(lo, hi, wlo, whi time.Duration) []obsKey {
	if !inWholeSeconds(lo, hi, wlo, whi) {
		return nil
	}
	k := wholeSeconds
	if hi-lo > time.Second/4 {
		k.name = "~" + k.name
	}
	return []obsKey{k}
}

// inWholeSeconds reports whether the delay window [lo, hi] holds a whole
// number of seconds k·s that lies less than a second from the spec's
// window [wlo, whi], as its floor, ceiling or rounding would. A k of 0
// counts only for a spec's delay of 10ms or more: a shorter one observed
// near 0 says little about seconds.
func inWholeSeconds(lo, hi, wlo, whi time.Duration) bool {
	const sec = time.Second
	if whi < 0 || wlo > whi || hi > math.MaxInt64-2*sec {
		return false // a window near the largest duration: k·s would overflow
	}
	for k := max(lo-resolution, 0) / sec; k*sec <= hi+resolution; k++ {
		at := k * sec
		if at < lo-resolution || at-sec >= whi || at+sec <= wlo {
			continue
		}
		if k > 0 || wlo >= 10*time.Millisecond {
			return true
		}
	}
	return false
}

// kindOf is the kind of deviation a generic description belongs to, the
// unit in which groups are compared: the time a retry is due is one kind,
// whether seen as a delay outside the spec's range, as a retry handed out
// before the next_attempt_at answered (a stated time that is itself off)
// or as a retry promoted late; any other generic description is a kind of
// its own. A check that observed nothing the models read has no kind ("").
func kindOf(generic obsKey) string {
	switch generic.name {
	case "delay-differs", "retry-handed-out-early", "promoted-late":
		return "delay"
	case ownObservation.name:
		return ""
	}
	return generic.name
}

// Deviations groups the checks of unexplained (as [Diagnose] returns
// them) by the first observation of each that the reference answers
// otherwise, by these rules in order:
//
//  1. a specific description ("every delay is about 2× the spec's")
//     shared by at least two checks and by most checks of its generic
//     kind is taken first, largest first;
//  2. the rest by their generic description ("a delay lies outside the
//     spec's range"), largest first;
//  3. a generic group of a quarter or less of the largest group of its
//     kind (see kindOf: a retry handed out early is of the kind of a
//     delay that differs) joins that group, whose explanation then counts
//     both ("(16 of these 17; the other 1: ...)"): one bug seen by a few
//     checks from another side gives one group, not two;
//  4. the checks none of whose observations deviates (or that have none)
//     form one group, "own-observation", each judged by what the check
//     saw itself (its reason).
func Deviations(obs []Obs, unexplained []string) []Deviation {
	if len(obs) > MaxObservations {
		obs = obs[:MaxObservations]
	}
	type item struct {
		check    string
		specific []obsKey
		generic  obsKey
		example  string
	}
	items := make([]item, len(unexplained))
	for i, c := range unexplained {
		items[i].check = c
		items[i].specific, items[i].generic, items[i].example = deviationOf(obs, c)
	}
	done := make([]bool, len(items))
	var out []Deviation
	var kinds []string // of each group of out
	var generics []bool
	take := func(k obsKey, members []int, generic bool) {
		d := Deviation{Name: k.name, Explanation: k.expl, Example: items[members[0]].example}
		for _, i := range members {
			done[i] = true
			d.Checks = append(d.Checks, items[i].check)
		}
		out = append(out, d)
		kinds = append(kinds, kindOf(items[members[0]].generic))
		generics = append(generics, generic)
	}
	for {
		count := map[obsKey][]int{}
		weak := map[obsKey][]int{} // by the strong form
		dim := map[obsKey]int{}
		for i, it := range items {
			if done[i] {
				continue
			}
			dim[it.generic]++
			for _, k := range it.specific {
				if k.weak() {
					weak[k.strong()] = append(weak[k.strong()], i)
				} else {
					count[k] = append(count[k], i)
				}
			}
		}
		var best obsKey
		bestN := 0
		for k, m := range count {
			// the checks that can only be consistent with k do not vote
			if len(m) < 2 || 2*len(m) <= dim[items[m[0]].generic]-len(weak[k]) {
				continue
			}
			if len(m) > bestN || len(m) == bestN && k.name < best.name {
				best, bestN = k, len(m)
			}
		}
		if bestN == 0 {
			break
		}
		// the strong first: the group's example shows the deviation
		take(best, append(append([]int(nil), count[best]...), weak[best]...), false)
	}
	generic := map[obsKey][]int{}
	var order []obsKey
	for i, it := range items {
		if done[i] {
			continue
		}
		if _, ok := generic[it.generic]; !ok {
			order = append(order, it.generic)
		}
		generic[it.generic] = append(generic[it.generic], i)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(generic[order[i]]) > len(generic[order[j]]) })
	for _, k := range order {
		take(k, generic[k], true)
	}
	return joinRemnants(out, kinds, generics)
}

// joinRemnants applies rule 3 of [Deviations] to the groups out, of the
// kinds given, generics marking the groups of a generic description.
func joinRemnants(out []Deviation, kinds []string, generics []bool) []Deviation {
	largest := map[string]int{} // kind → index of its largest group (the first on a tie)
	for i, d := range out {
		if kinds[i] == "" {
			continue
		}
		if j, ok := largest[kinds[i]]; !ok || len(d.Checks) > len(out[j].Checks) {
			largest[kinds[i]] = i
		}
	}
	joined := make([]bool, len(out))
	type remnant struct {
		n    int
		expl string
	}
	others := map[int][]remnant{}
	for i, d := range out {
		j, ok := largest[kinds[i]]
		if !ok || j == i || !generics[i] || 4*len(d.Checks) > len(out[j].Checks) {
			continue
		}
		out[j].Checks = append(out[j].Checks, d.Checks...)
		others[j] = append(others[j], remnant{len(d.Checks), d.Explanation})
		joined[i] = true
	}
	var kept []Deviation
	for i, d := range out {
		if joined[i] {
			continue
		}
		if rs := others[i]; len(rs) > 0 {
			own := len(d.Checks)
			var parts []string
			for _, r := range rs {
				own -= r.n
				parts = append(parts, fmt.Sprintf("%d: %s", r.n, r.expl))
			}
			d.Explanation += fmt.Sprintf(" (%d of these %d; the other %s)", own, len(d.Checks), strings.Join(parts, "; the other "))
		}
		kept = append(kept, d)
	}
	return kept
}

// describe returns the specific and generic descriptions of how the
// server's answer in o deviates from the reference's answer ref.
func describe(o *Obs, ref answer) (specific []obsKey, generic obsKey) {
	kind := map[Kind]string{FetchAttempt: "FETCH", InfoAttempt: "INFO", HistoryAttempt: "error history", AnswerAttempt: "FAIL answer"}[o.Kind]
	switch o.Kind {
	case FetchAttempt, InfoAttempt, HistoryAttempt, AnswerAttempt:
		if o.Attempt == nil {
			return nil, obsKey{"attempt-missing", "no attempt shown"}
		}
		return []obsKey{attemptOffset(*o.Attempt - ref.attempt)}, obsKey{"attempt-number(" + kind + ")", "the attempt " + kind + " shows differs from the spec's"}
	case Delivery:
		return nil, obsKey{"retry-handed-out-early", "a retry was handed out before its next_attempt_at"}
	case ExpiryCounted:
		return nil, obsKey{"expired-reservation-not-counted", "an expired reservation did not count as an attempt"}
	case DeadLetterFilter:
		return nil, obsKey{"dead-letter-filter-ignored", "the dead-letter list shows jobs of other queues"}
	case Redelivery:
		if o.Yes {
			return nil, obsKey{"handed-out-past-max-attempts", "a job whose every attempt had ended was handed out again"}
		}
		return nil, obsKey{"not-handed-out-again", "a job with attempts left was not handed out again"}
	case Promotion:
		r, _ := strconv.ParseFloat(strconv.FormatFloat(1+float64(o.Late)/float64(max(o.DelayLo, 1)), 'g', 2, 64), 64)
		return []obsKey{{fmt.Sprintf("promoted-late(×%g)", r), fmt.Sprintf("a retry became fetchable only at about %g× its delay after the failure", r)}},
			obsKey{"promoted-late", "a retry became fetchable later than its delay after its next_attempt_at"}
	case StatedDelay:
		switch {
		case o.State != ref.state:
			return nil, obsKey{"state(" + o.State + "≠" + ref.state + ")", "the FAIL answer's state is " + o.State + " where the spec's is " + ref.state}
		case o.HasDelay && inWholeSeconds(o.DelayLo, o.DelayHi, ref.lo, ref.hi):
			return wholeSecondsOf(o.DelayLo, o.DelayHi, ref.lo, ref.hi), obsKey{"delay-differs", "a delay lies outside the spec's range"}
		case ref.lo == ref.hi && ref.lo > 0 && o.HasDelay:
			r, _ := strconv.ParseFloat(strconv.FormatFloat(float64(o.DelayLo+o.DelayHi)/2/float64(ref.lo), 'g', 2, 64), 64)
			return []obsKey{{fmt.Sprintf("delay-ratio(×%g)", r), fmt.Sprintf("every delay is about %g× the spec's", r)}}, obsKey{"delay-differs", "a delay lies outside the spec's range"}
		}
		return nil, obsKey{"delay-differs", "a delay lies outside the spec's range"}
	}
	switch {
	case o.State != ref.state && o.State == "retryable":
		generic = obsKey{"retried-where-spec-gives-up", "retried where the spec gives the job up"}
		switch {
		case o.Failure.Code != "" && o.Failure.Code != "RETRY":
			return []obsKey{{"handler-code-ignored(" + o.Failure.Code + ")", "the handler code " + o.Failure.Code + " is ignored: the job is retried"}}, generic
		case o.N >= max(ref.max, 1):
			k := o.N - max(ref.max, 1) + 1
			return []obsKey{{fmt.Sprintf("retried-past-max-attempts(%d)", k), fmt.Sprintf("%d attempt(s) past max_attempts retried", k)}}, generic
		}
		return []obsKey{{"non-retryable-retried", "an error non_retryable_errors names is retried"}}, generic
	case o.State != ref.state && ref.state == "retryable" && !terminal[o.State]:
		// a state name the spec does not use for a FAIL answer: grouped by
		// the name, never read as a give-up
		return nil, obsKey{"state(" + o.State + "≠" + ref.state + ")", "the FAIL answer's state is " + o.State + " where the spec's is " + ref.state}
	case o.State != ref.state && ref.state == "retryable":
		generic = obsKey{"gave-up-where-spec-retries", "gave the job up (" + o.State + ") where the spec retries"}
		if k := max(ref.max, 1) - o.N; k > 0 && k <= 2 && o.Failure.Code == "" {
			return []obsKey{{fmt.Sprintf("exhausted-early(%d)", k), fmt.Sprintf("gave up %d attempt(s) before max_attempts", k)}}, generic
		}
		return nil, generic
	case o.State != ref.state:
		return nil, obsKey{"state(" + o.State + "≠" + ref.state + ")", "the FAIL answer's state is " + o.State + " where the spec's is " + ref.state}
	case o.Attempt == nil:
		return nil, obsKey{"attempt-number(FAIL)", "the attempt a FAIL answer carries differs from the spec's"}
	case *o.Attempt != ref.attempt:
		d := *o.Attempt - ref.attempt
		return []obsKey{attemptOffset(d)}, obsKey{"attempt-number(FAIL)", "the attempt a FAIL answer carries differs from the spec's"}
	case o.MaxAttempts != nil && *o.MaxAttempts != ref.max:
		return nil, obsKey{"max-attempts-shown", "the max_attempts a FAIL answer carries differs from the policy's"}
	case o.Listed != nil && *o.Listed != ref.listed:
		if *o.Listed {
			return nil, obsKey{"dead-lettered-where-spec-discards", "a job given up is in the dead-letter queue where the spec discards it"}
		}
		return nil, obsKey{"not-dead-lettered", "a job given up under dead_letter is not in the dead-letter queue"}
	case ref.hasDelay && o.HasDelay:
		generic = obsKey{"delay-differs", "a delay lies outside the spec's range"}
		if inWholeSeconds(o.DelayLo, o.DelayHi, ref.lo, ref.hi) {
			return wholeSecondsOf(o.DelayLo, o.DelayHi, ref.lo, ref.hi), generic
		}
		if ref.lo == ref.hi && ref.lo > 0 {
			r := float64(o.DelayLo+o.DelayHi) / 2 / float64(ref.lo)
			r, _ = strconv.ParseFloat(strconv.FormatFloat(r, 'g', 2, 64), 64)
			return []obsKey{{fmt.Sprintf("delay-ratio(×%g)", r), fmt.Sprintf("every delay is about %g× the spec's", r)}}, generic
		}
		return nil, generic
	}
	return nil, obsKey{"answer-differs", "a FAIL answer differs from the spec's"}
}

// attemptOffset describes attempts shown d from the spec's.
func attemptOffset(d int) obsKey {
	return obsKey{fmt.Sprintf("attempt-offset(%+d)", d), fmt.Sprintf("attempts shown %+d from the spec's (1-based, the attempt handed out)", d)}
}

// example writes the observation o beside the reference's answer ref.
func example(o *Obs, ref answer) string {
	switch o.Kind {
	case FetchAttempt, InfoAttempt, HistoryAttempt, AnswerAttempt:
		got := "none"
		if o.Attempt != nil {
			got = strconv.Itoa(*o.Attempt)
		}
		return fmt.Sprintf("%s %d: attempt %s, spec %d", map[Kind]string{FetchAttempt: "FETCH of delivery", InfoAttempt: "INFO after failures", HistoryAttempt: "error history entry", AnswerAttempt: "FAIL answer after attempts spent"}[o.Kind], o.N, got, ref.attempt)
	case StatedDelay:
		got := o.State
		if o.HasDelay && o.State == "retryable" {
			got += fmt.Sprintf(" after [%v, %v]", o.DelayLo, o.DelayHi)
		}
		want := ref.state
		if ref.hasDelay {
			want += fmt.Sprintf(" after [%v, %v]", ref.lo, ref.hi)
		}
		return fmt.Sprintf("FAIL answered %s; the spec: %s", got, want)
	case Redelivery:
		return fmt.Sprintf("after %d ended attempts of a job under policy %v: handed out again %v, the spec %v", o.N, o.Policy, o.Yes, ref.yes)
	case Promotion:
		return fmt.Sprintf("a retry due %v after its failure became fetchable %v after its next_attempt_at; the spec: before %v", o.DelayLo, o.Late, o.DelayLo)
	case FailAnswer:
		pol := "the default policy"
		if o.Policy != nil {
			pol = fmt.Sprintf("policy %v", o.Policy)
		}
		got := o.State
		if o.HasDelay && o.State == "retryable" {
			got += fmt.Sprintf(" after [%v, %v]", o.DelayLo, o.DelayHi)
		}
		want := ref.state
		if ref.hasDelay {
			want += fmt.Sprintf(" after [%v, %v]", ref.lo, ref.hi)
		}
		return fmt.Sprintf("FAIL of attempt %d (error type %q, code %q) under %s: %s; the spec: %s", o.N, o.Failure.Type, o.Failure.Code, pol, got, want)
	}
	return fmt.Sprintf("observation of kind %d: the server answered %v, the spec %v", o.Kind, o.Yes, ref.yes)
}

// Judge reports whether the reference server answers the observation o
// as the server did, and writes the reference's answer beside the
// server's (for a differential fuzzer of live servers).
func Judge(o *Obs) (ok bool, diff string) {
	ref := predict(set{}, o)
	if consistent(ref, o) {
		return true, ""
	}
	return false, example(o, ref)
}
