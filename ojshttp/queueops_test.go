package ojshttp_test

import (
	"testing"
)

// The official suite reads queue statistics and the pause and resume
// answers as a "queue" object (RK-191); the binding's fields stay.
func TestQueueObjectInStatsPauseResume(t *testing.T) {
	s := newTestServer(t)
	for range 3 {
		s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "st"}})
	}
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"st"}})
	st := s.must(200, "GET", "/ojs/v1/queues/st/stats", nil)
	q := st["queue"].(map[string]any)
	if q["name"] != "st" || q["available"] != 2.0 || q["active"] != 1.0 || q["completed"] != 0.0 || q["paused"] != false ||
		st["status"] != "active" || st["stats"].(map[string]any)["available"] != 2.0 {
		t.Fatalf("stats: %v", st)
	}
	p := s.must(200, "POST", "/ojs/v1/queues/st/pause", nil)
	if q := p["queue"].(map[string]any); q["name"] != "st" || q["paused"] != true || p["status"] != "paused" {
		t.Fatalf("pause: %v", p)
	}
	r := s.must(200, "POST", "/ojs/v1/queues/st/resume", nil)
	if q := r["queue"].(map[string]any); q["paused"] != false || q["available"] != 2.0 || r["status"] != "active" {
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
	if q := s.must(200, "GET", "/ojs/v1/queues/bulk/stats", nil)["queue"].(map[string]any); q["available"] != 100.0 {
		t.Fatalf("stats: %v", q)
	}
}
