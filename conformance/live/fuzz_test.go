package live

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// FuzzAnswer feeds arbitrary bytes to the checker as a server's answer, in
// every place it decodes one: nothing panics, and every judgement returns.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		`{"job_id":"j","state":"retryable","attempt":1,"max_attempts":4,"next_attempt_at":"2026-01-01T00:00:00.020Z"}`,
		`{"state":"discarded","attempt":4,"discarded_at":"2026-01-01T00:00:00Z","job":{"errors":[{"attempt":1,"type":"t","message":"m"}]}}`,
		`{"jobs":[{"id":"j","attempt":2,"started_at":"2026-01-01T00:00:00.5Z","error_history":[{"attempt":null}]}]}`,
		`{"error":{"code":"conflict","message":"x"}}`,
		`{"next_attempt_at":"9999-12-31T23:59:59.999999999Z","attempt":-1}`,
		`{"next_attempt_at":"0001-01-01T00:00:00Z","attempt":9223372036854775807}`,
		`[`, `null`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := &env{c: &client{offSet: true, offHi: time.Millisecond}, cfg: &config{typeField: "type", poll: time.Millisecond, lateBound: time.Second}, verdicts: map[string]*verdict{}}
		x := &exchange{status: 200, body: body, sent: t0, recv: t0.Add(time.Millisecond)}
		var a nackAnswer
		if decode("FAIL", x, &a) == nil {
			pol := retry{max: 4, initial: 20 * ms, coef: 2, maxIv: 50 * ms, jitter: true}
			e.retried("", x, &a, 1, pol)
			e.recordFail("c", pol.raw(), failure{Type: "t", Message: "m"}, 1, x, &a, nil)
			e.recordAttempt("h", servermodel.HistoryAttempt, 1, a.Attempt)
			e.judgeDelay("", x, &a, 0, time.Duration(1<<62))
			if a.Job != nil {
				judgeHistory(e, a.Job, 4, "t")
			}
		}
		var fa struct {
			Jobs []job `json:"jobs"`
		}
		if json.Unmarshal(body, &fa) == nil {
			for _, j := range fa.Jobs {
				at, err := parseTime("started_at", j.StartedAt)
				if err == nil {
					e.c.observe(x, at)
					e.judgeDelivery(&fetched{job: j, ex: x, at: at}, t0.Add(20*ms), true)
				}
				judgeHistory(e, &j, 1, "t")
			}
		}
		_ = unexpected("FAIL", x).Error()
		_ = e.latency()
		// The diagnosis reads whatever the answers said.
		servermodel.Diagnose(e.obs, map[string]bool{"c": true, "h": false, "http-not-early": true})
	})
}
