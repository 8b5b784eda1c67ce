package policytest_test

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/policytest"
	"pgregory.net/rapid"
)

func TestValidDurationParses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := policytest.ValidDuration().Draw(t, "d")
		if _, err := policy.ParseDuration(s); err != nil {
			t.Fatalf("ValidDuration gave %q: %v", s, err)
		}
	})
}

// census draws n values from g (fixed seeds) and counts those for which
// each predicate holds.
func census[V any](g *rapid.Generator[V], n int, preds map[string]func(V) bool) map[string]int {
	got := map[string]int{}
	for seed := range n {
		v := g.Example(seed)
		for name, p := range preds {
			if p(v) {
				got[name]++
			}
		}
	}
	return got
}

// atLeast fails for every predicate that held fewer than min times.
func atLeast(t *testing.T, got map[string]int, names []string, min int) {
	t.Helper()
	for _, n := range names {
		if got[n] < min {
			t.Errorf("%s: %d of the sample, want at least %d", n, got[n], min)
		}
	}
}

func TestDurationEdges(t *testing.T) {
	valid := func(s string) bool { _, err := policy.ParseDuration(s); return err == nil }
	preds := map[string]func(string) bool{
		"valid":         valid,
		"invalid":       func(s string) bool { return !valid(s) },
		"date":          func(s string) bool { return valid(s) && strings.ContainsAny(strings.SplitN(s, "T", 2)[0], "YMD") },
		"10+ fraction":  func(s string) bool { _, f, ok := strings.Cut(s, "."); return ok && len(f) >= 11 && valid(s) },
		"leading zero":  func(s string) bool { return strings.Contains(s, "T0") && len(s) > 4 && s[3] >= '0' && s[3] <= '9' },
		"lower case":    func(s string) bool { return strings.ContainsAny(s, "ptshmd") },
		"white space":   func(s string) bool { return strings.ContainsAny(s, " \t\n\u00a0") },
		"non-ASCII":     func(s string) bool { return strings.ContainsFunc(s, func(r rune) bool { return r > 127 }) },
		"overflow":      func(s string) bool { return !valid(s) && strings.Contains(s, "9999999999") },
		"largest value": func(s string) bool { return s == "PT2562047H47M16.854775807S" },
	}
	got := census(policytest.Duration(), 5000, preds)
	atLeast(t, got, []string{"valid", "invalid", "date", "10+ fraction", "leading zero", "lower case", "white space", "non-ASCII", "overflow", "largest value"}, 5)
	if got["valid"] < 1500 || got["invalid"] < 1000 {
		t.Errorf("valid %d, invalid %d of 5000: want both well represented", got["valid"], got["invalid"])
	}
}

func TestSpecRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := policytest.Spec().Draw(t, "spec")
		p, err := policy.New(s)
		if err != nil {
			t.Fatalf("Spec gave an invalid spec: %v", err)
		}
		raw := policytest.SpecJSON(s, func(string) bool { return rapid.Bool().Draw(t, "keep") })
		q, err := policy.Parse(raw)
		if err != nil {
			t.Fatalf("SpecJSON gave %s: %v", raw, err)
		}
		if !p.Equal(q) {
			t.Fatalf("SpecJSON(%+v) = %s parses to %+v", s, raw, q.Spec())
		}
	})
}

func TestValidPolicyParses(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := policytest.ValidPolicy().Draw(t, "policy")
		if _, err := policy.Parse(raw); err != nil {
			t.Fatalf("ValidPolicy gave %s: %v", raw, err)
		}
	})
}

func TestPolicyEdges(t *testing.T) {
	parse := func(raw json.RawMessage) error { _, err := policy.Parse(raw); return err }
	field := func(name string) func(json.RawMessage) bool {
		return func(raw json.RawMessage) bool {
			var ve *policy.ValidationError
			if err := parse(raw); err != nil && errorsAs(err, &ve) {
				for _, fe := range ve.Errors {
					if strings.HasPrefix(fe.Field, name) {
						return true
					}
				}
			}
			return false
		}
	}
	preds := map[string]func(json.RawMessage) bool{
		"json":  func(raw json.RawMessage) bool { return json.Valid(raw) },
		"valid": func(raw json.RawMessage) bool { return parse(raw) == nil },
		"empty": func(raw json.RawMessage) bool { return string(raw) == "{}" },
		"unknown key": func(raw json.RawMessage) bool {
			e := parse(raw)
			return e != nil && strings.Contains(e.Error(), "unknown")
		},
		"duplicate": func(raw json.RawMessage) bool {
			e := parse(raw)
			return e != nil && strings.Contains(e.Error(), "duplicate key")
		},
		"not object": func(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] != '{' && string(raw) != "null" },
	}
	for _, f := range []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval", "jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy"} {
		preds["bad "+f] = field(f)
	}
	const n = 5000
	got := census(policytest.Policy(), n, preds)
	if got["json"] != n {
		t.Errorf("%d of %d documents are valid JSON text, want all", got["json"], n)
	}
	names := []string{"valid", "empty", "not object", "unknown key", "duplicate"}
	for name := range preds {
		if strings.HasPrefix(name, "bad ") {
			names = append(names, name)
		}
	}
	atLeast(t, got, names, 10)
	t.Logf("census of %d documents: %v", n, got)
}

func errorsAs(err error, target **policy.ValidationError) bool {
	ve, ok := err.(*policy.ValidationError)
	if ok {
		*target = ve
	}
	return ok
}

func TestAttemptAndDrawRanges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if a := policytest.Attempt().Draw(t, "a"); a < 1 {
			t.Fatalf("Attempt gave %d", a)
		}
		if r := policytest.JitterDraw().Draw(t, "r"); !(r >= 0 && r < 1) {
			t.Fatalf("JitterDraw gave %v", r)
		}
	})
	att := census(policytest.Attempt(), 3000, map[string]func(int64) bool{
		"1":         func(a int64) bool { return a == 1 },
		"2^31":      func(a int64) bool { return a == 1<<31 },
		"max":       func(a int64) bool { return a == math.MaxInt64 },
		"over 2^53": func(a int64) bool { return a > 1<<53 },
	})
	atLeast(t, att, []string{"1", "2^31", "max", "over 2^53"}, 2)
	r := census(policytest.JitterDraw(), 3000, map[string]func(float64) bool{
		"0":        func(r float64) bool { return r == 0 },
		"top":      func(r float64) bool { return r == math.Nextafter(1, 0) },
		"tiny":     func(r float64) bool { return r > 0 && r < 1e-15 },
		"ordinary": func(r float64) bool { return r > 0.01 && r < 0.99 },
	})
	atLeast(t, r, []string{"0", "top", "tiny", "ordinary"}, 5)
}

func TestAttemptAroundHitsTheEdges(t *testing.T) {
	s := policy.DefaultSpec() // cap crossing at attempt 10 (2^9 s > 300 s), max_attempts 3
	got := census(policytest.AttemptAround(s), 2000, map[string]func(int64) bool{
		"9": func(a int64) bool { return a == 9 }, "10": func(a int64) bool { return a == 10 }, "11": func(a int64) bool { return a == 11 },
		"2": func(a int64) bool { return a == 2 }, "3": func(a int64) bool { return a == 3 }, "4": func(a int64) bool { return a == 4 },
	})
	atLeast(t, got, []string{"2", "3", "4", "9", "10", "11"}, 20)
}

func TestPatternsAndTypes(t *testing.T) {
	compiles := func(ps []string) bool { _, err := errmatch.Compile(ps); return err == nil }
	got := census(policytest.Patterns(), 3000, map[string]func([]string) bool{
		"empty":   func(ps []string) bool { return len(ps) == 0 },
		"four":    func(ps []string) bool { return len(ps) == 4 },
		"invalid": func(ps []string) bool { return !compiles(ps) },
		"prefix 3 dots": func(ps []string) bool {
			for _, p := range ps {
				if strings.HasSuffix(p, ".*") && strings.Count(p, ".") == 4 {
					return true
				}
			}
			return false
		},
		"glob": func(ps []string) bool {
			for _, p := range ps {
				if p == "auth*" || p == "*" {
					return true
				}
			}
			return false
		},
	})
	atLeast(t, got, []string{"empty", "four", "invalid", "prefix 3 dots", "glob"}, 10)

	// Types derived from a list hit matches and near misses.
	ps := []string{"auth.*", "io.timeout"}
	m, _ := errmatch.Compile(ps)
	types := census(policytest.ErrorTypeFor(ps), 2000, map[string]func(string) bool{
		"match":     m.Match,
		"no match":  func(s string) bool { return !m.Match(s) },
		"bare stem": func(s string) bool { return s == "auth" },
		"stem dot":  func(s string) bool { return s == "auth." },
		"case":      func(s string) bool { return s == "Auth.*" || s == "Io.timeout" },
		"deeper":    func(s string) bool { return strings.HasPrefix(s, "auth.") && strings.Count(s, ".") >= 2 },
	})
	atLeast(t, types, []string{"match", "no match", "bare stem", "stem dot", "case", "deeper"}, 10)
}

// TestRequestWireRoundTrip: what the adapter reads is what the reference
// judged: every generated request survives the protocol encoding.
func TestRequestWireRoundTrip(t *testing.T) {
	for _, op := range policytest.Ops() {
		t.Run(op, rapid.MakeCheck(func(t *rapid.T) {
			req := policytest.Request(op).Draw(t, "req")
			req.ID = 7
			line := req.AppendJSON(nil)
			var back protocol.Request
			if err := back.UnmarshalJSON(line); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if diff := cmp.Diff(normalize(req), normalize(back)); diff != "" {
				t.Fatalf("%s (-sent +read):\n%s", line, diff)
			}
		}))
	}
}

func normalize(r protocol.Request) protocol.Request {
	if len(r.Patterns) == 0 {
		r.Patterns = nil
	}
	if r.Policy != nil {
		var v any
		_ = json.Unmarshal(r.Policy, &v)
		r.Policy, _ = json.Marshal(v)
	}
	return r
}

func TestRequestPanicsForUnknownOp(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Request(\"hello\") did not panic")
		}
	}()
	policytest.Request("hello")
}

// opaque is the reference with opaque jitter: it ignores rand and draws
// its own.
type opaque struct{}

func (opaque) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Jitter = protocol.JitterOpaque
	return h, err
}

func (opaque) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	req.Rand = nil
	return conformance.Reference().Do(ctx, req)
}

// changed is the reference with one answer changed by f.
type changed struct {
	f func(req protocol.Request, resp *protocol.Response)
}

func (c changed) Hello(ctx context.Context) (protocol.Hello, error) {
	return conformance.Reference().Hello(ctx)
}

func (c changed) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	resp, err := conformance.Reference().Do(ctx, req)
	c.f(req, &resp)
	return resp, err
}

// failing runs prop and reports whether rapid found a counterexample.
func failing(prop func(*rapid.T)) bool {
	for name, v := range map[string]string{
		"rapid.nofailfile": "true", // the failures are expected: no fail files
		"rapid.checks":     "3000", // enough that a bug hit once in 100 cases is found every time
	} {
		prev := flag.Lookup(name).Value.String()
		_ = flag.Set(name, v)
		defer flag.Set(name, prev)
	}
	tb := &printTB{}
	rapid.Check(tb, prop)
	return tb.failed
}

func TestPropertiesHoldForTheReference(t *testing.T) {
	for _, impl := range []protocol.Implementation{conformance.Reference(), opaque{}} {
		t.Run("bounds", rapid.MakeCheck(policytest.WithinBounds(impl)))
		t.Run("cap", rapid.MakeCheck(policytest.CapAfterJitter(impl)))
		t.Run("monotone", rapid.MakeCheck(policytest.Monotone(impl)))
		t.Run("exhausts", rapid.MakeCheck(policytest.Exhausts(impl)))
		t.Run("differential", rapid.MakeCheck(policytest.Differential(impl)))
	}
}

func TestPropertiesCatchBugs(t *testing.T) {
	delayOf := func(req protocol.Request, resp *protocol.Response, f func(p *policy.Policy, d int64) int64) {
		if resp.DelayNS == nil || resp.Error != nil {
			return
		}
		p, err := policy.Parse(req.Policy)
		if err != nil {
			return
		}
		d := f(p, *resp.DelayNS)
		resp.DelayNS = &d
	}
	r := func(req protocol.Request) float64 {
		if req.Rand == nil {
			return 0.5
		}
		return *req.Rand
	}
	noPostCap := changed{func(req protocol.Request, resp *protocol.Response) {
		delayOf(req, resp, func(p *policy.Policy, d int64) int64 {
			if !p.Spec().Jitter {
				return d
			}
			return int64(min(float64(p.Backoff().Base(int(req.Attempt)))*(0.5+r(req)), math.MaxInt64))
		})
	}}
	decreasing := changed{func(req protocol.Request, resp *protocol.Response) {
		delayOf(req, resp, func(p *policy.Policy, d int64) int64 {
			if req.Attempt%2 == 0 {
				return d / 2
			}
			return d
		})
	}}
	doubled := changed{func(req protocol.Request, resp *protocol.Response) {
		delayOf(req, resp, func(p *policy.Policy, d int64) int64 { return d + d/2 + 1 })
	}}
	offByOne := changed{func(req protocol.Request, resp *protocol.Response) {
		p, err := policy.Parse(req.Policy)
		if req.Op == protocol.OpDecide && err == nil && req.Attempt == int64(max(p.Spec().MaxAttempts, 1)) && resp.Action != "retry" &&
			(req.Error.Code == "" || req.Error.Code == "RETRY") && !p.Matcher().Match(req.Error.Type) {
			d := int64(p.Backoff().Base(int(req.Attempt)))
			resp.Action, resp.DelayNS = "retry", &d
		}
	}}
	for name, c := range map[string]struct {
		prop func(*rapid.T)
	}{
		"CapAfterJitter/no post-jitter cap": {policytest.CapAfterJitter(noPostCap)},
		"Monotone/halved on even attempts":  {policytest.Monotone(decreasing)},
		"WithinBounds/half as long again":   {policytest.WithinBounds(doubled)},
		"Exhausts/one attempt too many":     {policytest.Exhausts(offByOne)},
		"Differential/one attempt too many": {policytest.Differential(offByOne, protocol.OpDecide)},
	} {
		if !failing(c.prop) {
			t.Errorf("%s: the property did not fail", name)
		}
	}
}

func TestFlags(t *testing.T) {
	r := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		req  protocol.Request
		want []string
	}{
		{protocol.Request{Op: protocol.OpParseDuration, Value: "PT1S"}, nil},
		{protocol.Request{Op: protocol.OpParseDuration, Value: "P1M"}, []string{"should:date-components"}},
		{protocol.Request{Op: protocol.OpParseDuration, Value: "PT1M"}, nil},
		{protocol.Request{Op: protocol.OpValidate, Policy: []byte(`{"backoff_strategy":"polynomial"}`)}, []string{"extension:backoff_strategy"}},
		{protocol.Request{Op: protocol.OpMatch, Patterns: []string{"a", "b.*"}}, []string{"should:prefix-match"}},
		{protocol.Request{Op: protocol.OpValidate, Policy: []byte(`{"initial_interval":"P1D","backoff_strategy":"none"}`)},
			[]string{"extension:backoff_strategy", "should:date-components"}},
		// Exact: 1s·(0.5+0.25), 1s·0.5; inexact: 1s·(0.5+0.1), a fractional coefficient, 2^62 ns · 0.75.
		{protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{}`), Attempt: 1, Rand: r(0.25)}, nil},
		{protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{}`), Attempt: 1, Rand: r(0)}, nil},
		{protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{}`), Attempt: 1, Rand: r(0.1)}, []string{"float-tolerance"}},
		// 228797/2^18: the product is exact in float64 (359869 ns), but the
		// wire text 0.8727912902832031 is a smaller decimal (found by fuzz
		// against the Python adapter, which reads the text exactly).
		{protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{"initial_interval":"PT0.000000001S","backoff_coefficient":4.0}`),
			Attempt: 10, Rand: r(228797.0 / (1 << 18))}, []string{"float-tolerance"}},
		{protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{"jitter":false,"backoff_coefficient":1.5}`), Attempt: 3}, []string{"float-tolerance"}},
		{protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{"jitter":false,"backoff_coefficient":3}`), Attempt: 3}, nil},
		{protocol.Request{Op: protocol.OpDecide, Policy: []byte(`{"initial_interval":"PT1152921504.606846976S","max_interval":"PT1152921504.606846976S"}`), Attempt: 1, Rand: r(0.25)},
			[]string{"float-tolerance"}},
	} {
		if got := policytest.Flags(tc.req); !cmp.Equal(got, tc.want) {
			t.Errorf("Flags(%s) = %q, want %q", tc.req.AppendJSON(nil), got, tc.want)
		}
	}
}

func TestClaimed(t *testing.T) {
	h, _ := conformance.Reference().Hello(context.Background())
	req := protocol.Request{Op: protocol.OpParseDuration, Value: "P1D"}
	if !policytest.Claimed(h, req) {
		t.Error("the reference claims every flag")
	}
	h.UnclaimedFlags = []string{"should:date-components"}
	if policytest.Claimed(h, req) {
		t.Error("a request with an unclaimed flag is claimed")
	}
	if !policytest.Claimed(h, protocol.Request{Op: protocol.OpParseDuration, Value: "PT1S"}) {
		t.Error("a request without the flag is not claimed")
	}
}

func TestDisagreementError(t *testing.T) {
	d := int64(2)
	want := int64(1)
	dis := &policytest.Disagreement{Request: protocol.Request{ID: 1, Op: protocol.OpDelay, Attempt: 1},
		Want: protocol.Response{ID: 1, DelayNS: &want}, Got: protocol.Response{ID: 1, DelayNS: &d}, Reason: "delay_ns: got 2, want 1"}
	got := dis.Error()
	for _, s := range []string{"policytest: delay: delay_ns: got 2, want 1", `sent:     {"id":1,"op":"delay","attempt":1}`,
		`expected: {"id":1,"delay_ns":1}`, `got:      {"id":1,"delay_ns":2}`} {
		if !strings.Contains(got, s) {
			t.Errorf("Error() = %q, lacks %q", got, s)
		}
	}
}
