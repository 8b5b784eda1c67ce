package conformance

import "github.com/retrykit/retrykit/conformance/protocol"

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
// value. A got that does not fit req.Op (PROTOCOL.md section 3, [protocol.Response.Check]) fails with
// a reason starting "malformed answer". Judge is how the fuzzer
// (package policytest and "retrykit fuzz") decides a disagreement.
func Judge(h protocol.Hello, req protocol.Request, want, got protocol.Response, flags ...string) string {
	if err := got.Check(req.Op); err != nil {
		return "malformed answer: " + err.Error()
	}
	if got.Unsupported {
		return "answered unsupported"
	}
	v := &Vector{Kind: kindFor(req.Op), req: req}
	v.want = outcome{NS: want.NS, Effective: want.Effective, DelayNS: want.DelayNS, Match: want.Match, Action: want.Action}
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
	return cmp.compare(v, got)
}

// kindFor is the inverse of opFor for the five vector kinds and scenarios.
func kindFor(op string) string {
	if op == protocol.OpParseDuration {
		return kindDuration
	}
	return op // the other ops are named like their kinds
}
