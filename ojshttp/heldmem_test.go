package ojshttp_test

import (
	"encoding/json"
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

// heldProfile, if set, is where BenchmarkHeldJobs writes the heap profile
// of each run, "-SHAPE-N" appended (go tool pprof -sample_index
// inuse_space).
var heldProfile = flag.String("heldprofile", "", "BenchmarkHeldJobs: write a heap profile per run to this path + \"-SHAPE-N\"")

// serveLike returns a server configured as `retrykit serve` configures
// it at its default flags (events, retention), with its executor, and
// opts.
func serveLike(opts ...ojshttp.Option) (*ojshttp.Server, *executor.Executor) {
	events := ojshttp.NewEvents(0)
	e := executor.New(executor.WithObserver(events),
		executor.WithFinishedRetention(24*time.Hour, 10000), executor.WithFinishedRetentionTotal(100000),
		executor.WithRetention(0, 10000))
	return ojshttp.New(e, append([]ojshttp.Option{ojshttp.WithEvents(events)}, opts...)...), e
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

// richBatch returns a batch PUSH body of n jobs carrying what the server
// keeps per job beside the executor: meta, two tags, an unknown field,
// options.unique over args and a retry policy (the same for all).
func richBatch(first, n int) string {
	var sb strings.Builder
	sb.WriteString(`{"jobs":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"type":"load.rich","args":[`)
		sb.WriteString(strconv.Itoa(first + i))
		sb.WriteString(`],"meta":{"tenant":"acme"},"x_trace":"t","options":{"queue":"rich","tags":["a","b"],` +
			`"unique":{"keys":["args"]},"retry":{"max_attempts":5,"initial_interval":"PT1H","max_interval":"PT2H"}}}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}

// BenchmarkHeldJobs measures the live heap per job the server holds, in
// a server configured as `retrykit serve` at its default flags, handled
// in process, after two collections: heap-B/job is the growth of the
// live heap (runtime.MemStats.HeapAlloc) divided by the jobs held. Shapes:
//
//   - small: batch PUSHes of 1000 small jobs (no policy, no meta), left
//     available;
//   - rich: batch PUSHes of 1000 jobs with meta, tags, an unknown field,
//     a unique key and a retry policy, each fetched and failed once, so
//     that it waits retryable (a timer) with one error entry; --max-bytes
//     is raised to 1 GiB, as these jobs count over 1 KiB each.
//
// -heldprofile writes the heap profile of each run, from which
// docs/benchmarks.md ("Memory per held job") splits the bytes by part.
// The resident memory of the real process is measured by cmd/retrykit's
// BenchmarkServeHeldJobs. Run it with -benchtime 1x.
func BenchmarkHeldJobs(b *testing.B) {
	for _, shape := range []string{"small", "rich"} {
		for _, n := range []int{100_000, 400_000} {
			b.Run(shape+"/"+strconv.Itoa(n), func(b *testing.B) {
				for range b.N {
					heapPerJob(b, shape, n)
				}
			})
		}
	}
}

func heapPerJob(b *testing.B, shape string, n int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	var opts []ojshttp.Option
	if shape == "rich" {
		// Rich jobs count over 1 KiB each against the limit (RK-351):
		// the default 256 MiB would refuse them before 400 000.
		opts = append(opts, ojshttp.WithMaxBytes(1<<30))
	}
	h, e := serveLike(opts...)
	do := func(path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
		return rec
	}
	for i := 0; i < n; i += 1000 {
		if shape == "small" {
			if rec := do("/ojs/v1/jobs/batch", smallBatch(i, 1000)); rec.Code != 201 {
				b.Fatalf("batch at %d: %d %.300s", i, rec.Code, rec.Body)
			}
			continue
		}
		if rec := do("/ojs/v1/jobs/batch", richBatch(i, 1000)); rec.Code != 201 {
			b.Fatalf("batch at %d: %d %.300s", i, rec.Code, rec.Body)
		}
		rec := do("/ojs/v1/workers/fetch", `{"queues":["rich"],"count":1000}`)
		var got struct{ Jobs []struct{ ID string } }
		if json.Unmarshal(rec.Body.Bytes(), &got); len(got.Jobs) != 1000 {
			b.Fatalf("fetch at %d: %d %.300s", i, rec.Code, rec.Body)
		}
		for _, j := range got.Jobs {
			if rec := do("/ojs/v1/workers/nack", `{"job_id":"`+j.ID+`","error":{"type":"load.error","message":"timeout"}}`); rec.Code != 200 {
				b.Fatalf("fail: %d %.300s", rec.Code, rec.Body)
			}
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
		f, err := os.Create(*heldProfile + "-" + shape + "-" + strconv.Itoa(n))
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
