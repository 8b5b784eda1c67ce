package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// The bugs below are those of real OJS libraries, each written here from
// what the library's source does (not from its code, and not from the
// models of package diagnose), so that the diagnosis keeps naming them by
// their true mechanism.

// structPolicy is a policy decoded into a plain struct, as a Go library
// without a merge does: an absent field keeps its zero value (max_attempts
// 0, jitter false, durations "", coefficient 0, on_exhaustion ""), and
// only the delay formula falls back to an interval of 1 s and a
// coefficient of 2; an absent max_interval is no cap. ok is false for a
// policy the reference rejects or that is not one object without repeats.
func structPolicy(raw json.RawMessage) (fields map[string]json.RawMessage, forDelay json.RawMessage, ok bool) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil, false // no policy: the library's own defaults
	}
	if _, err := conformance.Reference().Do(context.Background(), protocol.Request{Op: protocol.OpValidate, Policy: raw}); err != nil {
		return nil, nil, false
	}
	if json.Unmarshal(raw, &fields) != nil || fields == nil || len(topKeys(raw)) != len(fields) {
		return nil, nil, false
	}
	d := map[string]json.RawMessage{}
	for k, v := range fields {
		d[k] = v
	}
	fill := func(k, v string) {
		if _, ok := d[k]; !ok {
			d[k] = json.RawMessage(v)
		}
	}
	fill("initial_interval", `"PT1S"`)
	fill("backoff_coefficient", `2`)
	fill("max_interval", `"PT2562047H47M16.854775807S"`) // 2^63−1 ns: no cap
	fill("jitter", `false`)
	fill("max_attempts", `0`)
	forDelay, _ = json.Marshal(d)
	return fields, forDelay, true
}

// structLibrary answers as a library whose policy is structPolicy's; with
// noPostCap its jittered delay is not capped again after the jitter.
func structLibrary(noPostCap bool) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Profile != "" || req.Op != protocol.OpValidate && req.Op != protocol.OpDelay && req.Op != protocol.OpDecide {
			return ref(req)
		}
		fields, forDelay, ok := structPolicy(req.Policy)
		if !ok {
			return postCap(req, ref, noPostCap)
		}
		a := ref(req)
		if a.Error != nil {
			return a
		}
		if req.Op == protocol.OpValidate {
			var eff map[string]json.RawMessage
			if json.Unmarshal(a.Effective, &eff) != nil {
				return a
			}
			zero := map[string]string{"max_attempts": `0`, "initial_interval": `""`, "backoff_coefficient": `0`,
				"max_interval": `""`, "jitter": `false`, "on_exhaustion": `""`}
			for k, v := range zero {
				if _, given := fields[k]; !given {
					eff[k] = json.RawMessage(v)
				}
			}
			a.Effective, _ = json.Marshal(eff)
			return a
		}
		q := req
		q.Policy = forDelay
		return postCap(q, ref, noPostCap)
	}
}

// postCap answers req by the reference, its jittered delay (the draw
// being req's rand) not capped after the jitter when noPostCap is set.
func postCap(req protocol.Request, ref func(protocol.Request) protocol.Response, noPostCap bool) protocol.Response {
	a := ref(req)
	s, ok := specOf(req)
	if !noPostCap || !ok || !s.Jitter || req.Rand == nil || a.Error != nil || a.DelayNS == nil {
		return a
	}
	capped, ok := cappedDelay(req, ref)
	if !ok {
		return a
	}
	x := math.Floor(float64(capped) * (0.5 + *req.Rand))
	if x < 0x1p63 {
		d := int64(x)
		a.DelayNS = &d
	}
	return a
}

// opaque is the implementation of a fault whose jitter draws from its
// own source (seeded, for a test that replays): the hello says so, and
// every request gets a fresh draw.
type opaque struct {
	f   fault
	mu  *sync.Mutex
	rng *rand.Rand
}

func (o opaque) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation, h.Jitter = "opaque", protocol.JitterOpaque
	return h, err
}

func (o opaque) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	ref := func(r protocol.Request) protocol.Response {
		a, _ := conformance.Reference().Do(ctx, r)
		return a
	}
	if req.Rand == nil {
		o.mu.Lock()
		r := o.rng.Float64()
		o.mu.Unlock()
		req.Rand = &r
	}
	return o.f(req, ref), nil
}

// A Go library whose policy is a decoded struct (no merge, the delay
// formula's own fallbacks) is named no-defaults-merge-fallbacks, its
// effective policies with on_exhaustion "" included.
func TestStructDecodedPolicyIsNamed(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkOutcome(t, suite, "struct-decoded-policy", "bug:no-defaults-merge-fallbacks", structLibrary(false))
}

// With opaque jitter and two bugs behind one delay (no cap for an absent
// max_interval, no cap after the jitter), which single model a draw falls
// within is chance; a failing delay that either bug alone can fail is
// named under both, in every run.
func TestTwoBugsBehindOneDrawnDelayAreBothNamed(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	both := "bug:no-post-jitter-cap+no-defaults-merge-fallbacks"
	allowed := []string{"bug:no-defaults-merge-fallbacks", "bug:no-post-jitter-cap", both}
	seen := 0
	for run := range 4 {
		impl := opaque{structLibrary(true), &sync.Mutex{}, rand.New(rand.NewPCG(uint64(run), 7))}
		rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), impl)
		under := map[string]string{}
		for _, c := range rep.Causes {
			if !c.Reproduced || !slices.Contains(allowed, c.Class) {
				t.Errorf("run %d: cause %s×%d (reproduced %v), want only %s", run, c.Class, len(c.IDs), c.Reproduced, strings.Join(allowed, ", "))
			}
			for _, id := range c.IDs {
				under[id] = c.Class
			}
		}
		// delays of a policy without max_interval whose raw delay is above
		// the 300 s default cap: fixing one bug leaves the other failing
		for _, id := range []string{"delay-0029", "delay-0038"} {
			if cls, failed := under[id]; failed && cls != both {
				t.Errorf("run %d: %s under %s, want %s", run, id, cls, both)
			} else if failed {
				seen++
			}
		}
	}
	t.Logf("seen %d", seen)
	if seen == 0 {
		t.Error("delay-0029 and delay-0038 never failed: the test shows nothing")
	}
}

// unclaimed is the implementation of a fault that declares retrykit's
// backoff_strategy extension unclaimed and leaves the field out of its
// effective policies.
type unclaimed struct{ f fault }

func (u unclaimed) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation, h.UnclaimedFlags = "unclaimed", []string{"extension:backoff_strategy"}
	return h, err
}

func (u unclaimed) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	a := u.f(req, func(r protocol.Request) protocol.Response {
		a, _ := conformance.Reference().Do(ctx, r)
		return a
	})
	var eff map[string]json.RawMessage
	if a.Effective != nil && json.Unmarshal(a.Effective, &eff) == nil {
		delete(eff, "backoff_strategy")
		a.Effective, _ = json.Marshal(eff)
	}
	return a, nil
}

// A deviation of effective policies is named by the field whose
// difference fails the vector, not by a field the implementation
// declared unclaimed and left out: an absent on_exhaustion answered as
// "" (the decisions still discard) is effective(on_exhaustion).
func TestEffectiveDeviationNamesTheFailingField(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		var m map[string]json.RawMessage
		if req.Op != protocol.OpValidate || a.Effective == nil || len(bytes.TrimSpace(req.Policy)) > 0 &&
			(json.Unmarshal(req.Policy, &m) != nil || m["on_exhaustion"] != nil) {
			return a
		}
		var eff map[string]json.RawMessage
		if json.Unmarshal(a.Effective, &eff) == nil {
			eff["on_exhaustion"] = json.RawMessage(`""`)
			a.Effective, _ = json.Marshal(eff)
		}
		return a
	}
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), unclaimed{f})
	if rep.Totals.Fail == 0 || len(rep.Causes) != 1 || rep.Causes[0].Class != "unexplained:effective(on_exhaustion)" && rep.Causes[0].Class != `bug:wrong-default(on_exhaustion→"")` {
		t.Errorf("%d failures, causes %s, want unexplained:effective(on_exhaustion) alone", rep.Totals.Fail, causes(rep))
	}
}

// unvalidated answers as a library that validates no policy: the
// effective policy is the defaults overlaid with every key given, as a
// dynamic language's JSON reader holds it (wrong types, unknown keys and
// out-of-range values kept, the last of repeated keys), and a delay is
// computed from what can be read (a value of the wrong type or a
// duration that does not parse leaves the default). A policy that is not
// an object is refused, as a typed parameter refuses it.
func unvalidated(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
	a := ref(req)
	if a.Error == nil || req.Profile != "" || req.Op != protocol.OpValidate && req.Op != protocol.OpDelay && req.Op != protocol.OpDecide ||
		req.Op == protocol.OpDecide && req.Error != nil && req.Error.Code != "" {
		return a
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(req.Policy))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return a
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			// a double, as JSON.parse reads it; JSON.stringify writes a
			// non-finite one as null
			f, _ := strconv.ParseFloat(string(n), 64)
			m[k] = f
			if math.IsInf(f, 0) {
				m[k] = nil
			}
		}
	}
	if req.Op == protocol.OpValidate {
		d := ref(protocol.Request{ID: req.ID, Op: protocol.OpValidate})
		var eff map[string]any
		if json.Unmarshal(d.Effective, &eff) != nil {
			return a
		}
		for k, v := range m {
			eff[k] = v
		}
		raw, err := json.Marshal(eff)
		if err != nil {
			return a
		}
		return protocol.Response{ID: req.ID, Effective: raw}
	}
	dur := func(k string, def time.Duration) time.Duration {
		if s, ok := m[k].(string); ok {
			if d, err := policy.ParseDuration(s); err == nil {
				return d
			}
		}
		return def
	}
	initial, limit := float64(dur("initial_interval", time.Second)), float64(dur("max_interval", 5*time.Minute))
	coef, jitter := 2.0, true
	if c, ok := m["backoff_coefficient"].(float64); ok {
		coef = c
	}
	if j, ok := m["jitter"].(bool); ok {
		jitter = j
	}
	if s, ok := m["backoff_strategy"].(string); ok && s != "exponential" || req.Attempt < 1 {
		return a
	}
	d := math.Min(initial*math.Pow(coef, float64(req.Attempt-1)), limit)
	if jitter {
		d = math.Min(math.Floor(d*(0.5+drawOf(req))), limit)
	}
	if !(d >= 0 && d < 0x1p53) {
		return a
	}
	ns := int64(d)
	if req.Op == protocol.OpDecide {
		attempts := 3.0
		if n, ok := m["max_attempts"].(float64); ok {
			attempts = n
		}
		if float64(req.Attempt) >= attempts {
			action := "discard"
			if m["on_exhaustion"] == "dead_letter" {
				action = "dead_letter"
			}
			return protocol.Response{ID: req.ID, Action: action}
		}
		return protocol.Response{ID: req.ID, Action: "retry", DelayNS: &ns}
	}
	return protocol.Response{ID: req.ID, DelayNS: &ns}
}

// A library that validates nothing is named no-validation for every
// policy it keeps as given, wrong JSON types included, not under one
// unchecked field per vector with the wrong types left unexplained.
func TestUnvalidatedPolicyIsNamed(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkOutcome(t, suite, "unvalidated-policy", "bug:no-validation", unvalidated)
}
