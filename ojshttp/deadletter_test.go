package ojshttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
	"github.com/retrykit/retrykit/policy"
)

// deadLetter pushes a job that dead-letters on its first failure, fails it
// with errType and returns its id.
func (s *testServer) deadLetter(queue, typ, errType string) string {
	s.t.Helper()
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": typ, "args": []any{1}, "meta": map[string]any{"origin": "push"},
		"options": map[string]any{"queue": queue, "retry": map[string]any{"max_attempts": 1, "initial_interval": "PT7S", "on_exhaustion": "dead_letter"}}}))["id"].(string)
	f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{queue}})
	if got := f["jobs"].([]any)[0].(map[string]any)["id"]; got != id {
		s.t.Fatalf("fetched %v, want %s", got, id)
	}
	n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id,
		"error": map[string]any{"type": errType, "code": "handler_error", "message": "failed"}})
	if n["state"] != "discarded" {
		s.t.Fatalf("nack: %v", n)
	}
	return id
}

// ids returns the ids of a list answer under key.
func ids(m map[string]any, key string) []string {
	var out []string
	for _, j := range m[key].([]any) {
		out = append(out, j.(map[string]any)["id"].(string))
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string { sort.Strings(s); return s }

// The spec's path lists under "jobs", the admin path (the official suite's)
// under "items"; both answer the same pagination.
func TestDeadLetterListUnderBothPrefixes(t *testing.T) {
	s := newTestServer(t)
	a := s.deadLetter("q", "t.a", "db.down")
	for _, c := range []struct{ path, key string }{{"/ojs/v1/dead-letter", "jobs"}, {"/ojs/v1/admin/dead-letter", "items"}} {
		m := s.must(200, "GET", c.path, nil)
		if got := ids(m, c.key); !slices.Equal(got, []string{a}) {
			t.Fatalf("%s: %v", c.path, m)
		}
		p := m["pagination"].(map[string]any)
		if p["total"] != 1.0 || p["page"] != 1.0 || p["has_more"] != false {
			t.Fatalf("%s: pagination %v", c.path, p)
		}
	}
}

// ojs-dead-letter §9.1: searchable by queue, type, error type (of the most
// recent failure) and time range.
func TestDeadLetterListFilters(t *testing.T) {
	s := newTestServer(t)
	a := s.deadLetter("billing", "invoice.generate", "db.down") // at start
	s.advance(time.Minute)
	b := s.deadLetter("billing", "invoice.send", "smtp.refused") // start+1m
	s.advance(time.Minute)
	c := s.deadLetter("email", "invoice.generate", "db.down") // start+2m
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }
	for q, want := range map[string][]string{
		"":                                sorted(a, b, c),
		"?queue=billing":                  sorted(a, b),
		"?type=invoice.generate":          sorted(a, c),
		"?type=invoice.*":                 sorted(a, b, c),
		"?type=invoice.gen":               nil,
		"?error_type=db.down":             sorted(a, c),
		"?queue=email&error_type=db.down": {c},
		"?state=discarded&queue=email":    {c},
		"?since=" + at(time.Minute):       sorted(b, c),
		"?until=" + at(time.Minute):       {a},
		"?since=" + at(30*time.Second) + "&until=" + at(90*time.Second): {b},
	} {
		if got := ids(s.must(200, "GET", "/ojs/v1/admin/dead-letter"+q, nil), "items"); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
	for _, q := range []string{"?since=yesterday", "?queue=Bad_Name", "?colour=red", "?queue=a&queue=b", "?state=active", "?sort=priority"} {
		s.must(400, "GET", "/ojs/v1/dead-letter"+q, nil)
	}
}

// Pages are bounded by count (at most 100) in either paging form, the
// newest dead letter first.
func TestDeadLetterPaging(t *testing.T) {
	s := newTestServer(t)
	var all []string
	for range 3 {
		all = append(all, s.deadLetter("q", "t", "e"))
		s.advance(time.Second)
	}
	m := s.must(200, "GET", "/ojs/v1/admin/dead-letter?per_page=2&page=2", nil)
	if got := ids(m, "items"); !slices.Equal(got, []string{all[0]}) || m["pagination"].(map[string]any)["has_more"] != false {
		t.Fatalf("page 2: %v", m)
	}
	m = s.must(200, "GET", "/ojs/v1/dead-letter?limit=1&offset=0", nil)
	if got := ids(m, "jobs"); !slices.Equal(got, []string{all[2]}) || m["pagination"].(map[string]any)["has_more"] != true {
		t.Fatalf("newest first: %v", m)
	}
	for _, q := range []string{"?per_page=101", "?limit=101", "?limit=0", "?page=0", "?limit=1&page=1"} {
		s.must(400, "GET", "/ojs/v1/admin/dead-letter"+q, nil)
	}
}

// ojs-dead-letter §10.1's statistics, with the §5.2 retention defaults.
func TestDeadLetterStats(t *testing.T) {
	s := newTestServer(t)
	s.deadLetter("billing", "t", "db.down")
	s.advance(time.Minute)
	s.deadLetter("billing", "t", "timeout")
	s.deadLetter("email", "t", "db.down")
	for _, path := range []string{"/ojs/v1/dead-letter/stats", "/ojs/v1/admin/dead-letter/stats"} {
		m := s.must(200, "GET", path, nil)
		bq, bt := m["by_queue"].(map[string]any), m["by_error_type"].(map[string]any)
		if m["total"] != 3.0 || bq["billing"] != 2.0 || bq["email"] != 1.0 || bt["db.down"] != 2.0 || bt["timeout"] != 1.0 {
			t.Fatalf("%s: %v", path, m)
		}
		if !ts(t, m["oldest_at"]).Equal(start) || !ts(t, m["newest_at"]).Equal(start.Add(time.Minute)) {
			t.Fatalf("%s: oldest/newest %v %v", path, m["oldest_at"], m["newest_at"])
		}
		r := m["retention"].(map[string]any)
		age, err := policy.ParseDuration(r["max_age"].(string))
		if err != nil || age != 180*24*time.Hour || r["max_count"] != 10000.0 {
			t.Fatalf("%s: retention %v (%v)", path, r, err)
		}
	}
}

// ojs-dead-letter §6.1: the retried job keeps its id, policy and error
// history; its attempt is 0 and it is available (the suite's EXT-DLQ-003 on
// the admin path).
func TestDeadLetterRetryResetsAttemptKeepsHistory(t *testing.T) {
	s := newTestServer(t)
	id := s.deadLetter("q", "t", "db.down")
	r := job(s.must(200, "POST", "/ojs/v1/admin/dead-letter/"+id+"/retry", nil))
	errs, _ := r["errors"].([]any)
	if r["id"] != id || r["state"] != "available" || r["attempt"] != 0.0 || len(errs) != 1 ||
		r["retry"].(map[string]any)["initial_interval"] != "PT7S" || r["dead_letter"] != nil {
		t.Fatalf("retry: %v", r)
	}
	s.must(404, "POST", "/ojs/v1/admin/dead-letter/"+id+"/retry", nil) // no longer a dead letter
}

// ojs-dead-letter §6.3: an override moves the job, merges meta and the
// retry policy key by key (RK-194), and sets args and priority.
func TestDeadLetterRetryOverride(t *testing.T) {
	s := newTestServer(t)
	id := s.deadLetter("billing", "t", "db.down")
	r := job(s.must(200, "POST", "/ojs/v1/dead-letter/"+id+"/retry", map[string]any{"override": map[string]any{
		"queue": "billing-retry", "meta": map[string]any{"retry_source": "manual_dlq_retry"},
		"retry": map[string]any{"max_attempts": 2}, "args": []any{"new"}, "priority": "HIGH"}}))
	meta := r["meta"].(map[string]any)
	pol := r["retry"].(map[string]any)
	if r["queue"] != "billing-retry" || meta["origin"] != "push" || meta["retry_source"] != "manual_dlq_retry" ||
		pol["max_attempts"] != 2.0 || pol["initial_interval"] != "PT7S" || pol["on_exhaustion"] != "dead_letter" ||
		r["priority"] != 10.0 || r["args"].([]any)[0] != "new" {
		t.Fatalf("override: %v", r)
	}
	if f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"billing"}}); len(f["jobs"].([]any)) != 0 {
		t.Fatalf("fetched from the old queue: %v", f)
	}
	f := s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"billing-retry"}})
	if got := f["jobs"].([]any)[0].(map[string]any); got["id"] != id || got["attempt"] != 1.0 {
		t.Fatalf("fetch from the new queue: %v", f)
	}
	// The new budget is the merged policy's: two attempts, then dead letter.
	if n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"type": "db.down", "message": "m"}}); n["state"] != "retryable" {
		t.Fatalf("first failure after the retry: %v", n)
	}
}

func TestDeadLetterRetryOverrideRefusedChangesNothing(t *testing.T) {
	s := newTestServer(t)
	id := s.deadLetter("q", "t", "e")
	for _, body := range []any{
		map[string]any{"override": map[string]any{"colour": "red"}},
		map[string]any{"override": map[string]any{"queue": "Bad Queue"}},
		map[string]any{"override": map[string]any{"retry": map[string]any{"max_attempts": -1}}},
		map[string]any{"override": map[string]any{"priority": 101}},
		map[string]any{"override": map[string]any{"args": map[string]any{}}},
		map[string]any{"override": "x"},
		map[string]any{"confirm": true},
		"[1]",
	} {
		if code, m := s.do("POST", "/ojs/v1/dead-letter/"+id+"/retry", body); code != 400 && code != 422 {
			t.Fatalf("%v: %d %v", body, code, m)
		}
	}
	if j := job(s.must(200, "GET", "/ojs/v1/dead-letter/"+id, nil)); j["state"] != "discarded" || j["queue"] != "q" {
		t.Fatalf("a refused retry changed the job: %v", j)
	}
}

// ojs-dead-letter §6.2: bulk retry by filter, with the admin API's confirm.
func TestDeadLetterBulkRetryByFilter(t *testing.T) {
	s := newTestServer(t)
	a := s.deadLetter("billing", "invoice.generate", "db.down")
	b := s.deadLetter("billing", "invoice.generate", "validation")
	c := s.deadLetter("email", "invoice.generate", "db.down")
	body := map[string]any{"filter": map[string]any{"queue": "billing", "error_type": "db.down", "since": start.Format(time.RFC3339)}}
	s.must(400, "POST", "/ojs/v1/dead-letter/retry", body) // no confirm
	body["confirm"] = true
	m := s.must(200, "POST", "/ojs/v1/admin/dead-letter/retry", body)
	if m["retried"] != 1.0 || m["matched"] != 1.0 || m["job_ids"].([]any)[0] != a {
		t.Fatalf("bulk retry: %v", m)
	}
	if got := ids(s.must(200, "GET", "/ojs/v1/dead-letter", nil), "jobs"); !slices.Equal(got, sorted(b, c)) {
		t.Fatalf("left in the dead letter set: %v", got)
	}
	if j := job(s.must(200, "GET", "/ojs/v1/jobs/"+a, nil)); j["state"] != "available" || j["attempt"] != 0.0 {
		t.Fatalf("retried job: %v", j)
	}
	s.must(400, "POST", "/ojs/v1/dead-letter/retry", map[string]any{"filter": map[string]any{"state": "x"}, "confirm": true})
}

// DELETE of one dead letter: 204 without a body on the admin path (the
// suite's EXT-DLQ-004), 200 with one on the spec's; purge by filter.
func TestDeadLetterDeleteAndPurge(t *testing.T) {
	s := newTestServer(t)
	a := s.deadLetter("q", "t", "e")
	b := s.deadLetter("q", "t", "e")
	c := s.deadLetter("r", "t", "e")
	req, _ := http.NewRequest("DELETE", s.srv.URL+"/ojs/v1/admin/dead-letter/"+a, nil)
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 204 || len(body) != 0 {
		t.Fatalf("admin delete: %d %q", resp.StatusCode, body)
	}
	s.must(404, "GET", "/ojs/v1/jobs/"+a, nil)
	if m := s.must(200, "DELETE", "/ojs/v1/dead-letter/"+b, nil); m["deleted"] != true {
		t.Fatalf("delete: %v", m)
	}
	s.must(400, "DELETE", "/ojs/v1/dead-letter", map[string]any{"filter": map[string]any{"queue": "r"}})
	if m := s.must(200, "DELETE", "/ojs/v1/admin/dead-letter", map[string]any{"filter": map[string]any{"queue": "r"}, "confirm": true}); m["deleted"] != 1.0 {
		t.Fatalf("purge: %v", m)
	}
	s.must(404, "GET", "/ojs/v1/jobs/"+c, nil)
}

// Bulk retry, purge, single deletes and listings racing on the same dead
// letters: every job ends either retried (available) or deleted, never both
// and never lost, and no request fails with a 5xx.
func TestDeadLetterConcurrentBulkRetryAndDelete(t *testing.T) {
	s := newTestServer(t)
	var all []string
	for range 40 {
		all = append(all, s.deadLetter("q", "t", "e"))
	}
	type outcome struct {
		retried, deleted []string
		codes            []int
	}
	res := make(chan outcome, 4)
	post := func(method, path string, body any) (int, map[string]any) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, s.srv.URL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.srv.Client().Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	go func() { // bulk retry
		var o outcome
		code, m := post("POST", "/ojs/v1/dead-letter/retry", map[string]any{"confirm": true})
		o.codes = append(o.codes, code)
		for _, id := range m["job_ids"].([]any) {
			o.retried = append(o.retried, id.(string))
		}
		res <- o
	}()
	go func() { // single deletes, newest first
		var o outcome
		for i := len(all) - 1; i >= 0; i-- {
			code, _ := post("DELETE", "/ojs/v1/dead-letter/"+all[i], nil)
			o.codes = append(o.codes, code)
			if code == 200 {
				o.deleted = append(o.deleted, all[i])
			}
		}
		res <- o
	}()
	go func() { // listings and stats
		var o outcome
		for range 20 {
			code, _ := post("GET", "/ojs/v1/admin/dead-letter?per_page=100", nil)
			o.codes = append(o.codes, code)
			code, _ = post("GET", "/ojs/v1/dead-letter/stats", nil)
			o.codes = append(o.codes, code)
		}
		res <- o
	}()
	go func() { // purge
		var o outcome
		code, m := post("DELETE", "/ojs/v1/admin/dead-letter", map[string]any{"confirm": true})
		o.codes = append(o.codes, code)
		if code == 200 {
			if _, ok := m["deleted"].(float64); !ok {
				o.codes = append(o.codes, 0)
			}
		}
		res <- o
	}()
	retried, deleted := map[string]bool{}, map[string]bool{}
	for range 4 {
		o := <-res
		for _, c := range o.codes {
			if c >= 500 || c == 0 {
				t.Fatalf("status %d", c)
			}
		}
		for _, id := range o.retried {
			retried[id] = true
		}
		for _, id := range o.deleted {
			deleted[id] = true
		}
	}
	for _, id := range all {
		code, m := s.do("GET", "/ojs/v1/jobs/"+id, nil)
		switch {
		case retried[id] && deleted[id]:
			t.Fatalf("%s both retried and deleted", id)
		case retried[id]:
			if code != 200 || job(m)["state"] != "available" {
				t.Fatalf("retried %s: %d %v", id, code, m)
			}
		case code == 200:
			t.Fatalf("%s neither retried nor deleted: %v", id, m)
		}
	}
}

// BenchmarkDeadLetterList measures one page of 100 from a full dead letter
// set (10 000, the retention default), filtered by error type, and the
// statistics over the same set: each request lists and sorts the set.
func BenchmarkDeadLetterList(b *testing.B) {
	e := executor.New()
	pol, _ := policy.Parse([]byte(`{"max_attempts": 1, "on_exhaustion": "dead_letter"}`))
	for i := range 10000 {
		if _, err := e.Enqueue(executor.JobSpec{Type: "t", Queue: "q" + strconv.Itoa(i%20), Args: json.RawMessage(`[1]`), Policy: pol}); err != nil {
			b.Fatal(err)
		}
		j, _ := e.Fetch("q" + strconv.Itoa(i%20))
		e.Fail(j.ID, j.Delivery, executor.Failure{Type: "e" + strconv.Itoa(i%7), Message: "m"})
	}
	h := ojshttp.New(e)
	for name, path := range map[string]string{"list": "/ojs/v1/admin/dead-letter?per_page=100&error_type=e3", "stats": "/ojs/v1/dead-letter/stats"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				if rec.Code != 200 {
					b.Fatal(rec.Code, rec.Body)
				}
			}
		})
	}
}
