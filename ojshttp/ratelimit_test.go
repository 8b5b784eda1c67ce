package ojshttp_test

import (
	"strings"
	"testing"
	"time"
)

func fetchIDs(s *testServer, queue string, count int) []string {
	s.t.Helper()
	f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{queue}, "count": count})
	var ids []string
	for _, j := range f["jobs"].([]any) {
		ids = append(ids, j.(map[string]any)["id"].(string))
	}
	return ids
}

// TestRateLimitedPushFetchInspect: ojs-rate-limiting over HTTP. A job of
// a key at its concurrency stays available with attempt 0 while FETCH
// serves the next eligible job; the key's state shows the counts; after
// the ack it is fetched as attempt 1.
func TestRateLimitedPushFetchInspect(t *testing.T) {
	s := newTestServer(t)
	rl := map[string]any{"key": "stripe-api", "concurrency": 1, "rate": map[string]any{"limit": 10, "period": "PT1M"}}
	a := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{1}, "options": map[string]any{"queue": "rl", "rate_limit": rl}}))
	b := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{2}, "rate_limit": rl, "queue": "rl"}))
	c := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{3}, "options": map[string]any{"queue": "rl"}}))
	if v := a["rate_limit"].(map[string]any); v["key"] != "stripe-api" || v["concurrency"] != 1.0 || v["on_limit"] != "wait" ||
		v["rate"].(map[string]any)["period"] != "PT1M" {
		t.Fatalf("rate_limit view: %v", v)
	}
	if got := fetchIDs(s, "rl", 3); len(got) != 2 || got[0] != a["id"] || got[1] != c["id"] {
		t.Fatalf("fetch of 3: %v, want a and c (b held back)", got)
	}
	if j := job(s.must(200, "GET", "/ojs/v1/jobs/"+b["id"].(string), nil)); j["state"] != "available" || j["attempt"] != 0.0 {
		t.Fatalf("held-back job: %v", j)
	}
	st := s.must(200, "GET", "/ojs/v1/rate-limits/stripe-api", nil)
	if st["key"] != "stripe-api" || st["waiting_count"] != 1.0 || st["concurrency"].(map[string]any)["active"] != 1.0 ||
		st["rate"].(map[string]any)["current_count"] != 1.0 {
		t.Fatalf("inspect: %v", st)
	}
	if l := s.must(200, "GET", "/ojs/v1/rate-limits", nil); len(l["items"].([]any)) != 1 {
		t.Fatalf("list: %v", l)
	}
	s.must(404, "GET", "/ojs/v1/rate-limits/unknown-key", nil)
	s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": a["id"]})
	if got := fetchIDs(s, "rl", 1); len(got) != 1 || got[0] != b["id"] {
		t.Fatalf("after the ack: %v, want b", got)
	}
	if j := job(s.must(200, "GET", "/ojs/v1/jobs/"+b["id"].(string), nil)); j["attempt"] != 1.0 {
		t.Fatalf("b's first start: %v", j)
	}
}

// TestMaxPerSecondIsAWindowOfOneSecond: the form of the official suite's
// L4-RL-001 and ojs-extension-lifecycle §8.3 (RK-288): max_per_second 1
// without key limits the queue's jobs to one start per second.
func TestMaxPerSecondIsAWindowOfOneSecond(t *testing.T) {
	s := newTestServer(t)
	for i := range 3 {
		s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{i}, "options": map[string]any{"queue": "rlq", "rate_limit": map[string]any{"max_per_second": 1}}})
	}
	if got := fetchIDs(s, "rlq", 1); len(got) != 1 {
		t.Fatalf("first fetch: %v", got)
	}
	if got := fetchIDs(s, "rlq", 1); len(got) != 0 {
		t.Fatalf("second fetch within the second: %v", got)
	}
	s.advance(999 * time.Millisecond)
	if got := fetchIDs(s, "rlq", 1); len(got) != 0 {
		t.Fatalf("at 999 ms: %v", got)
	}
	s.advance(time.Millisecond)
	if got := fetchIDs(s, "rlq", 5); len(got) != 1 {
		t.Fatalf("at 1 s: %v, want one", got)
	}
	if st := s.must(200, "GET", "/ojs/v1/rate-limits/queue:rlq", nil); st["rate"].(map[string]any)["limit"] != 1.0 {
		t.Fatalf("the queue's key: %v", st)
	}
}

// TestRateLimitDropAndReschedule: on_limit drop discards the job without
// running, with a rate_limited error and attempt 0; reschedule makes it
// scheduled for when the window allows.
func TestRateLimitDropAndReschedule(t *testing.T) {
	s := newTestServer(t)
	w := map[string]any{"limit": 1, "period": "PT10S"}
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "d", "rate_limit": map[string]any{"key": "k", "rate": w}}})
	d := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "d", "rate_limit": map[string]any{"key": "k", "rate": w, "on_limit": "drop"}}}))
	r := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "d", "rate_limit": map[string]any{"key": "k", "rate": w, "on_limit": "reschedule"}}}))
	if got := fetchIDs(s, "d", 3); len(got) != 1 {
		t.Fatalf("fetch: %v", got)
	}
	dj := job(s.must(200, "GET", "/ojs/v1/jobs/"+d["id"].(string), nil))
	if dj["state"] != "discarded" || dj["attempt"] != 0.0 || dj["error"].(map[string]any)["type"] != "rate_limited" {
		t.Fatalf("dropped: %v", dj)
	}
	rj := job(s.must(200, "GET", "/ojs/v1/jobs/"+r["id"].(string), nil))
	if rj["state"] != "scheduled" || rj["attempt"] != 0.0 || rj["scheduled_at"] != "2026-01-02T03:04:15Z" {
		t.Fatalf("rescheduled: %v", rj)
	}
}

// TestRateLimitRefusedNamesTheField: a bad rate_limit is 400 naming the
// field, and nothing is stored.
func TestRateLimitRefusedNamesTheField(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct {
		rl    any
		field string
	}{
		{"x", "options.rate_limit"},
		{map[string]any{"concurrency": 1}, "options.rate_limit.key"},
		{map[string]any{"key": "bad key"}, "options.rate_limit.key"},
		{map[string]any{"key": "k", "concurrency": -1}, "options.rate_limit.concurrency"},
		{map[string]any{"key": "k", "concurrency": 1.5}, "options.rate_limit.concurrency"},
		{map[string]any{"key": "k", "rate": 1}, "options.rate_limit.rate"},
		{map[string]any{"key": "k", "rate": 1, "period": "second"}, "options.rate_limit.period"}, // the suite's EXT-RL-004 (RK-289)
		{map[string]any{"key": "k", "rate": map[string]any{"limit": 1}}, "options.rate_limit.rate.period"},
		{map[string]any{"key": "k", "rate": map[string]any{"limit": 0, "period": "PT1S"}}, "options.rate_limit.rate.limit"},
		{map[string]any{"key": "k", "throttle": map[string]any{"limit": 1, "period": "P-1D"}}, "options.rate_limit.throttle.period"},
		{map[string]any{"key": "k", "on_limit": "reject"}, "options.rate_limit.on_limit"},
		{map[string]any{"key": "k", "burst": 3}, "options.rate_limit.burst"},
		{map[string]any{"max_per_second": 0}, "options.rate_limit.max_per_second"},
	} {
		e := s.must(400, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"rate_limit": c.rl}})["error"].(map[string]any)
		if e["details"].(map[string]any)["field"] != c.field || !strings.Contains(e["message"].(string), c.field) {
			t.Errorf("%v: %v, want field %s", c.rl, e, c.field)
		}
	}
	if n := s.exec.Len(); n != 0 {
		t.Fatalf("refused PUSHes left %d jobs", n)
	}
}

// TestQueueRateLimitAdminRoute: ojs-rate-limiting §7.2's admin route sets
// a queue's limit, which holds every job of the queue; GET reads it and
// DELETE removes it.
func TestQueueRateLimitAdminRoute(t *testing.T) {
	s := newTestServer(t)
	s.must(404, "GET", "/ojs/v1/admin/queues/email/rate-limit", nil)
	put := s.must(200, "PUT", "/ojs/v1/admin/queues/email/rate-limit", map[string]any{"concurrency": 1, "rate": map[string]any{"limit": 1000, "period": "PT1H"}})
	if put["concurrency"] != 1.0 || put["rate"].(map[string]any)["limit"] != 1000.0 {
		t.Fatalf("PUT: %v", put)
	}
	for i := range 2 {
		s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{i}, "options": map[string]any{"queue": "email"}})
	}
	if got := fetchIDs(s, "email", 2); len(got) != 1 {
		t.Fatalf("fetch under queue concurrency 1: %v", got)
	}
	if g := s.must(200, "GET", "/ojs/v1/admin/queues/email/rate-limit", nil); g["rate"].(map[string]any)["period"] != "PT1H" {
		t.Fatalf("GET: %v", g)
	}
	s.must(400, "PUT", "/ojs/v1/admin/queues/email/rate-limit", map[string]any{"concurrency": -1})
	s.must(400, "PUT", "/ojs/v1/admin/queues/email/rate-limit", map[string]any{"key": "x"})
	s.must(200, "DELETE", "/ojs/v1/admin/queues/email/rate-limit", nil)
	if got := fetchIDs(s, "email", 2); len(got) != 1 {
		t.Fatalf("fetch after DELETE: %v", got)
	}
}

// TestRateLimitEvents: ojs-rate-limiting §11.1. A job held back by its
// key's concurrency logs rate_limit.exceeded once however many FETCHes
// skip it, rate_limit.released when it starts, and a dropped job
// rate_limit.dropped, each with its key.
func TestRateLimitEvents(t *testing.T) {
	s := budgetServer(t, nil)
	rl := map[string]any{"key": "k", "concurrency": 1}
	a := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "ev", "rate_limit": rl}}))
	b := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "ev", "rate_limit": rl}}))
	d := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "ev",
		"rate_limit": map[string]any{"key": "k", "concurrency": 1, "on_limit": "drop"}}}))
	for range 3 {
		fetchIDs(s, "ev", 1)
	}
	s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": a["id"]})
	fetchIDs(s, "ev", 1)
	var got []string
	for _, e := range s.must(200, "GET", "/ojs/v1/events?queues=ev", nil)["events"].([]any) {
		e := e.(map[string]any)
		typ := e["type"].(string)
		if !strings.HasPrefix(typ, "rate_limit.") {
			continue
		}
		data := e["data"].(map[string]any)
		if data["key"] != "k" {
			t.Errorf("%s without key k: %v", typ, e)
		}
		got = append(got, typ+" "+data["job_id"].(string))
		if typ == "rate_limit.exceeded" && (data["strategy"] != "concurrency" || data["limit"] != 1.0 || data["current"] != 1.0) {
			t.Errorf("exceeded: %v", data)
		}
	}
	want := []string{"rate_limit.exceeded " + b["id"].(string), "rate_limit.exceeded " + d["id"].(string), "rate_limit.dropped " + d["id"].(string),
		"rate_limit.released " + b["id"].(string)}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("rate limit events:\n got %v\nwant %v", got, want)
	}
}
