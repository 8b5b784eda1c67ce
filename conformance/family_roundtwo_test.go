package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// A second round of the adversarial evaluation: slips of the kind real
// retry code makes (cenkalti/backoff's randomization around a capped
// interval, go-retryablehttp's float power of two, Celery's full jitter
// over whole seconds, AWS's decorrelated jitter, integer seconds kept by
// a scheduler, a package-level draw), written from the spec's formulas
// and from what those libraries are documented to do, not from the
// models of package diagnose. Some come as two bugs in one
// implementation: each must then be named, the larger first.

// both plants f over an implementation that already has g.
func both(f, g fault) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		return f(req, func(q protocol.Request) protocol.Response { return g(q, ref) })
	}
}

// onJitter replaces the delay of every jittered delay answer and retry
// decision by jit(spec, attempt, capped, draw): capped is the spec's
// delay before jitter (capped at max_interval).
func onJitter(jit func(s policy.Spec, n, capped int64, r float64, ref func(protocol.Request) protocol.Response, req protocol.Request) int64) fault {
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
		d := max(jit(s, req.Attempt, capped, drawOf(req), ref, req), 0)
		a.DelayNS = &d
		return a
	}
}

// onSpecDelay applies f to the delay of every delay answer and retry
// decision of a valid policy.
func onSpecDelay(f func(s policy.Spec, d int64) int64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || a.Error != nil || a.DelayNS == nil {
			return a
		}
		d := f(s, *a.DelayNS)
		a.DelayNS = &d
		return a
	}
}

// float32Seconds is a duration kept as a float32 count of seconds and
// converted back to whole nanoseconds by truncation.
func float32Seconds(d int64) int64 {
	f := float64(float32(float64(d) / 1e9))
	if f*1e9 >= 0x1p63 {
		return math.MaxInt64
	}
	return int64(f * 1e9)
}

// durationParts is an OJS duration split into its date part (as written,
// "P1Y2M3D" or "P") and its hours, minutes and seconds texts ("" when
// absent); ok false when v is not one.
func durationParts(v string) (date, h, m, sec string, ok bool) {
	g := isoDuration.FindStringSubmatch(v)
	if g == nil {
		return "", "", "", "", false
	}
	date = "P"
	for i, u := range []string{"Y", "M", "D"} {
		if g[i+1] != "" {
			date += g[i+1] + u
		}
	}
	return date, g[4], g[5], g[6], true
}

// joinDuration writes a duration from its date part and time components
// (seconds as an exact rational, written to 30 decimals: the vectors'
// have fewer, so the text is exact and the reader rounds it as it rounds
// any); the zero duration is "PT0S".
func joinDuration(date, h, m string, sec *big.Rat) string {
	t := ""
	if h != "" {
		t += h + "H"
	}
	if m != "" {
		t += m + "M"
	}
	if sec != nil && sec.Sign() != 0 {
		t += strings.TrimRight(strings.TrimRight(sec.FloatString(30), "0"), ".") + "S" // exact: the reader rounds
	}
	switch {
	case t != "":
		return date + "T" + t
	case date != "P":
		return date
	}
	return "PT0S"
}

// ratOf reads a decimal text as an exact rational (nil for "").
func ratOf(s string) *big.Rat {
	if s == "" {
		return nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil
	}
	return r
}

// withDurations rewrites every duration text as fix does, keeping the
// texts that are not OJS durations.
func withDurations(fix func(date, h, m, sec string) string) fault {
	return onDurations(func(v string) string {
		date, h, m, sec, ok := durationParts(v)
		if !ok || date == "P" && h+m+sec == "" || strings.HasSuffix(v, "T") {
			return v // no component: refused as it is
		}
		return fix(date, h, m, sec)
	})
}

// rejectPolicy refuses, in every op that reads a policy, a valid policy
// for which bad holds, naming field.
func rejectPolicy(field string, bad func(m map[string]json.RawMessage) bool) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if a.Error != nil || req.Profile != "" || req.Op != protocol.OpValidate && req.Op != protocol.OpDelay && req.Op != protocol.OpDecide {
			return a
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(req.Policy, &m) != nil || m == nil || !bad(m) {
			return a
		}
		return protocol.Response{ID: req.ID, Error: &protocol.ErrorResult{Type: protocol.ErrorPolicyInvalid,
			Message: "policy: " + field + ": must be greater than 1"}}
	}
}

// onDecision rewrites the action of decide answers for a valid policy.
func onDecision(f func(s policy.Spec, req protocol.Request, action string) string) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || req.Op != protocol.OpDecide || a.Error != nil {
			return a
		}
		if act := f(s, req, a.Action); act != a.Action {
			a.Action, a.DelayNS = act, nil
		}
		return a
	}
}

// roundTwoBugs are the second round's bugs, each with the causes the
// report must show, in order: "bug:NAME" (reproduced, with its
// parameters) or "unexplained:GROUP" (a prefix of an unexplained group's
// name).
var roundTwoBugs = []struct {
	name  string
	want  []string
	fault fault
}{
	// polynomial with the exponent applied to the delay in seconds:
	// (initial_s × n)^coefficient seconds, not initial × n^coefficient
	{"polynomial-exponent-on-the-delay", []string{"unexplained:delay"}, rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		return math.Pow(float64(s.InitialInterval)/1e9*float64(n), s.BackoffCoefficient) * 1e9, s.Strategy.String() == "polynomial"
	}, maxOf)},
	// every duration and delay kept as float32 seconds (24 bits)
	{"float32-seconds", []string{"unexplained:"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := onSpecDelay(func(_ policy.Spec, d int64) int64 { return float32Seconds(d) })(req, ref)
		if req.Op == protocol.OpParseDuration && a.NS != nil {
			ns := float32Seconds(*a.NS)
			a.NS = &ns
		}
		return a
	}},
	// the exponential delay multiplied up in int64 that wraps on
	// overflow (no saturation), a negative result clamped to 0, then
	// capped: a big attempt gets a small or zero delay
	{"overflow-wraps-then-capped", []string{"unexplained:"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || a.Error != nil || a.DelayNS == nil || s.Strategy.String() != "exponential" || s.BackoffCoefficient != math.Trunc(s.BackoffCoefficient) {
			return a
		}
		d, c := int64(s.InitialInterval), int64(s.BackoffCoefficient)
		for i := int64(1); i < req.Attempt && i < 200; i++ {
			d *= c // wraps
		}
		if expRaw(s, req.Attempt, 0) < 0x1p62 {
			return a // no overflow: the right delay
		}
		x := capJitter(float64(max(d, 0)), maxOf(s), s.Jitter, drawOf(req))
		a.DelayNS = &x
		return a
	}},
	// the jitter drawn once (a package-level draw at start-up): every
	// jittered delay is the capped delay × 1.17, whatever the draw
	{"jitter-drawn-once", []string{"unexplained:"}, onJitter(func(s policy.Spec, _, capped int64, _ float64, _ func(protocol.Request) protocol.Response, _ protocol.Request) int64 {
		return capJitter(float64(capped)*1.17, maxOf(s), false, 0)
	})},
	// the cap applied on the exponential path only: a linear delay
	// grows past max_interval
	{"cap-skipped-for-linear", []string{"unexplained:delay-above-max-interval"}, capAt(func(s policy.Spec) (int64, bool) {
		return math.MaxInt64, s.Strategy.String() == "linear"
	})},
	// Celery's full jitter over whole seconds: a draw from 0 to the
	// capped delay in seconds, both ends included
	{"full-jitter-whole-seconds", []string{"unexplained:"}, onJitter(func(s policy.Spec, _, capped int64, r float64, _ func(protocol.Request) protocol.Response, _ protocol.Request) int64 {
		secs := capped / int64(time.Second)
		return min(int64(math.Floor(r*float64(secs+1)))*int64(time.Second), maxOf(s))
	})},
	// equal jitter in integers: half the capped delay plus a draw of the
	// other half, the multiplier [0.5, 1)
	{"equal-jitter", []string{"bug:jitter-formula(equal)"}, onJitter(func(s policy.Spec, _, capped int64, r float64, _ func(protocol.Request) protocol.Response, _ protocol.Request) int64 {
		return capped/2 + int64(r*float64(capped/2))
	})},
	// AWS's decorrelated jitter without state: a draw between
	// initial_interval and three times the previous attempt's capped
	// delay, capped
	{"decorrelated-jitter", []string{"bug:jitter-formula(decorrelated)"}, onJitter(decorrelated)},
	// max_interval's seconds compared with a delay in nanoseconds: the
	// cap is 10⁻⁹ of its value
	{"cap-seconds-as-nanoseconds", []string{"bug:cap-factor(×1e-09)"}, capAt(func(s policy.Spec) (int64, bool) {
		return int64(s.MaxInterval) / int64(time.Second), true
	})},
	// the linear strategy counted from 0: initial × (n − 1), no delay
	// after the first attempt
	{"linear-from-zero", []string{"unexplained:"}, rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		return float64(s.InitialInterval) * float64(n-1), s.Strategy.String() == "linear"
	}, maxOf)},
	// initial_interval kept as whole seconds by the scheduler
	// (int(total_seconds())), the parser right
	{"initial-interval-whole-seconds", []string{"unexplained:"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		return rawDelay(func(s policy.Spec, n int64) (float64, bool) {
			if s.InitialInterval%time.Second == 0 {
				return 0, false
			}
			t := s
			t.InitialInterval = s.InitialInterval / time.Second * time.Second
			return specRaw(t, n), true
		}, maxOf)(req, ref)
	}},
	// minutes after T read as milliseconds: PT1M is 1 ms, in
	// parse_duration and in every policy
	{"minutes-as-milliseconds", []string{"bug:duration-unit(minutes→1ms)"}, withDurations(func(date, h, m, sec string) string {
		if m == "" {
			return joinDuration(date, h, m, ratOf(sec))
		}
		s := ratOf(sec)
		if s == nil {
			s = new(big.Rat)
		}
		s.Add(s, new(big.Rat).Quo(ratOf(m), big.NewRat(1000, 1)))
		return joinDuration(date, h, "", s)
	})},
	// a fraction of seconds dropped everywhere: PT1.5S is 1 s, PT0.5S is
	// 0 (then refused as an initial_interval)
	{"fraction-dropped-everywhere", []string{"bug:duration-unit(fraction→0s)"}, withDurations(func(date, h, m, sec string) string {
		s := ratOf(sec)
		if s != nil {
			s = new(big.Rat).SetInt(new(big.Int).Quo(s.Num(), s.Denom()))
		}
		return joinDuration(date, h, m, s)
	})},
	// days ignored (years and months kept): P1DT2H is 2 h
	{"days-ignored", []string{"bug:duration-unit(days→0s)"}, withDurations(func(date, h, m, sec string) string {
		if i := strings.IndexByte(date, 'D'); i >= 0 {
			j := strings.LastIndexAny(date[:i], "PYM") + 1
			date = date[:j] + date[i+1:]
		}
		return joinDuration(date, h, m, ratOf(sec))
	})},
	// the fraction of seconds read as a count of milliseconds: PT1.5S is
	// 1.005 s, PT0.25S 25 ms
	{"fraction-as-milliseconds", []string{"unexplained:"}, withDurations(func(date, h, m, sec string) string {
		whole, frac, ok := strings.Cut(sec, ".")
		if !ok {
			return joinDuration(date, h, m, ratOf(sec))
		}
		s := ratOf(whole)
		f, _ := strconv.ParseInt(strings.TrimLeft(frac, "0")+"0", 10, 64)
		s.Add(s, big.NewRat(f/10, 1000))
		return joinDuration(date, h, m, s)
	})},
	// hours above 23 refused, as a time-of-day parser does
	{"hours-above-23-refused", []string{"unexplained:rejects-valid"}, withDurations(func(date, h, m, sec string) string {
		if n, err := strconv.ParseInt(h, 10, 64); h != "" && (err != nil || n > 23) {
			return "PT"
		}
		return joinDuration(date, h, m, ratOf(sec))
	})},
	// patterns read as shell globs (path.Match)
	{"glob-match", []string{"unexplained:"}, onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			if ok, err := path.Match(p, typ); ok && err == nil {
				return true
			}
		}
		return false
	})},
	// letter case ignored for ".*" prefixes only; an exact pattern is
	// compared exactly
	{"case-folded-prefixes-only", []string{"unexplained:case-folded-match"}, onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			pre, ok := strings.CutSuffix(p, "*")
			if ok && strings.HasSuffix(pre, ".") && strings.HasPrefix(strings.ToLower(typ), strings.ToLower(pre)) || p == typ {
				return true
			}
		}
		return false
	})},
	// a loop returning after the first pattern: only it is tried
	{"first-pattern-only", []string{"unexplained:matches-too-little"}, onMatch(func(patterns []string, typ string) bool {
		return len(patterns) > 0 && specMatch(patterns[:1], typ)
	})},
	// a non-retryable error always discarded, on_exhaustion dead_letter
	// or not
	{"non-retryable-always-discarded", []string{"unexplained:exhaustion-action(discard≠dead_letter)"}, onDecision(func(s policy.Spec, req protocol.Request, act string) string {
		if act == "dead_letter" && req.Error != nil && (req.Error.Code == "" || req.Error.Code == "RETRY") && specMatch(s.NonRetryableErrors, req.Error.Type) {
			return "discard"
		}
		return act
	})},
	// max_attempts 0 read as "retry for ever" (go-retry's, Sidekiq's
	// habit), where the spec runs the job once
	{"max-attempts-0-unlimited", []string{"unexplained:retried-past-max-attempts(1,2)"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if s, ok := specOf(req); ok && req.Op == protocol.OpDecide && s.MaxAttempts == 0 {
			return ref(editPolicy(req, func(m map[string]any, _ policy.Spec) { m["max_attempts"] = math.MaxInt64 }))
		}
		return ref(req)
	}},
	// one retry too many, only when on_exhaustion is dead_letter
	{"exhaustion-late-with-dead-letter", []string{"unexplained:"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if s, ok := specOf(req); ok && s.OnExhaustion == policy.DeadLetter {
			return exhaustAt(1)(req, ref)
		}
		return ref(req)
	}},
	// the DEAD_LETTER code follows on_exhaustion: discarded under discard
	{"dead-letter-code-follows-on-exhaustion", []string{"unexplained:exhaustion-action(discard≠dead_letter)"}, onDecision(func(s policy.Spec, req protocol.Request, act string) string {
		if act == "dead_letter" && req.Error != nil && req.Error.Code == "DEAD_LETTER" && s.OnExhaustion == policy.Discard {
			return "discard"
		}
		return act
	})},
	// backoff_coefficient must be above 1, strictly
	{"coefficient-1-refused", []string{"unexplained:rejects-valid"}, rejectPolicy("backoff_coefficient", func(m map[string]json.RawMessage) bool {
		var f float64
		return json.Unmarshal(m["backoff_coefficient"], &f) == nil && f == 1
	})},
	// an absent max_interval is no cap on the delay path (the effective
	// policy still reports PT5M)
	{"absent-max-interval-no-cap", []string{"unexplained:delay-above-max-interval"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		var m map[string]json.RawMessage
		if json.Unmarshal(req.Policy, &m) == nil && m != nil {
			if _, ok := m["max_interval"]; ok {
				return ref(req)
			}
		}
		return capAt(func(s policy.Spec) (int64, bool) { return math.MaxInt64, true })(req, ref)
	}},
	// exact matching only: "auth.*" is a literal
	{"exact-match-only", []string{"bug:no-prefix-match"}, onMatch(func(patterns []string, typ string) bool {
		return slices.Contains(patterns, typ)
	})},
	// AWS's full jitter over the uncapped delay, then capped: a draw
	// times the raw delay
	{"full-jitter-before-cap", []string{"unexplained:"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || !s.Jitter || a.Error != nil || a.DelayNS == nil {
			return a
		}
		d := capJitter(math.Floor(specRaw(s, req.Attempt))*drawOf(req), maxOf(s), false, 0)
		a.DelayNS = &d
		return a
	}},
	// backoff_coefficient ignored: the exponential base is always 2
	// (a power of two shifted in, as go-retryablehttp's default does)
	{"coefficient-always-2", []string{"unexplained:"}, rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		return float64(s.InitialInterval) * math.Pow(2, float64(n-1)), s.Strategy.String() == "exponential" && s.BackoffCoefficient != 2
	}, maxOf)},
	// the decision's delay computed for the next attempt, the delay op
	// right: two code paths that disagree
	{"decide-delay-one-attempt-late", []string{"unexplained:"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpDecide {
			return delayAttempt(1)(req, ref)
		}
		return ref(req)
	}},
	// the effective policy reports the intervals as numbers of
	// milliseconds, not ISO 8601 texts
	{"effective-intervals-in-ms", []string{"unexplained:effective"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		var eff map[string]json.RawMessage
		if req.Op != protocol.OpValidate || a.Error != nil || json.Unmarshal(a.Effective, &eff) != nil {
			return a
		}
		for _, k := range []string{"initial_interval", "max_interval"} {
			var v string
			if json.Unmarshal(eff[k], &v) == nil {
				if d, err := policy.ParseDuration(v); err == nil {
					eff[k], _ = json.Marshal(d.Milliseconds())
				}
			}
		}
		a.Effective, _ = json.Marshal(eff)
		return a
	}},
	// max_attempts 1 read as one retry: exhausted one attempt late only
	// there
	{"max-attempts-1-retries-once", []string{"unexplained:retried-past-max-attempts(1)"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if s, ok := specOf(req); ok && s.MaxAttempts == 1 {
			return exhaustAt(1)(req, ref)
		}
		return ref(req)
	}},
	// the exponential delay multiplied up one attempt at a time, truncated
	// to the nanosecond at each step
	{"exp-iterative-floor", []string{"unexplained:delay"}, rawDelay(func(s policy.Spec, n int64) (float64, bool) {
		if s.Strategy.String() != "exponential" || n > 200 {
			return 0, false
		}
		d := float64(s.InitialInterval)
		for i := int64(1); i < n; i++ {
			d = math.Floor(d * s.BackoffCoefficient)
		}
		return d, true
	}, maxOf)},
	// the jitter multiplier applied twice, before and after the cap
	{"jitter-squared", []string{"unexplained:delay"}, onJitter(func(s policy.Spec, _, capped int64, r float64, _ func(protocol.Request) protocol.Response, _ protocol.Request) int64 {
		return capJitter(float64(capped)*(0.5+r)*(0.5+r), maxOf(s), false, 0)
	})},
	// a leading minus sign accepted: -PT1S is minus one second
	{"negative-duration-accepted", []string{"unexplained:accepts-invalid"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpParseDuration && strings.HasPrefix(req.Value, "-P") {
			q := req
			q.Value = req.Value[1:]
			a := ref(q)
			if a.NS != nil {
				n := -*a.NS
				a.NS = &n
			}
			return a
		}
		return ref(req)
	}},
	// a fraction on minutes accepted (and read as 0)
	{"fraction-on-minutes-accepted", []string{"unexplained:accepts-invalid"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if req.Op == protocol.OpParseDuration && a.Error != nil && strings.HasPrefix(req.Value, "PT") && strings.HasSuffix(req.Value, "M") && strings.Contains(req.Value, ".") {
			n := int64(0)
			return protocol.Response{ID: req.ID, NS: &n}
		}
		return a
	}},
	// the effective policy omits backoff_strategy
	{"effective-lacks-strategy", []string{"unexplained:effective(backoff_strategy)"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		var eff map[string]json.RawMessage
		if req.Op == protocol.OpValidate && a.Error == nil && json.Unmarshal(a.Effective, &eff) == nil {
			delete(eff, "backoff_strategy")
			a.Effective, _ = json.Marshal(eff)
		}
		return a
	}},
	// a max_interval below initial_interval raised to it, not refused
	{"max-interval-below-initial-clamped", []string{"unexplained:accepts-invalid"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if a.Error == nil || req.Profile != "" || (req.Op != protocol.OpValidate && req.Op != protocol.OpDelay && req.Op != protocol.OpDecide) || !strings.Contains(a.Error.Message, "max_interval: must be >=") {
			return a
		}
		var m map[string]any
		if json.Unmarshal(req.Policy, &m) != nil {
			return a
		}
		m["max_interval"] = m["initial_interval"]
		q := req
		q.Policy, _ = json.Marshal(m)
		b := ref(q)
		b.ID = req.ID
		return b
	}},
	// the decision's delay never jittered, the delay op right
	{"decide-delay-without-jitter", []string{"unexplained:delay"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpDecide {
			half := 0.5
			req.Rand = &half
		}
		return ref(req)
	}},
	// the delay op answers microseconds read as nanoseconds (1000×), the
	// decision right: two code paths
	{"time-factor-1000-delay-op-only", []string{"unexplained:delay-ratio(×1000)"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpDelay {
			return onDelay(times(1000))(req, ref)
		}
		return ref(req)
	}},
	// the cap after jitter applied on the exponential path only
	{"post-cap-only-exponential", []string{"unexplained:delay-above-max-interval"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		s, ok := specOf(req)
		if !ok || !s.Jitter || s.Strategy.String() == "exponential" || a.Error != nil || a.DelayNS == nil {
			return a
		}
		capped, ok := cappedDelay(req, ref)
		if !ok {
			return a
		}
		d := int64(math.Floor(float64(capped) * (0.5 + drawOf(req))))
		a.DelayNS = &d
		return a
	}},
	// patterns compiled as regular expressions anchored at the start only
	// ("^" + pattern): a prefix match for "auth.*", "*" matching all
	{"regex-anchored-start-only", []string{"unexplained:matches-too-much"}, onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			re, err := regexp.Compile("^" + p)
			if err == nil && re.MatchString(typ) {
				return true
			}
		}
		return false
	})},
	// an absent max_attempts is 0 (a struct's zero value), the rest merged
	{"absent-max-attempts-zero", []string{"bug:wrong-default(max_attempts→0)"}, defaultField("max_attempts", 0)},
	// jitter adds up to one initial_interval to the capped delay (retry-go's
	// random delay), capped
	{"additive-jitter-initial", []string{"unexplained:delay"}, onJitter(func(s policy.Spec, _, capped int64, r float64, _ func(protocol.Request) protocol.Response, _ protocol.Request) int64 {
		return min(capped+int64(r*float64(s.InitialInterval)), maxOf(s))
	})},
	// years refused by the parser (days, months kept)
	{"years-unsupported", []string{"unexplained:rejects-valid-duration"}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpParseDuration && strings.Contains(strings.SplitN(req.Value, "T", 2)[0], "Y") {
			return protocol.Response{ID: req.ID, Error: &protocol.ErrorResult{Type: protocol.ErrorPolicyInvalid, Message: "years unsupported"}}
		}
		return ref(req)
	}},
	// two bugs of one matcher: letter case ignored, only the first pattern
	// tried
	{"case-folded+first-pattern-only", []string{"unexplained:matches-too-little", "bug:loosened-match(case)"}, both(caseFolded, onMatch(func(patterns []string, typ string) bool {
		return len(patterns) > 0 && specMatch(patterns[:1], typ)
	}))},
	// a family of delays beside a matcher searching unanchored regular
	// expressions (a pattern that does not compile never matches)
	{"regex-search+time-factor", []string{"bug:time-factor(×2)", "unexplained:matches-too-much"}, both(onDelay(times(2)), onMatch(func(patterns []string, typ string) bool {
		for _, p := range patterns {
			if re, err := regexp.Compile(p); err == nil && re.MatchString(typ) {
				return true
			}
		}
		return false
	}))},
	// two bugs in one implementation, each named, the larger first
	{"time-factor+fail-ignored", []string{"bug:time-factor(×2)", "bug:handler-codes-ignored(FAIL)"}, both(onDelay(times(2)), codesIgnored("FAIL"))},
	{"linear-as-exponential+case-folded", []string{"bug:strategy-as(linear→exponential)", "bug:loosened-match(case)"}, both(strategyAs("linear", "exponential"), caseFolded)},
	{"exhaustion+1+truncated-ms", []string{"bug:rounding(delays truncated to 1ms)", "bug:exhaustion-offset(+1)"}, both(exhaustAt(1), onDelay(roundTo(int64(time.Millisecond), true)))},
	{"jitter-range+default-max-attempts", []string{"bug:jitter-range([0.75,1.25))", "bug:wrong-default(max_attempts→5)"}, both(jitterRange(0.75, 1.25), defaultField("max_attempts", 5))},
	// two bugs outside every family, one in parse_duration alone (a
	// fraction of seconds past the millisecond dropped), one in delays
	// (100 ms more per attempt): two groups, never one
	{"duration-parser-slip+delay-per-attempt", []string{"unexplained:delay-offset-per-attempt", "unexplained:duration"}, both(func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if req.Op == protocol.OpParseDuration && a.NS != nil {
			ns := *a.NS / 1e6 * 1e6
			a.NS = &ns
		}
		return a
	}, func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if _, ok := specOf(req); ok && a.DelayNS != nil && a.Error == nil && req.Attempt < 1000 {
			d := min(*a.DelayNS, math.MaxInt64/2) + req.Attempt*int64(100*time.Millisecond)
			a.DelayNS = &d
		}
		return a
	})},
	// one bug of a family and one outside every family
	{"time-factor+first-pattern-only", []string{"bug:time-factor(×3)", "unexplained:matches-too-little"}, both(onDelay(times(3)), onMatch(func(patterns []string, typ string) bool {
		return len(patterns) > 0 && specMatch(patterns[:1], typ)
	}))},
}

// decorrelated is AWS's decorrelated jitter without state: a draw
// between initial_interval and three times the capped delay of the
// attempt before (initial_interval before the first), capped.
func decorrelated(s policy.Spec, n, _ int64, r float64, ref func(protocol.Request) protocol.Response, req protocol.Request) int64 {
	prev := int64(s.InitialInterval)
	if n > 1 {
		q := req
		q.Attempt = n - 1
		if p, ok := cappedDelay(q, ref); ok {
			prev = p
		}
	}
	lo, hi := float64(s.InitialInterval), 3*float64(prev)
	return capJitter(lo+r*(hi-lo), maxOf(s), false, 0)
}

// checkCauses runs the suite with f planted and fails unless the report
// shows the causes want, in order, and no other: a "bug:" cause
// reproduced under that name (or an equivalent one), an "unexplained:"
// cause unexplained, its group's name starting with the text given, with
// a reproduction. It logs the evaluation's row: the bug, failures,
// causes, the first cause, causes reproduced under another name.
func checkCauses(t *testing.T, suite *conformance.Suite, name string, want []string, f fault) {
	t.Helper()
	rep := runPlanted(t, suite, f)
	o := outcomeOf(rep, want[0])
	var wrong []string
	for _, c := range rep.Causes {
		named := slices.Contains(want, c.Class)
		for _, w := range want {
			named = named || equivalent(c, w)
		}
		if parts := strings.Split(strings.TrimPrefix(c.Class, "bug:"), "+"); len(parts) == 2 {
			named = named || slices.Contains(want, "bug:"+parts[0]) && slices.Contains(want, "bug:"+parts[1])
		}
		if c.Reproduced && !named {
			wrong = append(wrong, c.Class)
		}
	}
	t.Logf("| %s | %d | %d | %s | %s |", name, o.caught, o.causes, o.first, strings.Join(wrong, ", "))
	if o.caught == 0 {
		t.Fatal("no vector catches the planted bug")
	}
	ok := rightCauses(rep, want) && len(wrong) == 0
	if !ok {
		for _, c := range rep.Causes {
			t.Logf("%s×%d reproduced=%v: %s", c.Class, len(c.IDs), c.Reproduced, c.Reproduction)
		}
		t.Errorf("causes %s, want %s", causes(rep), strings.Join(want, " "))
	}
}

// rightCauses reports whether rep's causes are want's: at most two; an
// unexplained want is the first cause's group (a second group may follow
// it, unexplained too, when the bug shows two deviations); bug wants are
// reproduced causes with those names, the larger first whatever want's
// order, or one cause joining them ("a+b") when one answer shows both.
func rightCauses(rep *conformance.Report, want []string) bool {
	if len(rep.Causes) == 0 || len(rep.Causes) > 2 {
		return false
	}
	named := func(c conformance.Cause, w string) bool {
		return c.Reproduced && (c.Class == w || equivalent(c, w)) && len(c.Contradicted) == 0
	}
	unexplained := func(c conformance.Cause, w string) bool {
		return !c.Reproduced && strings.HasPrefix(c.Class, w) && strings.Contains(c.Reproduction, " → answered ")
	}
	var bugs []string
	for _, w := range want {
		if strings.HasPrefix(w, "bug:") {
			bugs = append(bugs, w)
		}
	}
	used := make([]bool, len(rep.Causes))
	if len(bugs) == 2 && rep.Causes[0].Reproduced && len(rep.Causes[0].Contradicted) == 0 {
		parts := strings.Split(strings.TrimPrefix(rep.Causes[0].Class, "bug:"), "+")
		if len(parts) == 2 && (("bug:"+parts[0] == bugs[0] && "bug:"+parts[1] == bugs[1]) || ("bug:"+parts[0] == bugs[1] && "bug:"+parts[1] == bugs[0])) {
			used[0] = true
			bugs = nil
		}
	}
	for _, w := range bugs {
		found := false
		for i, c := range rep.Causes {
			if !used[i] && named(c, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, w := range want {
		if !strings.HasPrefix(w, "unexplained:") {
			continue
		}
		found := false
		for i, c := range rep.Causes {
			if !used[i] && unexplained(c, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(want) == 1 && strings.HasPrefix(want[0], "unexplained:") && !unexplained(rep.Causes[0], want[0]) {
		return false // the largest group names the bug
	}
	for i, c := range rep.Causes {
		if !used[i] && (c.Reproduced || !strings.HasPrefix(c.Class, "unexplained:")) {
			return false
		}
	}
	return true
}

// equivalent reports whether want ("bug:NAME") is one of c's equivalent
// names.
func equivalent(c conformance.Cause, want string) bool {
	for _, e := range c.Equivalent {
		if "bug:"+e == want {
			return true
		}
	}
	return false
}

// Each bug of the second round comes out as point 1 of the diagnosis
// asks: caught; one cause, or two for two bugs, the larger first; a bug
// of a family named with its parameters, one outside every family
// unexplained, grouped by the deviation observed, with its smallest
// reproduction; never a cause "reproduced" under a wrong name.
func TestUnseenBugsRoundTwoComeOutRight(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range roundTwoBugs {
		t.Run(b.name, func(t *testing.T) { checkCauses(t, suite, b.name, b.want, b.fault) })
	}
}

// readAs returns a duration fault: the component comp (one of "Y", "MO",
// "D", "H", "MI", "S") of every duration read as unit each.
func readAs(comp string, unit time.Duration) fault {
	return withDurations(func(date, h, m, sec string) string {
		g := isoDuration.FindStringSubmatch(joinDuration(date, h, m, ratOf(sec)))
		total := new(big.Rat)
		for i, c := range []struct {
			name string
			unit time.Duration
		}{{"Y", 365 * 24 * time.Hour}, {"MO", 730 * time.Hour}, {"D", 24 * time.Hour}, {"H", time.Hour}, {"MI", time.Minute}, {"S", time.Second}} {
			x := ratOf(g[i+1])
			if x == nil {
				continue
			}
			u := c.unit
			if c.name == comp {
				u = unit
			}
			if c.name == "S" && comp == "S" {
				// whole seconds in the unit, the fraction still seconds
				w := new(big.Rat).SetInt(new(big.Int).Quo(x.Num(), x.Denom()))
				total.Add(total, new(big.Rat).Mul(w, big.NewRat(int64(unit), 1)))
				x.Sub(x, w)
				u = time.Second
			}
			total.Add(total, new(big.Rat).Mul(x, big.NewRat(int64(u), 1)))
		}
		secs := new(big.Rat).Quo(total, big.NewRat(1e9, 1))
		return joinDuration("P", "", "", secs)
	})
}

// Bugs drawn at random from the second round's families (a duration
// component read in another unit, a jitter formula) and from outside
// every family (the fraction of seconds read as a count of a smaller
// unit, only the first k patterns tried): the first are named with the
// drawn parameters, the second unexplained, never under a cause.
func TestRandomUnseenBugsRoundTwoComeOutRight(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(drawSeed(t), 410))
	for i := range 4 {
		var name string
		var want []string
		var f fault
		switch i {
		case 0:
			comps := []struct{ code, name string }{{"D", "days"}, {"H", "hours"}, {"MI", "minutes"}, {"S", "seconds"}}
			c := comps[rng.IntN(len(comps))]
			units := []time.Duration{0, time.Millisecond, time.Second, time.Minute, time.Hour}
			u := units[rng.IntN(len(units))]
			for u == map[string]time.Duration{"D": 24 * time.Hour, "H": time.Hour, "MI": time.Minute, "S": time.Second}[c.code] {
				u = units[rng.IntN(len(units))]
			}
			name, want = fmt.Sprintf("%s-as-%v", c.name, u), []string{fmt.Sprintf("bug:duration-unit(%s→%v)", c.name, u)}
			f = readAs(c.code, u)
		case 1:
			form := []string{"equal", "decorrelated"}[rng.IntN(2)]
			name, want = "jitter-"+form, []string{"bug:jitter-formula(" + form + ")"}
			f = onJitter(decorrelated)
			if form == "equal" {
				f = onJitter(func(s policy.Spec, _, capped int64, r float64, _ func(protocol.Request) protocol.Response, _ protocol.Request) int64 {
					return capped/2 + int64(r*float64(capped/2))
				})
			}
		case 2:
			unit := []int64{1000, 1e6}[rng.IntN(2)] // the fraction's digits as µs or ns... a count of 1/unit s
			name, want = fmt.Sprintf("fraction-as-count-of-1/%d-s", unit), []string{"unexplained:"}
			f = withDurations(func(date, h, m, sec string) string {
				whole, frac, ok := strings.Cut(sec, ".")
				if !ok {
					return joinDuration(date, h, m, ratOf(sec))
				}
				s := ratOf(whole)
				n, err := strconv.ParseInt(strings.TrimLeft(frac, "0")+"0", 10, 64)
				if err != nil {
					return joinDuration(date, h, m, ratOf(sec))
				}
				s.Add(s, big.NewRat(n/10, unit))
				return joinDuration(date, h, m, s)
			})
		case 3:
			k := 1 + rng.IntN(2)
			name, want = fmt.Sprintf("first-%d-patterns-only", k), []string{"unexplained:"}
			f = onMatch(func(patterns []string, typ string) bool {
				return specMatch(patterns[:min(k, len(patterns))], typ)
			})
		}
		t.Run(name, func(t *testing.T) { checkCauses(t, suite, name, want, f) })
	}
}

// With the statistical jitter check on, a bug of delays is still one
// cause: the check's own draws join the cause of the delays (a model that
// does not draw fits draws that are all its one multiplier), or the
// largest unexplained group of delays, not a "jitter-distribution" or
// "wrong-delay" cause of their own.
func TestJitterCheckJoinsTheDelaysCause(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]fault{}
	for _, b := range unseenBugs {
		byName[b.name] = b.fault
	}
	for _, b := range roundTwoBugs {
		byName[b.name] = b.fault
	}
	for _, tc := range []struct{ name, want string }{
		{"jitter-never", "bug:jitter-ignored(never)"},
		{"jitter-drawn-once", "unexplained:delay-differs"},
		{"full-jitter-whole-seconds", "unexplained:delay-differs"},
		{"zero-delay-attempt-1", "unexplained:delay-zero"},
		{"additive-jitter-initial", "unexplained:delay-differs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := conformance.NewRunner(suite, conformance.WithJitterSamples(2000)).Run(context.Background(), planted{byName[tc.name]})
			if len(rep.Causes) != 1 || rep.Causes[0].Class != tc.want || !slices.Contains(rep.Causes[0].IDs, conformance.JitterCheckID) {
				t.Errorf("causes %s, want %s alone, holding %s", causes(rep), tc.want, conformance.JitterCheckID)
			}
		})
	}
}
