package ojshttp_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// versionProbe sends GET /ojs/v1/health with the OJS-Version header v and
// returns the status and the answer's OJS-Version header.
func (ts *testServer) versionProbe(v string) (int, string, map[string]any) {
	ts.t.Helper()
	req, _ := http.NewRequest("GET", ts.srv.URL+"/ojs/v1/health", nil)
	req.Header.Set("OJS-Version", v)
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, resp.Header.Get("OJS-Version"), m
}

// TestVersionHeaderAcceptsEveryOneX: every 1.x OJS-Version is processed
// as 1.0 and the answer says so (RK-175); the Go SDK sends 1.0.0-rc.1, the
// JS SDK 1.0. Another major, or a header that is no version, is refused
// with 422 unsupported naming the header.
func TestVersionHeaderAcceptsEveryOneX(t *testing.T) {
	s := newTestServer(t)
	for _, v := range []string{"1", "1.0", "1.0.0", "1.0.0-rc.1", "1.2", "1.0.0+build.7", "1.1.0-alpha-2.x+b"} {
		status, got, m := s.versionProbe(v)
		if status != 200 || got != "1.0" {
			t.Errorf("OJS-Version %q: status %d, answered version %q: %v", v, status, got, m)
		}
	}
	for _, v := range []string{"2", "2.0", "0.9", "10.0", "1.", "1..0", "1.0.0.0", "1.x", "v1.0", "1.0-", "1.0+", "1.0-rc..1", "1.0.0-rc_1", strings.Repeat("1", 70)} {
		status, _, m := s.versionProbe(v)
		e, _ := m["error"].(map[string]any)
		if status != 422 || e == nil || e["code"] != "unsupported" || !strings.Contains(e["message"].(string), "OJS-Version") {
			t.Errorf("OJS-Version %q: status %d: %v", v, status, m)
		}
	}
}

// TestManifestShape: the manifest has the fields of ojs-conformance §4.1
// (specversion, conformance_tier, extensions as an array of strings) and
// of the binding's §21 (ojs_version, capabilities of booleans, endpoints
// of strings), the shapes the official Go SDK decodes (RK-176); the
// x-retrykit extension is named in extensions and described at the top
// level.
func TestManifestShape(t *testing.T) {
	s := newTestServer(t)
	resp, err := http.Get(s.srv.URL + "/ojs/manifest")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		SpecVersion      string            `json:"specversion"`
		OJSVersion       string            `json:"ojs_version"`
		ConformanceLevel int               `json:"conformance_level"`
		ConformanceTier  string            `json:"conformance_tier"`
		Protocols        []string          `json:"protocols"`
		Backend          string            `json:"backend"`
		Capabilities     map[string]bool   `json:"capabilities"`
		Extensions       []string          `json:"extensions"`
		Endpoints        map[string]string `json:"endpoints"`
		Retrykit         map[string]any    `json:"x-retrykit"`
	}
	dec := json.NewDecoder(resp.Body)
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("manifest does not decode into the SDK's shapes: %v", err)
	}
	if m.SpecVersion != "1.0" || m.OJSVersion != "1.0" || m.ConformanceTier != "runtime" || m.ConformanceLevel != 1 ||
		m.Backend != "memory" || len(m.Protocols) != 1 || m.Protocols[0] != "http" {
		t.Fatalf("manifest %+v", m)
	}
	if !slices.Equal(m.Extensions, []string{"x-retrykit", "urn:ojs:ext:timeouts", "urn:ojs:ext:dead-letter", "urn:ojs:ext:rate-limiting", "x-retry-extensions"}) || m.Retrykit["clock_endpoint"] != "/x-retrykit/v1/clock/advance" {
		t.Fatalf("extensions %v, x-retrykit %v", m.Extensions, m.Retrykit)
	}
	if !m.Capabilities["job_ttl"] || !m.Capabilities["delayed_jobs"] || m.Capabilities["cron_jobs"] || m.Capabilities["workflows"] || !m.Capabilities["rate_limiting"] {
		t.Fatalf("capabilities %v", m.Capabilities)
	}
	if m.Endpoints["health"] != "/ojs/v1/health" || m.Endpoints["x-retrykit-clock"] != "/x-retrykit/v1/clock/advance" {
		t.Fatalf("endpoints %v", m.Endpoints)
	}
}

// TestFailCodeReadBackAsSent: the code a FAIL sends comes back in the
// job's error and errors as sent (RK-177): the SDKs' "handler_error" is
// not shown as the handler code RETRY the executor applied, while a
// handler code still acts (DISCARD ends the job) and still reads back;
// a FAIL without a code shows the handler code RETRY; a visibility
// timeout shows RETRY too.
func TestFailCodeReadBackAsSent(t *testing.T) {
	s := newTestServer(t)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"retry": map[string]any{"max_attempts": 5, "initial_interval": "PT1S", "jitter": false}}}))["id"].(string)
	fail := func(e map[string]any) map[string]any {
		s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"default"}})
		return s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": e})
	}
	n := fail(map[string]any{"code": "handler_error", "message": "boom"})
	je := job(n)["error"].(map[string]any)
	if n["state"] != "retryable" || je["code"] != "handler_error" || je["message"] != "boom" {
		t.Fatalf("handler_error: %v", n)
	}
	s.advance(time.Second)
	fail(map[string]any{"type": "db.timeout", "message": "no code"})
	s.advance(2 * time.Second)
	n = fail(map[string]any{"code": "DISCARD", "type": "bad.input", "message": "stop"})
	if n["state"] != "discarded" {
		t.Fatalf("DISCARD did not act: %v", n)
	}
	errs := job(s.must(200, "GET", "/ojs/v1/jobs/"+id, nil))["errors"].([]any)
	want := []struct{ code, typ string }{{"handler_error", "handler_error"}, {"RETRY", "db.timeout"}, {"DISCARD", "bad.input"}}
	if len(errs) != len(want) {
		t.Fatalf("errors %v", errs)
	}
	for i, w := range want {
		e := errs[i].(map[string]any)
		if e["code"] != w.code || e["type"] != w.typ || e["attempt"] != float64(i+1) {
			t.Errorf("errors[%d] = %v, want code %q type %q", i, e, w.code, w.typ)
		}
	}
	// A code longer than any error type is refused, naming the field.
	id2 := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "long"}}))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"long"}})
	_, m := s.do("POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id2, "error": map[string]any{"code": strings.Repeat("x", 5000)}})
	if e, _ := m["error"].(map[string]any); e == nil || e["details"].(map[string]any)["field"] != "error.code" {
		t.Fatalf("long code: %v", m)
	}
}

// TestUniqueCoreSpellings: options.unique accepts ojs-core's key (the
// args fields of the fingerprint; all args when empty) and the Go SDK's
// period_ms beside ojs-unique-jobs' keys and period (RK-178), and the
// job echoes the policy as sent.
func TestUniqueCoreSpellings(t *testing.T) {
	s := newTestServer(t)
	u := map[string]any{"key": []string{"user"}, "period_ms": 60000, "on_conflict": "reject"}
	first := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7, "body": "a"}}, u, nil)))
	if got := first["unique"].(map[string]any); got["period_ms"] != 60000.0 || got["key"].([]any)[0] != "user" || got["keys"] != nil {
		t.Fatalf("unique echoed as %v", got)
	}
	// Same user, other body: a duplicate, since only args field user counts.
	_, m := s.do("POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7, "body": "b"}}, u, nil))
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != "duplicate" {
		t.Fatalf("same key field: %v", m)
	}
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 8}}, u, nil))
	// period_ms 60000 is a one-minute window from the first job's created_at.
	s.advance(60 * time.Second)
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("mail.send", []any{map[string]any{"user": 7}}, u, nil))

	// key [] is all args: other args are another job.
	all := map[string]any{"key": []string{}}
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{1}, all, nil))
	s.must(409, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{1}, all, nil))
	s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("r.gen", []any{2}, all, nil))

	for _, bad := range []map[string]any{
		{"key": []string{"a"}, "keys": []string{"type"}},
		{"key": []string{"a"}, "args_keys": []string{"a"}},
		{"period": "PT1M", "period_ms": 60000},
		{"period_ms": 0},
		{"period_ms": -5},
		{"period_ms": 1.5},
		{"period_ms": "60000x"},
		{"key": "user"},
	} {
		_, m := s.do("POST", "/ojs/v1/jobs", uniqueJob("t", []any{map[string]any{"a": 1}}, bad, nil))
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != "invalid_request" {
			t.Errorf("unique %v: %v", bad, m)
		}
	}
}
