package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The mutation check: deliberately broken variants of the reference, each
// reproducing one failure class that real implementations have, must be
// caught by the suite, and caught as failures of the right requirements
// only. Each mutant wraps the reference and changes one behaviour.

// mutant is an Implementation that answers with the reference except where
// change returns ok.
type mutant struct {
	name   string
	change func(req protocol.Request) (protocol.Response, bool)
}

func (m mutant) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation = "mutant-" + m.name
	return h, err
}

func (m mutant) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if resp, ok := m.change(req); ok {
		resp.ID = req.ID
		return resp, nil
	}
	return conformance.Reference().Do(ctx, req)
}

func ref(req protocol.Request) protocol.Response {
	resp, _ := conformance.Reference().Do(context.Background(), req)
	return resp
}

func delayResp(d int64) protocol.Response { return protocol.Response{DelayNS: &d} }

func randOf(req protocol.Request) float64 {
	if req.Rand != nil {
		return *req.Rand
	}
	return 0.5
}

// policyObject decodes a request's policy as a JSON object; ok is false for
// an absent policy, null, or anything that is not an object.
func policyObject(req protocol.Request) (map[string]json.RawMessage, bool) {
	if req.Policy == nil {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req.Policy, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// noPostJitterCap caps before jitter only (RET-06, RK-05).
func noPostJitterCap(req protocol.Request) (protocol.Response, bool) {
	if req.Op != protocol.OpDelay && req.Op != protocol.OpDecide {
		return protocol.Response{}, false
	}
	resp := ref(req)
	if resp.DelayNS == nil {
		return resp, true
	}
	p, _ := policy.Parse(req.Policy)
	if !p.Spec().Jitter {
		return resp, true
	}
	base := p.Backoff().Base(int(min(req.Attempt, math.MaxInt)))
	d := int64(math.Min(float64(base)*(0.5+randOf(req)), math.MaxInt64))
	resp.DelayNS = &d
	return resp, true
}

// zeroSpec is what an implementation without the default merge uses: the
// fields the policy gives, and Go zero values for the rest.
func zeroSpec(req protocol.Request) (policy.Spec, map[string]json.RawMessage, bool) {
	m, ok := policyObject(req)
	if !ok {
		return policy.Spec{}, nil, false
	}
	p, err := policy.Parse(req.Policy)
	if err != nil {
		return policy.Spec{}, nil, false
	}
	s := p.Spec()
	if _, ok := m["max_attempts"]; !ok {
		s.MaxAttempts = 0
	}
	if _, ok := m["initial_interval"]; !ok {
		s.InitialInterval = 0
	}
	if _, ok := m["backoff_coefficient"]; !ok {
		s.BackoffCoefficient = 0
	}
	if _, ok := m["max_interval"]; !ok {
		s.MaxInterval = 0
	}
	if _, ok := m["jitter"]; !ok {
		s.Jitter = false
	}
	return s, m, true
}

// naiveDelay computes a delay from a possibly invalid spec without the
// reference's validation: float math, cap, jitter, cap.
func naiveDelay(s policy.Spec, n int64, r float64) int64 {
	if b, err := backoff.New(backoff.Config{Strategy: s.Strategy, Initial: s.InitialInterval,
		Coefficient: s.BackoffCoefficient, Max: s.MaxInterval, Jitter: s.Jitter}); err == nil {
		return int64(b.DelayAt(int(min(n, math.MaxInt)), r))
	}
	i, c, nf := float64(s.InitialInterval), s.BackoffCoefficient, float64(n)
	raw := i
	switch s.Strategy {
	case backoff.Linear:
		raw = i * nf
	case backoff.Exponential:
		raw = i * math.Pow(c, nf-1)
	case backoff.Polynomial:
		raw = i * math.Pow(nf, c)
	}
	if math.IsNaN(raw) {
		raw = 0
	}
	d := math.Min(raw, float64(s.MaxInterval))
	if s.Jitter {
		d = math.Min(math.Trunc(d*(0.5+r)), float64(s.MaxInterval))
	}
	return int64(math.Max(d, 0))
}

func naiveDecide(s policy.Spec, req protocol.Request) protocol.Response {
	var code, typ string
	if req.Error != nil {
		code, typ = req.Error.Code, req.Error.Type
	}
	switch code {
	case "DISCARD", "FAIL":
		return protocol.Response{Action: "discard"}
	case "DEAD_LETTER":
		return protocol.Response{Action: "dead_letter"}
	}
	m, _ := errmatch.Compile(s.NonRetryableErrors)
	if m.Match(typ) || req.Attempt >= int64(max(s.MaxAttempts, 1)) {
		if s.OnExhaustion == policy.DeadLetter {
			return protocol.Response{Action: "dead_letter"}
		}
		return protocol.Response{Action: "discard"}
	}
	d := naiveDelay(s, req.Attempt, randOf(req))
	return protocol.Response{Action: "retry", DelayNS: &d}
}

// effectiveOf writes s as an effective policy without validating it.
func effectiveOf(s policy.Spec, onExhaustion string) json.RawMessage {
	nre := s.NonRetryableErrors
	if nre == nil {
		nre = []string{}
	}
	b, _ := json.Marshal(map[string]any{
		"max_attempts": s.MaxAttempts, "initial_interval": policy.FormatDuration(s.InitialInterval),
		"backoff_coefficient": s.BackoffCoefficient, "max_interval": policy.FormatDuration(s.MaxInterval),
		"jitter": s.Jitter, "non_retryable_errors": nre, "on_exhaustion": onExhaustion,
		"backoff_strategy": s.Strategy.String(),
	})
	return b
}

// noDefaultMerge applies the defaults only to an absent policy; a given
// policy's missing fields take zero values (RET-10).
func noDefaultMerge(req protocol.Request) (protocol.Response, bool) {
	switch req.Op {
	case protocol.OpValidate, protocol.OpDelay, protocol.OpDecide:
	default:
		return protocol.Response{}, false
	}
	s, m, ok := zeroSpec(req)
	if !ok || req.Attempt < 1 && req.Op != protocol.OpValidate {
		return protocol.Response{}, false
	}
	if req.Error != nil {
		if _, err := errmatch.ParseCode(req.Error.Code); err != nil {
			return protocol.Response{}, false
		}
	}
	switch req.Op {
	case protocol.OpValidate:
		onEx := s.OnExhaustion.String()
		if _, ok := m["on_exhaustion"]; !ok {
			onEx = ""
		}
		return protocol.Response{Effective: effectiveOf(s, onEx)}, true
	case protocol.OpDelay:
		return delayResp(naiveDelay(s, req.Attempt, randOf(req))), true
	}
	return naiveDecide(s, req), true
}

// regexMatch treats non_retryable_errors entries as unanchored regular
// expressions (section 6.2, RK-15).
func regexMatch(req protocol.Request) (protocol.Response, bool) {
	re := func(patterns []string, typ string) bool {
		for _, p := range patterns {
			if ok, err := regexp.MatchString(p, typ); err == nil && ok {
				return true
			}
		}
		return false
	}
	switch req.Op {
	case protocol.OpMatch:
		if resp := ref(req); resp.Error != nil {
			// Keep the reference's rejection of empty entries; a pattern
			// that is not a valid regexp is rejected too.
			for _, p := range req.Patterns {
				if p == "" {
					return resp, true
				}
			}
		}
		for _, p := range req.Patterns {
			if _, err := regexp.Compile(p); err != nil || p == "" {
				return protocol.Response{Error: &protocol.ErrorResult{Type: protocol.ErrorPatternInvalid, Message: "bad regexp " + p}}, true
			}
		}
		ok := re(req.Patterns, req.ErrorType)
		return protocol.Response{Match: &ok}, true
	case protocol.OpDecide:
		p, err := policy.Parse(req.Policy)
		if err != nil || req.Error == nil || req.Attempt < 1 {
			return protocol.Response{}, false
		}
		s := p.Spec()
		if _, err := errmatch.ParseCode(req.Error.Code); err != nil {
			return protocol.Response{}, false
		}
		refMatch := p.Matcher().Match(req.Error.Type)
		if re(s.NonRetryableErrors, req.Error.Type) == refMatch {
			return protocol.Response{}, false
		}
		if refMatch {
			s.NonRetryableErrors = nil
		} else {
			s.NonRetryableErrors = []string{req.Error.Type}
		}
		return naiveDecide(s, req), true
	}
	return protocol.Response{}, false
}

var lenientRE = regexp.MustCompile(`^(P?T?|P.*T)$`)

// lenientDuration accepts "", "P", "PT" and a trailing "T" as zero (or as
// the value before the T), and a zero initial_interval (RET-19, RK-12).
func lenientDuration(req protocol.Request) (protocol.Response, bool) {
	parse := func(s string) (time.Duration, bool) {
		if d, err := policy.ParseDuration(s); err == nil {
			return d, true
		}
		if !lenientRE.MatchString(s) {
			return 0, false
		}
		t := strings.TrimSuffix(strings.TrimSuffix(s, "T"), "P")
		if t == "" || t == "P" {
			return 0, true
		}
		d, err := policy.ParseDuration(t)
		return d, err == nil
	}
	switch req.Op {
	case protocol.OpParseDuration:
		d, ok := parse(req.Value)
		if !ok {
			return protocol.Response{}, false
		}
		ns := int64(d)
		return protocol.Response{NS: &ns}, true
	case protocol.OpValidate, protocol.OpDelay, protocol.OpDecide:
	default:
		return protocol.Response{}, false
	}
	m, ok := policyObject(req)
	if !ok {
		return protocol.Response{}, false
	}
	real := map[string]time.Duration{}
	for _, k := range []string{"initial_interval", "max_interval"} {
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			continue
		}
		d, ok := parse(s)
		if !ok {
			return protocol.Response{}, false
		}
		real[k] = d
		m[k], _ = json.Marshal("PT1S")
	}
	if len(real) == 0 {
		return protocol.Response{}, false
	}
	patched := req
	patched.Policy, _ = json.Marshal(m)
	p, err := policy.Parse(patched.Policy)
	if err != nil {
		return protocol.Response{}, false
	}
	s := p.Spec()
	if d, ok := real["initial_interval"]; ok {
		s.InitialInterval = d
	}
	if d, ok := real["max_interval"]; ok {
		s.MaxInterval = d
	}
	if s.InitialInterval > 0 && s.MaxInterval >= s.InitialInterval {
		return protocol.Response{}, false // nothing lenient about it
	}
	if s.MaxInterval < s.InitialInterval {
		return ref(req), true // still rejected: max below initial
	}
	switch req.Op {
	case protocol.OpValidate:
		return protocol.Response{Effective: effectiveOf(s, s.OnExhaustion.String())}, true
	case protocol.OpDelay:
		if req.Attempt < 1 {
			return protocol.Response{}, false
		}
		return delayResp(naiveDelay(s, req.Attempt, randOf(req))), true
	}
	if req.Attempt < 1 || req.Error == nil {
		return protocol.Response{}, false
	}
	if _, err := errmatch.ParseCode(req.Error.Code); err != nil {
		return protocol.Response{}, false
	}
	return naiveDecide(s, req), true
}

// wrapMul multiplies in two's complement, wrapping like unchecked int64.
func wrapMul(a, b int64) int64 { return int64(uint64(a) * uint64(b)) }

func wrapPow(base int64, e uint64) int64 {
	r := int64(1)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = wrapMul(r, base)
		}
		base = wrapMul(base, base)
	}
	return r
}

// accuratePow is c^e as the reference computes it for a fractional
// coefficient (math.Pow up to e = 64, exp(e·ln c) beyond, where math.Pow's
// error grows with e), so that this mutant differs from the reference only
// by its overflow, not by the float inaccuracy delay-0195 pins.
func accuratePow(c float64, e int64) float64 {
	if e <= 64 {
		return math.Pow(c, float64(e))
	}
	return math.Exp(float64(e) * math.Log1p(c-1))
}

// accuratePoly is x^c for a fractional c as the reference computes it:
// x^⌊c⌋ times x^(c−⌊c⌋), a square root for a half (64^1.5 is exactly 512),
// so that this mutant differs from the reference only by its overflow.
func accuratePoly(x, c float64) float64 {
	k := math.Floor(c)
	f := math.Sqrt(x)
	if c-k != 0.5 {
		f = math.Pow(x, c-k)
	}
	return math.Pow(x, k) * f
}

// f2i converts like an x86 CVTTSD2SI: out of range gives MinInt64.
func f2i(f float64) int64 {
	if math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return math.MinInt64
	}
	return int64(f)
}

// overflow computes raw delays in unchecked int64 arithmetic, so that large
// attempts wrap around before the cap (RK-17).
func overflow(req protocol.Request) (protocol.Response, bool) {
	if req.Op != protocol.OpDelay && req.Op != protocol.OpDecide {
		return protocol.Response{}, false
	}
	resp := ref(req)
	if resp.DelayNS == nil {
		return resp, true
	}
	p, _ := policy.Parse(req.Policy)
	s := p.Spec()
	n, i, c := req.Attempt, int64(s.InitialInterval), s.BackoffCoefficient
	var raw int64
	intC := c == math.Trunc(c) && c < 0x1p62
	switch s.Strategy {
	case backoff.None:
		raw = i
	case backoff.Linear:
		raw = wrapMul(i, n)
	case backoff.Exponential:
		if intC {
			raw = wrapMul(i, wrapPow(int64(c), uint64(n-1)))
		} else {
			raw = f2i(float64(i) * accuratePow(c, n-1))
		}
	case backoff.Polynomial:
		if intC {
			raw = wrapMul(i, wrapPow(n, uint64(c)))
		} else {
			raw = f2i(float64(i) * accuratePoly(float64(n), c))
		}
	}
	d := min(raw, int64(s.MaxInterval))
	if s.Jitter {
		d = min(f2i(float64(d)*(0.5+randOf(req))), int64(s.MaxInterval))
	}
	resp.DelayNS = &d
	return resp, true
}

// strategyField ignores backoff_strategy: the strategy is always exponential
// (RK-01).
func strategyField(req protocol.Request) (protocol.Response, bool) {
	m, ok := policyObject(req)
	if !ok {
		return protocol.Response{}, false
	}
	if _, ok := m["backoff_strategy"]; !ok {
		return protocol.Response{}, false
	}
	delete(m, "backoff_strategy")
	patched := req
	patched.Policy, _ = json.Marshal(m)
	return ref(patched), true
}

func TestMutations(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Vectors the reference itself fails are reported by TestReferencePasses;
	// they say nothing about a mutant.
	baseline := map[string]bool{}
	for _, r := range conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), conformance.Reference()).Results {
		if r.Status != conformance.StatusPass {
			baseline[r.ID] = true
		}
	}
	const (
		duration = "duration"
		validate = "validate"
		delay    = "delay"
		match    = "match"
		decide   = "decide"
	)
	cases := []struct {
		name   string
		change func(protocol.Request) (protocol.Response, bool)
		// class is the failure-class flag whose vectors must catch the
		// mutant (at least 3 of them fail).
		class string
		// reqs is exactly the set of requirements with failures: the ones
		// the mutant breaks, and nothing else.
		reqs []string
		// kinds are the only vector kinds whose op the mutation changes:
		// failures of any other kind mean the suite blames the wrong thing.
		kinds []string
		// blamed reports whether a failing vector is one the mutation can
		// legitimately fail; nil means "carries the class flag".
		blamed func(v *conformance.Vector) bool
	}{
		{"no-post-jitter-cap", noPostJitterCap, "class:post-jitter-cap",
			[]string{"RET-01", "RET-06", "RK-05", "RK-17"}, []string{delay, decide},
			// At D = 2^63-1 ns the uncapped jittered delay no longer fits
			// an int64: an overflow vector catches that.
			flagged("class:post-jitter-cap", "class:overflow")},
		{"no-default-merge", noDefaultMerge, "class:default-merge",
			[]string{"RET-01", "RET-02", "RET-04", "RET-05", "RET-06", "RET-07", "RET-08", "RET-09", "RET-10", "RET-17",
				"RK-01", "RK-04", "RK-05", "RK-07", "RK-10", "RK-11", "RK-12", "RK-13", "RK-14", "RK-15", "RK-16", "RK-17", "RK-23"},
			[]string{validate, delay, decide},
			// Most vectors use partial policies, so failures spread over
			// many requirements; each must at least give a policy object
			// that leaves a field to the defaults.
			partialPolicy},
		{"regex-match", regexMatch, "class:regex-match",
			[]string{"RET-07", "RET-18", "RK-15"}, []string{match, decide}, nil},
		{"lenient-duration", lenientDuration, "class:lenient-duration",
			[]string{"RET-16", "RET-19", "RK-09", "RK-11", "RK-12"}, []string{duration, validate, delay, decide}, nil},
		{"overflow", overflow, "class:overflow",
			[]string{"RET-04", "RK-10", "RK-17"}, []string{delay, decide}, nil},
		{"strategy-field", strategyField, "class:strategy-field",
			[]string{"RET-04", "RK-01", "RK-05", "RK-08", "RK-09", "RK-14", "RK-17", "RK-23"}, []string{validate, delay, decide}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), mutant{tc.name, tc.change})
			if rep.Totals.Error != 0 {
				t.Errorf("mutant produced %d errors; a wrong answer must be a failure, not an error", rep.Totals.Error)
			}
			blamed := tc.blamed
			if blamed == nil {
				blamed = flagged(tc.class)
			}
			byReq := map[string][]string{}
			flaggedFails := 0
			kindOK := map[string]bool{}
			for _, k := range tc.kinds {
				kindOK[k] = true
			}
			for _, r := range rep.Filter(conformance.StatusFail) {
				if baseline[r.ID] {
					continue
				}
				v := suite.Vector(r.ID)
				byReq[r.Requirement] = append(byReq[r.Requirement], r.ID)
				if !kindOK[r.Kind] {
					t.Errorf("%s (%s, kind %s) fails, but the mutant does not change op %s", r.ID, r.Requirement, r.Kind, conformance.OpFor(r.Kind))
				}
				if !blamed(v) {
					t.Errorf("%s (%s, flags %v) fails, but is not a vector of the mutant's failure class: %s", r.ID, r.Requirement, r.Flags, r.Reason)
				}
				if v.HasFlag(tc.class) {
					flaggedFails++
				}
			}
			got := make([]string, 0, len(byReq))
			for r := range byReq {
				got = append(got, r)
			}
			sort.Strings(got)
			want := append([]string(nil), tc.reqs...)
			sort.Strings(want)
			t.Logf("%d vectors flagged %s fail; failing requirements: %v", flaggedFails, tc.class, got)
			if flaggedFails < 3 {
				t.Errorf("only %d vectors flagged %s catch the mutant, want at least 3", flaggedFails, tc.class)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("failing requirements\n got %v\nwant %v", got, want)
			}
			// The report names the mutant's failure class as a cause,
			// explained by the note of the vector files, before anything
			// else.
			var causes []string
			for _, c := range rep.Causes {
				causes = append(causes, fmt.Sprintf("%s×%d", c.Class, len(c.IDs)))
			}
			t.Logf("causes: %v", causes)
			// The leading cause is the bug model that reproduces the
			// mutant exactly, contradicted by no pass (package diagnose):
			// an unanchored regular expression is the fitted family
			// loosened-match, and the lenient grammar here also accepts
			// PT0S as initial_interval, which is named on its own. For a
			// mutant no model reproduces, the observed deviation: the
			// overflow's wrapped delays come out as 0 or negative.
			lead := map[string]string{"no-post-jitter-cap": "bug:no-post-jitter-cap", "no-default-merge": "bug:no-defaults-merge",
				"regex-match": "bug:loosened-match(regex-search)", "lenient-duration": "bug:zero-initial-interval-accepted",
				"strategy-field": "bug:strategy-field-ignored", "overflow": "unexplained:delay-zero"}[tc.name]
			if len(rep.Causes) == 0 || rep.Causes[0].Class != lead || strings.Contains(rep.Causes[0].Explanation, "no note") {
				t.Errorf("leading cause is not %s: %v", lead, causes)
			}
		})
	}
}

// flagged returns a predicate true for vectors carrying any of flags.
func flagged(flags ...string) func(*conformance.Vector) bool {
	return func(v *conformance.Vector) bool {
		for _, f := range flags {
			if v.HasFlag(f) {
				return true
			}
		}
		return false
	}
}

// partialPolicy reports whether v's policy is a JSON object that leaves at
// least one of the seven spec fields to the defaults: the only vectors an
// implementation without the default merge can get wrong.
func partialPolicy(v *conformance.Vector) bool {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v.Request().Policy, &m); err != nil || m == nil {
		return false
	}
	for _, k := range []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval",
		"jitter", "non_retryable_errors", "on_exhaustion"} {
		if _, ok := m[k]; !ok {
			return true
		}
	}
	return false
}
