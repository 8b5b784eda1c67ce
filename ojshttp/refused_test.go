package ojshttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// TestRefusedReplaceLeavesOldJob: a unique PUSH with on_conflict replace
// that is refused for any reason (pending with scheduled_at, a time past
// 2262, a batch repeating an existing id) leaves the job it would have
// replaced as it was, and creates nothing.
func TestRefusedReplaceLeavesOldJob(t *testing.T) {
	u := map[string]any{"keys": []string{"type"}, "on_conflict": "replace"}
	for _, tc := range []struct {
		name   string
		status int
		second func(existing string) (string, any)
	}{
		{"pending with scheduled_at", 400, func(string) (string, any) {
			return "/ojs/v1/jobs", uniqueJob("r.job", []any{}, u, map[string]any{"pending": true, "scheduled_at": "2026-02-01T00:00:00Z"})
		}},
		{"scheduled_at in 2300", 400, func(string) (string, any) {
			return "/ojs/v1/jobs", uniqueJob("r.job", []any{}, u, map[string]any{"scheduled_at": "2300-01-01T00:00:00Z"})
		}},
		{"batch repeating an existing id", 409, func(existing string) (string, any) {
			return "/ojs/v1/jobs/batch", map[string]any{"jobs": []any{
				uniqueJob("r.job", []any{}, u, nil),
				map[string]any{"id": existing, "type": "other", "args": []any{}},
			}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			old := job(s.must(201, "POST", "/ojs/v1/jobs", uniqueJob("r.job", []any{1}, u, map[string]any{"queue": "r"})))["id"].(string)
			other := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "other", "args": []any{}, "options": map[string]any{"queue": "o"}}))["id"].(string)
			path, body := tc.second(other)
			s.must(tc.status, "POST", path, body)
			if st := job(s.must(200, "GET", "/ojs/v1/jobs/"+old, nil))["state"]; st != "available" {
				t.Fatalf("the job a refused replace named is %v, want available", st)
			}
			if n := s.exec.Len(); n != 2 {
				t.Fatalf("%d jobs after the refused PUSH, want the 2 before it", n)
			}
		})
	}
}

// TestMaxJobsConcurrentBatches: concurrent batches never take the server
// past WithMaxJobs, however they interleave.
func TestMaxJobsConcurrentBatches(t *testing.T) {
	s := newTestServer(t, ojshttp.WithMaxJobs(1000))
	jobs := make([]any, 250)
	for i := range jobs {
		jobs[i] = map[string]any{"type": "t", "args": []any{i}}
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _ := post(t, s.srv.Client(), s.srv.URL+"/ojs/v1/jobs/batch", map[string]any{"jobs": jobs})
			if code != 201 && code != 429 {
				t.Errorf("batch: %d", code)
			}
		}()
	}
	wg.Wait()
	if n := s.exec.Len(); n > 1000 {
		t.Fatalf("the server holds %d jobs under WithMaxJobs(1000)", n)
	}
}

// TestResetKeepsRacingPushes: a job pushed while a reset runs either is
// removed by it or keeps its meta and tags.
func TestResetKeepsRacingPushes(t *testing.T) {
	s := newTestServer(t, ojshttp.WithReset())
	serve := func(path, body string) {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		s.h.ServeHTTP(httptest.NewRecorder(), req)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				serve("/ojs/v1/jobs", `{"type":"t","args":[],"meta":{"k":1},"options":{"tags":["x"]}}`)
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for i := 0; i < 100; i++ {
		serve(ojshttp.ResetPath, "")
		for _, j := range s.exec.List(executor.Filter{}) {
			rec := httptest.NewRecorder()
			s.h.ServeHTTP(rec, httptest.NewRequest("GET", "/ojs/v1/jobs/"+j.ID, nil))
			if rec.Code == 200 && (!strings.Contains(rec.Body.String(), `"meta"`) || !strings.Contains(rec.Body.String(), `"tags"`)) {
				t.Fatalf("job %s survived a reset without its meta or tags: %s", j.ID, rec.Body)
			}
		}
	}
}

// TestRefusedPushIsAtomicWithItsChecks: a batch past WithMaxJobs is
// refused whole and creates nothing.
func TestRefusedPushIsAtomicWithItsChecks(t *testing.T) {
	s := newTestServer(t, ojshttp.WithMaxJobs(3))
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{}})
	body := `{"jobs":[` + strings.Repeat(`{"type":"t","args":[]},`, 2) + `{"type":"t","args":[]}]}`
	if code, m := s.do("POST", "/ojs/v1/jobs/batch", body); code != http.StatusTooManyRequests {
		t.Fatalf("a batch past WithMaxJobs: %d %v", code, m)
	}
	if n := s.exec.Len(); n != 1 {
		t.Fatal(fmt.Sprint(n, " jobs after a refused batch"))
	}
}
