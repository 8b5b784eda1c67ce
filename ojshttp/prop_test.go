package ojshttp_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/policytest"
)

// TestPropNackAnswers: for any valid policy and jitter draw, the FAIL
// answers of the HTTP server agree with the policy's decisions to the
// nanosecond (next_attempt_at − the failure's occurred_at is the delay of
// policy.DecideAt for that attempt and draw), the job is fetchable at
// next_attempt_at and not a nanosecond before, and it ends discarded (dead
// letter per on_exhaustion) at max(max_attempts, 1). The oracle is the
// policy package, checked on its own by the conformance vectors; what is
// under test is the server's translation.
// lastInstant is the latest time the executor represents.
var lastInstant = time.Unix(0, 1<<63-1).UTC()

func TestPropNackAnswers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw := policytest.ValidPolicy().Draw(t, "policy")
		r := policytest.JitterDraw().Draw(t, "r")
		pol, err := policy.Parse(raw)
		if err != nil {
			t.Fatalf("generator gave an invalid policy: %v", err)
		}
		clock := executor.NewFakeClock(start)
		h := ojshttp.New(executor.New(executor.WithClock(clock), executor.WithRand(backoff.Fixed(r))),
			ojshttp.WithManualClock(clock))
		call := func(path, body string) map[string]any {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || rec.Code >= 300 {
				t.Fatalf("POST %s %s: %d %s", path, body, rec.Code, rec.Body)
			}
			return m
		}
		fetch := func() []any {
			return call("/ojs/v1/workers/fetch", `{"queues":["p"]}`)["jobs"].([]any)
		}
		id := call("/ojs/v1/jobs", `{"type":"p","args":[],"options":{"queue":"p","retry":`+string(raw)+`}}`)["job"].(map[string]any)["id"].(string)
		limit := max(pol.Spec().MaxAttempts, 1)
		for n := 1; n <= min(limit, 6); n++ {
			if got := fetch(); len(got) != 1 {
				t.Fatalf("attempt %d: nothing to fetch", n)
			}
			ans := call("/ojs/v1/workers/nack", fmt.Sprintf(`{"job_id":%q,"error":{"type":"prop.fail","message":"m"}}`, id))
			want, err := pol.DecideAt(policy.Failure{Attempt: n, ErrorType: "prop.fail"}, r)
			if err != nil {
				t.Fatal(err)
			}
			if ans["attempt"] != float64(n) {
				t.Fatalf("attempt %d answered %v", n, ans["attempt"])
			}
			if want.Action != policy.Retry {
				dead := want.Action == policy.DeadLetter
				if ans["state"] != "discarded" || (ans["dead_letter"] == true) != dead || n != limit && want.Reason != policy.ReasonNonRetryable {
					t.Fatalf("attempt %d of %d: %v, want %v", n, limit, ans, want)
				}
				return
			}
			job := ans["job"].(map[string]any)
			errs := job["errors"].([]any)
			failed, _ := time.Parse(time.RFC3339Nano, errs[len(errs)-1].(map[string]any)["occurred_at"].(string))
			next, _ := time.Parse(time.RFC3339Nano, ans["next_attempt_at"].(string))
			// The executor's times end at the last representable instant
			// (2262): a due time beyond it saturates there.
			due := failed.Add(want.Delay)
			if due.After(lastInstant) {
				due = lastInstant
			}
			if ans["state"] != "retryable" || !next.Equal(due) {
				t.Fatalf("attempt %d: %v, next %v, want %v (delay %v)", n, ans, next, due, want.Delay)
			}
			if want.Delay > 0 {
				clock.Set(next.Add(-1))
				if got := fetch(); len(got) != 0 {
					t.Fatalf("attempt %d: fetchable 1ns before next_attempt_at", n)
				}
			}
			clock.Set(next)
		}
	})
}
