package diagnose_test

import (
	"encoding/json"
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
