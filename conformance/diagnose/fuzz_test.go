package diagnose_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// FuzzAnswer: every model, and every combination of two, answers any
// request without panicking, with a non-negative delay unless it is Go's
// wrapped conversion, and in time linear in the input (the duration and
// policy readers are the reference's, plus bounded rewrites).
func FuzzAnswer(f *testing.F) {
	f.Add("validate", `{"max_attempts":3,"max_attempts":5}`, "PT1S", int64(1), 0.5, "auth.*", "auth")
	f.Add("delay", `{"initial_interval":"pt1s","backoff_strategy":"polynomial","backoff_coefficient":1e400}`, "", int64(math.MaxInt64), 0.999, "", "")
	f.Add("parse_duration", `null`, "P1W", int64(0), 0.0, "[", "x")
	f.Add("decide", `[]`, "1d", int64(-1), 0.25, ".*", "")
	f.Add("parse_duration", ``, "PT\u0661S\n", int64(2), 0.1, "a.*", "a.b")
	models := diagnose.Models()
	f.Fuzz(func(t *testing.T, op, pol, value string, attempt int64, r float64, pattern, typ string) {
		if !(r >= 0 && r < 1) {
			r = 0.5
		}
		req := protocol.Request{ID: 1, Op: op, Value: value, Attempt: attempt, Rand: &r,
			Patterns: []string{pattern}, ErrorType: typ, Error: &protocol.FailureInput{Type: typ, Code: value}}
		if json.Valid([]byte(pol)) {
			req.Policy = json.RawMessage(pol)
		}
		for i, m := range models {
			for _, c := range []diagnose.Model{m, diagnose.Combine(m, models[(i+7)%len(models)])} {
				a, ok := c.Answer(req)
				if ok && a.DelayNS != nil && *a.DelayNS < 0 && *a.DelayNS != math.MinInt64 {
					t.Fatalf("%s: negative delay %d", c.Name, *a.DelayNS)
				}
			}
		}
	})
}

// FuzzDiagnose: for any run of a few answers (the reference's, one or two
// with a fuzzed delay, duration or action), Diagnose lists every failure
// exactly once, under a finding or as unexplained; every finding's model,
// fitted family included, reproduces each failure it explains; and
// Deviations puts every unexplained failure in exactly one group.
func FuzzDiagnose(f *testing.F) {
	f.Add("delay", `{"max_interval":"PT1M"}`, int64(3), 0.25, int64(60_000_000_000), int64(2_000_000_000), "retry")
	f.Add("decide", `{"max_attempts":2,"jitter":false}`, int64(2), 0.5, int64(0), int64(-1), "retry")
	f.Add("delay", `{"backoff_strategy":"linear","jitter":false}`, int64(4), 0.9, int64(1_000_000_000), int64(9_000_000_000), "")
	f.Add("validate", `{"initial_interval":"PT2S"}`, int64(1), 0.1, int64(1), int64(3), "discard")
	f.Add("delay", `null`, int64(1), 0.0, int64(math.MaxInt64), int64(0), "dead_letter")
	var ref diagnose.Model // the zero Model answers as the reference
	f.Fuzz(func(t *testing.T, op, pol string, attempt int64, r float64, d1, d2 int64, action string) {
		if !(r >= 0 && r < 1) {
			r = 0.5
		}
		var cases []diagnose.Case
		for i, d := range []int64{d1, d2, -2, -3} {
			req := protocol.Request{ID: int64(i + 1), Op: op, Attempt: attempt + int64(i), Rand: &r, Value: "PT1.5S",
				Error: &protocol.FailureInput{Type: "a.b"}, Patterns: []string{"a.*"}, ErrorType: "a.b"}
			if json.Valid([]byte(pol)) {
				req.Policy = json.RawMessage(pol)
			}
			want, ok := ref.Answer(req)
			if !ok {
				return
			}
			got := want
			switch {
			case d < 0 && d > -4: // the reference's own answer: a pass
			case got.DelayNS != nil:
				got.DelayNS = &d
				if action != "" && got.Action != "" {
					got.Action = action
				}
			case got.NS != nil:
				got.NS = &d
			case got.Action != "":
				got.Action = action
			}
			same := func(a, b protocol.Response) bool {
				x, _ := json.Marshal(a)
				y, _ := json.Marshal(b)
				return string(x) == string(y)
			}
			g := got
			cases = append(cases, diagnose.Case{ID: fmt.Sprint("c", i), Request: req, Answer: got, Failed: !same(got, want),
				Judge: func(a protocol.Response) bool { return same(a, want) },
				Same:  func(a protocol.Response) bool { return same(a, g) }})
		}
		findings, unexplained := diagnose.Diagnose(cases)
		seen := map[string]int{}
		for _, f := range findings {
			for _, id := range f.Explains {
				seen[id]++
				for _, c := range cases {
					if c.ID != id {
						continue
					}
					if a, ok := f.Model.Answer(c.Request); !ok || !c.Same(a) {
						t.Fatalf("%s claims %s but answers %+v, not %+v", f.Model.Name, id, a, c.Answer)
					}
				}
			}
		}
		for _, id := range unexplained {
			seen[id]++
		}
		for _, c := range cases {
			if n := seen[c.ID]; c.Failed && n != 1 || !c.Failed && n != 0 {
				t.Fatalf("%s (failed %v) listed %d times", c.ID, c.Failed, n)
			}
		}
		grouped := map[string]int{}
		for _, d := range diagnose.Deviations(cases, unexplained) {
			for _, id := range d.IDs {
				grouped[id]++
			}
		}
		for _, id := range unexplained {
			if grouped[id] != 1 {
				t.Fatalf("%s in %d deviation groups", id, grouped[id])
			}
		}
	})
}
