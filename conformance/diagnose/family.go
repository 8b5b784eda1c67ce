package diagnose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/errmatch"
)

// deviation holds the parameter values of one fitted family of bugs; the
// zero deviation is the reference. Each field is one family's parameter.
type deviation struct {
	delayShift   int    // delay-attempt-offset: the delay after attempt n is computed for n+delayShift
	expOnly      bool   // exponent-offset: delayShift applies to the exponential strategy only
	exhaustShift int    // exhaustion-offset: exhausted from attempt max_attempts+exhaustShift
	stratFrom    string // strategy-as: strategy stratFrom computed as stratTo
	stratTo      string
	jitterLo     float64 // jitter-range: the multiplier is jitterLo + r·(jitterHi − jitterLo); 0, 0: the reference
	jitterHi     float64
	jitterRounds bool    // jitter-rounded: the jittered delay rounded to the nanosecond, not truncated
	fracKept     bool    // fraction-not-truncated: every delay computed in float, its fraction of a nanosecond rounded to the nearest
	fracEven     bool    // with fracKept: a tie rounded to even (Python's round), not away from zero
	jitterForce  int8    // jitter-ignored: 1 jitter always applied, -1 never
	jitterForm   uint8   // jitter-formula: formEqual or formDecorrelated in place of the multiplier 0.5 + r
	noCap        bool    // no-cap: max_interval never applied
	capFactor    float64 // cap-factor: max_interval read as capFactor times its value (a unit mixed up)
	codesIgnored uint8   // handler-codes-ignored: bit i for codes[i]
	match        uint8   // loosened-match: matchFold or matchPrefix
	roundUnit    int64   // rounding: delays and/or durations to this many ns
	roundMode    uint8   // roundNearest, roundDown, roundUp
	roundScope   uint8   // scopeDelays | scopeDurations
	factor       float64
	offset       int64 // time-offset: every delay shifted by offset ns
	// duration-unit: the duration component durComp (a durComponents
	// index + 1) is read as durUnit ns each (0: ignored), in every
	// duration the implementation reads
	durComp uint8
	durUnit int64
	// wrong-default: an absent defField takes the JSON value defValue
	// instead of the spec's default (section 8)
	defField, defValue string
}

const (
	matchFold   = 1 // letter case ignored
	matchPrefix = 2 // a pattern matches every type it is a prefix of, ".*" or not
	matchSearch = 3 // a pattern is an unanchored regular expression searched in the type

	roundNearest = 1
	roundDown    = 2
	roundUp      = 3

	scopeDelays    = 1
	scopeDurations = 2

	// formEqual is "equal jitter" in integers: half the capped delay
	// plus the draw times the other half, each half truncated.
	formEqual = 1
	// formDecorrelated is "decorrelated jitter" without state: a draw
	// between initial_interval and three times the capped delay of the
	// attempt before (initial_interval before the first), capped.
	formDecorrelated = 2
)

// formName is each jitter formula's name.
var formName = map[uint8]string{formEqual: "equal", formDecorrelated: "decorrelated"}

// codes are the handler codes, in the order of deviation.codesIgnored's bits.
var codes = [...]string{"RETRY", "DISCARD", "FAIL", "DEAD_LETTER"}

// merge returns the deviation with the parameters of both d and o; ok is
// false when both set one family's parameters.
func (d deviation) merge(o deviation) (deviation, bool) {
	out := d
	clash := false
	set := func(mine, theirs bool, apply func()) {
		if theirs {
			clash = clash || mine
			apply()
		}
	}
	set(d.delayShift != 0, o.delayShift != 0, func() { out.delayShift, out.expOnly = o.delayShift, o.expOnly })
	set(d.exhaustShift != 0, o.exhaustShift != 0, func() { out.exhaustShift = o.exhaustShift })
	set(d.stratFrom != "", o.stratFrom != "", func() { out.stratFrom, out.stratTo = o.stratFrom, o.stratTo })
	set(d.jitterLo != 0 || d.jitterHi != 0 || d.jitterRounds || d.jitterForce != 0 || d.fracKept || d.jitterForm != 0, o.jitterLo != 0 || o.jitterHi != 0 || o.jitterRounds || o.jitterForce != 0 || o.fracKept || o.jitterForm != 0,
		func() {
			out.jitterLo, out.jitterHi, out.jitterRounds, out.jitterForce, out.fracKept, out.fracEven = o.jitterLo, o.jitterHi, o.jitterRounds, o.jitterForce, o.fracKept, o.fracEven
			out.jitterForm = o.jitterForm
		})
	set(d.noCap || d.capFactor != 0, o.noCap || o.capFactor != 0, func() { out.noCap, out.capFactor = o.noCap, o.capFactor })
	set(d.codesIgnored != 0, o.codesIgnored != 0, func() { out.codesIgnored = o.codesIgnored })
	set(d.match != 0, o.match != 0, func() { out.match = o.match })
	set(d.roundUnit != 0, o.roundUnit != 0, func() { out.roundUnit, out.roundMode, out.roundScope = o.roundUnit, o.roundMode, o.roundScope })
	set(d.factor != 0 || d.offset != 0, o.factor != 0 || o.offset != 0, func() { out.factor, out.offset = o.factor, o.offset })
	set(d.defField != "", o.defField != "", func() { out.defField, out.defValue = o.defField, o.defValue })
	set(d.durComp != 0, o.durComp != 0, func() { out.durComp, out.durUnit = o.durComp, o.durUnit })
	return out, !clash
}

// delays reports whether d changes how a delay is computed.
func (d deviation) delays() bool {
	return d.delayShift != 0 || d.stratFrom != "" || d.jitterLo != 0 || d.jitterHi != 0 || d.jitterRounds || d.jitterForce != 0 || d.fracKept || d.jitterForm != 0 ||
		d.noCap || d.capFactor != 0 || d.roundScope&scopeDelays != 0 || d.factor != 0 || d.offset != 0
}

// ignores reports whether d ignores the handler code c.
func (d deviation) ignores(c string) bool {
	for i, k := range codes {
		if k == c {
			return d.codesIgnored&(1<<i) != 0
		}
	}
	return false
}

// Family is one parameterised family of bugs that the diagnosis fits to a
// run's observations: [Diagnose] reads candidate parameter values off the
// failures, replays each candidate, and names one only under the rules
// of the package documentation.
type Family struct {
	Name string // "strategy-as", ...
	Doc  string // what the family's parameters mean
}

// Families returns the families searched, a fresh slice on every call.
func Families() []Family {
	return []Family{
		{"delay-attempt-offset", "the delay after attempt n is computed for attempt n+k (an attempt counted from 0 or 2), k in ±1, ±2, for every strategy"},
		{"exponent-offset", "the exponential strategy's exponent is off by k (coefficient^(n−1+k)), k in ±1; the other strategies are right"},
		{"exhaustion-offset", "the job is exhausted after max_attempts+k attempts instead of max_attempts, k in ±1, ±2"},
		{"strategy-as", "the strategy A is computed as the strategy B, for each pair of none, linear, exponential and polynomial"},
		{"jitter-range", "the jitter multiplier is lo + r·(hi − lo) instead of 0.5 + r, lo and hi fitted from the answers to injected draws (hi below lo: a multiplier falling as the draw rises)"},
		{"jitter-formula", "the jitter is another well-known formula than the multiplier 0.5 + r: equal jitter (half the capped delay plus the draw times the other half, in integers) or decorrelated jitter (a draw between initial_interval and three times the capped delay of the attempt before)"},
		{"jitter-rounded", "the jittered delay is rounded to the nanosecond where the spec truncates it"},
		{"fraction-not-truncated", "every delay is computed in floating point and keeps its fraction of a nanosecond, rounded to the nearest (a tie away from zero, or to even) when the answer is given in whole nanoseconds, where the spec truncates"},
		{"jitter-ignored", "the jitter field is ignored: every delay jittered, or none"},
		{"no-cap", "max_interval is never applied, before or after jitter"},
		{"cap-factor", "max_interval is applied, before and after jitter, as a constant factor (fitted from the delays above it) times its value: a unit mixed up"},
		{"handler-codes-ignored", "the handler codes of a subset (fitted from the failing requests) are ignored and the policy decides"},
		{"loosened-match", "non_retryable_errors are matched ignoring letter case, or by bare prefix"},
		{"rounding", "delays, durations or both are rounded, truncated or raised to a whole µs, ms or s"},
		{"time-factor", "every delay is a constant factor (fitted) times the spec's"},
		{"time-offset", "every delay is the spec's plus a constant (fitted)"},
		{"duration-unit", "one component of every duration (years, months, days, hours, minutes, whole seconds or the fraction of seconds) is read in another unit (fitted from the durations answered; 0 when it is ignored), in parse_duration and in a policy's intervals alike"},
		{"wrong-default", "an absent field takes another value than the spec's default (field and value read off the effective policies answered)"},
	}
}

// devDelay computes the delay after attempt n with draw r under e's
// deviation. ok is false outside the reference's domain, where the
// catalogue's rules apply.
func (e engine) devDelay(s spec, n int64, r float64) (int64, bool) {
	d := e.dev
	st := s.strategy
	if d.stratFrom != "" && st == d.stratFrom {
		st = d.stratTo
	}
	strat, err := backoff.ParseStrategy(st)
	if err != nil || s.initial <= 0 || s.max < s.initial || s.coef < 1 || math.IsInf(s.coef, 0) || n < 1 {
		return 0, false
	}
	limit := s.max
	if d.noCap {
		limit = math.MaxInt64
	}
	if d.capFactor > 0 {
		limit = satNS(math.Floor(float64(s.max) * d.capFactor))
	}
	n2 := n + int64(d.delayShift)
	if d.delayShift > 0 && n > math.MaxInt64-int64(d.delayShift) {
		n2 = math.MaxInt64
	}
	if d.expOnly && strat != backoff.Exponential {
		n2 = n
	}
	baseAt := func(n2 int64) (int64, bool) {
		if n2 < 1 {
			return min(satNS(math.Floor(floatBase(strat, s, n2))), limit), true
		}
		// a scaled cap may be below initial_interval, which backoff
		// refuses: cap at the larger, then at the limit
		bo, err := backoff.New(backoff.Config{Strategy: strat, Initial: time.Duration(s.initial), Coefficient: s.coef, Max: time.Duration(max(limit, s.initial))})
		if err != nil {
			return 0, false
		}
		return min(int64(bo.Base(int(min(n2, math.MaxInt)))), limit), true
	}
	base, ok := baseAt(n2)
	if !ok {
		return 0, false
	}
	out := base
	if d.jitterForce != 0 {
		s.jitter = d.jitterForce > 0
	}
	switch {
	case d.fracKept:
		out = fracDelay(strat, s, n2, base, limit, r, d.fracEven)
	case d.jitterForm == formEqual && s.jitter:
		half := base / 2
		out = min(half+satNS(math.Floor(r*float64(half))), limit)
	case d.jitterForm == formDecorrelated && s.jitter:
		prev := s.initial
		if n2 > 1 {
			if prev, ok = baseAt(n2 - 1); !ok {
				return 0, false
			}
		}
		lo := float64(s.initial)
		out = min(satNS(math.Floor(lo+r*(3*float64(prev)-lo))), limit)
	case s.jitter && base > 0:
		lo, hi := d.jitterLo, d.jitterHi
		r2 := r // the draw giving the same multiplier over [0.5, 1.5)
		if lo != 0 || hi != 0 {
			r2 = lo + r*(hi-lo) - 0.5
		}
		if r2 >= 0 && r2 < 1 && !d.jitterRounds {
			// the reference's exact jitter, over this base
			bo, err := backoff.New(backoff.Config{Strategy: backoff.None, Initial: time.Duration(base), Coefficient: 1,
				Max: time.Duration(max(limit, base)), Jitter: true})
			if err != nil {
				return 0, false
			}
			out = int64(bo.DelayAt(1, r2))
		} else {
			if lo == 0 && hi == 0 {
				lo, hi = 0.5, 1.5
			}
			x := float64(base) * (lo + r*(hi-lo))
			if d.jitterRounds {
				x = math.Round(x)
			}
			out = min(satNS(math.Floor(x)), limit)
		}
	}
	if d.roundScope&scopeDelays != 0 {
		out = d.round(out)
	}
	if d.factor != 0 {
		out = satNS(math.Round(float64(out) * d.factor))
	}
	switch {
	case d.offset > 0 && out > math.MaxInt64-d.offset:
		out = math.MaxInt64
	case d.offset != 0:
		out += d.offset
	}
	return max(out, 0), true
}

// fracDelay is the delay of the family fraction-not-truncated: the
// formula of section 5 in float64 nanoseconds (the capped base, times
// 0.5 + r when s jitters, capped again) with its fraction of a
// nanosecond kept, then rounded to the nearest (a tie to even when even
// is set), as a float delay in seconds or milliseconds is when converted
// to whole nanoseconds. A base
// float64 cannot hold exactly (2^53 ns and up), or whose whole part
// drifts from the exact one, is the exact integer base.
func fracDelay(strat backoff.Strategy, s spec, n int64, base, limit int64, r float64, even bool) int64 {
	raw := floatBase(strat, s, n)
	x := math.Min(raw, float64(limit))
	if !(raw > 0 && raw < 0x1p53) || math.Floor(x) != float64(base) {
		// float64's power drifts from the exact base: its fraction is
		// not known, the base is
		x = float64(base)
	}
	if s.jitter && x > 0 {
		x = math.Min(x*(0.5+r), float64(limit))
	}
	if even {
		return min(satNS(math.RoundToEven(x)), limit)
	}
	return min(satNS(math.Round(x)), limit)
}

// floatBase is strat's base delay of attempt n under s in float64
// nanoseconds, uncapped: what a library computing in floating point gets
// before any rounding (an attempt below 0 counts as 0 for polynomial).
func floatBase(strat backoff.Strategy, s spec, n int64) float64 {
	i, f := float64(s.initial), float64(n)
	switch strat {
	case backoff.None:
		return i
	case backoff.Linear:
		return i * f
	case backoff.Polynomial:
		return i * math.Pow(math.Max(f, 0), s.coef)
	default:
		return i * math.Pow(s.coef, f-1)
	}
}

// round applies d's rounding to ns.
func (d deviation) round(ns int64) int64 {
	u := d.roundUnit
	if u <= 1 || ns <= 0 {
		return ns
	}
	q, rem := ns/u, ns%u
	switch d.roundMode {
	case roundNearest:
		if 2*rem >= u {
			q++
		}
	case roundUp:
		if rem > 0 {
			q++
		}
	}
	if q > math.MaxInt64/u {
		return math.MaxInt64
	}
	return q * u
}

// devMatch reports whether typ matches patterns under a loosened match.
func (d deviation) devMatch(patterns []string, typ string) (bool, error) {
	if d.match == matchFold {
		low := make([]string, len(patterns))
		for i, p := range patterns {
			low[i] = strings.ToLower(p)
		}
		m, err := errmatch.Compile(low)
		if err != nil {
			return false, err
		}
		return m.Match(strings.ToLower(typ)), nil
	}
	if d.match == matchSearch {
		res := make([]*regexp.Regexp, len(patterns))
		for i, p := range patterns {
			re, err := regexp.Compile(p)
			if err != nil || p == "" {
				return false, fmt.Errorf("pattern %q: not a regular expression", p)
			}
			res[i] = re
		}
		for _, re := range res {
			if re.MatchString(typ) {
				return true, nil
			}
		}
		return false, nil
	}
	m, err := errmatch.Compile(patterns)
	if err != nil {
		return false, err
	}
	for _, p := range patterns {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "*"), ".")
		if p != "" && strings.HasPrefix(typ, p) {
			return true, nil
		}
	}
	return m.Match(typ), nil
}

// satNS converts f to int64 nanoseconds, saturating (NaN is 0).
func satNS(f float64) int64 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 0x1p63:
		return math.MaxInt64
	}
	return int64(f)
}

// withDefault returns the policy text data with field set to the JSON
// value v when data is an object that lacks it (an absent or null policy
// is the empty object); other text unchanged. The keys already there
// are kept as written, repeats included.
func withDefault(data json.RawMessage, field, v string) json.RawMessage {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || string(t) == "null" {
		t = []byte("{}")
	}
	if t[0] != '{' {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return data
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil || tok == field {
			return data
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return data
		}
		n++
	}
	if _, err := dec.Token(); err != nil {
		return data
	}
	k, _ := json.Marshal(field)
	out := append([]byte("{"), k...)
	out = append(out, ':')
	out = append(out, v...)
	if n > 0 {
		out = append(out, ',')
	}
	return append(out, t[1:]...)
}

// ---- the search

// fitted returns the family models whose parameters the failed cases
// suggest: a bounded set (at most a few dozen), each to be replayed
// against every case.
func fitted(cases []Case, open map[int]bool) []Model {
	var out []Model
	add := func(name, fix, family string, d deviation) {
		out = append(out, Model{Name: name, Fix: fix, Family: family, dev: d})
	}
	var delays, decides, durations, matches bool
	strategies := map[string]bool{}
	codesSeen := uint8(0)
	var ratios, diffs, capRatios, lowRatios []float64
	defaults := map[[2]string]int{} // (field, JSON value) an absent field was answered with
	var points []point
	roundFits := map[[2]int64]int{}
	units := map[[2]int64]int{} // (component index, unit) a duration answered suggests
	for i := range cases {
		c := &cases[i]
		if !open[i] {
			continue
		}
		req := c.Request
		switch req.Op {
		case protocol.OpDelay:
			delays = true
		case protocol.OpDecide:
			decides = true
			if req.Error != nil {
				for b, k := range codes {
					if req.Error.Code == k {
						codesSeen |= 1 << b
					}
				}
			}
		case protocol.OpParseDuration:
			durations = true
		case protocol.OpMatch:
			matches = true
		}
		if req.Op == protocol.OpDelay || req.Op == protocol.OpDecide || req.Op == protocol.OpValidate {
			strategies[strategyOf(req.Policy)] = true
		}
		ref, ok := engine{}.do(req)
		if !ok {
			continue
		}
		if req.Op == protocol.OpValidate && ref.Error == nil && c.Answer.Error == nil {
			wrongDefaults(req.Policy, ref.Effective, c.Answer.Effective, defaults)
		}
		want, got := ref.DelayNS, c.Answer.DelayNS
		if req.Op == protocol.OpParseDuration {
			want, got = ref.NS, c.Answer.NS
		}
		if want == nil || got == nil || c.Drawn {
			continue
		}
		w, g := *want, *got
		if req.Op == protocol.OpParseDuration {
			unitVotes(req.Value, w, g, units)
		}
		if req.Op != protocol.OpParseDuration && req.Profile == "" {
			if sp, err := (engine{}).parsePolicy(req.Policy); err == nil && sp.max > 0 && g != sp.max && g > 0 {
				if g > sp.max {
					capRatios = append(capRatios, float64(g)/float64(sp.max))
				} else {
					lowRatios = append(lowRatios, float64(g)/float64(sp.max))
				}
			}
		}
		if w > 0 {
			ratios = append(ratios, float64(g)/float64(w))
		}
		diffs = append(diffs, float64(g)-float64(w))
		for _, u := range []int64{int64(time.Microsecond), int64(time.Millisecond), int64(time.Second)} {
			for _, m := range []uint8{roundNearest, roundDown, roundUp} {
				if (deviation{roundUnit: u, roundMode: m}).round(w) == g {
					roundFits[[2]int64{u, int64(m)}]++
				}
			}
		}
		// the multiplier at an injected draw, from the capped base (the
		// delay at r = 0.5, multiplier 1)
		if req.Rand != nil && req.Op == protocol.OpDelay {
			half := 0.5
			q := req
			q.Rand = &half
			sp, _ := engine{}.parsePolicy(req.Policy)
			if b, ok := (engine{}).do(q); ok && b.DelayNS != nil && *b.DelayNS > 0 && g < sp.max && g < 1<<53 {
				points = append(points, point{*req.Rand, float64(g) / float64(*b.DelayNS)})
			}
		}
	}
	if delays || decides {
		for _, k := range []int{-2, -1, 1, 2} {
			add(fmt.Sprintf("delay-attempt-offset(%+d)", k),
				fmt.Sprintf("compute the delay after attempt n for n itself (the first retry waits initial_interval), not for n%+d", k),
				"delay-attempt-offset", deviation{delayShift: k})
		}
		if strategies["exponential"] {
			for _, k := range []int{-1, 1} {
				add(fmt.Sprintf("exponent-offset(%+d)", k),
					fmt.Sprintf("the exponential delay after attempt n is initial_interval × coefficient^(n−1); this one raises the coefficient to n−1%+d", k),
					"exponent-offset", deviation{delayShift: k, expOnly: true})
			}
		}
		for _, names := range [][2]string{{"none", "linear"}, {"none", "exponential"}, {"none", "polynomial"},
			{"linear", "none"}, {"linear", "exponential"}, {"linear", "polynomial"},
			{"exponential", "none"}, {"exponential", "linear"}, {"exponential", "polynomial"},
			{"polynomial", "none"}, {"polynomial", "linear"}, {"polynomial", "exponential"}} {
			// the effective policy still names the strategy given: the
			// catalogue's polynomial-unsupported reports exponential
			if strategies[names[0]] {
				add("strategy-as("+names[0]+"→"+names[1]+")",
					"compute the "+names[0]+" strategy by its own formula ("+formula[names[0]]+"), not as "+names[1]+" ("+formula[names[1]]+")",
					"strategy-as", deviation{stratFrom: names[0], stratTo: names[1]})
			}
		}
		add("no-cap", "cap the delay at max_interval (cap, jitter, cap)", "no-cap", deviation{noCap: true})
		for _, f := range []float64{modeOr0(capRatios), modeOr0(lowRatios)} {
			if f <= 0 || f == 1 {
				continue
			}
			add(fmt.Sprintf("cap-factor(×%g)", f), fmt.Sprintf("cap the delay at max_interval itself, not at %g× max_interval (a unit mixed up)", f),
				"cap-factor", deviation{capFactor: f})
		}
		add("jitter-ignored(never)", "multiply the delay by 0.5 + r when jitter is true (section 5); this one never jitters", "jitter-ignored", deviation{jitterForce: -1})
		add("jitter-ignored(always)", "jitter the delay only when jitter is true; this one jitters when it is false too", "jitter-ignored", deviation{jitterForce: 1})
		add("jitter-rounded", "truncate the jittered delay to whole nanoseconds, as the spec's formula does; this one rounds it to the nearest",
			"jitter-rounded", deviation{jitterRounds: true})
		add("fraction-not-truncated", "truncate every delay to whole nanoseconds, as the spec's formula does: this one keeps a fraction of a nanosecond (a float delay, in seconds or milliseconds), which the conversion of its answer to whole nanoseconds (its own or its adapter's) rounds to the nearest",
			"fraction-not-truncated", deviation{fracKept: true})
		add("fraction-not-truncated(ties-to-even)", "truncate every delay to whole nanoseconds, as the spec's formula does: this one keeps a fraction of a nanosecond (a float delay, in seconds or milliseconds), which the conversion of its answer to whole nanoseconds (its own or its adapter's) rounds to the nearest, a tie to even",
			"fraction-not-truncated", deviation{fracKept: true, fracEven: true})
		for _, f := range []uint8{formEqual, formDecorrelated} {
			add("jitter-formula("+formName[f]+")", "multiply the capped delay by 0.5 + r (section 5); this one draws by the "+formName[f]+" jitter formula",
				"jitter-formula", deviation{jitterForm: f})
		}
		if lo, hi, ok := fitRange(points); ok {
			fix := fmt.Sprintf("draw the jitter multiplier from [0.5, 1.5) (0.5 + r), not from [%g, %g)", lo, hi)
			if hi < lo {
				fix = fmt.Sprintf("make the jitter multiplier 0.5 + r; this one is %g − %g·r, falling as the draw rises", lo, lo-hi)
			}
			add(fmt.Sprintf("jitter-range([%g,%g))", lo, hi), fix, "jitter-range", deviation{jitterLo: lo, jitterHi: hi})
		}
		if f, ok := mode(ratios, 1e-3); ok && f != 1 && f > 0 {
			add(fmt.Sprintf("time-factor(×%g)", f), fmt.Sprintf("every delay is %g× the spec's: drop the factor (a unit mixed up, a base doubled)", f),
				"time-factor", deviation{factor: f})
		}
		if o, ok := mode(diffs, -1); ok && o != 0 {
			add(fmt.Sprintf("time-offset(%s)", signed(time.Duration(o))), fmt.Sprintf("every delay is the spec's %s: drop the constant", signed(time.Duration(o))),
				"time-offset", deviation{offset: int64(o)})
		}
	}
	ukeys := make([][2]int64, 0, len(units))
	for k := range units {
		ukeys = append(ukeys, k)
	}
	sort.Slice(ukeys, func(i, j int) bool {
		a, b := ukeys[i], ukeys[j]
		return units[a] > units[b] || units[a] == units[b] && (a[0] < b[0] || a[0] == b[0] && a[1] < b[1])
	})
	for _, k := range ukeys[:min(len(ukeys), 3)] {
		c := durComponents[k[0]]
		add(fmt.Sprintf("duration-unit(%s→%v)", c.name, time.Duration(k[1])),
			fmt.Sprintf("read the %s of a duration as %v each (section 4.1), not as %v", c.name, time.Duration(c.unit), time.Duration(k[1])),
			"duration-unit", deviation{durComp: uint8(k[0] + 1), durUnit: k[1]})
	}
	keys := make([][2]string, 0, len(defaults))
	for k := range defaults {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return defaults[a] > defaults[b] || defaults[a] == defaults[b] && (a[0] < b[0] || a[0] == b[0] && a[1] < b[1])
	})
	for _, k := range keys[:min(len(keys), 4)] {
		add("wrong-default("+k[0]+"→"+k[1]+")", "an absent "+k[0]+" takes its section 8 default ("+defaultText[k[0]]+"), not "+k[1],
			"wrong-default", deviation{defField: k[0], defValue: k[1]})
	}
	if decides {
		for _, k := range []int{-2, -1, 1, 2} {
			what := fmt.Sprintf("it retries %d attempt(s) past max_attempts", k)
			if k < 0 {
				what = fmt.Sprintf("it gives up %d attempt(s) early", -k)
			}
			add(fmt.Sprintf("exhaustion-offset(%+d)", k),
				"exhaust a job when the attempt that failed is max_attempts (attempt >= max_attempts): "+what,
				"exhaustion-offset", deviation{exhaustShift: k})
		}
		for sub := uint8(1); sub < 16; sub++ {
			if sub&^codesSeen != 0 {
				continue
			}
			var names []string
			for b, k := range codes {
				if sub&(1<<b) != 0 {
					names = append(names, k)
				}
			}
			add("handler-codes-ignored("+strings.Join(names, ",")+")",
				"obey the handler code"+plural(len(names))+" "+strings.Join(names, ", ")+" in error.code before the policy, as for the other codes",
				"handler-codes-ignored", deviation{codesIgnored: sub})
		}
	}
	if matches || decides {
		add("loosened-match(case)", "match non_retryable_errors case-sensitively: \"Auth.Error\" is not \"auth.error\"", "loosened-match", deviation{match: matchFold})
		add("loosened-match(regex-search)", `match non_retryable_errors exactly or by the ".*" prefix; do not search them as unanchored regular expressions ("b" matches "abc")`, "loosened-match", deviation{match: matchSearch})
		add("loosened-match(prefix)", `match a pattern by prefix only when it ends in ".*", and then only at the dot: "auth" does not match "authx"`, "loosened-match", deviation{match: matchPrefix})
	}
	scope := uint8(0)
	if durations {
		scope |= scopeDurations
	}
	if delays || decides {
		scope |= scopeDelays
	}
	if scope != 0 {
		keys := make([][2]int64, 0, len(roundFits))
		for k := range roundFits {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return roundFits[keys[i]] > roundFits[keys[j]] || roundFits[keys[i]] == roundFits[keys[j]] && (keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1])
		})
		for _, k := range keys[:min(len(keys), 3)] {
			if k[0] == 1 || k[1] == roundDown && k[0] <= 1 {
				continue
			}
			what := map[uint8]string{scopeDelays: "delays", scopeDurations: "durations", scopeDelays | scopeDurations: "delays and durations"}[scope]
			how := map[int64]string{roundNearest: "rounded", roundDown: "truncated", roundUp: "rounded up"}[k[1]]
			unit := time.Duration(k[0]).String()
			add(fmt.Sprintf("rounding(%s %s to %s)", what, how, unit),
				fmt.Sprintf("keep %s to the nanosecond; do not %s them to whole %s", what, strings.TrimSuffix(map[int64]string{roundNearest: "round", roundDown: "truncate", roundUp: "round up"}[k[1]], "d"), unit),
				"rounding", deviation{roundUnit: k[0], roundMode: uint8(k[1]), roundScope: scope})
		}
	}
	return out
}

// defaultText is each field's default (section 8), as JSON.
var defaultText = map[string]string{
	"max_attempts": "3", "initial_interval": `"PT1S"`, "backoff_coefficient": "2", "max_interval": `"PT5M"`,
	"jitter": "true", "non_retryable_errors": "[]", "on_exhaustion": `"discard"`, "backoff_strategy": `"exponential"`,
}

// wrongDefaults counts, for a policy accepted by both, each field the
// policy lacks whose effective value answered differs from the spec's.
func wrongDefaults(pol, want, got json.RawMessage, into map[[2]string]int) {
	var p, w, g map[string]json.RawMessage
	t := bytes.TrimSpace(pol)
	if len(t) == 0 || string(t) == "null" {
		t = []byte("{}")
	}
	if json.Unmarshal(t, &p) != nil || json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil || p == nil {
		return
	}
	for f := range defaultText {
		gv, ok := g[f]
		if _, given := p[f]; given || !ok || sameJSON(w[f], gv) || len(gv) > 64 {
			continue
		}
		var c bytes.Buffer
		if json.Compact(&c, gv) != nil {
			continue
		}
		v := c.String()
		if num, err := strconv.ParseFloat(v, 64); err == nil && strings.ContainsAny(v, ".eE") {
			v = strconv.FormatFloat(num, 'g', -1, 64) // 3.0 is 3
		}
		into[[2]string{f, v}]++
	}
}

var formula = map[string]string{
	"none": "initial_interval", "linear": "initial_interval × n",
	"exponential": "initial_interval × coefficient^(n−1)", "polynomial": "initial_interval × n^coefficient",
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// strategyOf returns the backoff_strategy a policy names, "exponential"
// when none.
func strategyOf(p json.RawMessage) string {
	var m struct {
		S *string `json:"backoff_strategy"`
	}
	if json.Unmarshal(p, &m) != nil || m.S == nil {
		return "exponential"
	}
	return *m.S
}

// mode returns the value most of xs share (within tol, relative to it),
// rounded to 3 significant digits (tol < 0: exactly equal, not rounded),
// when at least two agree or there is only one. ok is false for no value.
func mode(xs []float64, tol float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	best, bestN := 0.0, 0
	for _, x := range xs {
		n := 0
		for _, y := range xs {
			if x == y || tol > 0 && math.Abs(x-y) <= tol*math.Abs(x) {
				n++
			}
		}
		if n > bestN {
			best, bestN = x, n
		}
	}
	if bestN < 2 && len(xs) > 1 {
		return 0, false
	}
	if best == 0 || tol < 0 {
		return best, true
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(best, 'g', 3, 64), 64)
	return r, true
}

// modeOr0 returns mode(xs, 1e-3), 0 when there is none.
func modeOr0(xs []float64) float64 {
	f, ok := mode(xs, 1e-3)
	if !ok {
		return 0
	}
	return f
}

// point is one injected draw r and the multiplier m an answer shows.
type point struct{ r, m float64 }

// fitRange fits the multiplier range lo + r·(hi − lo) to (r, m) points:
// each pair of points with distinct draws gives a line, snapped to
// hundredths, and the line most pairs give wins (a few points off the
// line, a capped or a saturated answer, do not move it). ok is false
// with fewer than two distinct draws, for the reference's range, or for
// a range that is not one; hi below lo is a multiplier that falls as the
// draw rises (1.5 − r).
func fitRange(points []point) (lo, hi float64, ok bool) {
	votes := map[[2]float64]int{}
	var best [2]float64
	bestN := 0
	for i, p := range points {
		for _, q := range points[i+1:] {
			if math.Abs(p.r-q.r) < 1e-3 {
				continue
			}
			slope := (q.m - p.m) / (q.r - p.r)
			l := math.Round((p.m-slope*p.r)*100) / 100
			h := math.Round((p.m-slope*p.r+slope)*100) / 100
			k := [2]float64{l, h}
			votes[k]++
			if votes[k] > bestN || votes[k] == bestN && (k[0] < best[0] || k[0] == best[0] && k[1] < best[1]) {
				best, bestN = k, votes[k]
			}
		}
	}
	lo, hi = best[0], best[1]
	if bestN == 0 || !(lo >= 0 && hi >= 0 && hi != lo) || lo == 0.5 && hi == 1.5 {
		return 0, 0, false
	}
	return lo, hi, true
}

// rank is a model's tie-break rank for package cover: the catalogue first,
// then families by their count of fitted parameters.
func (m Model) rank() int {
	switch {
	case m.Family == "":
		return 0
	case strings.Contains(m.Family, "+"):
		return 3 // two families
	case m.dev.jitterLo != 0 || m.dev.jitterForm != 0 || m.dev.stratFrom != "" || m.dev.roundUnit != 0 || m.dev.capFactor != 0 || m.dev.defField != "":
		return 2
	}
	return 1
}

// signed writes d with its sign: "+1s", "-5ms".
func signed(d time.Duration) string {
	if d > 0 {
		return "+" + d.String()
	}
	return d.String()
}

// durComponents are the components of an OJS duration (section 4.1,
// RK-07), in the order of durationRE's groups, with the spec's unit of
// each; the fraction of seconds counts in seconds.
var durComponents = [...]struct {
	name string
	unit int64
}{
	{"years", int64(365 * 24 * time.Hour)}, {"months", int64(730 * time.Hour)}, {"days", int64(24 * time.Hour)},
	{"hours", int64(time.Hour)}, {"minutes", int64(time.Minute)}, {"seconds", int64(time.Second)}, {"fraction", int64(time.Second)},
}

// durationRE is the OJS duration grammar with each component captured,
// the fraction of seconds apart.
var durationRE = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)(?:\.([0-9]+))?S)?)?$`)

// durationValues returns each component's value of the duration text v
// (the fraction as an exact rational of seconds), ok false when v is not
// a duration of the grammar with at least one component.
func durationValues(v string) (vals [len(durComponents)]*big.Rat, ok bool) {
	g := durationRE.FindStringSubmatch(v)
	if g == nil || strings.HasSuffix(v, "T") {
		return vals, false
	}
	for i := range durComponents {
		t := g[i+1]
		if t == "" {
			continue
		}
		ok = true
		if i == len(durComponents)-1 {
			t = "0." + t
		}
		vals[i], _ = new(big.Rat).SetString(t)
	}
	return vals, ok
}

// unitVotes counts, for a duration text v the spec reads as want ns and
// the implementation as got, the unit each of its components would have
// to be read in for got, the others read right: an integral number of
// ns, not the spec's.
func unitVotes(v string, want, got int64, into map[[2]int64]int) {
	vals, ok := durationValues(v)
	if !ok || want == got {
		return
	}
	for i, x := range vals {
		if x == nil || x.Sign() == 0 {
			continue
		}
		// got = want − x·unit + x·u
		u := new(big.Rat).Sub(new(big.Rat).SetInt64(got), new(big.Rat).SetInt64(want))
		u.Quo(u, x)
		u.Add(u, new(big.Rat).SetInt64(durComponents[i].unit))
		if u.IsInt() && u.Sign() >= 0 && u.Num().IsInt64() && u.Num().Int64() != durComponents[i].unit {
			into[[2]int64{int64(i), u.Num().Int64()}]++
		}
	}
}

// readDuration returns the duration text v as d's reading of it, written
// in the spec's grammar as seconds ("PT0.005S" for "PT5M" when a minute
// is read as a millisecond; a reading past 2^63−1 ns is then refused as
// too long, as the spec refuses any); v unchanged when it is not a
// duration of the grammar.
func (d deviation) readDuration(v string) string {
	vals, ok := durationValues(v)
	if !ok {
		return v
	}
	total := new(big.Rat)
	for i, x := range vals {
		if x == nil {
			continue
		}
		u := durComponents[i].unit
		if i == int(d.durComp)-1 {
			u = d.durUnit
		}
		total.Add(total, new(big.Rat).Mul(x, new(big.Rat).SetInt64(u)))
	}
	// the length in seconds, exactly: the denominators are powers of
	// ten, so the decimal ends, and the spec's parser rounds what is
	// below a nanosecond as it does for any text
	secs := total.Quo(total, big.NewRat(1e9, 1))
	t := secs.FloatString(len(v) + 9)
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return "PT" + t + "S"
}

// readDurations rewrites the durations req holds (parse_duration's value,
// a policy's initial_interval and max_interval) as d reads them; a policy
// that is not one object without repeated keys is left as it is.
func (d deviation) readDurations(req protocol.Request) protocol.Request {
	switch req.Op {
	case protocol.OpParseDuration:
		req.Value = d.readDuration(req.Value)
	case protocol.OpValidate, protocol.OpDelay, protocol.OpDecide:
		var m map[string]json.RawMessage
		if json.Unmarshal(req.Policy, &m) != nil || m == nil {
			return req
		}
		changed := false
		for _, k := range []string{"initial_interval", "max_interval"} {
			var v string
			if json.Unmarshal(m[k], &v) == nil {
				if r := d.readDuration(v); r != v {
					m[k], _ = json.Marshal(r)
					changed = true
				}
			}
		}
		if changed && len(topLevelKeys(req.Policy)) == len(m) {
			req.Policy, _ = json.Marshal(m)
		}
	}
	return req
}

// topLevelKeys returns the keys of a JSON object's text in order, repeats
// kept; nil when the text is not an object.
func topLevelKeys(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		keys = append(keys, fmt.Sprint(t))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}
