package ojshttp_test

import (
	"testing"
	"time"
)

// The binding §11.2–§11.4: the statistics, pause and resume answers name
// the queue as a string, with the counts under "stats" (RK-280).
func TestQueueStatsPauseResumeFollowTheBinding(t *testing.T) {
	s := newTestServer(t)
	for range 3 {
		s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "st"}})
	}
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"st"}})
	st := s.must(200, "GET", "/ojs/v1/queues/st/stats", nil)
	stats := st["stats"].(map[string]any)
	if st["queue"] != "st" || st["status"] != "active" || stats["available"] != 2.0 || stats["active"] != 1.0 ||
		stats["completed"] != 0.0 || st["computed_at"] != "2026-01-02T03:04:05Z" {
		t.Fatalf("stats: %v", st)
	}
	s.clock.Advance(1500 * time.Millisecond)
	p := s.must(200, "POST", "/ojs/v1/queues/st/pause", nil)
	if p["queue"] != "st" || p["status"] != "paused" || p["paused_at"] != "2026-01-02T03:04:06.5Z" {
		t.Fatalf("pause: %v", p)
	}
	if st := s.must(200, "GET", "/ojs/v1/queues/st/stats", nil); st["status"] != "paused" {
		t.Fatalf("stats of a paused queue: %v", st)
	}
	r := s.must(200, "POST", "/ojs/v1/queues/st/resume", nil)
	if r["queue"] != "st" || r["status"] != "active" || r["resumed_at"] == nil {
		t.Fatalf("resume: %v", r)
	}
}

// A batch of 100 jobs (the suite's L4-BULK-003 shape) is created whole, each
// available, and the queue statistics count them all.
func TestBatchOfHundredCountedInQueueStats(t *testing.T) {
	s := newTestServer(t)
	jobs := make([]any, 100)
	for i := range jobs {
		jobs[i] = map[string]any{"type": "bulk.test.large", "args": []any{map[string]any{"i": i}}, "options": map[string]any{"queue": "bulk"}}
	}
	m := s.must(201, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": jobs})
	got := m["jobs"].([]any)
	if len(got) != 100 || m["count"] != 100.0 {
		t.Fatalf("batch: %d jobs, count %v", len(got), m["count"])
	}
	seen := map[any]bool{}
	for _, j := range got {
		j := j.(map[string]any)
		if j["state"] != "available" || seen[j["id"]] {
			t.Fatalf("batch job: %v", j)
		}
		seen[j["id"]] = true
	}
	if st := s.must(200, "GET", "/ojs/v1/queues/bulk/stats", nil)["stats"].(map[string]any); st["available"] != 100.0 {
		t.Fatalf("stats: %v", st)
	}
}
