package ojshttp_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// post sends a JSON body and decodes the answer; it reports failures with
// t.Error so that it may run on any goroutine.
func post(t *testing.T, c *http.Client, url string, body any) (int, map[string]any) {
	b, _ := json.Marshal(body)
	resp, err := c.Post(url, ojshttp.MediaType, bytes.NewReader(b))
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Errorf("%s: %v", url, err)
	}
	return resp.StatusCode, m
}

// TestConcurrentWorkers runs pushers and workers on many goroutines over
// real HTTP (with -race in CI): every job is fetched by one worker at a
// time, and each ends exactly once, completed or discarded, as INFO shows.
func TestConcurrentWorkers(t *testing.T) {
	const jobs, workers = 300, 16
	e := executor.New()
	srv := httptest.NewServer(ojshttp.New(e))
	defer srv.Close()
	c := srv.Client()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = workers * 2

	ids := make(chan string, jobs)
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < jobs/4; i++ {
				st, m := post(t, c, srv.URL+"/ojs/v1/jobs", map[string]any{"type": "load.job", "args": []any{i},
					"options": map[string]any{"queue": "load", "retry": map[string]any{
						"max_attempts": 3, "initial_interval": "PT0.001S", "jitter": false}}})
				if st != 201 {
					t.Errorf("push: %d %v", st, m)
					return
				}
				ids <- m["job"].(map[string]any)["id"].(string)
			}
		}()
	}
	var finished atomic.Int64
	var mu sync.Mutex
	holder := map[string]int{} // job id -> worker holding it
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for finished.Load() < jobs && !t.Failed() {
				_, m := post(t, c, srv.URL+"/ojs/v1/workers/fetch", map[string]any{"queues": []string{"load"}, "count": 2})
				list, _ := m["jobs"].([]any)
				for _, it := range list {
					id := it.(map[string]any)["id"].(string)
					mu.Lock()
					if h, ok := holder[id]; ok {
						t.Errorf("job %s fetched by %d while %d holds it", id, w, h)
					}
					holder[id] = w
					mu.Unlock()
					var st int
					var ans map[string]any
					// Release before reporting: once reported, the job may be fetched again.
					mu.Lock()
					delete(holder, id)
					mu.Unlock()
					if rng.IntN(3) == 0 {
						st, ans = post(t, c, srv.URL+"/ojs/v1/workers/nack", map[string]any{"job_id": id,
							"error": map[string]any{"type": "load.flaky", "message": "random failure"}})
					} else {
						st, ans = post(t, c, srv.URL+"/ojs/v1/workers/ack", map[string]any{"job_id": id})
					}
					if st != 200 {
						t.Errorf("report %s: %d %v", id, st, ans)
						continue
					}
					if s := ans["state"]; s == "completed" || s == "discarded" {
						finished.Add(1)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(ids)
	if t.Failed() {
		return
	}
	if n := finished.Load(); n != jobs {
		t.Fatalf("%d jobs finished, want %d", n, jobs)
	}
	seen := 0
	for id := range ids {
		seen++
		resp, err := c.Get(srv.URL + "/ojs/v1/jobs/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		j := m["job"].(map[string]any)
		st, att := j["state"], int(j["attempt"].(float64))
		errs, _ := j["errors"].([]any)
		switch {
		case st == "completed" && len(errs) == att-1:
		case st == "discarded" && att == 3 && len(errs) == 3:
		default:
			t.Errorf("job %s: state %v attempt %d, %d errors", id, st, att, len(errs))
		}
	}
	if seen != jobs {
		t.Fatalf("%d ids, want %d", seen, jobs)
	}
}
