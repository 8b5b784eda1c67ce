package main

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeMemoryBoundFormula pins the bound docs/servers.md states, 2 ×
// --max-bytes + 1 KiB × --max-jobs + 200 MiB, at the defaults and at the
// edges, and the soft limit 32 MiB below it.
func TestServeMemoryBoundFormula(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		maxBytes int64
		maxJobs  int
		want     int64
	}{
		// Defaults: 2 × 256 MiB + 500 000 KiB + 200 MiB = 1 258 586 112 bytes, about 1 200 MiB.
		{256 * MiB, 500_000, 2*256*MiB + 500_000*1024 + 200*MiB},
		{1, 1, 2 + 1024 + 200*MiB},
		{math.MaxInt64, 1, math.MaxInt64},
		{1, math.MaxInt, math.MaxInt64},
	} {
		if got := serveMemoryBound(c.maxBytes, c.maxJobs); got != c.want {
			t.Errorf("serveMemoryBound(%d, %d) = %d, want %d", c.maxBytes, c.maxJobs, got, c.want)
		}
		if got := serveMemoryLimit(c.maxBytes, c.maxJobs); got != c.want-32*MiB {
			t.Errorf("serveMemoryLimit(%d, %d) = %d, want %d", c.maxBytes, c.maxJobs, got, c.want-32*MiB)
		}
	}
}

// TestDropWatchFreesOnDropsAndQuiet walks a server's holdings through a
// burst and its end: a fall to at most half a peak, by at least 1024 jobs
// or 8 MiB, frees at once and resets that peak only; a smaller fall below
// what was held at the last free frees once the holdings stay the same
// for two calls.
func TestDropWatchFreesOnDropsAndQuiet(t *testing.T) {
	var w dropWatch
	for i, step := range []struct {
		jobs  int
		bytes int64
		want  bool
	}{
		{1000, 1 << 20, false},
		{400_000, 200 << 20, false},
		{300_000, 150 << 20, false}, // not yet half
		{200_000, 100 << 20, true},  // half of both peaks, far below them
		{150_000, 80 << 20, false},  // the peaks are now 200 000 and 100 MiB
		{100_000, 50 << 20, true},
		{60_000, 49 << 20, false}, // jobs: 40 000 below but not half; bytes: 1 MiB below
		{60_000, 20 << 20, true},  // bytes: 30 MiB below a peak of 50 MiB, under half
		{58_000, 19 << 20, false}, // 2000 jobs and 1 MiB below: not half
		// Jobs fall first (their peak resets), bytes later: the bytes
		// peak is still the 20 MiB held before the jobs fell.
		{20_000, 18 << 20, true},  // jobs: 40 000 below 60 000, under half
		{19_000, 12 << 20, false}, // bytes: 8 MiB below 20 MiB, not half
		{19_000, 9 << 20, true},   // bytes: 11 MiB below 20 MiB, under half
		// The tail: 500 jobs and 1 MiB fall, too little for a large
		// drop; quiet for two calls, it is freed once.
		{18_500, 8 << 20, false},
		{18_500, 8 << 20, false},
		{18_500, 8 << 20, true},
		{18_500, 8 << 20, false},
		{18_500, 8 << 20, false},
		// Growth then quiet frees nothing.
		{30_000, 30 << 20, false},
		{30_000, 30 << 20, false},
		{30_000, 30 << 20, false},
	} {
		if got := w.free(step.jobs, step.bytes); got != step.want {
			t.Errorf("step %d (%d jobs, %d bytes): free = %v, want %v", i, step.jobs, step.bytes, got, step.want)
		}
	}
}

// boundSlack is what the scaled-down shapes of TestServeMemoryWithinBound
// may add beside the bound's variable part (2 × data + 1 KiB × jobs):
// the in-flight budget's share of the bound's 200 MiB and the runtime's
// growth, measured up to 20 MiB.
const boundSlack = 64 << 20

// TestServeMemoryWithinBound runs the built `retrykit serve` (no cgo)
// with small limits and loads it with the shapes docs/servers.md's memory
// bound is measured on, each on a fresh server until it refuses with 429:
// small jobs up to --max-jobs, jobs of 256 KB args up to --max-bytes, dead
// letters retried with overrides, and failed jobs carrying meta, tags,
// unknown fields and unique keys. The peak resident memory must stay
// below the idle server's plus the bound's variable part for the flags (2
// × --max-bytes + 1 KiB × --max-jobs) plus 64 MiB; small jobs must each
// cost under 1.3 KiB (the server before the per-job work measured 1.7 KiB
// at this size). The full-size figures are BenchmarkServeShapes'.
func TestServeMemoryWithinBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/status")
	}
	if testing.Short() {
		t.Skip("drives several servers to their limits")
	}
	t.Parallel()
	bin := buildServe(t)
	for _, c := range []struct {
		name     string
		maxJobs  int
		maxBytes int64
		load     func(p *serveProc) int
		min      int // jobs the shape must reach before its 429
	}{
		{"small", 100_000, 64 << 20, func(p *serveProc) int { return p.fillSmall("s", 100_000) }, 100_000},
		{"huge", 1000, 32 << 20, func(p *serveProc) int { return p.fillHuge("h", 256_000, 1000) }, 100},
		{"dead-overrides", 10_000, 8 << 20, func(p *serveProc) int { return p.fillDeadOverrides("d", 100_000, 2000, 1000) }, 2000},
		{"rich-failed", 10_000, 8 << 20, func(p *serveProc) int { return p.fillRich("r", 100_000) }, 2000},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startServeBin(t, bin, "--max-jobs", fmt.Sprint(c.maxJobs), "--max-bytes", fmt.Sprint(c.maxBytes))
			idle, _ := p.rss()
			n := c.load(p)
			time.Sleep(500 * time.Millisecond)
			held, peak := p.rss()
			variable := 2*c.maxBytes + servePerJobMemory*int64(c.maxJobs)
			t.Logf("%d jobs: idle %.1f MiB, held %.1f MiB, peak %.1f MiB; idle + variable part + slack %.1f MiB; bound %.1f MiB",
				n, mib(idle), mib(held), mib(peak), mib(idle+variable+boundSlack), mib(serveMemoryBound(c.maxBytes, c.maxJobs)))
			if n < c.min {
				t.Fatalf("the shape reached %d jobs before its 429, want at least %d", n, c.min)
			}
			if peak > idle+variable+boundSlack {
				t.Errorf("peak %.1f MiB over idle %.1f MiB + 2 × %d + 1 KiB × %d + 64 MiB", mib(peak), mib(idle), c.maxBytes, c.maxJobs)
			}
			if peak > serveMemoryBound(c.maxBytes, c.maxJobs) {
				t.Errorf("peak %.1f MiB over the bound %.1f MiB", mib(peak), mib(serveMemoryBound(c.maxBytes, c.maxJobs)))
			}
			if c.name == "small" {
				if per := float64(held-idle) / float64(n); per > 1.3*1024 {
					t.Errorf("%.0f bytes of resident memory per held small job, want at most 1.3 KiB", per)
				}
			}
		})
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestServeMemoryReturnsAfterJobsEnd pushes 20 000 jobs of 2 KB args
// (about 100 MiB of resident memory), completes them all (FETCH, ACK) on
// a server keeping 10 finished jobs per queue and state, and checks that
// the resident memory comes back within 30 seconds to the idle server's
// plus a quarter of the growth or 16 MiB, whichever is more: retention
// prunes the completed jobs, serve's 5-second reclaim drops their entries
// and returns the freed memory to the operating system.
func TestServeMemoryReturnsAfterJobsEnd(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/status")
	}
	if testing.Short() {
		t.Skip("waits for the server's reclaim")
	}
	t.Parallel()
	p := startServeBin(t, buildServe(t), "--keep-finished", "10")
	idle, _ := p.rss()
	const n = 20_000
	arg := strings.Repeat("a", 2000)
	for i := 0; i < n; i += 500 {
		var sb strings.Builder
		sb.WriteString(`{"jobs":[`)
		for k := range 500 {
			if k > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"type":"load.big","args":[%d,%q],"queue":"r"}`, i+k, arg)
		}
		sb.WriteString(`]}`)
		if code, b := p.call("POST", "/ojs/v1/jobs/batch", sb.String()); code != 201 {
			t.Fatalf("batch PUSH: %d %.300s", code, b)
		}
	}
	full, _ := p.rss()
	done := 0
	for done < n {
		code, b := p.call("POST", "/ojs/v1/workers/fetch", `{"queues":["r"],"count":1000}`)
		ids := jobIDs(b)
		if code != 200 || len(ids) == 0 {
			t.Fatalf("FETCH after %d: %d %.300s", done, code, b)
		}
		for _, id := range ids {
			if code, b := p.call("POST", "/ojs/v1/workers/ack", `{"job_id":"`+id+`"}`); code != 200 {
				t.Fatalf("ACK: %d %.300s", code, b)
			}
			done++
		}
	}
	ended := time.Now()
	want := idle + max((full-idle)/4, 16<<20)
	var now int64
	for time.Since(ended) < 30*time.Second {
		if now, _ = p.rss(); now <= want {
			t.Logf("idle %.1f MiB, %d jobs %.1f MiB, back to %.1f MiB %.1f s after the last ACK",
				mib(idle), n, mib(full), mib(now), time.Since(ended).Seconds())
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("30 s after the last ACK resident memory is %.1f MiB, want at most %.1f (idle %.1f MiB, %.1f MiB with %d jobs)",
		mib(now), mib(want), mib(idle), mib(full), n)
}

// jobIDs returns the ids of a FETCH answer's jobs.
func jobIDs(b []byte) []string {
	var resp struct{ Jobs []struct{ ID string } }
	json.Unmarshal(b, &resp)
	ids := make([]string, len(resp.Jobs))
	for i, j := range resp.Jobs {
		ids[i] = j.ID
	}
	return ids
}
