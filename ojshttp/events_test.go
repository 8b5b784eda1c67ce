package ojshttp_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

func eventTypes(m map[string]any) []string {
	var out []string
	for _, e := range m["events"].([]any) {
		out = append(out, e.(map[string]any)["type"].(string))
	}
	return out
}

// TestEvents: the log holds the server's and the executor's events, in
// order, filtered and paged by cursor; a timeout shows as job.failed.
func TestEvents(t *testing.T) {
	c := executor.NewFakeClock(start)
	ev := ojshttp.NewEvents(8)
	e := executor.New(executor.WithClock(c), executor.WithRand(backoff.Fixed(0.5)), executor.WithObserver(ev))
	srv := httptest.NewServer(ojshttp.New(e, ojshttp.WithManualClock(c), ojshttp.WithEvents(ev)))
	defer srv.Close()
	s := &testServer{t: t, srv: srv, clock: c, exec: e}

	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "a.b", "args": []any{},
		"options": map[string]any{"queue": "e", "visibility_timeout_ms": 1000,
			"retry": map[string]any{"max_attempts": 2, "initial_interval": "PT1S", "jitter": false}}}))["id"].(string)
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "other", "args": []any{}, "options": map[string]any{"queue": "o"}})
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"e"}, "worker_id": "w1"})
	s.advance(time.Second) // the reservation expires: a failed attempt
	s.advance(time.Second) // the backoff ends
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"e"}, "worker_id": "w1"})
	s.advance(500 * time.Millisecond)
	s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": id, "result": 7})

	m := s.must(200, "GET", "/ojs/v1/events?queues=e", nil)
	want := []string{"job.enqueued", "job.started", "job.failed", "job.retrying", "job.started", "job.completed"}
	if got := eventTypes(m); len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	} else {
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("events %v, want %v", got, want)
			}
		}
	}
	last := m["events"].([]any)[5].(map[string]any)
	d := last["data"].(map[string]any)
	if last["subject"] != id || d["attempt"] != 2.0 || d["duration_ms"] != 500.0 || d["result"] != 7.0 || d["job_type"] != "a.b" {
		t.Fatalf("job.completed: %v", last)
	}
	failed := m["events"].([]any)[2].(map[string]any)["data"].(map[string]any)["error"].(map[string]any)
	if failed["code"] != executor.TimeoutErrorType || failed["retryable"] != true {
		t.Fatalf("job.failed: %v", failed)
	}
	// Paging: two at a time, by cursor.
	p1 := s.must(200, "GET", "/ojs/v1/events?types=job.started,job.completed&limit=2", nil)
	if got := eventTypes(p1); len(got) != 2 || p1["has_more"] != true {
		t.Fatalf("page 1: %v", p1)
	}
	p2 := s.must(200, "GET", "/ojs/v1/events?types=job.started,job.completed&limit=2&after="+p1["cursor"].(string), nil)
	if got := eventTypes(p2); len(got) != 1 || got[0] != "job.completed" || p2["has_more"] != false {
		t.Fatalf("page 2: %v", p2)
	}
	// The log keeps the last 8 events: three more push out the first two.
	for i := 0; i < 3; i++ {
		s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "other", "args": []any{}, "options": map[string]any{"queue": "o"}})
	}
	all := s.must(200, "GET", "/ojs/v1/events", nil)
	if got := eventTypes(all); len(got) != 8 || got[0] != "job.started" || got[7] != "job.enqueued" {
		t.Fatalf("ring: %v", got)
	}
	s.must(404, "GET", "/ojs/v1/events?after=evt_unknown", nil)
	s.must(400, "GET", "/ojs/v1/events?limit=5000", nil)
}
