package live_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// farFuture is a server that promises every retry ten years away and
// never hands a retried job out again: retrykit serve with the FAIL
// answers' next_attempt_at moved and the retried jobs hidden from FETCH.
func farFuture() http.Handler {
	srv := ojshttp.New(executor.New())
	var mu sync.Mutex
	hidden := map[string]bool{}
	return rewriting(srv, func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		if s, _ := m["state"].(string); s == "retryable" && m["next_attempt_at"] != nil {
			mu.Lock()
			hidden[m["job_id"].(string)] = true
			mu.Unlock()
			m["next_attempt_at"] = time.Now().AddDate(10, 0, 0).UTC().Format(time.RFC3339Nano)
		}
		if jobs, ok := m["jobs"].([]any); ok {
			var keep []any
			for _, j := range jobs {
				id, _ := j.(map[string]any)["id"].(string)
				mu.Lock()
				h := hidden[id]
				mu.Unlock()
				if !h {
					keep = append(keep, j)
				}
			}
			m["jobs"] = keep
		}
		return m
	})
}

// TestRetryTenYearsAwayIsNotAwaited: a retry announced ten years away is
// not waited for; its checks fail at once, naming it, and the run ends.
func TestRetryTenYearsAwayIsNotAwaited(t *testing.T) {
	hs := httptest.NewServer(farFuture())
	defer hs.Close()
	rep, err := live.Run(context.Background(), hs.URL, live.WithBudget(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var promoted *conformance.Result
	for i := range rep.Results {
		if rep.Results[i].ID == "http-promoted" {
			promoted = &rep.Results[i]
		}
	}
	if promoted == nil || promoted.Status != conformance.StatusFail || !strings.Contains(promoted.Reason, "not awaited") {
		t.Fatalf("http-promoted: %+v, want a failure naming a retry not awaited", promoted)
	}
	for _, r := range rep.Results {
		if strings.Contains(r.Reason, "time budget") {
			t.Errorf("%s ran into the budget: %s", r.ID, r.Reason)
		}
	}
}

// TestBudgetBoundsTheRun: with a late bound of ten minutes against a
// server that never hands a retried job out, the run ends when its time
// budget does, and the checks it cut short say so.
func TestBudgetBoundsTheRun(t *testing.T) {
	srv := ojshttp.New(executor.New())
	var mu sync.Mutex
	seen := map[string]int{}
	h := rewriting(srv, func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		if jobs, ok := m["jobs"].([]any); ok {
			var keep []any
			for _, j := range jobs {
				id, _ := j.(map[string]any)["id"].(string)
				mu.Lock()
				seen[id]++
				n := seen[id]
				mu.Unlock()
				if n == 1 {
					keep = append(keep, j)
				}
			}
			m["jobs"] = keep
		}
		return m
	})
	hs := httptest.NewServer(h)
	defer hs.Close()
	start := time.Now()
	rep, err := live.Run(context.Background(), hs.URL, live.WithLateBound(10*time.Minute), live.WithBudget(2*time.Second), live.WithLatencyRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the run took %v with a budget of 2s", d)
	}
	cut := 0
	for _, r := range rep.Results {
		if r.Status == conformance.StatusError && strings.Contains(r.Reason, "--time 2s") {
			cut++
		}
	}
	if cut == 0 {
		t.Errorf("no check names the budget; results %q", bad(rep))
	}
}

// TestFailingServerIsOneCause: a server that answers 500 to everything
// but its health check is one cause, the server failing, not a list of
// bug classes.
func TestFailingServerIsOneCause(t *testing.T) {
	rep, err := runAgainst(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/openjobspec+json")
		if r.URL.Path == "/ojs/v1/health" {
			w.Write([]byte(`{"status":"ok"}`))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":{"code":"internal_error","message":"database down"}}`))
	}))
	if err != nil {
		t.Fatal(err)
	}
	// The 500s are well typed, so http-content-type may pass: the server
	// is failing all the same.
	if len(rep.Causes) != 1 || rep.Causes[0].Class != "server-failing" || len(rep.Causes[0].IDs) != rep.Totals.Fail+rep.Totals.Error {
		t.Fatalf("causes %+v, want one server-failing cause listing all %d", rep.Causes, rep.Totals.Fail+rep.Totals.Error)
	}
}

// TestHTMLContentTypeFails: a correct server whose answers say
// Content-Type text/html fails http-content-type alone; one that says
// application/json passes it with a note.
func TestHTMLContentTypeFails(t *testing.T) {
	for _, ct := range []string{"text/html; charset=utf-8", "application/json"} {
		srv := ojshttp.New(executor.New())
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, r)
			for k, vs := range rec.Header() {
				w.Header()[k] = vs
			}
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
		})
		hs := httptest.NewServer(h)
		rep, err := live.Run(context.Background(), hs.URL)
		hs.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]conformance.Status{}
		for _, r := range rep.Results {
			got[r.ID] = r.Status
			if r.ID != "http-content-type" && r.Status != conformance.StatusPass {
				t.Errorf("%s: %s %s", ct, r.ID, r.Reason)
			}
		}
		want := conformance.StatusFail
		if ct == "application/json" {
			want = conformance.StatusPass
		}
		if got["http-content-type"] != want {
			t.Errorf("%s: http-content-type %s, want %s", ct, got["http-content-type"], want)
		}
	}
}

// TestOneRunEveryFormat: the report of one run renders in every format,
// each valid on its own (the CLI writes each to its own -o).
func TestOneRunEveryFormat(t *testing.T) {
	rep := runServe(t, 0)
	for _, f := range conformance.Formats() {
		var b strings.Builder
		if err := rep.Write(&b, f); err != nil || b.Len() == 0 {
			t.Errorf("%s: %v, %d bytes", f, err, b.Len())
		}
		if f == "json" && !json.Valid([]byte(b.String())) {
			t.Errorf("json: not valid JSON")
		}
	}
}
