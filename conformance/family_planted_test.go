package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// The bugs planted here are written apart from the diagnosis: each
// rewrites the request the reference sees or the answer it gives, as a
// real implementation's slip would change it, and none reuses the models
// of package diagnose.

// fault is a planted bug: the answer to req, given the reference.
type fault = func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response

// editPolicy returns req with its policy, when valid, decoded, edited by
// edit and encoded again; other requests unchanged.
func editPolicy(req protocol.Request, edit func(m map[string]any, s policy.Spec)) protocol.Request {
	if req.Op != protocol.OpDelay && req.Op != protocol.OpDecide {
		return req
	}
	p, err := policy.Parse(req.Policy)
	if err != nil {
		return req
	}
	m := map[string]any{}
	if len(req.Policy) > 0 && string(bytes.TrimSpace(req.Policy)) != "null" {
		dec := json.NewDecoder(bytes.NewReader(req.Policy))
		dec.UseNumber()
		if dec.Decode(&m) != nil || m == nil {
			return req
		}
	}
	edit(m, p.Spec())
	req.Policy, _ = json.Marshal(m)
	return req
}

// onDelay applies f to the delay of every answer that carries one.
func onDelay(f func(int64) int64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if a.DelayNS != nil && a.Error == nil {
			d := f(*a.DelayNS)
			a.DelayNS = &d
		}
		return a
	}
}

// delayAttempt computes the delay for attempt n+k, the decision for n.
func delayAttempt(k int64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		a := ref(req)
		if a.Error != nil || a.DelayNS == nil || req.Attempt+k < 1 {
			return a
		}
		q := req
		q.Op, q.Attempt = protocol.OpDelay, req.Attempt+k
		if b := ref(q); b.Error == nil && b.DelayNS != nil {
			a.DelayNS = b.DelayNS
		}
		return a
	}
}

// exhaustAt decides as if max_attempts were k more, delays unchanged.
func exhaustAt(k int) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op != protocol.OpDecide {
			return ref(req)
		}
		return ref(editPolicy(req, func(m map[string]any, s policy.Spec) {
			n := max(s.MaxAttempts, 1)
			if k > 0 && n > math.MaxInt-k {
				m["max_attempts"] = math.MaxInt
				return
			}
			m["max_attempts"] = max(n+k, 1)
		}))
	}
}

// strategyAs computes the strategy from as the strategy to.
func strategyAs(from, to string) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		return ref(editPolicy(req, func(m map[string]any, s policy.Spec) {
			if s.Strategy.String() == from {
				m["backoff_strategy"] = to
			}
		}))
	}
}

// jitterRange draws the multiplier from [lo, hi): the draw r of the
// request becomes the draw of the same multiplier over [0.5, 1.5).
func jitterRange(lo, hi float64) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Rand != nil {
			r := lo + *req.Rand*(hi-lo) - 0.5
			req.Rand = &r
		} else if req.Op == protocol.OpDelay || req.Op == protocol.OpDecide {
			r := lo + rand.Float64()*(hi-lo) - 0.5
			req.Rand = &r
		}
		return ref(req)
	}
}

// codesIgnored treats the handler codes given as absent.
func codesIgnored(codes ...string) fault {
	return func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
		if req.Op == protocol.OpDecide && req.Error != nil {
			for _, c := range codes {
				if req.Error.Code == c {
					e := *req.Error
					e.Code = ""
					req.Error = &e
				}
			}
		}
		return ref(req)
	}
}

// caseFolded matches in lower case.
func caseFolded(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
	switch req.Op {
	case protocol.OpMatch:
		if a := ref(req); a.Error != nil {
			return a
		}
		q := req
		q.Patterns = make([]string, len(req.Patterns))
		for i, p := range req.Patterns {
			q.Patterns[i] = strings.ToLower(p)
		}
		q.ErrorType = strings.ToLower(req.ErrorType)
		return ref(q)
	case protocol.OpDecide:
		q := editPolicy(req, func(m map[string]any, s policy.Spec) {
			low := make([]string, len(s.NonRetryableErrors))
			for i, p := range s.NonRetryableErrors {
				low[i] = strings.ToLower(p)
			}
			m["non_retryable_errors"] = low
		})
		if q.Error != nil {
			e := *q.Error
			e.Type = strings.ToLower(e.Type)
			q.Error = &e
		}
		return ref(q)
	}
	return ref(req)
}

// noCap never applies max_interval.
func noCap(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
	return ref(editPolicy(req, func(m map[string]any, s policy.Spec) {
		delete(m, "max_interval")
		m["max_interval"] = "PT2562047H47M16.854775807S" // 2^63 − 1 ns
	}))
}

// roundTo rounds (or truncates) every delay to unit.
func roundTo(unit int64, truncate bool) func(int64) int64 {
	return func(d int64) int64 {
		q, r := d/unit, d%unit
		if !truncate && 2*r >= unit {
			q++
		}
		if q > math.MaxInt64/unit {
			return math.MaxInt64
		}
		return q * unit
	}
}

// times multiplies a delay by k, rounding to the nanosecond and
// saturating.
func times(k float64) func(int64) int64 {
	return func(d int64) int64 {
		f := math.Round(float64(d) * k)
		if f >= 0x1p63 {
			return math.MaxInt64
		}
		return int64(f)
	}
}

// durationsTruncated truncates every parsed duration to whole seconds.
func durationsTruncated(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
	a := ref(req)
	if req.Op == protocol.OpParseDuration && a.NS != nil {
		ns := *a.NS / 1e9 * 1e9
		a.NS = &ns
	}
	return a
}

// plantedFamilies are bugs of the families the diagnosis searches, each
// with the cause the report must name alone.
var plantedFamilies = []struct {
	want  string
	fault fault
}{
	{"bug:delay-attempt-offset(+1)", delayAttempt(1)},
	{"bug:delay-attempt-offset(+2)", delayAttempt(2)},
	{"bug:exhaustion-offset(+1)", exhaustAt(1)},
	{"bug:exhaustion-offset(-1)", exhaustAt(-1)},
	{"bug:strategy-as(linear→exponential)", strategyAs("linear", "exponential")},
	{"bug:strategy-as(exponential→linear)", strategyAs("exponential", "linear")},
	{"bug:strategy-as(polynomial→linear)", strategyAs("polynomial", "linear")},
	{"bug:strategy-as(polynomial→exponential)", strategyAs("polynomial", "exponential")},
	{"bug:jitter-range([0.75,1.25))", jitterRange(0.75, 1.25)},
	{"bug:no-cap", noCap},
	{"bug:handler-codes-ignored(DISCARD)", codesIgnored("DISCARD")},
	{"bug:handler-codes-ignored(FAIL,DEAD_LETTER)", codesIgnored("FAIL", "DEAD_LETTER")},
	{"bug:loosened-match(case)", caseFolded},
	{"bug:rounding(delays rounded to 1ms)", onDelay(roundTo(int64(time.Millisecond), false))},
	{"bug:rounding(durations truncated to 1s)", durationsTruncated},
	{"bug:time-factor(×2)", onDelay(times(2))},
	{"bug:time-offset(+1s)", onDelay(func(d int64) int64 { return min(d, math.MaxInt64-int64(time.Second)) + int64(time.Second) })},
}

// runPlanted runs the suite against the reference with f planted.
func runPlanted(t *testing.T, suite *conformance.Suite, f fault) *conformance.Report {
	t.Helper()
	return conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), planted{f})
}

// causes lists a report's causes for a failure message.
func causes(rep *conformance.Report) string {
	var out []string
	for _, c := range rep.Causes {
		out = append(out, fmt.Sprintf("%s×%d", c.Class, len(c.IDs)))
	}
	return strings.Join(out, " ")
}

// oneCause reports whether the report has exactly one cause, named want,
// reproduced, explaining every failure, with the passes it was replayed
// on counted.
func oneCause(rep *conformance.Report, want string) bool {
	bad := rep.Totals.Fail + rep.Totals.Error
	if len(rep.Causes) != 1 || !rep.Causes[0].Reproduced || len(rep.Causes[0].IDs) != bad || rep.Causes[0].PassesReplayed == nil {
		return false
	}
	c := rep.Causes[0]
	return c.Class == want || equivalent(c, want)
}

// Each planted bug of a searched family is caught and comes out as one
// cause, the fitted family with the planted parameters, reproducing every
// failure and contradicted by no pass.
func TestPlantedFamiliesAreNamedAlone(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plantedFamilies {
		t.Run(strings.TrimPrefix(p.want, "bug:"), func(t *testing.T) {
			rep := runPlanted(t, suite, p.fault)
			if rep.Totals.Fail+rep.Totals.Error == 0 {
				t.Fatal("no vector catches the planted bug")
			}
			if !oneCause(rep, p.want) {
				for _, c := range rep.Causes {
					t.Log(c.Class, c.Reproduction)
				}
				t.Fatalf("%d failures; causes %s, want %s alone", rep.Totals.Fail+rep.Totals.Error, causes(rep), p.want)
			}
		})
	}
}

// Parameters drawn at random from the families (the delay factor and
// offset, the jitter range, the exhaustion and attempt offsets) are fitted
// back exactly.
func TestRandomFamilyParametersAreFitted(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, drawSeed(t)))
	for i := range 8 {
		var want string
		var f fault
		switch i % 4 {
		case 0:
			k := []float64{0.5, 1.5, 3, 4, 10}[rng.IntN(5)]
			want, f = fmt.Sprintf("bug:time-factor(×%g)", k), onDelay(times(k))
		case 1:
			o := time.Duration(1+rng.IntN(900)) * time.Millisecond
			want, f = fmt.Sprintf("bug:time-offset(+%v)", o), onDelay(func(d int64) int64 { return min(d, math.MaxInt64-int64(o)) + int64(o) })
		case 2:
			lo := 0.5 + float64(rng.IntN(8))*0.05
			hi := lo + 0.1 + float64(rng.IntN(int((1.5-lo-0.1)/0.05+1)))*0.05
			lo, hi = math.Round(lo*100)/100, math.Round(min(hi, 1.5)*100)/100
			if lo == 0.5 && hi == 1.5 {
				hi = 1.25
			}
			want, f = fmt.Sprintf("bug:jitter-range([%g,%g))", lo, hi), jitterRange(lo, hi)
		case 3:
			k := []int{-2, -1, 1, 2}[rng.IntN(4)]
			want, f = fmt.Sprintf("bug:exhaustion-offset(%+d)", k), exhaustAt(k)
		}
		t.Run(want, func(t *testing.T) {
			rep := runPlanted(t, suite, f)
			if !oneCause(rep, want) {
				t.Fatalf("%d failures; causes %s, want %s alone", rep.Totals.Fail+rep.Totals.Error, causes(rep), want)
			}
		})
	}
}

// Bugs outside every family come out unexplained, grouped by what was
// observed, each group with its smallest reproduction, and are never
// named as a cause.
func TestBugsOutsideTheFamiliesStayUnexplained(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		fault fault
	}{
		// the delay grows by 100 ms per attempt on top of the spec's
		{"delay-plus-attempt", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
			a := ref(req)
			if a.DelayNS != nil && a.Error == nil && req.Attempt < 1000 {
				d := min(*a.DelayNS, math.MaxInt64/2) + req.Attempt*int64(100*time.Millisecond)
				a.DelayNS = &d
			}
			return a
		}},
		// an error type of odd length never matches
		{"odd-types-never-match", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
			a := ref(req)
			if req.Op == protocol.OpMatch && a.Match != nil && len(req.ErrorType)%2 == 1 {
				no := false
				a.Match = &no
			}
			return a
		}},
		// a duration with an hours component is an hour shorter
		{"hours-off-by-one", func(req protocol.Request, ref func(protocol.Request) protocol.Response) protocol.Response {
			a := ref(req)
			if req.Op == protocol.OpParseDuration && a.NS != nil && strings.Contains(req.Value, "H") && *a.NS >= int64(time.Hour) {
				ns := *a.NS - int64(time.Hour)
				a.NS = &ns
			}
			return a
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runPlanted(t, suite, tc.fault)
			if rep.Totals.Fail == 0 {
				t.Fatal("no vector catches the planted bug")
			}
			if len(rep.Causes) > 2 {
				t.Errorf("%d causes, want one or two: %s", len(rep.Causes), causes(rep))
			}
			for _, c := range rep.Causes {
				if c.Reproduced || !strings.HasPrefix(c.Class, "unexplained:") {
					t.Errorf("cause %s×%d named for a bug outside every family", c.Class, len(c.IDs))
				}
				if !strings.Contains(c.Reproduction, " → answered ") {
					t.Errorf("cause %s has no reproduction: %q", c.Class, c.Reproduction)
				}
			}
		})
	}
}
