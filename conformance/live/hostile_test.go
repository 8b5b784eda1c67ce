package live_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
)

// fast are the options of runs against fake servers: short waits.
var fast = []live.Option{live.WithTimeout(300 * time.Millisecond), live.WithLateBound(150 * time.Millisecond)}

// runBounded runs the checker against h and fails the test if the run
// takes longer than limit.
func runBounded(t *testing.T, h http.Handler, limit time.Duration, opts ...live.Option) (*conformance.Report, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer srv.CloseClientConnections()
	start := time.Now()
	rep, err := live.Run(context.Background(), srv.URL, append(append([]live.Option(nil), fast...), opts...)...)
	if d := time.Since(start); d > limit {
		t.Errorf("the run took %v, want under %v", d, limit)
	}
	return rep, err
}

// healthy answers the health check and hands everything else to next.
func healthy(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ojs/v1/health" {
			w.Write([]byte(`{"status":"ok"}`))
			return
		}
		next(w, r)
	})
}

func TestUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := live.Run(context.Background(), url, fast...)
	if !errors.Is(err, live.ErrServer) {
		t.Fatalf("err = %v, want ErrServer", err)
	}
}

func TestBadOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		url  string
		opts []live.Option
		want string
	}{
		"scheme":     {"ftp://x", nil, "server URL"},
		"no host":    {"http://", nil, "server URL"},
		"type field": {"http://127.0.0.1:1", []live.Option{live.WithErrorTypeField("kind")}, "error type field"},
		"interval":   {"http://127.0.0.1:1", []live.Option{live.WithIntervalForm("seconds")}, "interval form"},
		"strategy":   {"http://127.0.0.1:1", []live.Option{live.WithStrategyField("strategy")}, "strategy field"},
		"late bound": {"http://127.0.0.1:1", []live.Option{live.WithLateBound(0)}, "late bound"},
		"poll":       {"http://127.0.0.1:1", []live.Option{live.WithPollInterval(time.Hour)}, "poll interval"},
		"check id":   {"http://127.0.0.1:1", []live.Option{live.WithIDs("http-nope")}, `check "http-nope"`},
		"reset url":  {"http://127.0.0.1:1", []live.Option{live.WithResetURL("::")}, "reset URL"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := live.Run(context.Background(), tc.url, tc.opts...)
			if !errors.Is(err, live.ErrInvalidOption) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidOption naming %q", err, tc.want)
			}
		})
	}
}

func TestHugeAnswer(t *testing.T) {
	var sent atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < 1600; i++ { // 100 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
			sent.Add(int64(len(chunk)))
		}
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := runBounded(t, h, 5*time.Second)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, live.ErrServer) || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v, want ErrServer about the answer's size", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading a 100 MiB answer allocated %d bytes, want a bounded read", grew)
	}
}

func TestSilentServer(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	_, err := runBounded(t, h, 3*time.Second)
	if !errors.Is(err, live.ErrServer) {
		t.Fatalf("err = %v, want ErrServer (timeout)", err)
	}
}

func TestDripFeedingServer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		for i := 0; i < 100; i++ {
			if _, err := w.Write([]byte(" ")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(50 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	})
	_, err := runBounded(t, h, 3*time.Second)
	if !errors.Is(err, live.ErrServer) {
		t.Fatalf("err = %v, want ErrServer (timeout while reading)", err)
	}
}

func TestRedirectLoop(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	})
	_, err := runBounded(t, h, 3*time.Second)
	if !errors.Is(err, live.ErrServer) || !strings.Contains(err.Error(), "302") {
		t.Fatalf("err = %v, want ErrServer naming the 302", err)
	}
}

// TestMalformedAnswers runs the whole checker against servers that answer
// health and then nonsense: every check ends as an error or a failure,
// none passes, nothing panics and the run ends in bounded time.
func TestMalformedAnswers(t *testing.T) {
	bodies := map[string]string{
		"not json":        `<html>oops</html>`,
		"empty object":    `{}`,
		"null job":        `{"job":null,"jobs":null}`,
		"wrong types":     `{"job":{"id":7,"attempt":"one"},"jobs":"many","state":[]}`,
		"deep nesting":    strings.Repeat("[", 100000),
		"bad timestamps":  `{"job":{"id":"j1","enqueued_at":"yesterday"},"jobs":[{"id":"j1","started_at":"noon"}],"state":"retryable","attempt":1,"next_attempt_at":"soon"}`,
		"negative times":  `{"job":{"id":"j1","enqueued_at":"0001-01-01T00:00:00Z"},"jobs":[{"id":"j1","started_at":"9999-12-31T23:59:59Z"}],"state":"retryable","attempt":-5,"max_attempts":-1,"next_attempt_at":"0001-01-01T00:00:00Z"}`,
		"many jobs":       `{"job":{"id":"j1"},"jobs":[{"id":"j1"},{"id":"j2"}]}`,
		"other job":       `{"job":{"id":"j1"},"jobs":[{"id":"someone-else"}]}`,
		"invalid utf8":    "{\"job\":{\"id\":\"\xff\xfe\"}}",
		"error envelope":  `{"error":{"code":"internal","message":"` + strings.Repeat("m", 5000) + `"}}`,
		"huge attempt":    `{"job":{"id":"j1"},"jobs":[{"id":"j1","attempt":99999999999999999999}],"attempt":1e400}`,
		"retryable forev": `{"job":{"id":"j1","enqueued_at":"2026-01-01T00:00:00Z"},"jobs":[],"state":"retryable","attempt":1,"max_attempts":4}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			h := healthy(func(w http.ResponseWriter, r *http.Request) {
				status := 200
				if r.URL.Path == "/ojs/v1/jobs" {
					status = 201
				}
				w.WriteHeader(status)
				fmt.Fprint(w, body)
			})
			rep, err := runBounded(t, h, 20*time.Second)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Totals.Pass > 0 {
				for _, res := range rep.Results {
					if res.Status == conformance.StatusPass {
						t.Errorf("%s passed against a server answering %q", res.ID, body[:min(len(body), 60)])
					}
				}
			}
			if rep.OK() {
				t.Errorf("the report is OK against a broken server")
			}
		})
	}
}
