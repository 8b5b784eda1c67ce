package ojshttp_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

// faultyServer is a manual-clock server with planted faults and a fixed
// jitter draw r (multiplier 0.5 + r).
func faultyServer(t *testing.T, f ojsfault.Set, r float64) *testServer {
	c := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(c), executor.WithRand(backoff.Fixed(r)))
	h := ojshttp.New(e, ojshttp.WithManualClock(c))
	ojsfault.Plant(h, f)
	t.Cleanup(func() { ojsfault.Plant(h, 0) })
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return &testServer{t: t, srv: s, clock: c, exec: e, h: h}
}

// failOnce pushes a job with the retry policy, fetches it and fails it
// with errType; it returns the nack answer.
func failOnce(s *testServer, retry map[string]any, errType string) map[string]any {
	s.t.Helper()
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"queue": "f", "retry": retry}}))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"f"}})
	return s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id,
		"error": map[string]any{"type": errType, "message": "m"}})
}

// TestPlantedFaults: each planted fault shows on the wire the way a
// checker of live servers should catch it, and the same requests on a
// server without faults show the correct value.
func TestPlantedFaults(t *testing.T) {
	jit := map[string]any{"initial_interval": "PT10S", "max_interval": "PT10S", "jitter": true}
	plain := map[string]any{"initial_interval": "PT2S", "jitter": false}
	regex := map[string]any{"non_retryable_errors": []string{"auth.*"}}

	for _, c := range []struct {
		fault ojsfault.Set
		check func(s *testServer, faulty bool)
	}{
		{ojsfault.AttemptOffByOne, func(s *testServer, faulty bool) {
			n := failOnce(s, plain, "x")
			if want := map[bool]float64{false: 1, true: 0}[faulty]; n["attempt"] != want {
				t.Errorf("faulty=%v: attempt %v, want %v", faulty, n["attempt"], want)
			}
		}},
		{ojsfault.NoCapAfterJitter, func(s *testServer, faulty bool) {
			// Draw 0.9: multiplier 1.4. Correct: min(10s*1.4, 10s) = 10s.
			// Without the last cap: 14s.
			n := failOnce(s, jit, "x")
			if want := map[bool]float64{false: 10000, true: 14000}[faulty]; n["retry_delay_ms"] != want {
				t.Errorf("faulty=%v: delay %v, want %v", faulty, n["retry_delay_ms"], want)
			}
		}},
		{ojsfault.RegexMatch, func(s *testServer, faulty bool) {
			n := failOnce(s, regex, "authx")
			if want := map[bool]string{false: "retryable", true: "discarded"}[faulty]; n["state"] != want {
				t.Errorf("faulty=%v: state %v, want %v", faulty, n["state"], want)
			}
		}},
		{ojsfault.EarlyRetry, func(s *testServer, faulty bool) {
			n := failOnce(s, plain, "x")
			if !ts(t, n["next_attempt_at"]).Equal(s.clock.Now().Add(2 * time.Second)) {
				t.Errorf("faulty=%v: next_attempt_at %v", faulty, n["next_attempt_at"])
			}
			s.advance(time.Second)
			f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"f"}})
			if got := len(f["jobs"].([]any)) == 1; got != faulty {
				t.Errorf("faulty=%v: fetchable after half the delay: %v", faulty, got)
			}
		}},
	} {
		t.Run(c.fault.String(), func(t *testing.T) {
			c.check(faultyServer(t, 0, 0.9), false)
			c.check(faultyServer(t, c.fault, 0.9), true)
		})
	}
}

func TestFaultNames(t *testing.T) {
	all, err := ojsfault.Parse("attempt-off-by-one, no-cap-after-jitter,regex-match,early-retry")
	if err != nil || all.String() != "attempt-off-by-one,no-cap-after-jitter,regex-match,early-retry" {
		t.Fatalf("%v %v", all, err)
	}
	if _, err := ojsfault.Parse("nope"); err == nil {
		t.Fatal("unknown fault accepted")
	}
}
