package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Flags of BenchmarkServeHeldJobs.
var (
	loadOld   = flag.String("serveload.old", "", "BenchmarkServeHeldJobs: a retrykit binary to measure beside the current tree (e.g. main before a change, built into /tmp)")
	loadSizes = flag.String("serveload.sizes", "100000,400000", "BenchmarkServeHeldJobs: the numbers of jobs held, comma-separated")
	loadOps   = flag.Int("serveload.ops", 2000, "BenchmarkServeHeldJobs: FETCH + FAIL pairs timed at each size")
)

// serveProc is a `retrykit serve` process started by a test, reached
// over loopback by one client.
type serveProc struct {
	tb     testing.TB
	base   string
	cmd    *exec.Cmd
	stderr *strings.Builder
	exited chan error
	c      *http.Client
}

var (
	serveBinOnce sync.Once
	serveBinDir  string // removed by TestMain
	serveBin     string
	serveBinErr  error
)

// buildServe builds the current tree's retrykit once per test binary,
// without cgo as a container image is built.
func buildServe(tb testing.TB) string {
	serveBinOnce.Do(func() {
		serveBinDir, serveBinErr = os.MkdirTemp("", "retrykit-serveload")
		if serveBinErr != nil {
			return
		}
		serveBin = filepath.Join(serveBinDir, "retrykit")
		build := exec.Command("go", "build", "-o", serveBin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			serveBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if serveBinErr != nil {
		tb.Fatal(serveBinErr)
	}
	return serveBin
}

// startServeBin runs bin serve with args on a free loopback port; the
// process is stopped when the test ends.
func startServeBin(tb testing.TB, bin string, args ...string) *serveProc {
	tb.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	p := &serveProc{tb: tb, cmd: cmd, stderr: &strings.Builder{}, exited: make(chan error, 1),
		c: &http.Client{Timeout: 2 * time.Minute}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { p.exited <- cmd.Wait() }()
	tb.Cleanup(p.stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		tb.Fatalf("serve did not start: %v: %s", err, p.stderr)
	}
	p.base = strings.TrimSpace(line)
	return p
}

// stop interrupts the server and waits for it.
func (p *serveProc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// rss returns the server's resident memory now and its peak so far
// (VmRSS and VmHWM of /proc/PID/status), in bytes.
func (p *serveProc) rss() (now, peak int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		p.tb.Fatalf("reading the server's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			now = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return now, peak
}

// call sends body (if any) with method to path and returns the status
// and the answer.
func (p *serveProc) call(method, path, body string) (int, []byte) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, p.base+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.c.Do(req)
	if err != nil {
		p.tb.Fatalf("%s %s: %v (serve: %s)", method, path, err, p.stderr)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// smallJobs returns a batch PUSH body of n small jobs of queue q (about
// 40 bytes of job JSON each, 19 of args), numbered from first.
func smallJobs(q string, first, n int) string {
	var sb strings.Builder
	sb.WriteString(`{"jobs":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"type":"load.small","args":[%d,"abcdefgh"],"queue":%q}`, 100000+(first+i)%900000, q)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// pushSmall pushes n small jobs to queue q in batches of 1000 and returns
// the time it took; the server must accept them all.
func (p *serveProc) pushSmall(q string, n int) time.Duration {
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		if code, b := p.call("POST", "/ojs/v1/jobs/batch", smallJobs(q, i, min(1000, n-i))); code != 201 {
			p.tb.Fatalf("batch PUSH at %d: %d %.300s", i, code, b)
		}
	}
	return time.Since(start)
}

// fetchFail times k FETCH + FAIL pairs on queue q, each FAIL a retryable
// error, and returns the latencies of the FETCHes and of the FAILs.
func (p *serveProc) fetchFail(q string, k int) (fetch, fail []time.Duration) {
	for range k {
		t0 := time.Now()
		code, b := p.call("POST", "/ojs/v1/workers/fetch", `{"queues":["`+q+`"]}`)
		t1 := time.Now()
		var m struct{ Job struct{ ID string } }
		if json.Unmarshal(b, &m); code != 200 || m.Job.ID == "" {
			p.tb.Fatalf("FETCH: %d %.300s", code, b)
		}
		code, b = p.call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+m.Job.ID+`","error":{"type":"load.error","message":"m"}}`)
		t2 := time.Now()
		if code != 200 {
			p.tb.Fatalf("FAIL: %d %.300s", code, b)
		}
		fetch, fail = append(fetch, t1.Sub(t0)), append(fail, t2.Sub(t1))
	}
	return fetch, fail
}

// quantile returns the q-quantile of ds (nearest rank), in milliseconds.
func quantile(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s)) + 0.5)
	return float64(s[min(max(i-1, 0), len(s)-1)]) / float64(time.Millisecond)
}

// BenchmarkServeHeldJobs is the held-jobs load of docs/benchmarks.md
// ("Memory per held job"): `retrykit serve` at its default flags, one
// client, batch PUSHes of 1000 jobs of about 40 bytes until the server
// holds N jobs; then the resident memory (VmRSS), and the latency of
// -serveload.ops FETCH + FAIL pairs. With -serveload.old=BIN it measures
// that binary too, each size on both binaries one after the other, so
// both see the same machine. Run it with -benchtime 1x:
//
//	go test ./cmd/retrykit -run '^$' -bench ServeHeldJobs -benchtime 1x -serveload.old /tmp/retrykit-old
func BenchmarkServeHeldJobs(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/PID/status")
	}
	bins := []struct{ name, path string }{{"current", buildServe(b)}}
	if *loadOld != "" {
		bins = append([]struct{ name, path string }{{"old", *loadOld}}, bins...)
	}
	for _, f := range strings.Split(*loadSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("-serveload.sizes: %q", f)
		}
		for _, bin := range bins {
			b.Run(fmt.Sprintf("jobs=%d/bin=%s", n, bin.name), func(b *testing.B) {
				for range b.N {
					p := startServeBin(b, bin.path)
					idle, _ := p.rss()
					took := p.pushSmall("load", n)
					time.Sleep(time.Second) // let the collector finish
					held, _ := p.rss()
					fetch, fail := p.fetchFail("load", *loadOps)
					_, peak := p.rss()
					b.ReportMetric(float64(n)/took.Seconds(), "push-jobs/s")
					b.ReportMetric(float64(idle)/(1<<20), "idle-MiB")
					b.ReportMetric(float64(held)/(1<<20), "RSS-MiB")
					b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
					b.ReportMetric(float64(held-idle)/float64(n), "RSS-B/job")
					b.ReportMetric(quantile(fetch, 0.5), "fetch-p50-ms")
					b.ReportMetric(quantile(fetch, 0.99), "fetch-p99-ms")
					b.ReportMetric(quantile(fail, 0.5), "fail-p50-ms")
					b.ReportMetric(quantile(fail, 0.99), "fail-p99-ms")
					p.stop()
					if testing.Verbose() { // with GODEBUG=gctrace=1, the server's last collections
						log := p.stderr.String()
						b.Log(log[max(0, len(log)-2000):])
					}
				}
			})
		}
	}
}

// fillSmall pushes small jobs to queue q in batches of 1000 until the
// server refuses with 429 or n are pushed, and returns how many it took.
func (p *serveProc) fillSmall(q string, n int) int {
	held := 0
	for held < n {
		k := min(1000, n-held)
		code, b := p.call("POST", "/ojs/v1/jobs/batch", smallJobs(q, held, k))
		if code == http.StatusTooManyRequests {
			break
		}
		if code != 201 {
			p.tb.Fatalf("batch PUSH at %d: %d %.300s", held, code, b)
		}
		held += k
	}
	return held
}

// fillHuge pushes jobs of about size bytes of args to queue q, one per
// PUSH, until the server refuses with 429 or n are pushed, and returns
// how many it took.
func (p *serveProc) fillHuge(q string, size, n int) int {
	arg := strings.Repeat("h", size)
	for i := range n {
		code, b := p.call("POST", "/ojs/v1/jobs", `{"type":"load.huge","args":["`+arg+`"],"queue":"`+q+`"}`)
		if code == http.StatusTooManyRequests {
			return i
		}
		if code != 201 {
			p.tb.Fatalf("PUSH %d: %d %.300s", i, code, b)
		}
	}
	return n
}

// fillDeadOverrides makes dead letters and retries them with overrides,
// rounds of at most round jobs (the dead letter set keeps 10 000): each
// job is pushed with max_attempts 1 and on_exhaustion dead_letter,
// fetched, failed with an error of details bytes of details, then
// retried with an override of its queue (q + "-held"), args, meta and
// retry policy (a max_attempts of its own, so no two jobs share a policy)
// and so waits again, available, with its error history. It stops at n jobs or at the
// first 429 and returns how many jobs went through.
func (p *serveProc) fillDeadOverrides(q string, n, round, details int) int {
	det := `{"trace":"` + strings.Repeat("d", details) + `"}`
	done := 0
	for done < n {
		k := min(round, n-done)
		var sb strings.Builder
		ids := make([]string, 0, k)
		for i := 0; i < k; i += 1000 {
			sb.Reset()
			sb.WriteString(`{"jobs":[`)
			for m := i; m < min(i+1000, k); m++ {
				if m > i {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, `{"type":"load.dead","args":[%d],"queue":%q,"retry":{"max_attempts":1,"on_exhaustion":"dead_letter"}}`, done+m, q)
			}
			sb.WriteString(`]}`)
			code, b := p.call("POST", "/ojs/v1/jobs/batch", sb.String())
			if code == http.StatusTooManyRequests {
				return done + i
			}
			var resp struct{ Jobs []struct{ ID string } }
			if json.Unmarshal(b, &resp); code != 201 {
				p.tb.Fatalf("batch PUSH: %d %.300s", code, b)
			}
			for _, j := range resp.Jobs {
				ids = append(ids, j.ID)
			}
		}
		for len(ids) > 0 {
			code, b := p.call("POST", "/ojs/v1/workers/fetch", `{"queues":["`+q+`"],"count":1000}`)
			var resp struct{ Jobs []struct{ ID string } }
			if json.Unmarshal(b, &resp); code != 200 || len(resp.Jobs) == 0 {
				p.tb.Fatalf("FETCH: %d %.300s", code, b)
			}
			for _, j := range resp.Jobs {
				code, b := p.call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+j.ID+`","error":{"type":"load.error","message":"m","details":`+det+`}}`)
				if code == http.StatusTooManyRequests {
					return done
				}
				if code != 200 {
					p.tb.Fatalf("FAIL: %d %.300s", code, b)
				}
			}
			for _, j := range resp.Jobs {
				ov := fmt.Sprintf(`{"override":{"queue":"%s-held","args":[%d,"override"],"meta":{"round":%d},"retry":{"max_attempts":%d}}}`, q, done, done/round, 2+done)
				code, b := p.call("POST", "/ojs/v1/dead-letter/"+j.ID+"/retry", ov)
				if code == http.StatusTooManyRequests {
					return done
				}
				if code != 200 {
					p.tb.Fatalf("dead letter retry: %d %.300s", code, b)
				}
				done++
			}
			ids = ids[len(resp.Jobs):]
		}
	}
	return done
}

// fillRich pushes jobs to queue q carrying every per-job structure the
// server keeps beside the executor (meta, two tags, an unknown top-level
// field, options.unique over args, a visibility timeout), fetches each and
// fails it once with a retryable error, so that it waits, retryable, with
// an error history and a server entry of its own. It stops at n jobs or
// at the first 429 and returns how many jobs went through.
func (p *serveProc) fillRich(q string, n int) int {
	done := 0
	var sb strings.Builder
	for done < n {
		k := min(1000, n-done)
		sb.Reset()
		sb.WriteString(`{"jobs":[`)
		for m := range k {
			if m > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"type":"load.rich","args":[%d],"meta":{"tenant":"acme"},"x_trace":"t%d","options":{"queue":%q,"tags":["a","b"],"unique":{"keys":["args"]},"retry":{"max_attempts":5,"initial_interval":"PT1H","max_interval":"PT2H"}}}`, done+m, m, q)
		}
		sb.WriteString(`]}`)
		code, b := p.call("POST", "/ojs/v1/jobs/batch", sb.String())
		if code == http.StatusTooManyRequests {
			return done
		}
		if code != 201 {
			p.tb.Fatalf("batch PUSH: %d %.300s", code, b)
		}
		code, b = p.call("POST", "/ojs/v1/workers/fetch", `{"queues":["`+q+`"],"count":1000}`)
		var resp struct{ Jobs []struct{ ID string } }
		if json.Unmarshal(b, &resp); code != 200 || len(resp.Jobs) != k {
			p.tb.Fatalf("FETCH: %d, %d jobs, want %d: %.300s", code, len(resp.Jobs), k, b)
		}
		for _, j := range resp.Jobs {
			code, b := p.call("POST", "/ojs/v1/workers/nack", `{"job_id":"`+j.ID+`","error":{"type":"load.error","message":"timeout"}}`)
			if code == http.StatusTooManyRequests {
				return done
			}
			if code != 200 {
				p.tb.Fatalf("FAIL: %d %.300s", code, b)
			}
			done++
		}
	}
	return done
}

// BenchmarkServeShapes loads `retrykit serve` at its default flags with
// each of the worst shapes docs/servers.md's memory bound is measured
// on: small jobs up to --max-jobs, jobs of 1 MB args up to --max-bytes,
// and dead letters retried with overrides. It reports the peak resident
// memory and its ratio to the bound. Run it with -benchtime 1x.
func BenchmarkServeShapes(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/PID/status")
	}
	bin := buildServe(b)
	if *loadOld != "" {
		bin = *loadOld
	}
	const maxJobs, maxBytes = 500_000, 256 << 20
	for _, shape := range []struct {
		name string
		load func(p *serveProc) int
	}{
		{"small", func(p *serveProc) int { return p.fillSmall("s", maxJobs) }},
		{"huge", func(p *serveProc) int { return p.fillHuge("h", 1_000_000, maxJobs) }},
		{"dead-overrides", func(p *serveProc) int { return p.fillDeadOverrides("d", 200_000, 10_000, 1000) }},
		{"rich-failed", func(p *serveProc) int { return p.fillRich("r", maxJobs) }},
	} {
		b.Run(shape.name, func(b *testing.B) {
			for range b.N {
				p := startServeBin(b, bin)
				start := time.Now()
				n := shape.load(p)
				took := time.Since(start)
				time.Sleep(time.Second)
				held, peak := p.rss()
				b.ReportMetric(float64(n), "jobs")
				b.ReportMetric(took.Seconds(), "load-s")
				b.ReportMetric(float64(held)/(1<<20), "RSS-MiB")
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(peak)/float64(serveMemoryBound(maxBytes, maxJobs)), "peak/bound")
				p.stop()
			}
		})
	}
}
