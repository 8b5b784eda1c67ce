package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

func load(t *testing.T, h http.Handler, args ...string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	var out, errb bytes.Buffer
	code := run(append([]string{"--server", srv.URL}, args...), &out, &errb)
	return code, out.String() + errb.String()
}

// TestCorrectServer: retrykit serve loses and duplicates nothing.
func TestCorrectServer(t *testing.T) {
	code, out := load(t, ojshttp.New(executor.New()), "--jobs", "600", "--workers", "12", "--fail", "0.4")
	if code != 0 || !strings.Contains(out, "600 jobs") || !strings.Contains(out, "; 0 problems") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestLosingServer: a server that answers some PUSHes without keeping the
// job is caught: those jobs are lost.
func TestLosingServer(t *testing.T) {
	srv := ojshttp.New(executor.New())
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/ojs/v1/jobs" && n.Add(1)%50 == 0 {
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"job":{"id":"01900000-0000-7000-8000-0000000000`+string(rune('a'+n.Load()%26))+`0"}}`)
			return
		}
		srv.ServeHTTP(w, r)
	})
	code, out := load(t, h, "--jobs", "200", "--workers", "8", "--deadline", "2s")
	if code != 1 || !strings.Contains(out, "lost") {
		t.Fatalf("exit %d, want 1 naming lost jobs\n%s", code, out)
	}
}

// TestDuplicatingServer: a server that hands a job out a second time while
// a worker holds it is caught.
func TestDuplicatingServer(t *testing.T) {
	srv := ojshttp.New(executor.New())
	var (
		mu   sync.Mutex
		last []byte
		n    int
	)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ojs/v1/workers/fetch" {
			srv.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		mu.Lock()
		var a struct{ Jobs []json.RawMessage }
		if json.Unmarshal(body, &a) == nil && len(a.Jobs) > 0 {
			if n++; n%20 == 0 && last != nil {
				body = last // the previous delivery, again
			}
			last = body
		}
		mu.Unlock()
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
	code, out := load(t, h, "--jobs", "300", "--workers", "8", "--fail", "0", "--deadline", "5s")
	if code != 1 || !strings.Contains(out, "duplicate") {
		t.Fatalf("exit %d, want 1 naming a duplicate\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"--server", "http://x", "--workers", "0"}, {"--server", "http://x", "--fail", "2"}, {"--server", "http://x", "--queues", "0"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
