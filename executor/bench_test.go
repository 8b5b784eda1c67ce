package executor_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// fetchAckChunks runs b.N fetch+ack cycles on queue "default", enqueuing
// the jobs in chunks of 1024 with the timer stopped, so that jobs are as
// fresh as in a live system (enqueued shortly before being fetched).
func fetchAckChunks(b *testing.B, e *executor.Executor, queues ...string) {
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(1024, b.N-done)
		b.StopTimer()
		for i := 0; i < n; i++ {
			mustEnqueue(b, e, executor.JobSpec{ID: strconv.Itoa(done + i), Type: "t"})
		}
		b.StartTimer()
		for i := 0; i < n; i++ {
			j, ok := e.Fetch(queues...)
			if !ok {
				b.Fatal("empty")
			}
			if _, err := e.Ack(j.ID, j.Delivery); err != nil {
				b.Fatal(err)
			}
		}
		done += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkFetchAck measures the success cycle: fetch an available job and
// acknowledge it.
func BenchmarkFetchAck(b *testing.B) {
	e, _ := newFake()
	fetchAckChunks(b, e, "default")
}

// BenchmarkFetchFail measures the retry cycle: fetch a job whose backoff has
// just elapsed (timer heap pop), fail it (decision, error entry, timer heap
// push), over a pool of 1000 jobs that retry forever on a constant 1 ms
// backoff while the fake clock advances 1 ms per cycle.
func BenchmarkFetchFail(b *testing.B) {
	e, c := newFake()
	p, _ := policy.New(policy.Spec{MaxAttempts: 1 << 30, InitialInterval: time.Millisecond, BackoffCoefficient: 1,
		MaxInterval: time.Millisecond, Strategy: 1 /* none */, OnExhaustion: policy.Discard})
	for i := 0; i < 1000; i++ {
		mustEnqueue(b, e, executor.JobSpec{ID: strconv.Itoa(i), Type: "t", Policy: p})
	}
	f := executor.Failure{Type: "net.timeout", Message: "upstream timed out"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j, ok := e.Fetch("default")
		if !ok {
			c.Advance(time.Millisecond)
			if j, ok = e.Fetch("default"); !ok {
				b.Fatal("empty")
			}
		}
		if _, err := e.Fail(j.ID, j.Delivery, f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkFetchWithWaiting shows that fetch+ack cost does not depend on how
// many jobs wait in the timer heap (retryable jobs due in an hour).
func BenchmarkFetchWithWaiting(b *testing.B) {
	for _, waiting := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("retryable=%d", waiting), func(b *testing.B) {
			e, _ := newFake()
			p, _ := policy.New(policy.Spec{MaxAttempts: 5, InitialInterval: time.Hour, BackoffCoefficient: 1,
				MaxInterval: time.Hour, OnExhaustion: policy.Discard})
			for i := 0; i < waiting; i++ {
				id := "w" + strconv.Itoa(i)
				mustEnqueue(b, e, executor.JobSpec{ID: id, Type: "t", Queue: "slow", Policy: p})
				j, _ := e.Fetch("slow")
				e.Fail(id, j.Delivery, executor.Failure{Type: "x"})
			}
			fetchAckChunks(b, e, "slow", "default")
		})
	}
}

// TestMemoryPerIdleJob enqueues 1,000,000 available jobs (no args) and
// checks the heap growth per job stays below 1 KiB.
func TestMemoryPerIdleJob(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 1,000,000 jobs")
	}
	const n = 1_000_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "job-" + strconv.Itoa(i) // 9–10 bytes, counted below
	}
	e, _ := newFake()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		if _, err := e.Enqueue(executor.JobSpec{ID: ids[i], Type: "email.send", Queue: "mail"}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("memory per idle job: %.0f bytes (heap %d MiB for %d jobs)", per, (after.HeapAlloc-before.HeapAlloc)>>20, n)
	if per > 1024 {
		t.Errorf("%.0f bytes per idle job, want <= 1024", per)
	}
	runtime.KeepAlive(e)
	runtime.KeepAlive(ids)
}
