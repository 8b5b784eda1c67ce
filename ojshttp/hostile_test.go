package ojshttp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// routes lists every route with a body shape, for the fuzz target.
var routes = []struct{ method, path string }{
	{"POST", "/ojs/v1/jobs"},
	{"POST", "/ojs/v1/jobs/batch"},
	{"POST", "/ojs/v1/workers/fetch"},
	{"POST", "/ojs/v1/workers/ack"},
	{"POST", "/ojs/v1/workers/nack"},
	{"POST", "/ojs/v1/workers/heartbeat"},
	{"POST", ojshttp.AdminClockPath},
	{"POST", "/ojs/v1/dead-letter/x/retry"},
	{"POST", "/ojs/v1/admin/dead-letter/retry"},
	{"DELETE", "/ojs/v1/dead-letter"},
	{"POST", "/ojs/v1/admin/workers/w/quiet"},
}

// FuzzRequest sends arbitrary bodies to every route of one server: each
// answer is a JSON object with the binding's headers, never a 5xx, and an
// error answer carries the envelope.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"a.b","args":[1,{"x":null}],"meta":{"k":"v"},"options":{"queue":"q","priority":3,"retry":{"max_attempts":2,"initial_interval_ms":5,"backoff_type":"linear"}}}`,
		`{"jobs":[{"type":"a","args":[]},{"type":"b","args":[],"id":"019539a4-aaaa-7000-8000-111111111111"}]}`,
		`{"queues":["q","default"],"count":3,"visibility_timeout_ms":10}`,
		`{"job_id":"019539a4-aaaa-7000-8000-111111111111","result":{"ok":true}}`,
		`{"job_id":"x","error":{"code":"DEAD_LETTER","type":"a.b","message":"m","retryable":false,"details":{"a":[1]}}}`,
		`{"worker_id":"w","active_jobs":["a","a","b"],"visibility_timeout_ms":1}`,
		`{"advance_ms":1000}`,
		`{"type":"a","args":[],"options":{"retry":{"max_interval":"P1Y","initial_interval":"PT0S"}}}`,
		`{"type":"u","args":[{"k":1}],"options":{"unique":{"keys":["args","queue"],"args_keys":["k"],"period":"PT1S","on_conflict":"replace"}}}`,
		`{"worker_id":"w","state":"running","active_jobs":3,"active_job_ids":["a"]}`,
		`{"filter":{"queue":"q","type":"a.*","error_type":"e","since":"2026-01-01T00:00:00Z"},"older_than":"2026-01-02T00:00:00Z","confirm":true}`,
		`{"override":{"queue":"b","meta":{"k":1},"retry":{"max_attempts":1},"priority":"HIGH"}}`,
		`{"options":null}`, `[]`, `null`, `{"type":1}`, `{"args":"x"}`, "{\"type\":\"\xff\"}",
	} {
		for i := range routes {
			f.Add(uint8(i), []byte(s))
		}
	}
	clock := executor.NewFakeClock(start)
	h := ojshttp.New(executor.New(executor.WithClock(clock)), ojshttp.WithManualClock(clock),
		ojshttp.WithMaxBodySize(8<<10), ojshttp.WithMaxJobs(2000))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		rt := routes[int(route)%len(routes)]
		req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: status %d: %s", rt.method, rt.path, body, rec.Code, rec.Body)
		}
		if rec.Header().Get("Content-Type") != ojshttp.MediaType || rec.Header().Get("OJS-Version") == "" {
			t.Fatalf("headers %v", rec.Header())
		}
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("answer is not a JSON object: %v: %s", err, rec.Body)
		}
		if rec.Code >= 400 {
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] == "" || e["message"] == "" || e["retryable"] == nil {
				t.Fatalf("status %d without the envelope: %s", rec.Code, rec.Body)
			}
		}
	})
}

// TestHugeBody: a body far over the limit is refused after reading at
// most the limit (plus the transport's buffering), with 413.
func TestHugeBody(t *testing.T) {
	srv := httptest.NewServer(ojshttp.New(executor.New(), ojshttp.WithMaxBodySize(1<<16)))
	defer srv.Close()
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"type":"a","args":["`))
		chunk := []byte(strings.Repeat("x", 1<<16))
		for i := 0; i < 1<<10; i++ { // 64 MiB if the server kept reading
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		pw.Close()
	}()
	resp, err := http.Post(srv.URL+"/ojs/v1/jobs", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	pr.CloseWithError(io.ErrClosedPipe)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestSlowloris: a client that never finishes its headers is cut off by
// NewHTTPServer's ReadHeaderTimeout, while other clients are served.
func TestSlowloris(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the header timeout")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := ojshttp.NewHTTPServer(ln.Addr().String(), ojshttp.New(executor.New()))
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /ojs/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	began := time.Now()
	resp, err := http.Get("http://" + ln.Addr().String() + "/ojs/v1/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a normal client was not served: %v", err)
	}
	resp.Body.Close()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		// The server may answer 408 before closing; either way it must end.
		_, err = io.ReadAll(conn)
	}
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("slow client kept its connection for %v", took)
	}
}

// TestGracefulShutdown: Shutdown lets an in-flight request finish.
func TestGracefulShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := ojshttp.NewHTTPServer(ln.Addr().String(), ojshttp.New(executor.New()))
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	// A request whose body arrives slowly is in flight when Shutdown starts.
	pr, pw := io.Pipe()
	answer := make(chan int, 1)
	go func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/ojs/v1/jobs", "application/json", pr)
		if err != nil {
			answer <- 0
			return
		}
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	pw.Write([]byte(`{"type":"a",`))
	time.Sleep(100 * time.Millisecond)
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(t.Context()) }()
	time.Sleep(100 * time.Millisecond)
	pw.Write([]byte(`"args":[]}`))
	pw.Close()
	if st := <-answer; st != 201 {
		t.Fatalf("in-flight request: status %d", st)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != http.ErrServerClosed {
		t.Fatal(err)
	}
}

// TestLimitListener: with a limit of 2, a third connection is not
// accepted until one of the first two closes.
func TestLimitListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := ojshttp.LimitListener(raw, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first := <-accepted
	<-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the third connection was not accepted after one closed")
	}
}

// TestClockHorizon: the manual clock refuses to move past 2200-01-01
// (the executor's int64-nanosecond times end in 2262) instead of
// saturating silently, and a refused advance leaves the clock alone.
func TestClockHorizon(t *testing.T) {
	s := newTestServer(t)
	const year = 365 * 24 * time.Hour
	s.advance(100 * year)
	before := s.clock.Now()
	_, m := s.do("POST", ojshttp.AdminClockPath, map[string]any{"advance_ms": (100 * year).Milliseconds()})
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != "validation_error" || !strings.Contains(e["message"].(string), "2200-01-01") {
		t.Fatalf("advance past the horizon: %v", m)
	}
	if !s.clock.Now().Equal(before) {
		t.Fatalf("refused advance moved the clock to %v", s.clock.Now())
	}
	// Jobs still run with real delays just below the horizon.
	s.advance(50 * year)
	id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t", "args": []any{},
		"options": map[string]any{"retry": map[string]any{"initial_interval": "PT1S", "jitter": false}}}))["id"].(string)
	s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{"default"}})
	n := s.must(200, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"message": "x"}})
	if got := ts(t, n["next_attempt_at"]).Sub(s.clock.Now()); got != time.Second {
		t.Fatalf("delay near the horizon %v, want 1s", got)
	}
}

// TestHostileShapes: deeply nested JSON, duplicate ACKs and NACKs of a
// finished job, oversized batches and many distinct queues, types and
// unique keys each get a binding error or are freed, never a crash.
func TestHostileShapes(t *testing.T) {
	s := newTestServer(t, ojshttp.WithReset())
	for _, body := range []string{
		`{"type":"a","args":[` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `]}`,
		`{"type":"a","args":[],"meta":{"a":` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20001) + `}`,
		`{"type":"a","args":[],"options":{"unique":{"keys":` + strings.Repeat("[", 20000) + `}}}`,
	} {
		_, m := s.do("POST", "/ojs/v1/jobs", body)
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != "invalid_payload" {
			t.Errorf("deep body: %v", m)
		}
	}
	jobs := make([]any, 1001)
	for i := range jobs {
		jobs[i] = map[string]any{"type": "t", "args": []any{}}
	}
	s.must(400, "POST", "/ojs/v1/jobs/batch", map[string]any{"jobs": jobs})
	const n = 500
	for i := range n {
		q := "q-" + strconv.Itoa(i)
		id := job(s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t.x" + strconv.Itoa(i), "args": []any{i},
			"options": map[string]any{"queue": q, "unique": map[string]any{"keys": []string{"args"}}}}))["id"]
		s.must(200, "POST", "/ojs/v1/workers/fetch", map[string]any{"queues": []string{q}, "worker_id": "w" + strconv.Itoa(i)})
		s.must(200, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": id})
		s.must(409, "POST", "/ojs/v1/workers/ack", map[string]any{"job_id": id})
		s.must(409, "POST", "/ojs/v1/workers/nack", map[string]any{"job_id": id, "error": map[string]any{"message": "late"}})
	}
	if total := s.must(200, "GET", "/ojs/v1/queues", nil)["pagination"].(map[string]any)["total"]; total != float64(n) {
		t.Fatalf("%v queues, want %d", total, n)
	}
	s.must(200, "POST", ojshttp.ResetPath, nil)
	if total := s.must(200, "GET", "/ojs/v1/queues", nil)["pagination"].(map[string]any)["total"]; total != 0.0 {
		t.Fatalf("%v queues after reset, want 0", total)
	}
	if w := s.must(200, "GET", "/ojs/v1/admin/workers", nil)["items"].([]any); len(w) != 0 {
		t.Fatalf("%d workers after reset", len(w))
	}
	// The unique index was emptied with the jobs: the same key is free.
	s.must(201, "POST", "/ojs/v1/jobs", map[string]any{"type": "t.x0", "args": []any{0},
		"options": map[string]any{"queue": "q-0", "unique": map[string]any{"keys": []string{"args"}}}})
}
