package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeWithinTwoGiB runs the built `retrykit serve`, at its default
// flags, under a 2 GiB address-space limit (ulimit -v, as a container
// sets it) and drives the memory cases at moderate sizes: dead letters of
// 1 MB read by 20 concurrent pages, a FETCH of 1000 over 1 MB jobs, ACKs
// with 1 MB results and an event poll, and failures with 64 KiB details.
// The server must stay up and lose no job. It is built without cgo, as a
// container image is: with cgo, glibc reserves 64 MiB of address space
// per thread on top of the Go runtime's own reservations (README, serve).
func TestServeWithinTwoGiB(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -v is the Linux address-space limit")
	}
	bin := filepath.Join(t.TempDir(), "retrykit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p := startServeProcess(t, exec.Command("bash", "-c", "ulimit -v 2097152 && exec \"$0\" serve --addr 127.0.0.1:0", bin))
	exited, stderr := p.exited, p.stderr
	call := func(method, path, body string) (int, []byte) {
		code, b, err := p.call(method, path, body)
		if err != nil {
			t.Fatalf("%s %s: %v (serve: %s)", method, path, err, stderr.String())
		}
		return code, b
	}
	pushed := func(queue string, args int, retry string) string {
		code, b := call("POST", "/ojs/v1/jobs", fmt.Sprintf(`{"type":"t","args":[%q],"options":{"queue":%q,"retry":%s}}`, strings.Repeat("a", args), queue, retry))
		var m struct{ Job struct{ ID string } }
		if json.Unmarshal(b, &m); code != 201 {
			t.Fatalf("push: %d %.300s", code, b)
		}
		return m.Job.ID
	}
	fetchOne := func(queue string) {
		if code, b := call("POST", "/ojs/v1/workers/fetch", `{"queues":["`+queue+`"]}`); code != 200 || !strings.Contains(string(b), `"id"`) {
			t.Fatalf("fetch %s: %d %.300s", queue, code, b)
		}
	}
	stats := func(queue string) map[string]float64 {
		_, b := call("GET", "/ojs/v1/queues/"+queue+"/stats", "")
		var m struct{ Stats map[string]float64 }
		json.Unmarshal(b, &m)
		return m.Stats
	}
	const big = 1_000_000
	// Dead letters of 1 MB, read by 20 concurrent pages of 100.
	for i := 0; i < 40; i++ {
		id := pushed("dl", big, `{"max_attempts":1,"on_exhaustion":"dead_letter"}`)
		fetchOne("dl")
		call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+id+`","error":{"message":"x"}}`)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", p.base+"/ojs/v1/dead-letter?limit=100", nil)
			if resp, err := p.client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	// A FETCH of 1000 over 1 MB jobs.
	for i := 0; i < 40; i++ {
		pushed("fb", big, `{}`)
	}
	// The reservation outlasts the test, so that the jobs claimed stay
	// active however slow the machine is.
	code, b := call("POST", "/ojs/v1/workers/fetch", `{"queues":["fb"],"count":1000,"visibility_timeout_ms":3600000}`)
	if code != 200 || len(b) > 12<<20 {
		t.Fatalf("FETCH 1000 of 1 MB jobs: %d, %d bytes", code, len(b))
	}
	if n := strings.Count(string(b), `"id"`); n == 0 || n >= 40 {
		t.Fatalf("FETCH 1000 of 40 jobs of 1 MB: %d jobs in %d bytes, want some but not all", n, len(b))
	}
	// ACKs with 1 MB results, then an event poll.
	for i := 0; i < 60; i++ {
		id := pushed("ack", 10, `{}`)
		fetchOne("ack")
		if code, b := call("POST", "/ojs/v1/workers/ack", `{"job_id":"`+id+`","result":"`+strings.Repeat("r", big)+`"}`); code != 200 {
			t.Fatalf("ACK: %d %.300s", code, b)
		}
	}
	if code, b := call("GET", "/ojs/v1/events?limit=1000", ""); code != 200 || len(b) > 12<<20 {
		t.Fatalf("events: %d, %d bytes", code, len(b))
	}
	// Failures with 64 KiB details.
	details := `{"d":"` + strings.Repeat("d", 64000) + `"}`
	for i := 0; i < 10; i++ {
		q := fmt.Sprintf("er%d", i)
		id := pushed(q, 10, `{"max_attempts":30,"initial_interval":"PT0.001S","backoff_strategy":"none","jitter":false}`)
		for k := 0; k < 20; k++ {
			time.Sleep(2 * time.Millisecond)
			fetchOne(q)
			if code, b := call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+id+`","error":{"type":"e","message":"m","details":`+details+`}}`); code != 200 {
				t.Fatalf("FAIL: %d %.300s", code, b)
			}
		}
	}
	// Alive, and every job accounted for.
	if code, _ := call("GET", "/ojs/v1/health", ""); code != 200 {
		t.Fatalf("health: %d", code)
	}
	for q, want := range map[string]map[string]float64{
		"dl":  {"dead_letter": 40},
		"ack": {"completed": 60},
	} {
		got := stats(q)
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("queue %s: %s %v, want %v (%v)", q, k, got[k], v, got)
			}
		}
	}
	if st := stats("fb"); st["active"]+st["available"] != 40 || st["active"] == 0 {
		t.Fatalf("queue fb after a bounded FETCH: %v", st)
	}
	select {
	case err := <-exited:
		t.Fatalf("serve exited: %v\n%s", err, stderr.String())
	default:
	}
}
