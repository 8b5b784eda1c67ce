package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/ojshttp"
)

// serveProcess is a `retrykit serve` process a test started.
type serveProcess struct {
	cmd    *exec.Cmd
	base   string           // its URL
	stderr *strings.Builder // what it wrote on standard error
	exited chan error       // receives Wait's result when it exits
	client *http.Client
}

// startServeProcess starts cmd, a serve command, waits for the URL it
// prints, and stops it when the test ends (SIGINT, then a kill after
// 15 s).
func startServeProcess(t *testing.T, cmd *exec.Cmd) *serveProcess {
	t.Helper()
	p := &serveProcess{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan error, 1),
		client: &http.Client{Timeout: 60 * time.Second}}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve did not start: %v: %s", err, p.stderr.String())
	}
	p.base = strings.TrimSpace(line)
	return p
}

// call sends a request with a JSON body and returns the status and the
// answer.
func (p *serveProcess) call(method, path, body string) (int, []byte, error) {
	req, _ := http.NewRequest(method, p.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// peakRSS returns a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestServeMixedDeadLetterLoadWithinBound is the worst mixed load the
// memory bound of docs/servers.md (serveMemoryBound) is measured on:
// `retrykit serve` at its default flags holding 252 dead letters of 1 MB (most of --max-bytes),
// then 12 clients at once paging the dead letters, retrying them with
// 1 MB args overrides (and failing them back), FETCHing 1000, polling
// events and stats. The peak resident memory must stay below the bound.
// RK_MIXED_LOAD sets the load's length
// (default 8s; the audit ran 45s).
func TestServeMixedDeadLetterLoadWithinBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc for the peak RSS")
	}
	if testing.Short() {
		t.Skip("a 10 s load")
	}
	length := 8 * time.Second
	if v := os.Getenv("RK_MIXED_LOAD"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		length = d
	}
	p := startServeProcess(t, exec.Command(retrykitBinary(t), "serve", "--addr", "127.0.0.1:0"))
	stderr := p.stderr
	call := func(method, path, body string) (int, []byte) {
		code, b, _ := p.call(method, path, body)
		return code, b
	}
	big := `"` + strings.Repeat("a", 1_000_000-2) + `"`
	// ids returns the job ids of a FETCH answer or a dead-letter page:
	// each distinct "id" member (job ids are the only ones these answers
	// hold; FETCH shows its first job twice, as "job" and in "jobs"),
	// found without decoding the megabytes of args around them.
	ids := func(b []byte) []string {
		var out []string
		seen := map[string]bool{}
		for {
			k := bytes.Index(b, []byte(`"id":"`))
			if k < 0 || k+6+36 > len(b) {
				return out
			}
			b = b[k+6:]
			if id := string(b[:36]); !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	const deadLetters = 252
	for i := 0; i < deadLetters; i++ {
		if code, b := call("POST", "/ojs/v1/jobs", `{"type":"t","args":[`+big+`],"options":{"queue":"dl","retry":{"max_attempts":1,"on_exhaustion":"dead_letter"}}}`); code != 201 {
			t.Fatalf("push %d: %d %.300s", i, code, b)
		}
		_, b := call("POST", "/ojs/v1/workers/fetch", `{"queues":["dl"]}`)
		got := ids(b)
		if len(got) != 1 {
			t.Fatalf("fetch %d: %.300s", i, b)
		}
		call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+got[0]+`","error":{"type":"e","message":"x"}}`)
	}
	var calls, refused atomic.Int64
	stop := time.Now().Add(length)
	var wg sync.WaitGroup
	for w := 0; w < 12; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for time.Now().Before(stop) {
				var code int
				var b []byte
				switch w % 4 {
				case 0: // page the dead letters
					code, b = call("GET", "/ojs/v1/dead-letter?limit=100&offset="+strconv.Itoa(r.IntN(200)), "")
				case 1: // retry one with a 1 MB override, then fail it back
					_, page := call("GET", "/ojs/v1/dead-letter?limit=20&offset="+strconv.Itoa(r.IntN(200)), "")
					if l := ids(page); len(l) > 0 {
						code, b = call("POST", "/ojs/v1/dead-letter/"+l[r.IntN(len(l))]+"/retry", `{"override":{"args":[`+big+`],"meta":{"w":`+strconv.Itoa(w)+`}}}`)
					}
				case 2: // FETCH 1000, fail them back to the dead letters
					code, b = call("POST", "/ojs/v1/workers/fetch", `{"queues":["dl"],"count":1000}`)
					for _, id := range ids(b) {
						call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+id+`","error":{"type":"e","message":"again"}}`)
					}
				case 3: // events and stats
					if r.IntN(2) == 0 {
						code, b = call("GET", "/ojs/v1/events?limit=1000", "")
					} else {
						code, b = call("GET", "/ojs/v1/queues/dl/stats", "")
					}
				}
				calls.Add(1)
				if code == http.StatusTooManyRequests {
					refused.Add(1)
				} else if code >= 500 {
					t.Errorf("%d %.200s", code, b)
				}
			}
		}()
	}
	wg.Wait()
	if code, _ := call("GET", "/ojs/v1/health", ""); code != 200 {
		t.Fatalf("serve is down: %s", stderr.String())
	}
	peak := peakRSS(t, p.cmd.Process.Pid)
	bound := serveMemoryBound(ojshttp.DefaultMaxBytes, ojshttp.DefaultMaxJobs)
	t.Logf("%d calls (%d refused 429) in %v; peak RSS %d MiB, bound %d MiB", calls.Load(), refused.Load(), length, peak>>20, bound>>20)
	if peak >= bound {
		t.Fatalf("peak RSS %d MiB, bound (serveMemoryBound) %d MiB", peak>>20, bound>>20)
	}
}
