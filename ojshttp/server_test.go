package ojshttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// start is the fake clock's start: 2026-01-02T03:04:05Z.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testServer is a server on a manual clock behind httptest.
type testServer struct {
	t     *testing.T
	srv   *httptest.Server
	clock *executor.FakeClock
	exec  *executor.Executor
	h     *ojshttp.Server
}

func newTestServer(t *testing.T, opts ...ojshttp.Option) *testServer {
	t.Helper()
	c := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(c), executor.WithRand(backoff.Fixed(0.25)))
	h := ojshttp.New(e, append([]ojshttp.Option{ojshttp.WithManualClock(c)}, opts...)...)
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return &testServer{t: t, srv: s, clock: c, exec: e, h: h}
}

// do sends a request with a JSON body (nil for none) and decodes the
// answer into a map.
func (ts *testServer) do(method, path string, body any) (int, map[string]any) {
	ts.t.Helper()
	var rd io.Reader
	if body != nil {
		var b []byte
		switch v := body.(type) {
		case string:
			b = []byte(v)
		default:
			var err error
			if b, err = json.Marshal(v); err != nil {
				ts.t.Fatal(err)
			}
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.srv.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ojshttp.MediaType)
	}
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != ojshttp.MediaType {
		ts.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if resp.Header.Get("OJS-Version") != "1.0" || !strings.HasPrefix(resp.Header.Get("X-Request-Id"), "req_") {
		ts.t.Errorf("%s %s: headers %v", method, path, resp.Header)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		ts.t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, m
}

// must is do that insists on the status.
func (ts *testServer) must(status int, method, path string, body any) map[string]any {
	ts.t.Helper()
	got, m := ts.do(method, path, body)
	if got != status {
		ts.t.Fatalf("%s %s: status %d, want %d: %v", method, path, got, status, m)
	}
	return m
}

func (ts *testServer) advance(d time.Duration) {
	ts.t.Helper()
	ts.must(200, "POST", ojshttp.AdminClockPath, map[string]any{"advance_ms": d.Milliseconds()})
}

func job(m map[string]any) map[string]any { return m["job"].(map[string]any) }

func ts(t *testing.T, s any) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s.(string))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRetryLifecycle follows one job through FAIL, backoff, exhaustion to
// the dead letter set and a manual retry, on the manual clock. The
// expected delays are the policy's: initial 1s, coefficient 2, no jitter,
// so 1s after attempt 1 and 2s after attempt 2 (ojs-retry §4).
func TestRetryLifecycle(t *testing.T) {
	s := newTestServer(t)
	pushed := s.must(201, "POST", "/ojs/v1/jobs", map[string]any{
		"type": "email.send", "args": []any{"a@example.com"}, "meta": map[string]any{"trace": "t1"},
		"options": map[string]any{"queue": "mail", "retry": map[string]any{
			"max_attempts": 3, "initial_interval": "PT1S", "backoff_coefficient": 2, "jitter": false,
			"on_exhaustion": "dead_letter"}},
	})
	id := job(pushed)["id"].(string)
	if job(pushed)["state"] != "available" || job(pushed)["attempt"] != 0.0 || job(pushed)["max_attempts"] != 3.0 {
		t.Fatalf("pushed: %v", pushed)
	}
	for attempt, delay := range []time.Duration{time.Second, 2 * time.Second} {
		f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"mail"}})
		jobs := f["jobs"].([]any)
		if len(jobs) != 1 || jobs[0].(map[string]any)["id"] != id || jobs[0].(map[string]any)["attempt"] != float64(attempt+1) {
			t.Fatalf("attempt %d: fetch %v", attempt+1, f)
		}
		n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id,
			"error": map[string]any{"code": "handler_error", "type": "smtp.refused", "message": "refused"}})
		if n["state"] != "retryable" || n["attempt"] != float64(attempt+1) || n["retry_delay_ms"] != float64(delay.Milliseconds()) {
			t.Fatalf("nack %d: %v", attempt+1, n)
		}
		failed := s.clock.Now()
		if got := ts(t, n["next_attempt_at"]); !got.Equal(failed.Add(delay)) {
			t.Fatalf("next_attempt_at %v, want %v", got, failed.Add(delay))
		}
		// Not fetchable one millisecond early, fetchable on time.
		s.advance(delay - time.Millisecond)
		if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"mail"}}); len(f["jobs"].([]any)) != 0 {
			t.Fatalf("fetched early: %v", f)
		}
		s.advance(time.Millisecond)
	}
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"mail"}})
	n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id,
		"error": map[string]any{"code": "handler_error", "message": "still refused"}})
	if n["state"] != "discarded" || n["attempt"] != 3.0 || n["dead_letter"] != true {
		t.Fatalf("exhausted: %v", n)
	}
	info := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
	if errs := info["errors"].([]any); len(errs) != 3 || errs[0].(map[string]any)["type"] != "smtp.refused" ||
		errs[2].(map[string]any)["type"] != "handler_error" || info["meta"].(map[string]any)["trace"] != "t1" {
		t.Fatalf("info: %v", info)
	}
	dl := s.must(200, "GET", "/ojs/v1/dead-letter", nil)
	if l := dl["jobs"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != id {
		t.Fatalf("dead letter: %v", dl)
	}
	r := job(s.must(200, "POST", "/ojs/v1/dead-letter/"+id+"/retry", nil))
	if r["state"] != "available" || r["attempt"] != 0.0 {
		t.Fatalf("retry: %v", r)
	}
	s.must(404, "DELETE", "/ojs/v1/dead-letter/"+id, nil) // no longer a dead letter
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"mail"}})
	a := s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": id, "result": map[string]any{"sent": true}})
	if a["state"] != "completed" || a["acknowledged"] != true {
		t.Fatalf("ack: %v", a)
	}
	if res := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["result"].(map[string]any); res["sent"] != true {
		t.Fatalf("result: %v", res)
	}
}

// TestNonRetryable checks the FAIL mapping of RK-100 and RK-103: a
// dot-namespaced type matches non_retryable_errors with the OJS rules
// (prefix "auth.*" matches "auth.expired", not "authx"), retryable false
// ends the job, and on_exhaustion decides between discard and dead letter.
func TestNonRetryable(t *testing.T) {
	s := newTestServer(t)
	cases := []struct {
		name      string
		err       map[string]any
		onExh     string
		wantState string
		wantDead  bool
	}{
		{"prefix", map[string]any{"type": "auth.expired", "message": "m"}, "discard", "discarded", false},
		{"not prefix", map[string]any{"type": "authx", "message": "m"}, "discard", "retryable", false},
		{"exact", map[string]any{"type": "bad.input", "message": "m"}, "dead_letter", "discarded", true},
		{"code as type", map[string]any{"code": "bad.input", "message": "m"}, "discard", "discarded", false},
		{"retryable false", map[string]any{"code": "handler_error", "message": "m", "retryable": false}, "dead_letter", "discarded", true},
		{"handler code", map[string]any{"code": "DEAD_LETTER", "message": "m"}, "discard", "discarded", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := strings.ReplaceAll(c.name, " ", "-")
			id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
				"options": map[string]any{"queue": q, "retry": map[string]any{"max_attempts": 5,
					"non_retryable_errors": []string{"auth.*", "bad.input"}, "on_exhaustion": c.onExh}}}))["id"].(string)
			s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{q}})
			n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": c.err})
			if n["state"] != c.wantState || (n["dead_letter"] == true) != c.wantDead {
				t.Fatalf("got %v", n)
			}
		})
	}
}

// TestRetryVariants checks the binding's policy spellings (RK-101, RK-102).
func TestRetryVariants(t *testing.T) {
	s := newTestServer(t)
	p := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"retry": map[string]any{"initial_interval_ms": 1500, "max_interval_ms": 60000, "backoff_type": "constant"}}}))
	r := p["retry"].(map[string]any)
	if r["initial_interval"] != "PT1.5S" || r["max_interval"] != "PT1M" || r["backoff_strategy"] != "none" {
		t.Fatalf("retry: %v", r)
	}
	for _, bad := range []map[string]any{
		{"initial_interval_ms": 1000, "initial_interval": "PT1S"},
		{"backoff_type": "linear", "backoff_strategy": "exponential"},
		{"backoff_coefficient": 0.5},
		{"max_attempts": -1},
		{"initial_interval_ms": -5},
	} {
		_, m := s.do("POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"retry": bad}})
		e := m["error"].(map[string]any)
		if e["code"] != "validation_error" || e["retryable"] != false {
			t.Errorf("%v: %v", bad, m)
		}
	}
}

// TestErrors checks the binding's status codes and envelope for bad
// requests.
func TestErrors(t *testing.T) {
	s := newTestServer(t, ojshttp.WithMaxBodySize(1<<10))
	avail := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}}))["id"].(string)
	cases := []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"POST", "/ojs/v1/jobs", "{", 400, "invalid_payload"},
		{"POST", "/ojs/v1/jobs", "null", 400, "invalid_payload"},
		{"POST", "/ojs/v1/jobs", `{"type":"t","args":[]} {}`, 400, "invalid_payload"},
		{"POST", "/ojs/v1/jobs", `{"type":"t","args":["` + strings.Repeat("x", 2000) + `"]}`, 413, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"args": []any{}}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "Bad Type", "args": []any{}}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": map[string]any{}}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "id": "550e8400-e29b-41d4-a716-446655440000"}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "id": avail}, 409, "duplicate"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"priority": 101}}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"unique": map[string]any{"keys": []string{"argz"}}}}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"rate_limit": map[string]any{"max": 1}}}, 400, "invalid_request"},
		{"POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"depends_on": []string{"x"}}}, 422, "unsupported"},
		{"GET", "/ojs/v1/jobs/019539a4-0000-7000-8000-000000000000", nil, 404, "not_found"},
		{"DELETE", "/ojs/v1/jobs/nope", nil, 404, "not_found"},
		{"POST", "/ojs/v1/workers/ack", map[string]any{"job_id": avail}, 409, "conflict"},
		{"POST", "/ojs/v1/workers/nack", map[string]any{"job_id": avail, "error": map[string]any{"message": "x"}}, 409, "conflict"},
		{"POST", "/ojs/v1/workers/nack", map[string]any{"job_id": "nope", "error": map[string]any{"message": "x"}}, 404, "not_found"},
		{"POST", "/ojs/v1/workers/nack", map[string]any{"job_id": avail}, 400, "invalid_request"},
		{"POST", "/ojs/v1/workers/ack", map[string]any{}, 400, "invalid_request"},
		{"POST", "/ojs/v1/workers/fetch", map[string]any{}, 400, "invalid_request"},
		{"POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"q"}, "count": 0}, 400, "invalid_request"},
		{"POST", "/ojs/v1/workers/fetch", map[string]any{"queues": "q"}, 400, "invalid_payload"},
		{"POST", "/ojs/v1/dead-letter/" + avail + "/retry", nil, 404, "not_found"},
		{"GET", "/ojs/v1/dead-letter?limit=0", nil, 400, "invalid_request"},
		{"POST", ojshttp.AdminClockPath, map[string]any{"advance_ms": -1}, 400, "invalid_request"},
		{"PUT", "/ojs/v1/jobs", nil, 404, "not_found"},
	}
	for _, c := range cases {
		got, m := s.do(c.method, c.path, c.body)
		e, _ := m["error"].(map[string]any)
		if got != c.status || e == nil || e["code"] != c.code || e["message"] == "" || e["request_id"] == "" {
			t.Errorf("%s %s %v: %d %v, want %d %s", c.method, c.path, c.body, got, m, c.status, c.code)
		}
	}
	// Wrong content type.
	resp, err := http.Post(s.srv.URL+"/ojs/v1/jobs", "text/plain", strings.NewReader(`{"type":"t","args":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("text/plain: %d", resp.StatusCode)
	}
	// nack with requeue gives the job back without counting the attempt.
	rq := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "rq"}}))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"rq"}})
	if n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": rq, "requeue": true,
		"error": map[string]any{"code": "cancelled", "message": "shutting down"}}); n["state"] != "available" || n["attempt"] != 0.0 {
		t.Fatalf("requeue: %v", n)
	}
	if j := job(s.must(200, "GET", "/ojs/v1/jobs/"+rq, nil)); j["errors"] != nil {
		t.Fatalf("requeue recorded an error: %v", j)
	}
	// Cancel: 200 once, then 409 (terminal).
	s.must(200, "DELETE", "/ojs/v1/jobs/"+avail, nil)
	s.must(409, "DELETE", "/ojs/v1/jobs/"+avail, nil)
}

// TestBatchAtomic: one bad job rejects the whole batch.
func TestBatchAtomic(t *testing.T) {
	s := newTestServer(t)
	id := "019539a4-aaaa-7000-8000-111111111111"
	_, m := s.do("POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{
		map[string]any{"type": "t", "args": []any{1}, "options": map[string]any{"queue": "b"}},
		map[string]any{"type": "t", "args": []any{2}, "id": id, "options": map[string]any{"queue": "b"}},
		map[string]any{"type": "t", "args": []any{3}, "id": id, "options": map[string]any{"queue": "b"}},
	}})
	if m["error"].(map[string]any)["code"] != "duplicate" {
		t.Fatalf("duplicate in batch: %v", m)
	}
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"b"}}); len(f["jobs"].([]any)) != 0 {
		t.Fatalf("a rejected batch left jobs: %v", f)
	}
	ok := s.must(201, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{
		map[string]any{"type": "t", "args": []any{1}, "options": map[string]any{"queue": "b"}},
		map[string]any{"type": "t", "args": []any{2}, "options": map[string]any{"queue": "b"}},
	}})
	if ok["count"] != 2.0 {
		t.Fatalf("batch: %v", ok)
	}
	f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"b"}, "count": 5})
	if jobs := f["jobs"].([]any); len(jobs) != 2 || jobs[0].(map[string]any)["args"].([]any)[0] != 1.0 {
		t.Fatalf("fetch 2: %v", f)
	}
}

// TestVisibilityTimeout: an expired reservation is a failed attempt
// (RET-12) and a heartbeat extends it (RET-13).
func TestVisibilityTimeout(t *testing.T) {
	s := newTestServer(t)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"queue": "v", "visibility_timeout_ms": 1000,
			"retry": map[string]any{"initial_interval": "PT5S", "jitter": false}}}))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"v"}})
	s.advance(900 * time.Millisecond)
	hb := s.must(200, "POST", "/ojs/v1/workers/heartbeat", map[string]any{"worker_id": "w", "active_jobs": []string{id, "nope"}})
	if ext := hb["jobs_extended"].([]any); len(ext) != 1 || ext[0] != id {
		t.Fatalf("heartbeat: %v", hb)
	}
	s.advance(900 * time.Millisecond)
	if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["state"]; st != "active" {
		t.Fatalf("state after heartbeat: %v", st)
	}
	s.advance(100 * time.Millisecond)
	j := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))
	if j["state"] != "retryable" || j["error"].(map[string]any)["type"] != executor.TimeoutErrorType || j["retry_delay_ms"] != 5000.0 {
		t.Fatalf("after expiry: %v", j)
	}
	s.must(409, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": id})
}

// TestManifest: the manifest claims what the server does, no more.
func TestManifest(t *testing.T) {
	s := newTestServer(t)
	m := s.must(200, "GET", "/ojs/manifest", nil)
	caps := m["capabilities"].(map[string]any)
	if m["specversion"] != "1.0" || caps["dead_letter"] != true || caps["unique_jobs"] != true || caps["cron_jobs"] != false {
		t.Fatalf("manifest: %v", m)
	}
	// The implementation's version is the module's build information
	// ("(devel)" in a test binary), never a made-up number.
	if impl := m["implementation"].(map[string]any); impl["name"] != "retrykit" || !strings.HasPrefix(impl["version"].(string), "(devel)") {
		t.Errorf("implementation %v", impl)
	}
	if h := s.must(200, "GET", "/ojs/v1/health", nil); h["status"] != "ok" {
		t.Fatalf("health: %v", h)
	}
	// Without a manual clock there is no clock endpoint.
	e := executor.New()
	srv := httptest.NewServer(ojshttp.New(e))
	defer srv.Close()
	resp, err := http.Post(srv.URL+ojshttp.AdminClockPath, "application/json", strings.NewReader(`{"advance_ms":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("clock endpoint on a real clock: %d", resp.StatusCode)
	}
}

func Example() {
	clock := executor.NewFakeClock(start)
	srv := ojshttp.New(executor.New(executor.WithClock(clock)), ojshttp.WithManualClock(clock))
	call := func(method, path, body string) map[string]any {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", ojshttp.MediaType)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var m map[string]any
		json.Unmarshal(rec.Body.Bytes(), &m)
		return m
	}
	j := call("POST", "/ojs/v1/jobs", `{"type":"email.send","args":[],"options":{"retry":{"initial_interval":"PT2S","jitter":false}}}`)["job"].(map[string]any)
	id := j["id"].(string)
	call("POST", "/ojs/v1/workers/fetch", `{"queues":["default"]}`)
	n := call("POST", "/ojs/v1/workers/nack", fmt.Sprintf(`{"job_id":%q,"error":{"code":"handler_error","message":"down"}}`, id))
	fmt.Println(n["state"], n["attempt"], n["next_attempt_at"])
	call("POST", ojshttp.AdminClockPath, `{"advance_ms":2000}`)
	f := call("POST", "/ojs/v1/workers/fetch", `{"queues":["default"]}`)
	fmt.Println(f["job"].(map[string]any)["attempt"])
	// Output:
	// retryable 1 2026-01-02T03:04:07Z
	// 2
}

// TestReset: WithReset's endpoint empties jobs, pauses and events; without
// the option it does not exist.
func TestReset(t *testing.T) {
	s := newTestServer(t, ojshttp.WithReset())
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "r"}}))["id"].(string)
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "r"}})
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"r"}})
	s.must(200, "POST", "/ojs/v1/queues/r/pause", nil)
	if m := s.must(200, "POST", ojshttp.ResetPath, nil); m["jobs_removed"] != 2.0 {
		t.Fatalf("reset: %v", m)
	}
	s.must(404, "GET", "/ojs/v1/jobs/"+id, nil)
	if st := s.must(200, "GET", "/ojs/v1/queues/r/stats", nil); st["status"] != "active" {
		t.Fatalf("queue after reset: %v", st)
	}
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "id": id})
	plain := newTestServer(t)
	plain.must(404, "POST", ojshttp.ResetPath, nil)
}

// TestMaxBytes: job data beyond the byte budget is refused with 429, and
// deleting jobs gives the budget back.
func TestMaxBytes(t *testing.T) {
	s := newTestServer(t, ojshttp.WithMaxBytes(20_000))
	big := strings.Repeat("x", 4000)
	var ids []string
	for {
		st, m := s.do("POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{big},
			"options": map[string]any{"queue": "m", "retry": map[string]any{"max_attempts": 1, "on_exhaustion": "dead_letter"}}})
		if st == 429 {
			if m["error"].(map[string]any)["code"] != "queue_full" {
				t.Fatalf("429 without queue_full: %v", m)
			}
			break
		}
		if st != 201 || len(ids) > 10 {
			t.Fatalf("push %d: %d %v", len(ids), st, m)
		}
		ids = append(ids, job(m)["id"].(string))
	}
	if len(ids) != 4 {
		t.Fatalf("%d jobs of 4 KB fit in 20 KB", len(ids))
	}
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"m"}})
	s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": ids[0], "error": map[string]any{"message": "x"}})
	s.must(200, "DELETE", "/ojs/v1/dead-letter/"+ids[0], nil)
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{big}})
}

// TestScheduledAndPending: delay_until in the future schedules the job
// until then; pending waits for ACTIVATE.
func TestScheduledAndPending(t *testing.T) {
	s := newTestServer(t)
	at := start.Add(90 * time.Second).Format(time.RFC3339)
	sch := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "s", "delay_until": at}}))
	if sch["state"] != "scheduled" || sch["scheduled_at"] != at {
		t.Fatalf("scheduled: %v", sch)
	}
	s.advance(89 * time.Second)
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"s"}}); len(f["jobs"].([]any)) != 0 {
		t.Fatalf("fetched before delay_until: %v", f)
	}
	s.advance(time.Second)
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"s"}}); len(f["jobs"].([]any)) != 1 {
		t.Fatalf("not fetched at delay_until: %v", f)
	}
	pen := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "s", "pending": true}}))
	id := pen["id"].(string)
	if pen["state"] != "pending" {
		t.Fatalf("pending: %v", pen)
	}
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"s"}}); len(f["jobs"].([]any)) != 0 {
		t.Fatalf("fetched a pending job: %v", f)
	}
	if a := job(s.must(200, "POST", "/ojs/v1/jobs/"+id+"/activate", nil)); a["state"] != "available" || a["previous_state"] != "pending" {
		t.Fatalf("activate: %v", a)
	}
	s.must(409, "POST", "/ojs/v1/jobs/"+id+"/activate", nil)
	s.must(400, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"pending": true, "delay_until": at}})
}
