package diagnose

import (
	"math"
	"slices"

	"github.com/retrykit/retrykit/internal/cover"
	"sort"
	"strings"

	"github.com/retrykit/retrykit/conformance/protocol"
)

// Model is one named bug: a variant of the reference implementation with
// one rule broken. The zero Model is not useful; take models from
// [Models]. A Model is immutable and safe for concurrent use.
type Model struct {
	Name string // "no-post-jitter-cap", "strategy-as(linear→exponential)", ...
	Fix  string // one line: what to change in the implementation
	// Family, for a model fitted to a run's observations (see
	// [Families]), is the name of its family ("strategy-as"); "" for a
	// model of the fixed catalogue.
	Family string
	bug    bug
	// also holds the further bugs of a combination of models, see
	// [Combine]; empty for a model of the catalogue.
	also bugSet
	dev  deviation
}

// mask returns the engine's bug set for m.
func (m Model) mask() bugSet {
	if m.bug == noBug {
		return m.also
	}
	return m.also.set(m.bug)
}

// engine returns the engine answering as m.
func (m Model) engine() engine { return engine{bugs: m.mask(), dev: m.dev} }

// Combine returns the model with the bugs of both a and b: one
// implementation can have several bugs, and one answer can show two of them
// at once. Its name is "a+b" and its fix both fixes. A fitted deviation is
// kept from a, or else from b.
func Combine(a, b Model) Model {
	dev := a.dev
	if dev == (deviation{}) {
		dev = b.dev
	}
	return Model{Name: a.Name + "+" + b.Name, Fix: a.Fix + "; and " + b.Fix, bug: a.bug, also: a.also.union(b.mask()), dev: dev}
}

// Answer returns the model's answer to req. ok is false when the model
// does not say what it would answer: a profile request, a scenario. A
// delay or retry the model accepts but whose value depends on the
// implementation's own draw (no rand, jitter on) has no DelayNS: see
// [Drawn].
func (m Model) Answer(req protocol.Request) (resp protocol.Response, ok bool) {
	return m.engine().do(req)
}

// entry is one row of the catalogue's table.
type entry struct {
	name, fix string
	bug       bug
}

// models turns the catalogue's table into models.
func models(es []entry) []Model {
	out := make([]Model, len(es))
	for i, e := range es {
		out[i] = Model{Name: e.name, Fix: e.fix, bug: e.bug}
	}
	return out
}

var catalogue = models([]entry{
	{"no-defaults-merge", "merge a partial policy over the section 8 defaults field by field (an absent field takes its default, not a zero value)", bugNoMerge},
	{"no-on-exhaustion", "add the on_exhaustion field (discard | dead_letter, default discard), report it in the effective policy and apply it on exhaustion and to non-retryable errors", bugNoOnExhaustion},
	{"no-duplicate-key-check", "reject a policy that repeats a key (RK-08) instead of keeping the last value", bugNoDupCheck},
	{"unknown-fields-ignored", "reject unknown policy fields (RK-02), naming the field", bugUnknownFieldsIgnored},
	{"no-post-jitter-cap", "cap the delay at max_interval again after multiplying by the jitter (cap, jitter, cap)", bugNoPostCap},
	{"jitter-before-cap", "cap the raw delay at max_interval before applying jitter, then cap again (cap, jitter, cap)", bugJitterBeforeCap},
	{"additive-jitter", "jitter multiplies the capped delay by 0.5 + r; do not add r times the delay", bugAdditiveJitter},
	{"float-seconds", "compute durations and delays in integer nanoseconds, not float64 seconds (whose power raises on overflow, as Python's does, and whose rounding loses nanoseconds)", bugFloatSeconds},
	{"float-milliseconds", "compute durations and delays in integer nanoseconds, not float64 milliseconds (JavaScript numbers)", bugFloatMillis},
	{"date-part-unsupported", "support the date part of a duration (P1D, P1Y, P1M): Y, M and D before T (RK-07), not only PT...", bugDurTimeOnly},
	{"zero-duration-rejected", "accept PT0S as a duration (RK-12): only initial_interval must be above zero", bugDurZeroRejected},
	{"duration-shorthand", `reject shorthand durations ("30s", "5m", "2h", "1d"): only ISO 8601 is OJS`, bugDurShorthand},
	{"lenient-duration-regex", `match durations with [0-9] and the end of the text: \d accepts every Unicode digit and $ a final newline`, bugDurRegexLenient},
	{"millisecond-rounding", "keep durations and delays to the nanosecond; do not round them to whole milliseconds", bugRoundMillis},
	{"month-as-30-days", "a month (M before T) is 730 hours, a twelfth of a 365-day year (RK-07), not 30 days", bugMonth30Days},
	{"precision-53-bits", "read max_attempts and attempt as 64-bit integers; a float64 (JSON.parse, json.loads into float) loses them above 2^53", bugFloat53},
	{"math-pow-drift", "compute integral powers exactly in integers and saturate; math.Pow in float64 nanoseconds drifts on large delays, and time.Duration(f) of a float from 2^63 up wraps to -2^63", bugPowDrift},
	{"attempt-from-zero", "attempt is the 1-based number of the attempt that just failed: the delay after attempt 1 is initial_interval", bugAttemptFrom0},
	{"unknown-strategy-as-exponential", "reject an unknown backoff_strategy instead of falling back to exponential", bugUnknownStrategyExp},
	{"none-strategy-unsupported", `implement the strategy "none" (a constant initial_interval) under that name instead of falling back to exponential`, bugNoneUnsupported},
	{"no-defaults-merge-fallbacks", "merge a partial policy over the section 8 defaults: a struct decoded from it leaves max_attempts 0, jitter false and no cap, and only the delay formula falls back to 1s and coefficient 2", bugNoMergeFallbacks},
	{"polynomial-unsupported", "implement the polynomial strategy, initial_interval × n^coefficient, instead of falling back to exponential", bugPolynomialUnsupported},
	{"strategy-field-ignored", "read the strategy from backoff_strategy (RK-01); it is not exponential always", bugStrategyIgnored},
	{"lenient-duration-empty", `reject durations without a component ("P", "PT", "P1DT", "")`, bugDurEmpty},
	{"lenient-duration-no-component", `reject durations without a component ("P", "PT", "P1DT"): every group of the pattern is optional, though the empty text is refused`, bugDurNoComponent},
	{"lenient-duration-weeks", `reject weeks ("P1W"): the OJS grammar has no W`, bugDurWeeks},
	{"lenient-duration-case", "reject lower-case designators: the grammar is upper case only", bugDurLower},
	{"lenient-duration-comma", `reject a comma as the decimal sign: only "." is allowed`, bugDurComma},
	{"duration-no-upper-bound", "reject a duration that does not fit 2^63−1 nanoseconds instead of saturating", bugDurNoUpperBound},
	{"date-components-as-zero", "parse date components (Y, M, D) with their lengths (RK-07) instead of ignoring them", bugDurDateZero},
	{"zero-initial-interval-accepted", "reject initial_interval PT0S: it must be positive", bugZeroInterval},
	{"regex-match", `match non_retryable_errors exactly or by the ".*" prefix; do not compile them as regular expressions`, bugRegexMatch},
	{"regex-or-literal-match", `match non_retryable_errors exactly or by the ".*" prefix: this one compiles "^" + pattern + "$" as a regular expression ("*" alone matches every type, "a|b" is anchored on one side only) and compares a pattern that does not compile for equality, refusing no list`, bugRegexLiteralFallback},
	{"prefix-without-dot", `"auth.*" matches types that start with "auth." (dot included), not "auth" or "authx"`, bugPrefixNoDot},
	{"prefix-matches-bare-type", `"auth.*" matches types that start with "auth." only; "auth" itself is not a match (section 6.2 table)`, bugBarePrefixMatch},
	{"max-attempts-zero-rejected", "accept max_attempts 0: it behaves as 1, the job runs once and is not retried (RK-04)", bugZeroAttemptsRejected},
	{"no-prefix-match", `support prefix patterns: "auth.*" matches every type starting with "auth."`, bugNoPrefix},
	{"max-attempts-unchecked", "reject a max_attempts that is not a non-negative integer up to 2^63−1", bugNoCheckMaxAttempts},
	{"coefficient-unchecked", "reject a backoff_coefficient that is below 1, not finite or not a number", bugNoCheckCoefficient},
	{"max-interval-unchecked", "reject a max_interval below initial_interval", bugNoCheckMaxInterval},
	{"jitter-unchecked", "reject a jitter that is not a JSON boolean", bugNoCheckJitter},
	{"patterns-unchecked", `reject a non_retryable_errors list with an empty pattern, ".*" alone or a non-string entry`, bugNoCheckPatterns},
	{"on-exhaustion-unchecked", `reject an on_exhaustion other than "discard" or "dead_letter"`, bugNoCheckOnExhaustion},
	{"attempt-unchecked", "reject an attempt below 1 (invalid_request)", bugNoCheckAttempt},
	{"no-validation", "validate the policy before merging it: every field's type and range, unknown fields, duplicate keys (sections 8 and 11, RK-02, RK-08); the merge alone keeps bad values", bugNoValidation},
	{"invalid-fields-defaulted", "reject a policy with an invalid field instead of replacing the field by its default", bugInvalidDefaulted},
	{"fraction-unsupported", "accept a decimal fraction on the seconds (PT0.5S is 500 ms, section 4.1); a parser of whole numbers only, such as PHP's DateInterval, rejects it", bugDurNoFraction},
	{"budget-boundary-inclusive", "ojs-timeouts 9.1: discard only when created_at + total_timeout < now + delay + timeout, strictly; a retry whose attempt ends exactly at the deadline is scheduled (RK-215)", bugBudgetInclusive},
	{"timeout-not-an-attempt", "count an attempt that timed out or stalled like any failed attempt (ojs-timeouts 5.1, 5.5, 8): it uses one of max_attempts", bugTimeoutNotAttempt},
	{"max-replays-off-by-one", "replay a dead letter only while ojs.replay_count < max_replays (ojs-dead-letter 7.2): a rule with max_replays 3 replays a job 3 times, not 4", bugReplayOffByOne},
	{"date-components-unsupported", "support the date components Y and M (RK-07: Y = 365 days, M = 730 hours), a SHOULD of section 4.2", bugDurNoYearMonth},
	{"backoff-strategy-unsupported", "the backoff_strategy field is retrykit's extension (RK-01), not an OJS requirement: an implementation without it declares it unclaimed (--unclaimed extension:backoff_strategy, or \"unclaimed_flags\": [\"extension:backoff_strategy\"] in hello), or accepts the field and reports it in the effective policy", bugNoStrategyExtension},
})

// Unclaim returns the vector flag that an implementation lacking the
// optional feature this model misses declares unclaimed instead of
// fixing it ("extension:backoff_strategy"): the hello's unclaimed_flags,
// or --unclaimed of "retrykit conformance" and "retrykit fuzz". Vectors
// carrying the flag are then not run, and answers without the feature
// are accepted. It returns "" for a model that is a bug to fix. For a
// combination, the flags of its bugs, comma-separated.
func (m Model) Unclaim() string {
	var flags []string
	m.mask().each(func(b bug) {
		if f, ok := unclaimable[b]; ok {
			flags = append(flags, f)
		}
	})
	return strings.Join(flags, ",")
}

// Drawn reports whether a is an answer whose delay the model cannot know:
// accepted, but drawn by the implementation itself.
func Drawn(a protocol.Response) bool {
	return a.Error == nil && a.DelayNS == nil && a.NS == nil && a.Effective == nil && a.Match == nil && a.Result == nil &&
		(a.Action == "" || a.Action == "retry")
}

// Models returns the catalogue of bug models, a fresh slice on every call.
func Models() []Model { return append([]Model(nil), catalogue...) }

// Case is one judged answer of a run.
type Case struct {
	ID      string
	Request protocol.Request
	Answer  protocol.Response // the implementation's answer
	Failed  bool              // false: the answer passed
	// Drawn marks an answer whose delay the implementation drew itself
	// (Request has no rand): a model reproduces it when the delay lies
	// within the model's range over every draw, with the same action.
	Drawn bool
	// Judge reports whether an answer to Request would pass; a model
	// explains a failure only with an answer that fails too.
	Judge func(protocol.Response) bool
	// Same reports whether an answer to Request equals Answer (within the
	// implementation's resolution).
	Same func(protocol.Response) bool
}

// Finding is one model that explains failures of a run.
type Finding struct {
	Model        Model
	Explains     []string // failures listed under this model, in case order
	Reproduces   int      // failures the model reproduces, counting those listed under an earlier model
	Contradicted []string // passing cases the model would have failed
	// Equivalent names the other models that reproduce exactly the same
	// failures with as few contradictions: the suite cannot tell them
	// apart from Model in this run.
	Equivalent []string
}

// Diagnose attributes the failed cases to models by the rules in the
// package documentation: the catalogue and the family models fitted to
// these failures ([Families]) compete in one greedy cover (package
// internal/cover). It returns the findings, most failures first, and the
// ids of the failures no model reproduces, in case order (see
// [Deviations] to group them by what was observed).
func Diagnose(cases []Case) (findings []Finding, unexplained []string) {
	refused := map[string]bool{}
	for { // each round refuses a model found in the last: a finite pool
		findings, unexplained = diagnose(cases, refused)
		more := false
		for _, f := range findings {
			if f.Model.Family == "" && 3*len(f.mispredicted(cases, findings)) > f.Reproduces ||
				f.Model.Family != "" && f.partial(cases, unexplained) || f.blind(cases, unexplained) {
				refused[f.Model.Name], more = true, true
			}
		}
		if !more {
			break
		}
	}
	findings = joinDrawn(cases, findings)
	sort.SliceStable(findings, func(i, j int) bool { return len(findings[i].Explains) > len(findings[j].Explains) })
	return findings, unexplained
}

// blind reports whether f's model answers as the spec does on at least
// half as many unexplained failures of the matcher, of the kinds it
// explains (matches too much, an invalid list accepted, ...), as the
// matcher's failures it explains: it reproduces some answers of a
// matcher and sees no deviation where the same matcher deviates the same
// way nearly as often. A
// matcher's failures are match answers, and decisions before
// max_attempts of a policy that lists non_retryable_errors whose action
// is not the spec's. Such a model (a prefix match, for a matcher that
// compiles "^" + pattern as a regular expression: it agrees on "auth.*",
// not on "*") shares a few answers with another bug; the failures then
// stay unexplained, grouped by what they show. Only matchers: their bugs
// touch disjoint sets of patterns, where one bug of delays shows in
// every delay, and families of delays have their own rule (partial).
func (f Finding) blind(cases []Case, unexplained []string) bool {
	byID := make(map[string]*Case, len(cases))
	for i := range cases {
		byID[cases[i].ID] = &cases[i]
	}
	mine := 0
	kinds := map[key]bool{}
	for _, id := range f.Explains {
		if c := byID[id]; c != nil && matcherCase(c) {
			mine++
			_, g := describe(c)
			kinds[g] = true
		}
	}
	if mine == 0 {
		return false
	}
	n := 0
	for _, id := range unexplained {
		c := byID[id]
		if c == nil || !matcherCase(c) || c.Judge == nil {
			continue
		}
		if _, g := describe(c); !kinds[g] {
			continue // another deviation of the matcher: a second bug
		}
		if a, ok := f.Model.Answer(c.Request); ok && !Drawn(a) && c.Judge(a) {
			n++
		}
	}
	return 2*n >= mine
}

// matcherCase reports whether c's failure is the matcher's: a match
// answer, or a decision of a policy that lists non_retryable_errors
// whose action is not the spec's, the attempt before max_attempts.
func matcherCase(c *Case) bool {
	req := c.Request
	if req.Op == protocol.OpMatch {
		return true
	}
	if req.Op != protocol.OpDecide || req.Error != nil && req.Error.Code != "" && req.Error.Code != "RETRY" {
		return false
	}
	s, err := (engine{}).parsePolicy(req.Policy)
	ref, ok := engine{}.do(req)
	return err == nil && ok && len(s.patterns) > 0 && req.Attempt < max(s.maxAttempts, 1) && ref.Action != c.Answer.Action
}

// partial reports whether f, a fitted family, is a small part of a
// larger deviation: more than four times as many failures as it explains
// are left unexplained with the same generic description as its own
// ("a delay differs"). A family that fits a few failures by coincidence
// (every linear delay is the first when the cap is scaled below
// initial_interval) is then not named for them while the bug behind all
// of them goes unexplained.
func (f Finding) partial(cases []Case, unexplained []string) bool {
	mine := map[key]bool{}
	byID := make(map[string]*Case, len(cases))
	for i := range cases {
		byID[cases[i].ID] = &cases[i]
	}
	for _, id := range f.Explains {
		if c := byID[id]; c != nil {
			_, g := describe(c)
			mine[g] = true
		}
	}
	n := 0
	for _, id := range unexplained {
		if c := byID[id]; c != nil {
			if _, g := describe(c); mine[g] {
				n++
			}
		}
	}
	return n > 4*len(f.Explains)
}

// mispredicted returns the failures that f's model mispredicts
// (see [Model.mispredicts]) and that no finding with every bug of f's
// model (f itself or a combination with it) explains: a model of the
// catalogue mispredicting more than a third as many failures as it
// reproduces is refused (rule 2), but one whose mispredictions a second
// bug in the same answers accounts for is not.
func (f Finding) mispredicted(cases []Case, findings []Finding) []int {
	mask := f.Model.mask()
	excused := map[string]bool{}
	for _, g := range findings {
		if g.Model.Family == "" && g.Model.mask().union(mask) == g.Model.mask() {
			for _, id := range g.Explains {
				excused[id] = true
			}
		}
	}
	var out []int
	for i, c := range cases {
		if c.Failed && !excused[c.ID] && f.Model.mispredicts(c) {
			out = append(out, i)
		}
	}
	return out
}

// diagnose is one run of [Diagnose] with the models named in refused
// left out.
func diagnose(cases []Case, refused map[string]bool) (findings []Finding, unexplained []string) {
	done := map[int]bool{}
	open := map[int]bool{}
	for i, c := range cases {
		if c.Failed {
			open[i] = true
		}
	}
	fams := fitted(cases, open)
	// Two fitted families as one deviation, at least one of them proven
	// wrong alone: attempts counted from 0 shift both the delay and the
	// exhaustion, and each family alone mispredicts the other's failures.
	var near, fine []Model
	pick(cases, fams, map[int]bool{}, refused, &near, &fine)
	var twos []Model
	seenTwo := map[deviation]bool{}
	for _, a := range near {
		for _, b := range append(append([]Model(nil), near...), fine...) {
			if d, ok := a.dev.merge(b.dev); ok && a.Name != b.Name && !seenTwo[d] {
				seenTwo[d] = true
				x, y := a, b
				if y.Name < x.Name {
					x, y = y, x
				}
				twos = append(twos, Model{Name: x.Name + "+" + y.Name, Fix: x.Fix + "; and " + y.Fix, Family: x.Family + "+" + y.Family, dev: d})
			}
		}
	}
	pool := append(append(Models(), fams...), twos...)
	findings = pick(cases, pool, done, refused, nil, nil)
	// Failures that show two bugs at once: each catalogue model found so
	// far, combined with every model of the catalogue.
	var pairs []Model
	seen := map[bugSet]bool{}
	for _, f := range findings {
		if f.Model.Family != "" {
			continue
		}
		for _, m := range catalogue {
			c := Combine(f.Model, m)
			if m.Name == f.Model.Name || seen[c.mask()] {
				continue
			}
			seen[c.mask()] = true
			pairs = append(pairs, c)
		}
	}
	found := pick(cases, pairs, done, refused, nil, nil)
	findings = append(findings, found...)
	// and three: each combination found, with every model.
	var triples []Model
	for _, f := range found {
		for _, m := range catalogue {
			c := Combine(f.Model, m)
			if c.mask() == f.Model.mask() || seen[c.mask()] {
				continue
			}
			seen[c.mask()] = true
			triples = append(triples, c)
		}
	}
	findings = append(findings, pick(cases, triples, done, refused, nil, nil)...)
	for i, c := range cases {
		if c.Failed && !done[i] {
			unexplained = append(unexplained, c.ID)
		}
	}
	sort.SliceStable(findings, func(i, j int) bool { return len(findings[i].Explains) > len(findings[j].Explains) })
	return findings, unexplained
}

// joinDrawn moves a failure whose delay the implementation drew itself
// (a delay answered, not a rejection) to the combination of every catalogue model found in the run that can
// fail its vector alone (some draw of the model's answers fails it) and
// that together reproduce it. Which of two such bugs a single draw falls
// within is chance (a delay of 318 s fits both "no cap" and "no cap after
// the jitter" over a 300 s cap), and a fix of one leaves the vector
// failing under the other, so both are named, whatever the draw.
func joinDrawn(cases []Case, findings []Finding) []Finding {
	var found []Model
	for _, f := range findings {
		if f.Model.Family == "" && f.Model.also == (bugSet{}) {
			found = append(found, f.Model)
		}
	}
	if len(found) < 2 {
		return findings
	}
	byID := map[string]int{}
	for i := range cases {
		byID[cases[i].ID] = i
	}
	canFail := func(m Model, c *Case) bool {
		req := c.Request
		for _, r := range []float64{0, math.Nextafter(1, 0)} {
			req.Rand = &r
			if a, ok := m.Answer(req); ok && !Drawn(a) && c.Judge != nil && !c.Judge(a) {
				return true
			}
		}
		return false
	}
	index := map[string]int{}
	for i, f := range findings {
		index[f.Model.Name] = i
	}
	moved := map[int][]string{} // finding → ids that leave it
	for fi, f := range findings {
		if f.Model.Family != "" {
			continue
		}
		for _, id := range f.Explains {
			i, ok := byID[id]
			if !ok || !cases[i].Drawn || cases[i].Answer.Error != nil || cases[i].Answer.DelayNS == nil {
				continue // a rejection or no delay: no draw plays a part
			}
			c := &cases[i]
			m := f.Model
			for _, g := range found {
				if m.mask().union(g.mask()) != m.mask() && canFail(g, c) {
					if j := Combine(m, g); j.within(c.Request, c.Answer) {
						m = j
					}
				}
			}
			if m.mask() == f.Model.mask() {
				continue
			}
			m = canonical(m)
			moved[fi] = append(moved[fi], id)
			k, ok := index[m.Name]
			if !ok {
				k = len(findings)
				index[m.Name] = k
				findings = append(findings, Finding{Model: m})
			}
			findings[k].Explains = append(findings[k].Explains, id)
			findings[k].Reproduces++
		}
	}
	var out []Finding
	for i, f := range findings {
		if ids := moved[i]; len(ids) > 0 {
			keep := f.Explains[:0:0]
			for _, id := range f.Explains {
				if !slices.Contains(ids, id) {
					keep = append(keep, id)
				}
			}
			f.Explains = keep
		}
		if len(f.Explains) > 0 {
			sort.Slice(f.Explains, func(a, b int) bool { return byID[f.Explains[a]] < byID[f.Explains[b]] })
			out = append(out, f)
		}
	}
	return out
}

// canonical returns the combination of m's bugs named in the catalogue's
// order, so that one set of bugs has one name however it was built.
func canonical(m Model) Model {
	var out Model
	first := true
	for _, c := range catalogue {
		if m.mask().has(c.bug) {
			if first {
				out, first = c, false
			} else {
				out = Combine(out, c)
			}
		}
	}
	out.dev = m.dev
	return out
}

// pick applies rules 1 to 3 of the package documentation with the given
// models to the failed cases not yet done, and marks those it explains.
//
// Fitted families that reproduce failures and contradict no pass are
// appended to fine when it is not nil, or to near when they mispredict
// other failures.
func pick(cases []Case, models []Model, done map[int]bool, refused map[string]bool, near, fine *[]Model) []Finding {
	var failures []int
	for i, c := range cases {
		if c.Failed && !done[i] {
			failures = append(failures, i)
		}
	}
	if len(failures) == 0 {
		return nil
	}
	viability := map[bugSet]bool{} // by mask, for models without a fitted deviation
	viable := func(sub Model) bool {
		if sub.dev != (deviation{}) {
			return sub.contradicted(cases) < 0
		}
		v, ok := viability[sub.mask()]
		if !ok {
			v = sub.contradicted(cases) < 0
			viability[sub.mask()] = v
		}
		return v
	}
	cands := make([]cover.Candidate, len(models))
	for k, m := range models {
		cd := cover.Candidate{Name: m.Name, Rank: m.rank()}
		var wrong []int
		for _, i := range failures {
			switch {
			case refused[m.Name]:
			case m.reproduces(cases[i]):
				if m.allNeeded(cases[i], viable) {
					cd.Reproduces = append(cd.Reproduces, i)
				}
			case m.Family != "" && m.mispredicts(cases[i]):
				wrong = append(wrong, i)
			}
		}
		if len(cd.Reproduces) > 0 {
			if i := m.contradicted(cases); i >= 0 {
				cd.Contradicts = append(cd.Contradicts, i) // one pass is enough to refuse the model
			}
			switch {
			case m.Family == "" || len(cd.Contradicts) > 0:
			case len(wrong) > 0 && near != nil:
				*near = append(*near, m) // right on some failures, wrong on others
			case len(wrong) == 0 && fine != nil:
				*fine = append(*fine, m)
			}
			if m.Family != "" {
				cd.Contradicts = append(cd.Contradicts, wrong...) // a fitted family: any one refuses it
			}
		}
		cands[k] = cd
	}
	picks, _ := cover.Greedy(cands, failures)
	var findings []Finding
	for _, p := range picks {
		f := Finding{Model: models[p.Index], Reproduces: len(cands[p.Index].Reproduces)}
		for _, e := range p.Equivalent {
			f.Equivalent = append(f.Equivalent, models[e].Name)
		}
		for _, i := range p.Claims {
			done[i] = true
			f.Explains = append(f.Explains, cases[i].ID)
		}
		findings = append(findings, f)
	}
	return findings
}

// reproduces reports whether m gives c's failed answer: the same answer,
// failing the vector too (a failure in a part the model does not decide,
// such as the wording of a message, is not its doing), or for a drawn
// answer one within the model's range.
func (m Model) reproduces(c Case) bool {
	if c.Drawn {
		return m.within(c.Request, c.Answer)
	}
	a, ok := m.Answer(c.Request)
	if ok && Drawn(a) && c.Answer.Error == nil && c.Answer.DelayNS != nil {
		// the model draws where the implementation answered one value:
		// that value must lie in the model's range over every draw
		return m.within(c.Request, c.Answer)
	}
	return ok && c.Same(a) && (c.Judge == nil || !c.Judge(a))
}

// mispredicts reports whether m, replayed on the failure c, fails the
// vector too but with another value than the implementation answered
// (both accept the request): the model says the bug shows here, and the
// answer says it is not this bug.
// Such failures contradict m like a pass it would have failed (rule 2):
// any one of them refuses a fitted family, and more of them than failures
// reproduced refuse a model of the catalogue (whose bug, beside a second
// one in the same answers, mispredicts a few), so that a bug which
// happens to agree with a model on some requests is not named for those
// while its other failures go unexplained.
func (m Model) mispredicts(c Case) bool {
	if c.Drawn || c.Judge == nil {
		return false
	}
	a, ok := m.Answer(c.Request)
	if !ok || Drawn(a) || c.Judge(a) || c.Same(a) || a.Error != nil || c.Answer.Error != nil || a.Action != c.Answer.Action {
		// a rejection where the other accepts may be a second bug on
		// the same input (a lenient path before the model's), and so
		// may another action (a matcher that gives up on a type the
		// model retries with its delay); a value against a value is
		// the model's formula proven wrong
		return false
	}
	if a.Error == nil && c.Answer.Error == nil && c.Request.Op == protocol.OpValidate {
		// both accept a policy the spec rejects: what each echoes of
		// the bad value is beside the point
		if ref, ok := (engine{}).do(c.Request); ok && ref.Error != nil {
			return false
		}
	}
	return true
}

// allNeeded reports whether every bug of a combination plays a part in
// reproducing c: a combination reproduces a failure only when no model
// with one of its bugs left out reproduces it as well. Otherwise a bug
// the answer does not show (on_exhaustion in a parse_duration answer)
// would be named as a cause, and a model dropped for its contradictions
// would come back under a partner that changes nothing.
//
// A smaller model that a pass contradicts does not count: it is not the
// implementation, so the bug left out of it is needed (no upper bound on
// durations reproduces "PT2562048H" accepted, but it would accept "P293Y"
// too, which an implementation without the years refuses). viable
// reports whether a model contradicts no pass; nil counts every model.
func (m Model) allNeeded(c Case, viable func(Model) bool) bool {
	mask := m.mask()
	if mask.count() <= 1 {
		return true // a single model
	}
	needed := true
	mask.each(func(b bug) {
		if sub := (Model{also: mask.without(b), dev: m.dev}); needed && sub.reproduces(c) && (viable == nil || viable(sub)) {
			needed = false
		}
	})
	return needed
}

// contradicted returns the first passing case m would have failed, -1
// when there is none.
func (m Model) contradicted(cases []Case) int {
	for i, c := range cases {
		if c.Failed || c.Drawn {
			continue
		}
		if a, ok := m.Answer(c.Request); ok && !Drawn(a) && c.Judge != nil && !c.Judge(a) {
			return i
		}
	}
	return -1
}

// sameLeft reports whether a and b hold the same indexes not yet done.
func sameLeft(a, b []int, done map[int]bool) bool {
	left := func(xs []int) []int {
		var out []int
		for _, x := range xs {
			if !done[x] {
				out = append(out, x)
			}
		}
		return out
	}
	la, lb := left(a), left(b)
	if len(la) != len(lb) {
		return false
	}
	for i := range la {
		if la[i] != lb[i] {
			return false
		}
	}
	return true
}

// within reports whether got, an answer with a delay the implementation
// drew itself, is one the model can give: the same action and a delay
// between the model's delays for the smallest and the largest draw.
func (m Model) within(req protocol.Request, got protocol.Response) bool {
	if req.Rand != nil {
		return false
	}
	if got.Error != nil || got.DelayNS == nil {
		// a rejection or an action without delay: the draw plays no part
		zero := 0.0
		req.Rand = &zero
		a, ok := m.Answer(req)
		if !ok || (a.Error != nil) != (got.Error != nil) {
			return false
		}
		return a.Error != nil || a.DelayNS == nil && a.Action == got.Action
	}
	lo, hi := 0.0, math.Nextafter(1, 0)
	req.Rand = &lo
	a, ok1 := m.Answer(req)
	req.Rand = &hi
	b, ok2 := m.Answer(req)
	if !ok1 || !ok2 || a.DelayNS == nil || b.DelayNS == nil || a.Action != got.Action || b.Action != got.Action {
		return false
	}
	l, h := min(*a.DelayNS, *b.DelayNS), max(*a.DelayNS, *b.DelayNS)
	return l <= *got.DelayNS && *got.DelayNS <= h
}
