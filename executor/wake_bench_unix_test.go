//go:build unix

package executor_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// cpuTime returns the process's user + system CPU time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWorkerJob runs one job at a time through a real-clock Worker
// whose queue has conc goroutines, all idle but the one a job wakes, and
// reports the process CPU time per job (cpu-µs/job): it stays flat as conc
// grows because a new job wakes one parked goroutine, not all.
func BenchmarkWorkerJob(b *testing.B) {
	for _, conc := range []int{1, 100, 2000} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			e := executor.New()
			w := executor.NewWorker(e, executor.WithConcurrency("default", conc))
			done := make(chan struct{})
			w.Handle("t", func(ctx context.Context, j executor.Job) error { done <- struct{}{}; return nil })
			if err := w.Start(); err != nil {
				b.Fatal(err)
			}
			defer w.Stop(context.Background())
			time.Sleep(100 * time.Millisecond) // let every goroutine park
			b.ReportAllocs()
			b.ResetTimer()
			c0 := cpuTime(b)
			for i := 0; i < b.N; i++ {
				if _, err := e.Enqueue(executor.JobSpec{Type: "t"}); err != nil {
					b.Fatal(err)
				}
				<-done
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-c0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/job")
		})
	}
}

// BenchmarkWorkerBurst enqueues bursts of 100 jobs back to back on a
// real-clock Worker with 2000 goroutines on the queue and reports the
// process CPU time per job (cpu-µs/job).
func BenchmarkWorkerBurst(b *testing.B) {
	const conc, burst = 2000, 100
	e := executor.New()
	w := executor.NewWorker(e, executor.WithConcurrency("default", conc))
	done := make(chan struct{}, burst)
	w.Handle("t", func(ctx context.Context, j executor.Job) error { done <- struct{}{}; return nil })
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop(context.Background())
	time.Sleep(100 * time.Millisecond) // let every goroutine park
	b.ResetTimer()
	c0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		for k := 0; k < burst; k++ {
			if _, err := e.Enqueue(executor.JobSpec{Type: "t"}); err != nil {
				b.Fatal(err)
			}
		}
		for k := 0; k < burst; k++ {
			<-done
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-c0)/float64(time.Microsecond)/float64(b.N*burst), "cpu-µs/job")
}
