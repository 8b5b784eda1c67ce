package policytest

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
	"pgregory.net/rapid"
)

// Ops returns the protocol ops [Request] generates, in the order of
// PROTOCOL.md section 3; the last, scenario, is for implementations with
// an executor. The slice is a fresh copy.
func Ops() []string { return append([]string(nil), allOps...) }

var allOps = []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpMatch, protocol.OpDecide, protocol.OpScenario}

var requestGens = map[string]*rapid.Generator[protocol.Request]{
	protocol.OpParseDuration: rapid.Custom(func(t *rapid.T) protocol.Request {
		return protocol.Request{Op: protocol.OpParseDuration, Value: drawDuration(t)}
	}),
	protocol.OpValidate: rapid.Custom(func(t *rapid.T) protocol.Request {
		req := protocol.Request{Op: protocol.OpValidate}
		if intRange(0, 15).Draw(t, "absent_policy") != 15 {
			req.Policy = drawPolicyDocument(t)
		}
		return req
	}),
	protocol.OpDelay:    rapid.Custom(func(t *rapid.T) protocol.Request { return scheduleRequest(t, protocol.OpDelay) }),
	protocol.OpDecide:   rapid.Custom(func(t *rapid.T) protocol.Request { return scheduleRequest(t, protocol.OpDecide) }),
	protocol.OpScenario: rapid.Custom(drawScenario),
	protocol.OpMatch: rapid.Custom(func(t *rapid.T) protocol.Request {
		ps := drawPatterns(t)
		return protocol.Request{Op: protocol.OpMatch, Patterns: ps, ErrorType: errorTypeFor(t, ps)}
	}),
}

// Request generates protocol requests for op, one of [Ops], built from the
// other generators of this package: [Duration] for parse_duration, [Policy]
// for validate, and for delay and decide mostly valid policies ([Spec]) with
// [AttemptAround], a [JitterDraw], and for decide an error type from
// [ErrorTypeFor] the policy's patterns and a [Code]; now and then an
// invalid policy, an absent one, or an attempt below 1. For match,
// [Patterns] and [ErrorTypeFor] them. For scenario, a random job
// lifecycle: up to 16 steps of every step op (enqueue with short retry
// policies, fetch, ack, fail with each handler code, heartbeat, cancel,
// activate, pause, resume, manual retry, tick) on three jobs and two
// queues, with time advancing by 0 to 300 000 ms between steps, and a
// random config (jitter draw, error history, visibility timeout,
// retention). The ID is 0. Request panics for another op.
func Request(op string) *rapid.Generator[protocol.Request] {
	g, ok := requestGens[op]
	if !ok {
		panic(fmt.Sprintf("policytest: Request: no generator for op %q", op))
	}
	return g
}

func scheduleRequest(t *rapid.T, op string) protocol.Request {
	req := protocol.Request{Op: op}
	s := policy.DefaultSpec()
	valid := true
	switch intRange(0, 11).Draw(t, "policy_kind") {
	case 10: // any document, mostly invalid
		req.Policy = drawPolicyDocument(t)
		valid = false
	case 11: // absent
	default:
		s, req.Policy = drawSpecJSON(t)
	}
	var edges []int64
	if valid {
		edges = attemptEdges(s)
	}
	req.Attempt = attemptAt(t, edges)
	if intRange(0, 40).Draw(t, "bad_attempt") == 40 {
		req.Attempt = requestPick1.Draw(t, "attempt")
	}
	r := drawJitter(t)
	req.Rand = &r
	if op == protocol.OpDecide {
		req.Error = &protocol.FailureInput{Type: errorTypeFor(t, s.NonRetryableErrors), Code: code.Draw(t, "code")}
	}
	return req
}

// policyOf returns the policy a request's Policy field stands for, or nil
// when it is invalid.
func policyOf(raw json.RawMessage) *policy.Policy {
	p, err := policy.Parse(raw)
	if err != nil {
		return nil
	}
	return p
}

// Generators of fixed choices, built once.
var requestPick1 = rapid.SampledFrom([]int64{0, -1, math.MinInt64})
