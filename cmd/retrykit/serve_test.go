package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServe runs `retrykit serve args...` in-process on a free port and
// returns its base URL and a function that stops it and returns the exit
// status and stderr.
func startServe(t *testing.T, args ...string) (string, func() (int, string)) {
	t.Helper()
	stop := make(chan struct{})
	ready := make(chan string, 1)
	serveStop, serveReady = stop, ready
	t.Cleanup(func() { serveStop, serveReady = nil, nil })
	var stdout, stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), strings.NewReader(""), &stdout, &stderr)
	}()
	var addr string
	select {
	case addr = <-ready:
	case c := <-code:
		t.Fatalf("serve exited with %d: %s", c, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not start")
	}
	once := false
	return "http://" + addr, func() (int, string) {
		if !once {
			close(stop)
			once = true
		}
		return <-code, stderr.String()
	}
}

func TestServeHealthAndManualClock(t *testing.T) {
	base, stop := startServe(t, "--clock", "manual")
	resp, err := http.Get(base + "/ojs/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if resp.StatusCode != 200 || h["status"] != "ok" {
		t.Fatalf("health: %d %v", resp.StatusCode, h)
	}
	resp, err = http.Post(base+"/x-retrykit/v1/clock/advance", "application/json", strings.NewReader(`{"advance_ms":1500}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"advanced_ms":1500`)) {
		t.Fatalf("advance: %d %s", resp.StatusCode, b)
	}
	if code, errs := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestServeRealClockHasNoAdminEndpoint(t *testing.T) {
	base, stop := startServe(t)
	defer stop()
	resp, err := http.Post(base+"/x-retrykit/v1/clock/advance", "application/json", strings.NewReader(`{"advance_ms":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestServePlantAnnounced(t *testing.T) {
	_, stop := startServe(t, "--plant", "regex-match")
	if _, errs := stop(); !strings.Contains(errs, "PLANTED FAULTS (test only): regex-match") {
		t.Fatalf("stderr: %s", errs)
	}
}

func TestServeBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--clock", "sundial"},
		{"serve", "--plant", "nope"},
		{"serve", "--visibility-timeout", "0s"},
		{"serve", "extra"},
		{"serve", "--max-conns", "0"},
		{"serve", "--keep-finished", "-1"},
		{"serve", "--max-jobs", "0"},
		{"serve", "--max-bytes", "-5"},
		{"serve", "--addr", "nonsense"},
		{"serve", "--addr", ""},
		{"serve", "--addr", "127.0.0.1"},
		{"serve", "--shutdown-timeout", "-1s"},
		{"serve", "--shutdown-timeout", "0s"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--help"}, strings.NewReader(""), &out, &errb); code != 0 || strings.Contains(out.String(), "plant") {
		t.Errorf("help: %d %q", code, out.String())
	}
	// Numbers and durations print as themselves, strings quoted; a
	// boolean that is off by default shows no default (help.go).
	for _, want := range []string{`(default 1024)`, `(default 10s)`, `(default "127.0.0.1:8080")`, "  --allow-reset   "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %s:\n%s", want, out.String())
		}
	}
}

// An unspecified listen address is announced as the loopback address a
// client on this machine dials.
func TestServeDialAddr(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9}, "127.0.0.1:9"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7}, "127.0.0.1:7"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 7}, "[::1]:7"},
	} {
		if got := dialAddr(tc.addr); got != tc.want {
			t.Errorf("dialAddr(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// TestServeShutdownUnderLoad: SIGTERM (here: the stop channel) while 16
// clients push, fetch and ack. serve exits 0; every answer that arrived is
// a whole JSON object with a non-5xx status; the rest are connection
// errors, never a truncated answer.
func TestServeShutdownUnderLoad(t *testing.T) {
	base, stop := startServe(t)
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	halt := make(chan struct{})
	bad := make(chan string, 16)
	answered := make(chan int, 16)
	for w := 0; w < 16; w++ {
		go func() {
			n := 0
			defer func() { answered <- n }()
			for {
				select {
				case <-halt:
					return
				default:
				}
				for _, rq := range []struct{ path, body string }{
					{"/ojs/v1/jobs", `{"type":"load.t","args":[1]}`},
					{"/ojs/v1/workers/fetch", `{"queues":["default"]}`},
				} {
					resp, err := cl.Post(base+rq.path, "application/json", strings.NewReader(rq.body))
					if err != nil {
						continue // the server is going away
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					var m map[string]any
					if err != nil || resp.StatusCode >= 500 || json.Unmarshal(b, &m) != nil {
						bad <- string(b)
						return
					}
					n++
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	code, errs := stop()
	close(halt)
	total := 0
	for range 16 {
		total += <-answered
	}
	select {
	case b := <-bad:
		t.Fatalf("a bad answer during shutdown: %q", b)
	default:
	}
	if code != 0 || total == 0 {
		t.Fatalf("exit %d after %d answers: %s", code, total, errs)
	}
}

// TestServeMaxJobs: --max-jobs bounds the jobs held; the next PUSH is a
// 429 queue_full.
func TestServeMaxJobs(t *testing.T) {
	base, stop := startServe(t, "--max-jobs", "2")
	for i, want := range []int{201, 201, 429} {
		resp, err := http.Post(base+"/ojs/v1/jobs", "application/json", strings.NewReader(`{"type":"t","args":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == 429 && !bytes.Contains(b, []byte(`"queue_full"`))) {
			t.Fatalf("push %d: %d %s, want %d", i, resp.StatusCode, b, want)
		}
	}
	if code, errs := stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
}
