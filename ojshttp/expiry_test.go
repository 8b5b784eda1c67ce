package ojshttp_test

import (
	"testing"
	"time"
)

// TestExpiresAtOverHTTP: options.expires_at (RFC 3339 or relative "+PT2S",
// read on the manual clock) discards a job not fetched in time: FETCH 1 ms
// past the deadline finds nothing, the job is discarded with an "expired"
// error and no completed_at (RK-181); an unexpired job runs; the deadline
// is echoed as given.
func TestExpiresAtOverHTTP(t *testing.T) {
	s := newTestServer(t)
	a := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"queue": "ttl", "expires_at": "+PT2S"}}))
	if a["state"] != "available" || ts(t, a["expires_at"]) != start.Add(2*time.Second) {
		t.Fatalf("pushed %v", a)
	}
	b := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"expires_at": "2099-12-31T23:59:59Z", "queue": "far"}))
	if b["expires_at"] != "2099-12-31T23:59:59Z" {
		t.Fatalf("expires_at echoed as %v", b["expires_at"])
	}
	s.advance(2 * time.Second)
	if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+a["id"].(string), nil))["state"]; st != "available" {
		t.Fatalf("at the deadline the job is %v, want available", st)
	}
	s.advance(time.Millisecond)
	f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"ttl"}})
	if jobs := f["jobs"].([]any); len(jobs) != 0 {
		t.Fatalf("fetched past expires_at: %v", f)
	}
	g := job(s.must(200, "GET", "/ojs/v1/jobs/"+a["id"].(string), nil))
	e, _ := g["error"].(map[string]any)
	if g["state"] != "discarded" || g["completed_at"] != nil || g["discarded_at"] == nil || e == nil || e["type"] != "expired" || g["expired"] != "expires_at" {
		t.Fatalf("expired job %v", g)
	}
	f = s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"far"}})
	if jobs := f["jobs"].([]any); len(jobs) != 1 || jobs[0].(map[string]any)["attempt"] != 1.0 {
		t.Fatalf("unexpired job: %v", f)
	}
}

// TestEnqueueTTLOverHTTP: enqueue_ttl (ojs-timeouts §6, seconds, top level
// or in options) discards a job not started within it, with the error of
// ojs-timeouts §8.
func TestEnqueueTTLOverHTTP(t *testing.T) {
	s := newTestServer(t)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "enqueue_ttl": 300}))["id"].(string)
	s.advance(300*time.Second + time.Millisecond)
	g := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
	e, _ := g["error"].(map[string]any)
	if g["state"] != "discarded" || g["enqueue_ttl"] != 300.0 || e == nil || e["type"] != "enqueue_ttl_expired" ||
		e["timeout_kind"] != "enqueue_ttl" || e["limit_seconds"] != 300.0 || e["elapsed_seconds"] != 300.0 {
		t.Fatalf("expired job %v", g)
	}
	for _, bad := range []map[string]any{
		{"enqueue_ttl": 0}, {"enqueue_ttl": -1}, {"enqueue_ttl": 1.5}, {"enqueue_ttl": true},
		{"expires_at": "tomorrow"}, {"expires_at": "+P"}, {"expires_at": "+-PT1S"}, {"expires_at": 5},
		{"scheduled_at": "+PT1s"}, {"expires_at": "2300-01-01T00:00:00Z"},
	} {
		_, m := s.do("POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": bad})
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != "invalid_request" {
			t.Errorf("options %v: %v", bad, m)
		}
	}
}

// TestRelativeScheduledAt: scheduled_at "+PT5S" (the official suite's
// form, which the public OJS servers accept) is 5 s after the server's
// clock reads the PUSH (RK-180).
func TestRelativeScheduledAt(t *testing.T) {
	s := newTestServer(t)
	s.advance(time.Second)
	j := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"scheduled_at": "+PT5S"}}))
	if j["state"] != "scheduled" || ts(t, j["scheduled_at"]) != start.Add(6*time.Second) {
		t.Fatalf("pushed %v", j)
	}
	s.advance(5*time.Second - time.Millisecond)
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"default"}}); len(f["jobs"].([]any)) != 0 {
		t.Fatalf("fetched 1 ms early: %v", f)
	}
	s.advance(time.Millisecond)
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"default"}}); len(f["jobs"].([]any)) != 1 {
		t.Fatalf("not fetched on time: %v", f)
	}
}
