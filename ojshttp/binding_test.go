package ojshttp_test

import (
	"encoding/json"

	"github.com/retrykit/retrykit/ojshttp"
	"net/http"
	"strings"
	"testing"
)

// TestPausedQueueRefusesPushAndStoresNothing: the binding §11.3. A PUSH to
// a paused queue is 422 queue_paused naming the queue, retryable, alone or
// in a batch, and leaves no job; a paused queue is not fetched from; after
// the resume the same PUSH is accepted (RK-282).
func TestPausedQueueRefusesPushAndStoresNothing(t *testing.T) {
	s := newTestServer(t)
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "p"}})
	s.must(200, "POST", "/ojs/v1/queues/p/pause", nil)
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"p"}}); len(f["jobs"].([]any)) != 0 {
		t.Fatalf("fetched from a paused queue: %v", f)
	}
	id := "019539a4-aaaa-7000-8000-222222222222"
	e := s.must(422, "POST", "/ojs/v1/jobs", map[string]any{"id": id, "type": "t", "args": []any{}, "options": map[string]any{"queue": "p"}})["error"].(map[string]any)
	if e["code"] != "queue_paused" || e["retryable"] != true || e["details"].(map[string]any)["queue"] != "p" ||
		e["details"].(map[string]any)["paused_at"] == nil {
		t.Fatalf("PUSH to a paused queue: %v", e)
	}
	s.must(404, "GET", "/ojs/v1/jobs/"+id, nil)
	b := s.must(422, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{
		map[string]any{"type": "t", "args": []any{}, "options": map[string]any{"queue": "open"}},
		map[string]any{"type": "t", "args": []any{}, "queue": "p"},
	}})["error"].(map[string]any)
	if b["code"] != "queue_paused" || b["details"].(map[string]any)["index"] != 1.0 {
		t.Fatalf("batch with a paused queue: %v", b)
	}
	if n := s.exec.Len(); n != 1 {
		t.Fatalf("refused PUSHes left %d jobs, want the 1 pushed before the pause", n)
	}
	s.must(200, "POST", "/ojs/v1/queues/p/resume", nil)
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"id": id, "type": "t", "args": []any{}, "options": map[string]any{"queue": "p"}})
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"p"}, "count": 5}); len(f["jobs"].([]any)) != 2 {
		t.Fatalf("after the resume: %v", f)
	}
}

// TestCreatedPushNamesItsJob: the binding §9.1. A 201 PUSH carries
// Location /ojs/v1/jobs/{id}, and a GET on it returns that job; a
// deduplicated PUSH (200) and a batch (§9.2 defines none) carry none
// (RK-281).
func TestCreatedPushNamesItsJob(t *testing.T) {
	s := newTestServer(t)
	resp, m := s.exchange("POST", "/ojs/v1/jobs", `{"type":"t","args":[1],"options":{"unique":{"keys":["args"],"on_conflict":"ignore"}}}`, nil)
	id := job(m)["id"].(string)
	if resp.StatusCode != 201 || resp.Header.Get("Location") != "/ojs/v1/jobs/"+id {
		t.Fatalf("201 PUSH: status %d, Location %q, want /ojs/v1/jobs/%s", resp.StatusCode, resp.Header.Get("Location"), id)
	}
	if got := job(s.must(200, "GET", resp.Header.Get("Location"), nil)); got["id"] != id {
		t.Fatalf("GET Location: %v", got)
	}
	resp, _ = s.exchange("POST", "/ojs/v1/jobs", `{"type":"t","args":[1],"options":{"unique":{"keys":["args"],"on_conflict":"ignore"}}}`, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Location") != "" {
		t.Fatalf("deduplicated PUSH: status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = s.exchange("POST", "/ojs/v1/jobs/batch", `{"jobs":[{"type":"t","args":[]}]}`, nil)
	if resp.StatusCode != 201 || resp.Header.Get("Location") != "" {
		t.Fatalf("batch: status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestRequestIDEchoedWhenSane: the binding §19.2. A sane client
// X-Request-Id is echoed in the header and the error body; an unsafe,
// overlong or repeated one is replaced by a new req_<UUIDv7> (RK-283).
func TestRequestIDEchoedWhenSane(t *testing.T) {
	s := newTestServer(t)
	for _, id := range []string{"req_client-019414d4-ffff-7000-a000-123456789abc", "4bf92f3577b34da6a3ce929d0e0e4736", "a", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "trace:a/b+c=d@e~f.g"} {
		resp, m := s.exchange("GET", "/ojs/v1/jobs/019539a4-aaaa-7000-8000-333333333333", "", http.Header{"X-Request-Id": {id}})
		if got := resp.Header.Get("X-Request-Id"); got != id || m["error"].(map[string]any)["request_id"] != id {
			t.Errorf("X-Request-Id %q: answered %q, body %v", id, got, m["error"])
		}
	}
	for _, bad := range [][]string{{"has space"}, {"-leading-dash"}, {"quote\"d"}, {strings.Repeat("a", 129)}, {"a", "b"}, {"é"}, {""}} {
		resp, m := s.exchange("GET", "/ojs/v1/jobs/019539a4-aaaa-7000-8000-333333333333", "", http.Header{"X-Request-Id": bad})
		got := resp.Header.Get("X-Request-Id")
		if !strings.HasPrefix(got, "req_") || len(got) != len("req_")+36 || m["error"].(map[string]any)["request_id"] != got {
			t.Errorf("X-Request-Id %q: answered %q, body %v; want a new req_<UUIDv7>", bad, got, m["error"])
		}
	}
}

// TestUnimplementedFeaturesAnswerUnsupported: the binding §16.3. Every
// method on the routes of cron, workflows and schemas answers 422
// unsupported naming the feature and its level, and the manifest lists
// the same features (RK-284).
func TestUnimplementedFeaturesAnswerUnsupported(t *testing.T) {
	s := newTestServer(t)
	for _, c := range []struct {
		method, path, feature string
		level                 float64
	}{
		{"GET", "/ojs/v1/cron", "cron_jobs", 2},
		{"POST", "/ojs/v1/cron", "cron_jobs", 2},
		{"DELETE", "/ojs/v1/cron/nightly", "cron_jobs", 2},
		{"POST", "/ojs/v1/workflows", "workflows", 3},
		{"GET", "/ojs/v1/workflows/019539a4-aaaa-7000-8000-333333333333", "workflows", 3},
		{"DELETE", "/ojs/v1/workflows/x", "workflows", 3},
		{"GET", "/ojs/v1/schemas", "schema_validation", 0},
		{"POST", "/ojs/v1/schemas", "schema_validation", 0},
		{"GET", "/ojs/v1/schemas/urn:ojs:schema:email.send:v1", "schema_validation", 0},
	} {
		e := s.must(422, c.method, c.path, nil)["error"].(map[string]any)
		d := e["details"].(map[string]any)
		if e["code"] != "unsupported" || e["retryable"] != false || d["feature"] != c.feature || d["level"] != c.level ||
			!strings.Contains(e["message"].(string), c.feature) {
			t.Errorf("%s %s: %v", c.method, c.path, e)
		}
	}
	m := s.must(200, "GET", "/ojs/manifest", nil)
	caps := m["capabilities"].(map[string]any)
	listed := map[string]float64{}
	for _, f := range m["x-retrykit"].(map[string]any)["unsupported"].([]any) {
		f := f.(map[string]any)
		listed[f["feature"].(string)] = f["level"].(float64)
		if caps[f["feature"].(string)] != false {
			t.Errorf("manifest lists %v as unsupported but capabilities say %v", f["feature"], caps[f["feature"].(string)])
		}
	}
	if len(listed) != 3 || listed["cron_jobs"] != 2 || listed["workflows"] != 3 || listed["schema_validation"] != 0 {
		t.Errorf("manifest unsupported: %v", listed)
	}
	s.must(404, "GET", "/ojs/v1/nothing-here", nil)
}

// exchange sends body (none when empty) with extra headers and returns
// the response (its body read) and the answer decoded.
func (ts *testServer) exchange(method, path, body string, h http.Header) (*http.Response, map[string]any) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.srv.URL+path, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", ojshttp.MediaType)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := ts.srv.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		ts.t.Fatalf("%s %s: answer is not JSON: %v", method, path, err)
	}
	return resp, m
}
