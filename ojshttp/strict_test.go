package ojshttp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// TestWireStrictness: the wire refuses, naming the field, what the
// library refuses (a repeated key, a number given as a string) and what
// it could not echo as JSON (bytes that are not UTF-8), and a refused
// request creates nothing.
func TestWireStrictness(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, field string
	}{
		{"invalid UTF-8 in args", "/ojs/v1/jobs", "{\"type\":\"t\",\"args\":[\"ok\xff\"]}", "args[0]"},
		{"invalid UTF-8 in meta", "/ojs/v1/jobs", "{\"type\":\"t\",\"args\":[],\"meta\":{\"k\":\"\xc3\"}}", "meta.k"},
		{"invalid UTF-8 in a batch", "/ojs/v1/jobs/batch", "{\"jobs\":[{\"type\":\"t\",\"args\":[]},{\"type\":\"t\",\"args\":[\"\xfe\"]}]}", "jobs[1].args[0]"},
		{"duplicate retry key", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"retry":{"max_attempts":3,"max_attempts":5}}}`, "options.retry.max_attempts"},
		{"duplicate envelope key", "/ojs/v1/jobs", `{"type":"t","type":"u","args":[]}`, "type"},
		{"visibility_timeout_ms as a string", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"visibility_timeout_ms":"100"}}`, "options.visibility_timeout_ms"},
		{"priority as a string", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"priority":"5"}}`, "options.priority"},
		{"a null tag", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"tags":[null]}}`, "options.tags[0]"},
		{"fetch count as a string", "/ojs/v1/workers/fetch", `{"queues":["default"],"count":"2"}`, "count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			code, m := s.do("POST", tc.path, tc.body)
			e, _ := m["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			if code != 400 || d["field"] != tc.field {
				t.Fatalf("%d %v, want 400 naming %s", code, m, tc.field)
			}
			if n := s.exec.Len(); n != 0 {
				t.Fatalf("a refused PUSH created %d jobs", n)
			}
		})
	}
	// The library's reading of the same retry object: refused too.
	if _, err := policy.Parse([]byte(`{"max_attempts":3,"max_attempts":5}`)); err == nil {
		t.Fatal("policy.Parse accepts a repeated key")
	}
}

// TestDeduplicatedBatchAnswers200: a batch in which every job is answered
// by an existing one (on_conflict ignore) created nothing: 200, not 201.
func TestDeduplicatedBatchAnswers200(t *testing.T) {
	s := newTestServer(t)
	u := map[string]any{"keys": []string{"type"}, "on_conflict": "ignore"}
	s.must(201, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{uniqueJob("d.a", []any{}, u, nil), uniqueJob("d.b", []any{}, u, nil)}})
	m := s.must(200, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{uniqueJob("d.a", []any{}, u, nil), uniqueJob("d.b", []any{}, u, nil)}})
	if d, _ := m["deduplicated"].([]any); len(d) != 2 {
		t.Fatalf("all-deduplicated batch: %v", m)
	}
	s.must(201, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{uniqueJob("d.a", []any{}, u, nil), uniqueJob("d.c", []any{}, u, nil)}})
}

// TestRetryPastLastInstantIsMarked: a retry whose delay ends after the
// executor's last instant (April 2262) is due at that instant, and the
// FAIL answer and the job view say so with next_attempt_at_capped.
func TestRetryPastLastInstantIsMarked(t *testing.T) {
	s := newTestServer(t)
	s.advance(100 * 365 * 24 * time.Hour)
	s.advance(70 * 365 * 24 * time.Hour)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"queue":"far","retry":{"max_attempts":3,"initial_interval":"P36500D","max_interval":"P36500D","jitter":false}}}`))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"far"}})
	m := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"message": "x"}})
	if m["next_attempt_at_capped"] != true || !strings.HasPrefix(m["next_attempt_at"].(string), "2262-04-11T23:47:16") {
		t.Fatalf("a retry due in 2296: %v %v", m["next_attempt_at"], m["next_attempt_at_capped"])
	}
	if v := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil)); v["next_attempt_at_capped"] != true {
		t.Fatalf("view: %v", v)
	}
	// A retry due before the last instant is not marked.
	id = job(s.must(201, "POST", "/ojs/v1/jobs", `{"type":"t","args":[],"options":{"queue":"near","retry":{"max_attempts":3,"initial_interval":"PT1S","jitter":false}}}`))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"near"}})
	if m := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"message": "x"}}); m["next_attempt_at_capped"] != nil {
		t.Fatalf("a near retry marked capped: %v", m)
	}
}
