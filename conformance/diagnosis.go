package conformance

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// maxDiagnosedAnswer is the longest answer the diagnosis reads: every model
// compares itself to it, and no answer a model gives is longer.
const maxDiagnosedAnswer = 4 << 10

// probe is what runOne keeps of a judged answer for the diagnosis: the
// request as sent, the answer and the comparison it was judged with.
type probe struct {
	v   *Vector
	req protocol.Request
	got protocol.Response
	cmp comparison
}

// diagnoseResults attributes the failures among results to bug models
// (package diagnose), and groups the rest by the deviation observed.
// Verdicts of vectors take part (not scenarios, not errors); a
// draw-dependent one is reproduced by a model whose range over all draws
// holds the answer.
func diagnoseResults(results []Result) ([]diagnose.Finding, []diagnose.Deviation) {
	var cases []diagnose.Case
	for i := range results {
		res := &results[i]
		p := res.probe
		if p == nil || p.v.sc != nil || (res.Status != StatusPass && res.Status != StatusFail) || res.ID == JitterCheckID {
			continue
		}
		if res.cause == "stale-skip-entry" {
			continue
		}
		cases = append(cases, diagnose.Case{
			ID: res.ID, Request: p.req, Answer: p.got, Failed: res.Status == StatusFail, Drawn: res.Random,
			Judge: func(a protocol.Response) bool { return a.Check(p.req.Op) == nil && p.cmp.compare(p.v, a) == "" },
			Same:  func(a protocol.Response) bool { return sameAnswer(p.cmp, p.v.Kind, a, p.got) },
		})
	}
	f, unexplained := diagnose.Diagnose(cases)
	check := -1
	for i := range results {
		if res := &results[i]; res.ID == JitterCheckID && res.Status == StatusFail && len(res.draws) > 0 {
			check = i
			for j := range f {
				if drawsFit(f[j].Model, res.draws) {
					f[j].Explains = append(f[j].Explains, res.ID)
					check = -1
					break
				}
			}
		}
	}
	groups := diagnose.Deviations(cases, unexplained)
	if check >= 0 {
		joinJitterCheck(groups, results, check)
	}
	return f, groups
}

// joinJitterCheck puts the failed jitter check, which no model's draws
// fit, into the largest unexplained group of delays (every failure a
// delay value or a retry decision): its draws are delays the implementation
// drew itself, the same deviation seen without an injected draw, not a
// cause of their own. Without such a group it stays apart, under its
// symptom.
func joinJitterCheck(groups []diagnose.Deviation, results []Result, check int) {
	kind := make(map[string]string, len(results))
	for i := range results {
		kind[results[i].ID] = results[i].Kind
	}
	for j := range groups {
		// a group of refusals (or acceptances) shows no delay value: the
		// check's draws do not deviate the same way
		delays := !strings.HasPrefix(groups[j].Name, "rejects-valid") && !strings.HasPrefix(groups[j].Name, "accepts-invalid")
		for _, id := range groups[j].IDs {
			delays = delays && (kind[id] == kindDelay || kind[id] == kindDecide)
		}
		if delays {
			groups[j].IDs = append(groups[j].IDs, results[check].ID)
			groups[j].Explanation += "; the jitter check's own draws deviate too"
			return // the groups are largest first
		}
	}
}

// sameAnswer reports whether the implementation's answer got equals the
// model's answer a, within the declared resolution. Two rejections are
// the same whatever their types.
func sameAnswer(c comparison, kind string, a, got protocol.Response) bool {
	c.bounds = nil
	var o outcome
	switch {
	case a.Error != nil:
		return got.Error != nil
	case diagnose.Drawn(a):
		// accepted with a delay of the implementation's own draw
		return got.Error == nil && (kind != kindDecide || got.Action == "retry")
	case kind == kindDuration:
		o.NS = a.NS
	case kind == kindValidate:
		if got.Error == nil && sameEffective(c, a.Effective, got.Effective) {
			return true
		}
		o.Effective = a.Effective
	case kind == kindMatch:
		o.Match = a.Match
	case kind == kindDecide:
		o.Action, o.DelayNS = a.Action, a.DelayNS
	case kind == kindTimeoutDecide || kind == kindTimeoutExpiry || kind == kindReplay || kind == kindExtensionDecide:
		o.Result = a.Result
	default:
		o.DelayNS = a.DelayNS
	}
	if o.NS == nil && o.Effective == nil && o.Match == nil && o.Action == "" && o.DelayNS == nil && o.Result == nil {
		return false
	}
	return c.compareOne(kind, &o, got) == ""
}

// sameEffective reports whether two effective policies have the same keys
// and, for each, the same JSON text or the same value (durations and
// numbers compared as the runner compares them). Unlike the comparison
// with a vector, a value neither can parse ("P") is equal to itself.
func sameEffective(c comparison, a, b json.RawMessage) bool {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil || ma == nil || mb == nil {
		return false
	}
	if !c.hello.Claims("extension:backoff_strategy") {
		// the runner accepts it missing then (PROTOCOL.md section 5)
		delete(ma, "backoff_strategy")
		delete(mb, "backoff_strategy")
	}
	if len(ma) != len(mb) {
		return false
	}
	for k, va := range ma {
		vb, ok := mb[k]
		if !ok {
			return false
		}
		var ca, cb bytes.Buffer
		if json.Compact(&ca, va) == nil && json.Compact(&cb, vb) == nil && bytes.Equal(ca.Bytes(), cb.Bytes()) {
			continue
		}
		if k == "initial_interval" || k == "max_interval" {
			var sa, sb string
			if json.Unmarshal(va, &sa) == nil && json.Unmarshal(vb, &sb) == nil && diagnose.SameDuration(sa, sb) {
				continue
			}
		}
		if c.field(k, va, vb) != "" {
			return false
		}
	}
	return true
}

// drawsFit reports whether the jitter check's multipliers are what model m
// draws: one out-of-range multiplier within the model's range over every
// draw, or a sample that passes the check's Kolmogorov–Smirnov test
// against the uniform range of the model's multipliers.
func drawsFit(m diagnose.Model, draws []float64) bool {
	at := func(r float64) (float64, bool) {
		a, ok := m.Answer(protocol.Request{Op: protocol.OpDelay, Policy: []byte(jitterPolicy), Attempt: 1, Rand: &r})
		if !ok || a.DelayNS == nil {
			return 0, false
		}
		return float64(*a.DelayNS) / float64(jitterBaseNS), true
	}
	lo, ok1 := at(0)
	hi, ok2 := at(math.Nextafter(1, 0))
	if ok1 && ok2 && hi == lo {
		// a model that does not draw: every multiplier is its one
		for _, x := range draws {
			if math.Abs(x-lo) > 1e-9 {
				return false
			}
		}
		return true
	}
	if !ok1 || !ok2 || hi <= lo || lo == 0.5 && hi > 1.4999 {
		return false
	}
	if len(draws) == 1 {
		return lo <= draws[0] && draws[0] <= hi
	}
	u := make([]float64, len(draws))
	for i, x := range draws {
		u[i] = (x - lo) / (hi - lo)
	}
	return ksUniform(u) <= ksThreshold(len(u), jitterFalseAlarm)+1e-9/(hi-lo)
}
