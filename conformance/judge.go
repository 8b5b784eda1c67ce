package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
)

// Judge compares an implementation's answer got to the request req with
// the answer want of the reference (or of any implementation taken as the
// truth), by the rules the [Runner] applies to vectors: durations within the
// resolution h declares, effective policies field by field, an error by its
// type alone. It returns "" when got passes, else the reason it does not.
//
// flags are vector flags that change the comparison: "float-tolerance"
// accepts |got − want| ≤ max(1ns, want·2⁻⁴⁰) for delays. When h declares
// opaque jitter and req carries no rand, a retry delay of a jittered policy
// is checked against the range jitter can produce instead of want's exact
// value. For the scenario op, got's observations are compared step by
// step with want's (PROTOCOL.md section 3.7): error class, fetched job,
// every job's state, attempt, times, dead-letter flag and error history
// (messages excepted), and the jobs that must be absent; counts when the
// reference gives them. A got that does not fit req.Op (PROTOCOL.md section 3, [protocol.Response.Check]) fails with
// a reason starting "malformed answer". Judge is how the fuzzer
// (package policytest and "retrykit fuzz") decides a disagreement.
func Judge(h protocol.Hello, req protocol.Request, want, got protocol.Response, flags ...string) string {
	if err := got.Check(req.Op); err != nil {
		return "malformed answer: " + err.Error()
	}
	if got.Unsupported {
		return "answered unsupported"
	}
	if req.Op == protocol.OpScenario {
		return judgeScenarioAnswer(req, want, got)
	}
	v := &Vector{Kind: kindFor(req.Op), req: req}
	v.want = outcome{NS: want.NS, Effective: want.Effective, DelayNS: want.DelayNS, Match: want.Match, Action: want.Action, Result: want.Result}
	if want.Error != nil {
		v.want = outcome{Error: want.Error.Type}
	}
	cmp := comparison{hello: h}
	for _, f := range flags {
		if f == "float-tolerance" {
			cmp.floatTol = true
		}
	}
	if h.Jitter == protocol.JitterOpaque && req.Rand == nil {
		cmp.bounds = opaqueBounds(v)
	}
	return asSent(cmp.compare(v, got), got)
}

// kindFor is the inverse of opFor for the vector kinds and scenarios.
func kindFor(op string) string {
	if op == protocol.OpParseDuration {
		return kindDuration
	}
	return op // the other ops are named like their kinds
}

// judgeScenarioAnswer compares the observations of a scenario answer with
// the reference's, by turning the reference's into the expectations of a
// scenario vector and judging got as the runner judges scenario vectors.
func judgeScenarioAnswer(req protocol.Request, want, got protocol.Response) string {
	switch {
	case want.Error != nil && got.Error == nil:
		return fmt.Sprintf("want error %s, got observations", want.Error.Type)
	case want.Error != nil:
		if got.Error.Type != want.Error.Type {
			return fmt.Sprintf("error type: got %s, want %s", got.Error.Type, want.Error.Type)
		}
		return ""
	case got.Error != nil:
		return fmt.Sprintf("want observations, got error %s: %s", got.Error.Type, got.Error.Message)
	}
	sc := &scenario.Scenario{ID: "fuzz"}
	var ref []scenario.Observation
	if json.Unmarshal(req.Steps, &sc.Steps) != nil || json.Unmarshal(want.Steps, &ref) != nil || len(ref) != len(sc.Steps) {
		return "the reference's observations do not fit the request"
	}
	scenario.SetExpectations(sc, ref)
	reason, _, _, malformed := judgeScenario(sc, got.Steps)
	if malformed != nil {
		return "malformed answer: " + malformed.Error()
	}
	return reason
}
