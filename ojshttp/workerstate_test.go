package ojshttp_test

import "testing"

// TestWorkerDirectives: an operator quiets, then terminates a worker; its
// heartbeats answer that state (ojs-worker-protocol §4.4, two-phase
// shutdown §7.5), other workers keep running, and a terminated worker is
// never sent back (§2.3).
func TestWorkerDirectives(t *testing.T) {
	s := newTestServer(t)
	beat := func(worker string, body map[string]any) string {
		t.Helper()
		body["worker_id"] = worker
		return s.must(200, "POST", "/ojs/v1/workers/heartbeat", body)["state"].(string)
	}
	if got := beat("w1", map[string]any{"active_jobs": []string{}}); got != "running" {
		t.Fatalf("first heartbeat: %s", got)
	}
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"q"}, "worker_id": "w2"})
	s.must(404, "POST", "/ojs/v1/admin/workers/nobody/quiet", nil)
	if m := s.must(200, "POST", "/ojs/v1/admin/workers/w1/quiet", nil); m["previous_state"] != "running" {
		t.Fatalf("quiet: %v", m)
	}
	// The worker protocol's heartbeat: active_jobs a count, active_job_ids the ids.
	if got := beat("w1", map[string]any{"state": "running", "active_jobs": 0, "active_job_ids": []string{}}); got != "quiet" {
		t.Fatalf("after quiet: %s", got)
	}
	if got := beat("w2", map[string]any{}); got != "running" {
		t.Fatalf("other worker: %s", got)
	}
	s.must(200, "POST", "/ojs/v1/admin/workers/w1/terminate", nil)
	if got := beat("w1", map[string]any{}); got != "terminate" {
		t.Fatalf("after terminate: %s", got)
	}
	s.must(409, "POST", "/ojs/v1/admin/workers/w1/quiet", nil)
	m := s.must(200, "GET", "/ojs/v1/admin/workers", nil)
	sum := m["summary"].(map[string]any)
	if sum["total"] != 2.0 || sum["terminate"] != 1.0 || sum["running"] != 1.0 {
		t.Fatalf("workers: %v", m)
	}
	s.must(400, "POST", "/ojs/v1/workers/heartbeat", map[string]any{"worker_id": "w3", "active_jobs": -1})
	s.must(400, "POST", "/ojs/v1/workers/heartbeat", map[string]any{"worker_id": "w3", "active_jobs": "x"})
}
