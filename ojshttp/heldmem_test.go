package ojshttp_test

import (
	"flag"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// heldProfile, if set, is where BenchmarkHeldSmallJobs writes the heap
// profile of each size, "-N" appended (go tool pprof -sample_index
// inuse_space).
var heldProfile = flag.String("heldprofile", "", "BenchmarkHeldSmallJobs: write a heap profile per size to this path + \"-N\"")

// serveLike returns a server configured as `retrykit serve` configures
// it at its default flags (events, retention), with its executor.
func serveLike() (*ojshttp.Server, *executor.Executor) {
	events := ojshttp.NewEvents(0)
	e := executor.New(executor.WithObserver(events),
		executor.WithFinishedRetention(24*time.Hour, 10000), executor.WithFinishedRetentionTotal(100000),
		executor.WithRetention(0, 10000))
	return ojshttp.New(e, ojshttp.WithEvents(events)), e
}

// smallBatch returns a batch PUSH body of n small jobs (48 bytes of job
// JSON each, 19 bytes of args), numbered from first.
func smallBatch(first, n int) string {
	var sb strings.Builder
	sb.WriteString(`{"jobs":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"type":"load.small","args":[`)
		sb.WriteString(strconv.Itoa(100000 + (first+i)%900000))
		sb.WriteString(`,"abcdefgh"]}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// BenchmarkHeldSmallJobs measures the live heap per job the server holds:
// batch PUSHes of 1000 small jobs (no retry policy, no meta) into a
// server configured as `retrykit serve` at its default flags, handled in
// process, then two collections. heap-B/job is the growth of the live
// heap (runtime.MemStats.HeapAlloc) divided by the jobs held; the
// resident memory of the real process is measured by
// cmd/retrykit's BenchmarkServeHeldJobs. Run it with -benchtime 1x.
func BenchmarkHeldSmallJobs(b *testing.B) {
	for _, n := range []int{100_000, 400_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				heapPerJob(b, n)
			}
		})
	}
}

func heapPerJob(b *testing.B, n int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	h, e := serveLike()
	for i := 0; i < n; i += 1000 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/ojs/v1/jobs/batch", strings.NewReader(smallBatch(i, 1000))))
		if rec.Code != 201 {
			b.Fatalf("batch at %d: %d %.300s", i, rec.Code, rec.Body)
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := e.Count(executor.Filter{}); got != n {
		b.Fatalf("held %d jobs, want %d", got, n)
	}
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heap-B/job")
	b.ReportMetric(float64(int64(after.Mallocs-after.Frees)-int64(before.Mallocs-before.Frees))/float64(n), "objects/job")
	if *heldProfile != "" {
		f, err := os.Create(*heldProfile + "-" + strconv.Itoa(n))
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	runtime.KeepAlive(h)
}
