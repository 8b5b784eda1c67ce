package ojshttp_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit/ojshttp"
)

// pushRetry pushes a job of queue q under the retry policy and fetches it.
func (s *testServer) pushAndFetch(q string, retry map[string]any) string {
	s.t.Helper()
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "api.call", "args": []any{},
		"options": map[string]any{"queue": q, "retry": retry}}))["id"].(string)
	s.fetchOne(q)
	return id
}

func (s *testServer) nack(body map[string]any) map[string]any {
	s.t.Helper()
	return s.must(200, "POST", "/ojs/v1/workers/nack", body)
}

func (s *testServer) delayOf(n map[string]any) time.Duration {
	s.t.Helper()
	return ts(s.t, n["next_attempt_at"]).Sub(s.clock.Now())
}

// The retry extensions over HTTP (docs/extensions.md §2.2): a snooze gives
// the attempt back and records no error; past max_snoozes it spends it.
func TestServeSnoozeKeepsTheAttempt(t *testing.T) {
	s := newTestServer(t)
	id := s.pushAndFetch("q", map[string]any{"max_attempts": 2, "jitter": false, "max_snoozes": 1, "max_snooze": "PT1M"})
	n := s.nack(map[string]any{"job_id": id, "snooze": "PT1H"})
	if n["state"] != "retryable" || n["attempt"] != 0.0 || n["snoozed"] != true || n["snoozes"] != 1.0 || s.delayOf(n) != time.Minute {
		t.Fatalf("snooze: %v, want retryable, attempt 0, snoozed, after max_snooze 1m", n)
	}
	if errs, _ := job(n)["errors"].([]any); len(errs) != 0 {
		t.Fatalf("a snooze recorded errors: %v", errs)
	}
	s.advance(time.Minute)
	if a := s.fetchOne("q")["attempt"]; a != 1.0 {
		t.Fatalf("the snoozed job runs again as attempt %v, want 1", a)
	}
	// The second snooze is past max_snoozes 1: a requested delay bounded
	// by max_interval, spending attempt 1.
	n = s.nack(map[string]any{"job_id": id, "snooze": "PT10S", "error": map[string]any{"type": "api.busy", "message": "m"}})
	if n["attempt"] != 1.0 || n["snoozed"] != nil || s.delayOf(n) != 10*time.Second {
		t.Fatalf("second snooze: %v", n)
	}
}

func TestServeRetryAfterIsBoundedByThePolicy(t *testing.T) {
	s := newTestServer(t)
	id := s.pushAndFetch("q", map[string]any{"max_attempts": 3, "max_retry_after": "PT2M"})
	n := s.nack(map[string]any{"job_id": id, "retry_after": "PT45S", "error": map[string]any{"type": "http.503", "message": "m"}})
	if d := s.delayOf(n); d != 45*time.Second {
		t.Fatalf("retry_after PT45S: delay %v (jitter must not apply)", d)
	}
	s.advance(45 * time.Second)
	s.fetchOne("q")
	n = s.nack(map[string]any{"job_id": id, "retry_after": "PT1H", "error": map[string]any{"type": "http.503", "message": "m"}})
	if d := s.delayOf(n); d != 2*time.Minute {
		t.Fatalf("retry_after PT1H: delay %v, want max_retry_after 2m", d)
	}
}

func TestServeErrorRules(t *testing.T) {
	s := newTestServer(t)
	rules := map[string]any{"max_attempts": 2, "jitter": false, "error_rules": []any{
		map[string]any{"match": []any{"rate_limit.*"}, "max_attempts": 3, "initial_interval": "PT1M", "backoff_strategy": "none"}}}
	id := s.pushAndFetch("q", rules)
	for n := 1; n <= 2; n++ {
		r := s.nack(map[string]any{"job_id": id, "error": map[string]any{"type": "rate_limit.hit", "message": "m"}})
		if r["state"] != "retryable" || s.delayOf(r) != time.Minute {
			t.Fatalf("rate limit at attempt %d: %v, want a retry after the rule's 1m", n, r)
		}
		s.advance(time.Minute)
		s.fetchOne("q")
	}
	if r := s.nack(map[string]any{"job_id": id, "error": map[string]any{"type": "rate_limit.hit", "message": "m"}}); r["state"] != "discarded" {
		t.Fatalf("rate limit at attempt 3 of 3: %v", r)
	}
	// The view echoes the rules in the policy.
	v := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
	if _, ok := v["retry"].(map[string]any)["error_rules"]; !ok {
		t.Fatalf("the job view lost error_rules: %v", v["retry"])
	}
}

func TestServeRefusesBadRetryAfterAndSnooze(t *testing.T) {
	s := newTestServer(t)
	id := s.pushAndFetch("q", map[string]any{"max_snoozes": 1})
	for _, body := range []map[string]any{
		{"job_id": id, "snooze": "PT1S", "retry_after": "PT1S"},
		{"job_id": id, "snooze": "soon"},
		{"job_id": id, "retry_after": "-PT1S", "error": map[string]any{"message": "m"}},
	} {
		if r := s.must(400, "POST", "/ojs/v1/workers/nack", body); r["error"].(map[string]any)["code"] != ojshttp.CodeInvalidRequest {
			t.Errorf("%v: %v", body, r)
		}
	}
	if v := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil)); v["state"] != "active" {
		t.Fatalf("a refused FAIL changed the job: %v", v["state"])
	}
	s.must(422, "POST", "/ojs/v1/jobs", map[string]any{"type": "a.b", "args": []any{},
		"options": map[string]any{"retry": map[string]any{"error_rules": []any{map[string]any{"match": []any{}}}}}})
}

func TestManifestClaimsTheRetryExtensions(t *testing.T) {
	s := newTestServer(t)
	m := s.must(200, "GET", "/ojs/manifest", nil)
	if !slices.Contains(m["extensions"].([]any), any(ojshttp.ManifestRetryExtensions)) {
		t.Fatalf("extensions %v", m["extensions"])
	}
	feats := m[ojshttp.ManifestRetryExtensions].(map[string]any)["features"].([]any)
	for _, f := range []string{"error_rules", "jitter_mode", "retry_after", "snooze"} {
		if !slices.Contains(feats, any(f)) {
			t.Errorf("features %v lack %s", feats, f)
		}
	}
}

// Many workers snoozing at once: every snooze is counted once and gives
// its attempt back (run with -race).
func TestServeConcurrentSnoozes(t *testing.T) {
	s := newTestServer(t)
	const n = 16
	ids := make([]string, n)
	for i := range ids {
		ids[i] = job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "api.call", "args": []any{},
			"options": map[string]any{"queue": "c", "retry": map[string]any{"max_snoozes": 5}}}))["id"].(string)
	}
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"c"}, "count": n})
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, m := s.do("POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "snooze": "PT1S"}); code != 200 || m["snoozed"] != true {
				t.Errorf("%s: %d %v", id, code, m)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if v := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil)); v["snoozes"] != 1.0 || v["attempt"] != 0.0 || v["state"] != "retryable" {
			t.Errorf("%s: snoozes %v attempt %v state %v", id, v["snoozes"], v["attempt"], v["state"])
		}
	}
}
