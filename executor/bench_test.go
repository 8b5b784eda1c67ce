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

// queueSizes are the numbers of queued jobs the load benchmarks run at.
var queueSizes = []int{1_000, 100_000, 1_000_000}

// fill enqueues n available jobs on the default queue.
func fill(b *testing.B, e *executor.Executor, n int, p *policy.Policy) {
	b.Helper()
	for i := 0; i < n; i++ {
		if _, err := e.Enqueue(executor.JobSpec{Type: "t", Policy: p}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueue measures Enqueue on a queue that holds about n available
// jobs: every 1024 enqueues, as many jobs are fetched and acknowledged with
// the timer stopped, so the queue stays between n and n + 1024.
func BenchmarkEnqueue(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) {
			e, _ := newFake()
			fill(b, e, n, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				k := min(1024, b.N-done)
				for i := 0; i < k; i++ {
					if _, err := e.Enqueue(executor.JobSpec{Type: "t"}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				for i := 0; i < k; i++ {
					j, _ := e.Fetch()
					e.Ack(j.ID, j.Delivery)
				}
				b.StartTimer()
				done += k
			}
		})
	}
}

// BenchmarkFetchAck measures the success cycle — fetch an available job and
// acknowledge it — on a queue that holds about n available jobs (refilled
// by 1024 with the timer stopped).
func BenchmarkFetchAck(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) {
			e, _ := newFake()
			fill(b, e, n, nil)
			fetchAckChunks(b, e)
		})
	}
}

// BenchmarkFetchFail measures the retry cycle with n jobs in circulation:
// each retries forever on a constant 1 ms backoff, and the fake clock
// advances 1 ms whenever nothing is available, so a cycle is a fetch (the
// job became available through the timer heap), a failure (decision, error
// entry, timer heap push) and a share of the clock step.
func BenchmarkFetchFail(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) {
			e, c := newFake()
			p, _ := policy.New(policy.Spec{MaxAttempts: 1 << 30, InitialInterval: time.Millisecond, BackoffCoefficient: 1,
				MaxInterval: time.Millisecond, Strategy: 1 /* none */, OnExhaustion: policy.Discard})
			fill(b, e, n, p)
			f := executor.Failure{Type: "net.timeout", Message: "upstream timed out"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j, ok := e.Fetch()
				if !ok {
					c.Advance(time.Millisecond)
					if j, ok = e.Fetch(); !ok {
						b.Fatal("empty")
					}
				}
				if _, err := e.Fail(j.ID, j.Delivery, f); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}

// completeJobs runs n enqueue+fetch+ack cycles (auto ids, default
// retention: 24 h and 10000 finished jobs per queue and state).
func completeJobs(tb testing.TB, e *executor.Executor, n int) {
	for i := 0; i < n; i++ {
		if _, err := e.Enqueue(executor.JobSpec{Type: "t"}); err != nil {
			tb.Fatal(err)
		}
		j, ok := e.Fetch()
		if !ok {
			tb.Fatal("empty")
		}
		if _, err := e.Ack(j.ID, j.Delivery); err != nil {
			tb.Fatal(err)
		}
	}
}

// heapNow returns the live heap after a full collection.
func heapNow() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCompletedHeap completes n jobs on one executor with the default
// retention and reports the live heap afterwards (heap-MiB) and the jobs
// it still holds: an executor that runs forever keeps a bounded heap. Run
// with -benchtime 1x.
func BenchmarkCompletedHeap(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("completed=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				base := heapNow()
				e, _ := newFake()
				completeJobs(b, e, n)
				h := heapNow()
				b.ReportMetric(float64(h-min(h, base))/(1<<20), "heap-MiB")
				b.ReportMetric(float64(e.Count(executor.Filter{})), "jobs-held")
				runtime.KeepAlive(e)
			}
		})
	}
}

// BenchmarkListActive lists the 10 active jobs of an executor that also
// holds n completed ones (retention raised to keep them all): the per-state
// index makes the cost independent of n.
func BenchmarkListActive(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("completed=%d", n), func(b *testing.B) {
			e, _ := newFake(executor.WithFinishedRetention(time.Hour, n))
			completeJobs(b, e, n)
			fill(b, e, 10, nil)
			for i := 0; i < 10; i++ {
				e.Fetch()
			}
			f := executor.Filter{States: []executor.State{executor.Active}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if l := e.List(f); len(l) != 10 {
					b.Fatalf("%d active", len(l))
				}
			}
		})
	}
}

// TestHeapFlatOverCompletedJobs checks that the live heap does not grow
// with the number of jobs completed: after 1,200,000 completed jobs it is
// within 4 MiB of what it was after 200,000 (default retention keeps 10000
// of them).
func TestHeapFlatOverCompletedJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("completes 1,200,000 jobs")
	}
	e, _ := newFake()
	completeJobs(t, e, 200_000)
	h1 := heapNow()
	completeJobs(t, e, 1_000_000)
	h2 := heapNow()
	t.Logf("live heap after 200k completed: %d KiB, after 1.2M: %d KiB", h1>>10, h2>>10)
	if h2 > h1+4<<20 {
		t.Errorf("heap grew from %d to %d KiB over 1,000,000 completed jobs", h1>>10, h2>>10)
	}
	if n := e.Count(executor.Filter{}); n != 10_000 {
		t.Errorf("%d jobs held, want the 10000 of the default retention", n)
	}
	runtime.KeepAlive(e)
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

// BenchmarkCyclePriorities measures one enqueue, fetch and ack on a queue
// that holds about n available jobs spread over p priorities (p = 201 is
// ojs-core §5's range -100..100): an enqueue finds its level among p in
// O(log p), a fetch takes the head. p = 1 is the cost without priorities.
func BenchmarkCyclePriorities(b *testing.B) {
	for _, p := range []int{1, 201} {
		for _, n := range queueSizes[:2] {
			b.Run(fmt.Sprintf("priorities=%d/queued=%d", p, n), func(b *testing.B) {
				e, _ := newFake()
				for i := range n {
					if _, err := e.Enqueue(executor.JobSpec{Type: "t", Priority: i%p - p/2}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := e.Enqueue(executor.JobSpec{Type: "t", Priority: i%p - p/2}); err != nil {
						b.Fatal(err)
					}
					j, ok := e.Fetch()
					if !ok {
						b.Fatal("nothing available")
					}
					e.Ack(j.ID, j.Delivery)
				}
			})
		}
	}
}
