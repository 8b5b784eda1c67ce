package executor

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// A job becoming available wakes exactly one parked goroutine, not all.
func TestWakeOnePerJob(t *testing.T) {
	e := New(WithClock(NewFakeClock(t0)))
	chans := make([]chan struct{}, 100)
	for i := range chans {
		chans[i] = make(chan struct{}, 1)
		if _, ok := e.fetchOrPark("q", chans[i]); ok {
			t.Fatal("fetched from an empty queue")
		}
	}
	woken := func() (n int) {
		for _, c := range chans {
			select {
			case <-c:
				n++
			default:
			}
		}
		return n
	}
	for k := 1; k <= 3; k++ {
		if _, err := e.Enqueue(JobSpec{Type: "t", Queue: "q"}); err != nil {
			t.Fatal(err)
		}
		if n := woken(); n != 1 {
			t.Fatalf("job %d woke %d goroutines, want 1", k, n)
		}
	}
	if n := len(e.queues["q"].idle); n != 97 {
		t.Errorf("%d still parked, want 97", n)
	}
	// a paused queue wakes nobody; resuming wakes one per waiting job
	e.PauseQueue("q")
	e.Enqueue(JobSpec{Type: "t", Queue: "q"})
	if n := woken(); n != 0 {
		t.Errorf("paused queue woke %d", n)
	}
	e.ResumeQueue("q")
	if n := woken(); n != 4 {
		t.Errorf("resume woke %d goroutines for 4 waiting jobs", n)
	}
	// another queue's job wakes nobody here
	e.Enqueue(JobSpec{Type: "t", Queue: "other"})
	if n := woken(); n != 0 {
		t.Errorf("a job of another queue woke %d", n)
	}
}

// In worker mode with 500 idle goroutines on one queue, each new job costs
// about one park (the goroutine that ran it parks again), not 500.
func TestWorkerWakesOnePerJob(t *testing.T) {
	e := New()
	const conc, jobs = 500, 50
	w := NewWorker(e, WithConcurrency("default", conc))
	w.Handle("t", func(ctx context.Context, j Job) error { return nil })
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	parked := func() (int, int64) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if q := e.queues[DefaultQueue]; q != nil {
			return len(q.idle), e.parks
		}
		return 0, e.parks
	}
	for i := 0; i < 10000; i++ {
		if n, _ := parked(); n == conc {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, before := parked()
	for i := 0; i < jobs; i++ {
		id := fmt.Sprint("j", i)
		if _, err := e.Enqueue(JobSpec{ID: id, Type: "t"}); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 10000; k++ {
			if j, _ := e.Get(id); j.State == Completed {
				break
			}
			runtime.Gosched()
			time.Sleep(50 * time.Microsecond)
		}
	}
	for i := 0; i < 10000; i++ {
		if n, _ := parked(); n == conc {
			break
		}
		time.Sleep(time.Millisecond)
	}
	n, after := parked()
	if n != conc {
		t.Fatalf("%d parked at the end, want %d", n, conc)
	}
	if per := float64(after-before) / jobs; per > 2 {
		t.Errorf("%.1f parks per job with %d idle goroutines, want about 1", per, conc)
	}
}
