package diagnose_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// delayCase is a delay vector judged as the runner judges one: with rand,
// the reference's exact delay; without, within the reference's range over
// every draw (a delay the implementation drew itself).
func delayCase(id, pol string, attempt int64, rand *float64, got int64) diagnose.Case {
	req := protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(pol), Attempt: attempt, Rand: rand}
	at := func(r float64) int64 {
		q := req
		q.Rand = &r
		a, _ := diagnose.Baseline.Answer(q)
		return *a.DelayNS
	}
	lo, hi := at(0), at(math.Nextafter(1, 0))
	judge := func(a protocol.Response) bool {
		if a.Error != nil || a.DelayNS == nil {
			return false
		}
		if rand != nil {
			return *a.DelayNS == at(*rand)
		}
		return lo <= *a.DelayNS && *a.DelayNS <= hi
	}
	answer := protocol.Response{DelayNS: &got}
	return diagnose.Case{ID: id, Request: req, Answer: answer, Failed: !judge(answer), Drawn: rand == nil, Judge: judge,
		Same: func(a protocol.Response) bool { return a.DelayNS != nil && *a.DelayNS == got }}
}

// A delay the implementation drew itself goes to the combination of the
// bugs found that reproduces it only when that combination, like every
// finding, contradicts no pass. Here attempts counted from 0 (2× the
// delay) and no cap after the jitter are each found on a failure of its
// own; the drawn delay of 20 s lies within both attempts-from-0 alone
// and the two together; but the two together fail a pass that each alone
// passes (16 s capped at 10 s, jittered ×1.25 and not capped again:
// 12.5 s, where each bug alone answers the 10 s the implementation
// answered). So the drawn failure stays with attempt-from-zero, and every
// finding passes every pass it was replayed on.
func TestDrawnFailureJoinsNoContradictedCombination(t *testing.T) {
	r := func(f float64) *float64 { return &f }
	capped := `{"initial_interval":"PT1S","max_interval":"PT10S","jitter":true}`
	cases := []diagnose.Case{
		// no cap after jitter alone: 8 s × 1.4997… not capped at 10 s
		delayCase("post-cap", capped, 4, r(0.999755859375), 11_998_046_875),
		// attempts from 0 alone: the first delay is 2 s
		delayCase("from-zero", `{"jitter":false}`, 1, nil, 2_000_000_000),
		// drawn by the implementation: 20 s, where the spec allows [5 s, 15 s)
		delayCase("drawn", `{"initial_interval":"PT10S","backoff_coefficient":2.0,"jitter":true}`, 1, nil, 20_000_000_000),
		// the pass the two bugs together would fail
		delayCase("pass", capped, 4, r(0.75), 10_000_000_000),
	}
	if cases[3].Failed || !cases[0].Failed || !cases[1].Failed || !cases[2].Failed {
		t.Fatal("the cases are not judged as meant")
	}
	both := diagnose.Combine(model(t, "no-post-jitter-cap"), model(t, "attempt-from-zero"))
	if a, _ := both.Answer(cases[3].Request); cases[3].Judge(a) {
		t.Fatalf("the two bugs together pass the pass: %v", *a.DelayNS)
	}
	findings, unexplained := diagnose.Diagnose(cases)
	if len(unexplained) > 0 {
		t.Errorf("unexplained %v", unexplained)
	}
	got := map[string][]string{}
	for _, f := range findings {
		got[f.Model.Name] = f.Explains
		for _, c := range cases {
			if a, ok := f.Model.Answer(c.Request); !c.Failed && !c.Drawn && ok && !c.Judge(a) {
				t.Errorf("finding %s contradicted by %s", f.Model.Name, c.ID)
			}
		}
		if f.Replayed != 1 {
			t.Errorf("finding %s replayed on %d passes, want the one pass", f.Model.Name, f.Replayed)
		}
	}
	if ids := got["attempt-from-zero"]; len(ids) != 2 || ids[0] != "from-zero" || ids[1] != "drawn" {
		t.Errorf("findings %v: want attempt-from-zero explaining from-zero and drawn", got)
	}
}
