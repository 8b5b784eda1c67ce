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

// A timekeeper is woken when something becomes due before it planned to
// look again, every time it registers (also after it woke by its own timer),
// and not for something due later.
func TestKeeperWake(t *testing.T) {
	clock := NewFakeClock(t0)
	e := New(WithClock(clock))
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	k := &keeperWait{}
	for round := 0; round < 3; round++ {
		e.untilDue(k, time.Second)
		clock.Advance(time.Second) // its timer fired: it looks again
		d, ch := e.untilDue(k, time.Second)
		if d != time.Second {
			t.Fatalf("round %d: sleep %v with nothing due, want the 1s limit", round, d)
		}
		e.Enqueue(JobSpec{Type: "t", ScheduledAt: clock.Now().Add(2 * time.Second)})
		if closed(ch) {
			t.Fatalf("round %d: woken for a job due after its planned look", round)
		}
		e.Enqueue(JobSpec{Type: "t", ScheduledAt: clock.Now().Add(500 * time.Millisecond)})
		if !closed(ch) {
			t.Fatalf("round %d: not woken for a job due before its planned look", round)
		}
		clock.Advance(time.Second) // the keeper's timer fired
		for {                      // drain what became due
			j, ok := e.Fetch()
			if !ok {
				break
			}
			e.Ack(j.ID, j.Delivery)
		}
		clock.Advance(2 * time.Second)
		for {
			j, ok := e.Fetch()
			if !ok {
				break
			}
			e.Ack(j.ID, j.Delivery)
		}
		e.Tick()
	}
	e.unkeep(k)
	if len(e.keepers) != 0 {
		t.Errorf("%d keepers after unkeep", len(e.keepers))
	}
}
