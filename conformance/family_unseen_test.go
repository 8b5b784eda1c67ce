package conformance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// The bugs below were written as an adversarial evaluation of the
// diagnosis: plausible slips of an implementation that no other planted
// test plants, each written here from the spec's formulas and not from
// the models of package diagnose. Each must come out as point 1 of the
// diagnosis asks: one cause, the right family with its parameters, or,
// for a bug no family describes, unexplained failures grouped by the
// deviation observed, never a cause "reproduced" under a wrong name.

// specOf returns the parsed policy of a delay or decide request, ok false
// for a profile request or a policy the reference rejects.
func specOf(req protocol.Request) (policy.Spec, bool) {
	if (req.Op != protocol.OpDelay && req.Op != protocol.OpDecide) || req.Profile != "" {
		return policy.Spec{}, false
	}
	p, err := policy.Parse(req.Policy)
	if err != nil {
		return policy.Spec{}, false
	}
	return p.Spec(), true
}

// cappedDelay returns the reference's delay for req with the jitter
// multiplier 1 (the draw 0.5): the capped delay before jitter, ok false
// when the reference answers none.
func cappedDelay(req protocol.Request, ref func(protocol.Request) protocol.Response) (int64, bool) {
	half := 0.5
	req.Rand = &half
	b := ref(req)
	if b.DelayNS == nil {
		return 0, false
	}
	return *b.DelayNS, true
}

// capJitter applies the spec's cap, jitter with draw r, cap (section 5)
// to a raw delay in float nanoseconds, with the cap limit.
func capJitter(raw float64, limit int64, jitter bool, r float64) int64 {
	d := math.Min(raw, float64(limit))
	if jitter {
		d = math.Min(math.Floor(d*(0.5+r)), float64(limit))
	}
	if d >= 0x1p63 {
		return math.MaxInt64
	}
	return int64(d)
}

// drawOf returns the request's draw, or one of the implementation's own.
func drawOf(req protocol.Request) float64 {
	if req.Rand != nil {
		return *req.Rand
	}
	return rand.Float64()
}

// rawDelay replaces the delay of every delay answer and retry decision by
// raw(spec, attempt) (float nanoseconds, before cap and jitter), capped
// at limit(spec) and jittered as the spec says; ok false keeps the
// reference's delay.
func rawDelay(raw func(s policy.Spec, n int64) (float64, bool), limit func(s policy.Spec) int64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || a.Error != nil || a.DelayNS == nil {
			return a
		}
		f, ok := raw(s, req.Attempt)
		if !ok {
			return a
		}
		r := drawOf(req)
		d := capJitter(f, limit(s), s.Jitter, r)
		if d == capJitter(specRaw(s, req.Attempt), maxOf(s), s.Jitter, r) {
			return a // the same delay: the reference's exact one
		}
		a.DelayNS = &d
		return a
	}
}

// specRaw is the spec's uncapped delay after attempt n (section 5), in
// float nanoseconds.
func specRaw(s policy.Spec, n int64) float64 {
	i, f := float64(s.InitialInterval), float64(n)
	switch s.Strategy.String() {
	case "none":
		return i
	case "linear":
		return i * f
	case "polynomial":
		return i * math.Pow(f, s.BackoffCoefficient)
	}
	return expRaw(s, n, 0)
}

// jitterMultiplier multiplies the capped delay by lo + r·(hi − lo) and
// caps again: the spec's jitter over another range (the reference clamps
// a draw outside [0, 1), so the range is applied here).
func jitterMultiplier(lo, hi float64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || !s.Jitter || a.Error != nil || a.DelayNS == nil {
			return a
		}
		capped, ok := cappedDelay(req, ref)
		if !ok {
			return a
		}
		d := capJitter(float64(capped)*(lo+drawOf(req)*(hi-lo)), int64(s.MaxInterval), false, 0)
		a.DelayNS = &d
		return a
	}
}

// maxOf is the spec's limit: max_interval.
func maxOf(s policy.Spec) int64 { return int64(s.MaxInterval) }

// expRaw is the exponential formula with the exponent n−1+k.
func expRaw(s policy.Spec, n int64, k float64) float64 {
	return float64(s.InitialInterval) * math.Pow(s.BackoffCoefficient, float64(n)-1+k)
}

// onMatch rewrites the match result of match requests and the
// non-retryable test of decide requests by match(patterns, type).
func onMatch(match func(patterns []string, typ string) bool) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		switch {
		case req.Op == protocol.OpMatch && a.Error == nil && a.Match != nil:
			m := match(req.Patterns, req.ErrorType)
			a.Match = &m
		case req.Op == protocol.OpDecide && a.Error == nil && req.Error != nil && (req.Error.Code == "" || req.Error.Code == "RETRY"):
			s, ok := specOf(req)
			if !ok {
				return a
			}
			// decide again with the type renamed to one that matches
			// exactly or to one that matches nothing
			q := req
			e := *req.Error
			if match(s.NonRetryableErrors, e.Type) {
				if len(s.NonRetryableErrors) == 0 {
					return a
				}
				e.Type = strings.TrimSuffix(s.NonRetryableErrors[0], "*") + "x"
				if !strings.HasSuffix(s.NonRetryableErrors[0], ".*") {
					e.Type = s.NonRetryableErrors[0]
				}
			} else {
				e.Type = "\x00never-listed"
			}
			q.Error = &e
			return ref(q)
		}
		return a
	}
}

// specMatch is the spec's matching: exact, or a ".*" prefix with its dot.
func specMatch(patterns []string, typ string) bool {
	for _, p := range patterns {
		if strings.HasSuffix(p, ".*") && strings.HasPrefix(typ, strings.TrimSuffix(p, "*")) || p == typ {
			return true
		}
	}
	return false
}

// firstSegmentFolded reads the first segment of a pattern and a type
// (up to the first dot) ignoring letter case, the rest exactly.
func firstSegmentFolded(patterns []string, typ string) bool {
	fold := func(s string) string {
		if i := strings.IndexByte(s, '.'); i >= 0 {
			return strings.ToLower(s[:i]) + s[i:]
		}
		return strings.ToLower(s)
	}
	low := make([]string, len(patterns))
	for i, p := range patterns {
		low[i] = fold(p)
	}
	return specMatch(low, fold(typ))
}

// topKeys returns the keys of a JSON object's text in order, repeats
// kept; nil when the text is not an object.
func topKeys(raw []byte) []string {
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

// unseenBugs are the bugs of the adversarial evaluation, each with the
// outcome the report must show: "bug:NAME" alone, or "unexplained:GROUP"
// (every cause unexplained, the largest of the group named; at most two).
var unseenBugs = []struct {
	name, want string
	fault      fault
}{
	// the exponent one too high from the third attempt on
	{"exponent-off-after-attempt-3", "unexplained:delay-ratio(×coefficient)", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		if s.Strategy.String() != "exponential" || n < 3 {
			return 0, false
		}
		return expRaw(s, n, 1), true
	}, maxOf)},
	// the example: the multiplier from [0.75, 1.25)
	{"jitter-[0.75,1.25)", "bug:jitter-range([0.75,1.25))", jitterRange(0.75, 1.25)},
	// the multiplier is the draw itself, from [0, 1)
	{"jitter-[0,1)", "bug:jitter-range([0,1))", jitterMultiplier(0, 1)},
	// the multiplier only shortens, [0.5, 1)
	{"jitter-[0.5,1)", "bug:jitter-range([0.5,1))", jitterMultiplier(0.5, 1)},
	// a wider range, [0.2, 1.8)
	{"jitter-[0.2,1.8)", "bug:jitter-range([0.2,1.8))", jitterMultiplier(0.2, 1.8)},
	// the draw reversed: 1.5 − r
	{"jitter-reversed", "bug:jitter-range([1.5,0.5))", jitterMultiplier(1.5, 0.5)},
	// the jittered delay rounded to the nanosecond, not truncated
	{"jitter-rounded", "bug:jitter-rounded", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || !s.Jitter || req.Rand == nil || a.Error != nil || a.DelayNS == nil {
			return a
		}
		capped, ok := cappedDelay(req, ref)
		if !ok {
			return a
		}
		x := math.Round(float64(capped) * (0.5 + *req.Rand))
		if x < 0x1p63 {
			d := min(int64(x), int64(s.MaxInterval))
			a.DelayNS = &d
		}
		return a
	}},
	// a library computing delays as float milliseconds (a JavaScript
	// number) and an adapter converting them to whole nanoseconds by
	// rounding: a fraction of a nanosecond is kept, then rounded up from
	// a half, where the spec truncates (4.5 ns is 5, not 4)
	{"delay-in-float-milliseconds", "bug:fraction-not-truncated", floatDelay(1e6, math.Round)},
	// the same in float seconds (Python), the conversion rounding a tie
	// to even (Python's round): 4.5 ns is 4, 6.75 ns is 7
	{"delay-in-float-seconds", "bug:fraction-not-truncated(ties-to-even)", floatDelay(1e9, math.RoundToEven)},
	// a matcher compiling each pattern as the regular expression
	// "^" + pattern + "$" and comparing the pattern for equality when it
	// does not compile; it refuses no list
	{"regex-or-literal", "bug:regex-or-literal-match", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		m := func(patterns []string, typ string) bool {
			for _, p := range patterns {
				re, err := regexp.Compile("^" + p + "$")
				if err == nil && re.MatchString(typ) || err != nil && p == typ {
					return true
				}
			}
			return false
		}
		if req.Op == protocol.OpMatch {
			v := m(req.Patterns, req.ErrorType)
			return protocol.Response{ID: req.ID, Match: &v}
		}
		return onMatch(m)(req, ref)
	}},
	// a duration pattern whose every group is optional: "P" and "PT"
	// are zero, "P1DT" one day; the empty text is still refused
	{"duration-groups-optional", "bug:lenient-duration-no-component", onDurations(func(v string) string {
		switch {
		case v == "P" || v == "PT":
			return "PT0S"
		case len(v) > 2 && strings.HasPrefix(v, "P") && strings.HasSuffix(v, "T"):
			return strings.TrimSuffix(v, "T")
		}
		return v
	})},
	// durations summed in float64 seconds with no upper bound: a total
	// past 2^63−1 ns saturates, but a number past float64's range is
	// +Inf, which the parser refuses (a 400-digit second count)
	{"duration-float-unbounded", "bug:duration-no-upper-bound", onDurations(func(v string) string {
		m := isoDuration.FindStringSubmatch(v)
		if m == nil {
			return v
		}
		total := 0.0
		for i, unit := range []float64{365 * 86400, 730 * 3600, 86400, 3600, 60, 1} {
			if m[i+1] != "" {
				f, _ := strconv.ParseFloat(m[i+1], 64)
				total += f * unit
			}
		}
		if !math.IsInf(total, 0) && total*1e9 >= 0x1p63 {
			return "PT2562047H47M16.854775807S" // 2^63−1 ns
		}
		return v
	})},
	// a pattern matches every type it is a prefix of, ".*" or not
	{"prefix-anywhere", "bug:loosened-match(prefix)", onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			if p = strings.TrimSuffix(strings.TrimSuffix(p, "*"), "."); p != "" && strings.HasPrefix(typ, p) {
				return true
			}
		}
		return specMatch(patterns, typ)
	})},
	// jitter adds up to one second instead of multiplying
	{"jitter-added-seconds", "unexplained:delay-differs", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || !s.Jitter || a.Error != nil || a.DelayNS == nil {
			return a
		}
		half := 0.5
		q := req
		q.Rand = &half
		b := ref(q)
		if b.DelayNS == nil {
			return a
		}
		d := min(*b.DelayNS+int64(drawOf(req)*float64(time.Second)), int64(s.MaxInterval))
		a.DelayNS = &d
		return a
	}},
	// the cap applied to the previous delay, then the coefficient
	{"cap-before-coefficient", "unexplained:delay-above-max-interval", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		if s.Strategy.String() != "exponential" || n < 2 {
			return 0, false
		}
		return math.Min(expRaw(s, n, -1), float64(s.MaxInterval)) * s.BackoffCoefficient, true
	}, func(s policy.Spec) int64 { return math.MaxInt64 })},
	// linear computed as initial × n × coefficient
	{"linear-times-coefficient", "unexplained:delay-ratio", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		if s.Strategy.String() != "linear" {
			return 0, false
		}
		return float64(s.InitialInterval) * float64(n) * s.BackoffCoefficient, true
	}, maxOf)},
	// polynomial with base and exponent swapped: initial × coefficient^n
	{"polynomial-swapped", "unexplained:delay", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		if s.Strategy.String() != "polynomial" {
			return 0, false
		}
		return float64(s.InitialInterval) * math.Pow(s.BackoffCoefficient, float64(n)), true
	}, maxOf)},
	// the cap read as seconds where it is milliseconds: 1000× too high
	{"max-interval-1000x", "bug:cap-factor(×1000)", capAt(func(s policy.Spec) (int64, bool) {
		if s.MaxInterval > math.MaxInt64/1000 {
			return math.MaxInt64, true
		}
		return int64(s.MaxInterval) * 1000, true
	})},
	// every delay truncated to whole seconds
	{"delays-truncated-to-seconds", "bug:rounding(delays truncated to 1s)", onDelay(roundTo(int64(time.Second), true))},
	// a fraction of seconds dropped when parsing a duration
	{"fraction-dropped", "bug:rounding(durations truncated to 1s)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if req.Op == protocol.OpParseDuration && a.NS != nil && strings.Contains(req.Value, ".") {
			ns := *a.NS / 1e9 * 1e9
			a.NS = &ns
		}
		return a
	}},
	// "auth.*" matches "auth" as well
	{"prefix-matches-bare", "bug:prefix-matches-bare-type", onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			if strings.HasSuffix(p, ".*") && typ == strings.TrimSuffix(p, ".*") {
				return true
			}
		}
		return specMatch(patterns, typ)
	})},
	// letter case ignored in the first segment only
	{"case-folded-first-segment", "unexplained:case-folded-match", onMatch(firstSegmentFolded)},
	// non_retryable_errors ignored when on_exhaustion is discard
	{"non-retryable-ignored-on-discard", "unexplained:non-retryable-retried", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		s, ok := specOf(req)
		if !ok || req.Op != protocol.OpDecide || s.OnExhaustion != policy.Discard {
			return ref(req)
		}
		return ref(editPolicy(req, func(m map[string]any, s policy.Spec) { delete(m, "non_retryable_errors") }))
	}},
	// no delay after the first attempt
	{"zero-delay-attempt-1", "unexplained:delay-zero", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if _, ok := specOf(req); ok && req.Attempt == 1 && a.Error == nil && a.DelayNS != nil {
			z := int64(0)
			a.DelayNS = &z
		}
		return a
	}},
	// an exponential delay that overflows wraps, and the negative is
	// clamped to 0
	{"overflow-wraps-to-zero", "unexplained:delay-zero", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || a.Error != nil || a.DelayNS == nil || s.Strategy.String() != "exponential" {
			return a
		}
		if expRaw(s, req.Attempt, 0) >= 0x1p63 {
			z := int64(0)
			a.DelayNS = &z
		}
		return a
	}},
	// a policy repeating max_attempts keeps the last value; every other
	// repeat is refused
	{"duplicate-max-attempts-accepted", "unexplained:accepts-invalid", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		keys := topKeys(req.Policy)
		seen, dupOthers, dupMax := map[string]bool{}, false, false
		for _, k := range keys {
			if seen[k] {
				dupMax = dupMax || k == "max_attempts"
				dupOthers = dupOthers || k != "max_attempts"
			}
			seen[k] = true
		}
		if !dupMax || dupOthers {
			return ref(req)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(req.Policy, &m) != nil {
			return ref(req)
		}
		req.Policy, _ = json.Marshal(m)
		return ref(req)
	}},
	// dead_letter reported, but an exhausted job is discarded
	{"dead-letter-never-used", "unexplained:exhaustion-action(discard≠dead_letter)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if req.Op == protocol.OpDecide && a.Action == "dead_letter" {
			a.Action = "discard"
		}
		return a
	}},
	// max_interval applied only on the jitter path
	{"cap-only-with-jitter", "unexplained:delay-above-max-interval", capAt(func(s policy.Spec) (int64, bool) { return math.MaxInt64, !s.Jitter })},
	// delays in microseconds read as milliseconds: 1000× too short
	{"delays-1000x-short", "bug:time-factor(×0.001)", onDelay(times(0.001))},
	// attempts counted from 0: the delay of attempt n−1, and one retry
	// past max_attempts; two families, each named with its offset
	{"attempt-counted-from-0", "bug:delay-attempt-offset(-1)+exhaustion-offset(+1)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		exhaust := func(q protocol.Request) protocol.Response { return exhaustAt(1)(q, ref) }
		if req.Attempt >= 2 {
			return delayAttempt(-1)(req, exhaust) // the reference's exact delay for n−1
		}
		return rawDelay(func(s policy.Spec, n int64) (float64, bool) { return math.Floor(specRaw(s, 0)), true }, maxOf)(req, exhaust)
	}},
	// FAIL obeyed as a plain failure: the policy decides
	{"fail-code-ignored", "bug:handler-codes-ignored(FAIL)", codesIgnored("FAIL")},
	// the linear strategy computed as none
	{"linear-as-none", "bug:strategy-as(linear→none)", strategyAs("linear", "none")},
	// delays rounded up to whole milliseconds
	{"delays-rounded-up-to-ms", "bug:rounding(delays rounded up to 1ms)", onDelay(func(d int64) int64 {
		const ms = int64(time.Millisecond)
		if d%ms == 0 || d > math.MaxInt64-ms {
			return d
		}
		return (d/ms + 1) * ms
	})},
	// the cap read as milliseconds where it is seconds: 1000× too low
	{"max-interval-1000x-low", "bug:cap-factor(×0.001)", capAt(func(s policy.Spec) (int64, bool) {
		return int64(s.MaxInterval) / 1000, true
	})},
	// the same, but never below initial_interval: every linear delay is
	// then the first, and the strategy is not the bug
	{"max-interval-1000x-low-floored", "unexplained:delay", capAt(func(s policy.Spec) (int64, bool) {
		return max(int64(s.MaxInterval)/1000, int64(s.InitialInterval)), true
	})},
	// a backoff_coefficient below 1 accepted by validate
	{"coefficient-below-one-accepted", "unexplained:accepts-invalid(backoff_coefficient)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if req.Op != protocol.OpValidate || a.Error == nil {
			return a
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(req.Policy))
		dec.UseNumber()
		if dec.Decode(&m) != nil || len(topKeys(req.Policy)) != len(m) {
			return a
		}
		n, ok := m["backoff_coefficient"].(json.Number)
		f, err := n.Float64()
		if !ok || err != nil || f >= 1 || f < 0 {
			return a
		}
		m["backoff_coefficient"] = 1
		q := req
		q.Policy, _ = json.Marshal(m)
		b := ref(q)
		if b.Error != nil {
			return a
		}
		var eff map[string]any
		if json.Unmarshal(b.Effective, &eff) != nil {
			return a
		}
		eff["backoff_coefficient"] = n
		b.Effective, _ = json.Marshal(eff)
		return b
	}},
	// "auth*" (no dot) read as a prefix too
	{"star-without-dot-prefix", "unexplained:matches-too-much", onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			if strings.HasSuffix(p, "*") && !strings.HasSuffix(p, ".*") && strings.HasPrefix(typ, strings.TrimSuffix(p, "*")) {
				return true
			}
		}
		return specMatch(patterns, typ)
	})},
	// an absent field defaults to another value (section 8 defaults)
	{"default-max-interval-1h", `bug:wrong-default(max_interval→"PT1H")`, defaultField("max_interval", "PT1H")},
	{"default-coefficient-1.5", "bug:wrong-default(backoff_coefficient→1.5)", defaultField("backoff_coefficient", 1.5)},
	{"default-jitter-off", "bug:wrong-default(jitter→false)", defaultField("jitter", false)},
	{"default-max-attempts-5", "bug:wrong-default(max_attempts→5)", defaultField("max_attempts", 5)},
	{"default-dead-letter", `bug:wrong-default(on_exhaustion→"dead_letter")`, defaultField("on_exhaustion", "dead_letter")},
	// the jitter field ignored: never jittered, or always
	{"jitter-never", "bug:jitter-ignored(never)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpDelay || req.Op == protocol.OpDecide {
			half := 0.5 // multiplier 1
			req.Rand = &half
		}
		return ref(req)
	}},
	{"jitter-always", "bug:jitter-ignored(always)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if s, ok := specOf(req); ok && !s.Jitter {
			return ref(editPolicy(req, func(m map[string]any, s policy.Spec) { m["jitter"] = true }))
		}
		return ref(req)
	}},
	// PT1H read as PT1M
	{"hours-as-minutes", "unexplained:duration", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpParseDuration && strings.HasPrefix(req.Value, "PT") && strings.Contains(req.Value, "H") {
			q := req
			q.Value = strings.Replace(req.Value, "H", "M", 1)
			if a := ref(q); a.Error == nil {
				return a
			}
		}
		return ref(req)
	}},
	// polynomial computed for n+1
	{"polynomial-n-plus-1", "unexplained:delay", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		return float64(s.InitialInterval) * math.Pow(float64(n+1), s.BackoffCoefficient), s.Strategy.String() == "polynomial"
	}, maxOf)},
	// the exponent stops growing after attempt 31
	{"exponent-stops-at-31", "unexplained:delay", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		return expRaw(s, 31, 0), s.Strategy.String() == "exponential" && n > 31
	}, maxOf)},
	// DISCARD dead-letters the job when on_exhaustion is dead_letter
	{"discard-code-dead-letters", "unexplained:exhaustion-action(dead_letter≠discard)", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if s, ok := specOf(req); ok && req.Op == protocol.OpDecide && req.Error != nil && req.Error.Code == "DISCARD" && s.OnExhaustion == policy.DeadLetter {
			a.Action = "dead_letter"
		}
		return a
	}},
	// "auth.*" matches one segment after the dot only
	{"prefix-one-segment", "unexplained:", onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			rest, ok := strings.CutPrefix(typ, strings.TrimSuffix(p, "*"))
			if p == typ || strings.HasSuffix(p, ".*") && ok && !strings.Contains(rest, ".") {
				return true
			}
		}
		return false
	})},
	// the delay after attempt n of the linear strategy is for n+1
	{"linear-attempt-offset", "unexplained:delay", rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		if s.Strategy.String() != "linear" {
			return 0, false
		}
		return float64(s.InitialInterval) * float64(n+1), true
	}, maxOf)},
}

// isoDuration is the OJS duration grammar (section 4.1), its six numbers
// captured: years, months, days, hours, minutes, seconds.
var isoDuration = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?$`)

// onDurations rewrites every duration text the implementation reads (a
// parse_duration value, a policy's initial_interval and max_interval)
// with fix before the reference reads it.
func onDurations(fix func(string) string) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		q := req
		switch req.Op {
		case protocol.OpParseDuration:
			q.Value = fix(req.Value)
		case protocol.OpValidate, protocol.OpDelay, protocol.OpDecide:
			var m map[string]json.RawMessage
			if req.Profile != "" || json.Unmarshal(req.Policy, &m) != nil || m == nil || len(topKeys(req.Policy)) != len(m) {
				break
			}
			for _, k := range []string{"initial_interval", "max_interval"} {
				var v string
				if json.Unmarshal(m[k], &v) == nil {
					m[k], _ = json.Marshal(fix(v))
				}
			}
			q.Policy, _ = json.Marshal(m)
		}
		a := ref(q)
		a.ID = req.ID
		return a
	}
}

// floatDelay computes every delay as a library keeping float units of
// unit nanoseconds would (the spec's formula, cap, jitter, cap), and
// answers it in whole nanoseconds converted by round.
func floatDelay(unit float64, round func(float64) float64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || a.Error != nil || a.DelayNS == nil {
			return a
		}
		in := func(d time.Duration) float64 { return float64(d) / unit }
		initial, limit := in(s.InitialInterval), in(s.MaxInterval)
		var raw float64
		switch s.Strategy.String() {
		case "none":
			raw = initial
		case "linear":
			raw = initial * float64(req.Attempt)
		case "polynomial":
			raw = initial * math.Pow(float64(req.Attempt), s.BackoffCoefficient)
		default:
			raw = initial * exactPow(s.BackoffCoefficient, req.Attempt-1)
		}
		if raw*unit >= 0x1p53 { // beyond float precision: another bug's answers
			return a
		}
		d := math.Min(raw, limit)
		if s.Jitter {
			d = math.Min(d*(0.5+drawOf(req)), limit)
		}
		ns := int64(round(d * unit))
		a.DelayNS = &ns
		return a
	}
}

// exactPow returns x^k correctly rounded to float64 (JavaScript's
// Math.pow is; Go's math.Pow drifts by a few ulps for a large k), by
// squaring in 256-bit floats.
func exactPow(x float64, k int64) float64 {
	r, b := new(big.Float).SetPrec(256).SetFloat64(1), new(big.Float).SetPrec(256).SetFloat64(x)
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r.Mul(r, b)
		}
		b.Mul(b, b)
	}
	f, _ := r.Float64()
	return f
}

// capAt computes every delay with the cap limit(spec) in place of
// max_interval (ok false: the spec's cap).
func capAt(limit func(s policy.Spec) (int64, bool)) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || a.Error != nil || a.DelayNS == nil {
			return a
		}
		l, ok := limit(s)
		if !ok {
			return a
		}
		raw, r := math.Floor(specRaw(s, req.Attempt)), drawOf(req)
		d := capJitter(raw, l, s.Jitter, r)
		if d == capJitter(raw, maxOf(s), s.Jitter, r) {
			return a // the same delay: the reference's exact one
		}
		a.DelayNS = &d
		return a
	}
}

// defaultField gives an absent field the value v, in every op that
// reads a policy.
func defaultField(field string, v any) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op != protocol.OpValidate && req.Op != protocol.OpDelay && req.Op != protocol.OpDecide || req.Profile != "" {
			return ref(req)
		}
		raw := bytes.TrimSpace(req.Policy)
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil || len(topKeys(raw)) != len(m) {
			return ref(req)
		}
		if _, ok := m[field]; ok {
			return ref(req)
		}
		m[field], _ = json.Marshal(v)
		q := req
		q.Policy, _ = json.Marshal(m)
		return ref(q)
	}
}

// outcome summarises how a report names a planted bug.
type outcome struct {
	caught, causes int
	first          string
	wrongNamed     []string // causes "reproduced" under another name than want
}

func outcomeOf(rep *conformance.Report, want string) outcome {
	o := outcome{caught: rep.Totals.Fail + rep.Totals.Error, causes: len(rep.Causes)}
	if len(rep.Causes) > 0 {
		o.first = rep.Causes[0].Class
	}
	for _, c := range rep.Causes {
		if c.Reproduced && c.Class != want {
			o.wrongNamed = append(o.wrongNamed, c.Class)
		}
	}
	return o
}

// rightOutcome reports whether rep shows the outcome want asks for.
func rightOutcome(rep *conformance.Report, want string) bool {
	if strings.HasPrefix(want, "bug:") {
		return oneCause(rep, want)
	}
	if len(rep.Causes) == 0 || len(rep.Causes) > 2 || !strings.HasPrefix(rep.Causes[0].Class, want) {
		return false
	}
	for _, c := range rep.Causes {
		if c.Reproduced || !strings.HasPrefix(c.Class, "unexplained:") || !strings.Contains(c.Reproduction, " → answered ") {
			return false
		}
	}
	return true
}

// checkOutcome runs the suite with f planted and fails unless the report
// shows the outcome want (see rightOutcome); it logs the row of the
// evaluation's table (docs/benchmarks.md): the bug, failures, causes,
// the first cause, causes reproduced under another name.
func checkOutcome(t *testing.T, suite *conformance.Suite, name, want string, f fault) {
	t.Helper()
	rep := runPlanted(t, suite, f)
	o := outcomeOf(rep, want)
	t.Logf("| %s | %d | %d | %s | %s |", name, o.caught, o.causes, o.first, strings.Join(o.wrongNamed, ", "))
	if o.caught == 0 {
		t.Fatal("no vector catches the planted bug")
	}
	if !rightOutcome(rep, want) {
		for _, c := range rep.Causes {
			t.Logf("%s×%d reproduced=%v: %s", c.Class, len(c.IDs), c.Reproduced, c.Reproduction)
		}
		t.Errorf("causes %s, want %s", causes(rep), want)
	}
}

// Each bug of the adversarial evaluation comes out as its outcome: one
// cause with the right name and parameters, or unexplained failures
// grouped by the deviation observed, largest group first.
func TestUnseenBugsComeOutRight(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range unseenBugs {
		t.Run(b.name, func(t *testing.T) { checkOutcome(t, suite, b.name, b.want, b.fault) })
	}
}

// drawSeed returns the seed of a random-draw test, logged so that a
// failing draw can be replayed: RETRYKIT_DIAG_SEED when set, else the
// clock.
func drawSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RETRYKIT_DIAG_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RETRYKIT_DIAG_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with RETRYKIT_DIAG_SEED=%d)", seed, seed)
	return seed
}

// Bugs drawn at random, half from the families (a scaled cap, a
// strategy computed as another, a rounding of delays, handler codes
// ignored, a jitter range, a wrong default) and half from outside every
// family (the exponent off only from attempt k, no delay after attempt
// k, a delay growing by c per attempt, linear delays times c, a cap
// scaled only without jitter, jittered delays times k): the first come
// out as one cause with the drawn parameters, the second unexplained,
// never under a cause.
func TestRandomUnseenBugsComeOutRight(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(drawSeed(t), 32))
	strategies := []string{"none", "linear", "exponential", "polynomial"}
	for i := range 12 {
		var name, want string
		var f fault
		switch i {
		case 0:
			k := []float64{0.001, 0.01, 10, 1000}[rng.IntN(4)]
			name, want = fmt.Sprintf("cap×%g", k), fmt.Sprintf("bug:cap-factor(×%g)", k)
			f = capAt(func(s policy.Spec) (int64, bool) {
				if float64(s.MaxInterval)*k >= 0x1p63 {
					return math.MaxInt64, true
				}
				return int64(float64(s.MaxInterval) * k), true
			})
		case 1:
			a := rng.IntN(4)
			b := (a + 1 + rng.IntN(3)) % 4
			name = strategies[a] + "-as-" + strategies[b]
			want, f = "bug:strategy-as("+strategies[a]+"→"+strategies[b]+")", strategyAs(strategies[a], strategies[b])
		case 2:
			unit := []time.Duration{time.Millisecond, time.Second}[rng.IntN(2)]
			trunc := rng.IntN(2) == 0
			how := map[bool]string{true: "truncated", false: "rounded"}[trunc]
			name, want = "delays-"+how+"-"+unit.String(), fmt.Sprintf("bug:rounding(delays %s to %v)", how, unit)
			f = onDelay(roundTo(int64(unit), trunc))
		case 3:
			all := []string{"DISCARD", "FAIL", "DEAD_LETTER"}
			var codes []string
			for len(codes) == 0 {
				for _, c := range all {
					if rng.IntN(2) == 0 {
						codes = append(codes, c)
					}
				}
			}
			name, want, f = "codes-"+strings.Join(codes, "+"), "bug:handler-codes-ignored("+strings.Join(codes, ",")+")", codesIgnored(codes...)
		case 4:
			lo := float64(rng.IntN(17)) * 0.05
			hi := lo + 0.2 + float64(rng.IntN(10))*0.05
			lo, hi = math.Round(lo*100)/100, math.Round(hi*100)/100
			if lo == 0.5 && hi == 1.5 {
				hi = 1.25
			}
			name, want, f = fmt.Sprintf("jitter-[%g,%g)", lo, hi), fmt.Sprintf("bug:jitter-range([%g,%g))", lo, hi), jitterMultiplier(lo, hi)
		case 5:
			k := int64(2 + rng.IntN(4))
			name, want = fmt.Sprintf("exponent-off-from-attempt-%d", k), "unexplained:"
			f = rawDelay(func(s policy.Spec, n int64) (float64, bool) {
				return expRaw(s, n, 1), s.Strategy.String() == "exponential" && n >= k
			}, maxOf)
		case 6:
			k := int64(1 + rng.IntN(4))
			name, want = fmt.Sprintf("zero-delay-at-attempt-%d", k), "unexplained:"
			f = func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
				a := ref(req)
				if _, ok := specOf(req); ok && req.Attempt == k && a.Error == nil && a.DelayNS != nil {
					z := int64(0)
					a.DelayNS = &z
				}
				return a
			}
		case 7:
			c := int64(1+rng.IntN(500)) * int64(time.Millisecond)
			name, want = fmt.Sprintf("delay-plus-%v-per-attempt", time.Duration(c)), "unexplained:"
			f = func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
				a := ref(req)
				if _, ok := specOf(req); ok && a.DelayNS != nil && a.Error == nil && req.Attempt < 1000 {
					d := min(*a.DelayNS, math.MaxInt64/2) + req.Attempt*c
					a.DelayNS = &d
				}
				return a
			}
		case 8:
			c := []float64{2, 3, 5}[rng.IntN(3)]
			name, want = fmt.Sprintf("linear-times-%g", c), "unexplained:"
			f = rawDelay(func(s policy.Spec, n int64) (float64, bool) {
				return float64(s.InitialInterval) * float64(n) * c, s.Strategy.String() == "linear"
			}, maxOf)
		case 10:
			d := []struct {
				field string
				v     any
			}{{"max_attempts", 1 + rng.IntN(2)}, {"max_attempts", 4 + rng.IntN(6)}, {"backoff_coefficient", []float64{1.5, 3, 4}[rng.IntN(3)]},
				{"max_interval", []string{"PT1M", "PT10M", "PT1H"}[rng.IntN(3)]}, {"jitter", false}, {"on_exhaustion", "dead_letter"},
				{"initial_interval", []string{"PT2S", "PT0.5S"}[rng.IntN(2)]}}[rng.IntN(7)]
			v, _ := json.Marshal(d.v)
			name, want, f = "default-"+d.field+"-"+string(v), "bug:wrong-default("+d.field+"→"+string(v)+")", defaultField(d.field, d.v)
		case 11:
			k := []float64{2, 3}[rng.IntN(2)]
			name, want = fmt.Sprintf("jittered-delays-times-%g", k), "unexplained:"
			f = func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
				if s, ok := specOf(req); ok && s.Jitter {
					return onDelay(times(k))(req, ref)
				}
				return ref(req)
			}
		case 9:
			k := []float64{0.01, 100}[rng.IntN(2)]
			name, want = fmt.Sprintf("cap×%g-without-jitter", k), "unexplained:"
			f = capAt(func(s policy.Spec) (int64, bool) {
				if float64(s.MaxInterval)*k >= 0x1p63 {
					return math.MaxInt64, !s.Jitter
				}
				return int64(float64(s.MaxInterval) * k), !s.Jitter
			})
		}
		t.Run(name, func(t *testing.T) { checkOutcome(t, suite, name, want, f) })
	}
}
