package executor

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func fakeExecutor(opts ...Option) (*Executor, *FakeClock) {
	c := NewFakeClock(time.Unix(1_700_000_000, 0))
	return New(append([]Option{WithClock(c)}, opts...)...), c
}

// TestEmptyQueuesAndTypesFreed: queue records and interned
// types go with their last job, whether it is pruned, deleted or removed
// by the total retention limit.
func TestEmptyQueuesAndTypesFreed(t *testing.T) {
	e, c := fakeExecutor()
	const n = 1000
	for i := range n {
		q := "tenant-" + strconv.Itoa(i)
		if _, err := e.Enqueue(JobSpec{ID: q, Type: "type-" + strconv.Itoa(i), Queue: q}); err != nil {
			t.Fatal(err)
		}
		j, ok := e.Fetch(q)
		if !ok {
			t.Fatalf("fetch %s: nothing", q)
		}
		if i%2 == 0 {
			e.Ack(j.ID, j.Delivery)
		} else {
			e.Cancel(j.ID)
		}
	}
	if len(e.queues) != n || len(e.types) != n {
		t.Fatalf("%d queues and %d types while the jobs exist, want %d", len(e.queues), len(e.types), n)
	}
	for i := 0; i < n; i += 4 {
		if err := e.Delete("tenant-" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if want := n - n/4; len(e.queues) != want || len(e.types) != want {
		t.Errorf("after deleting a quarter: %d queues, %d types, want %d", len(e.queues), len(e.types), want)
	}
	c.Advance(defaultFinishedMaxAge + time.Second)
	e.Tick()
	if len(e.queues) != 0 || len(e.types) != 0 || len(e.jobs) != 0 {
		t.Errorf("after pruning: %d queues, %d types, %d jobs, want none", len(e.queues), len(e.types), len(e.jobs))
	}
}

// TestFinishedRetentionTotal: finished jobs over all queues are bounded,
// the first finished going first, and their queues go with them.
func TestFinishedRetentionTotal(t *testing.T) {
	e, c := fakeExecutor(WithFinishedRetentionTotal(10))
	for i := range 25 {
		q := "q" + strconv.Itoa(i)
		e.Enqueue(JobSpec{ID: q, Type: "t", Queue: q}) //nolint:errcheck
		j, _ := e.Fetch(q)
		e.Ack(j.ID, j.Delivery) //nolint:errcheck
		c.Advance(time.Millisecond)
	}
	if n := e.Count(Filter{}); n != 10 {
		t.Errorf("%d jobs kept, want 10", n)
	}
	if _, err := e.Get("q14"); !errors.Is(err, ErrNotFound) {
		t.Errorf("q14 (15th to finish) still there: %v", err)
	}
	if _, err := e.Get("q15"); err != nil {
		t.Errorf("q15 (16th to finish) gone: %v", err)
	}
	if len(e.queues) != 10 {
		t.Errorf("%d queue records, want 10", len(e.queues))
	}
	if d, _ := fakeExecutor(); d.cfg.finMaxTotal != defaultFinishedMaxTotal {
		t.Errorf("default total %d", d.cfg.finMaxTotal)
	}
}

// TestCancelLeavesReadyList: a cancelled available job
// leaves its queue's ready list at once, so nothing of it stays once it is
// pruned and the next Fetch has nothing to skip; the FIFO order of the
// rest is kept.
func TestCancelLeavesReadyList(t *testing.T) {
	e, c := fakeExecutor()
	for i := range 100 {
		e.Enqueue(JobSpec{ID: strconv.Itoa(i), Type: "t", Queue: "q"}) //nolint:errcheck
		c.Advance(time.Millisecond)
	}
	for i := range 100 {
		if i%10 != 3 {
			e.Cancel(strconv.Itoa(i)) //nolint:errcheck
		}
	}
	q := e.queues["q"]
	if q.kinds[Available].n != 10 {
		t.Fatalf("%d jobs in the ready list, want 10", q.kinds[Available].n)
	}
	for i := 3; i < 100; i += 10 {
		j, ok := e.Fetch("q")
		if !ok || j.ID != strconv.Itoa(i) {
			t.Fatalf("fetch: %q %v, want %d", j.ID, ok, i)
		}
	}
	if _, ok := e.Fetch("q"); ok {
		t.Error("fetched an 11th job")
	}
	for j := q.next(); j != nil; j = q.next() {
		t.Fatalf("ready list still holds %s", j.id)
	}
}

// TestPausedQueueBound: the pause flag outlives the queue's record, and at
// most MaxPausedQueues queues are paused.
func TestPausedQueueBound(t *testing.T) {
	e, _ := fakeExecutor()
	if err := e.PauseQueue("q"); err != nil {
		t.Fatal(err)
	}
	if len(e.queues) != 0 {
		t.Errorf("pausing created %d queue records", len(e.queues))
	}
	e.Enqueue(JobSpec{ID: "a", Type: "t", Queue: "q"}) //nolint:errcheck
	if _, ok := e.Fetch("q"); ok {
		t.Fatal("fetched from a paused queue")
	}
	e.Cancel("a")                                      //nolint:errcheck
	e.Delete("a")                                      //nolint:errcheck
	e.Enqueue(JobSpec{ID: "b", Type: "t", Queue: "q"}) //nolint:errcheck
	if _, ok := e.Fetch("q"); ok {
		t.Fatal("the pause was lost with the queue record")
	}
	for i := 1; i < MaxPausedQueues; i++ {
		if err := e.PauseQueue("p" + strconv.Itoa(i)); err != nil {
			t.Fatalf("pause #%d: %v", i+1, err)
		}
	}
	if err := e.PauseQueue("q"); err != nil {
		t.Errorf("pausing a paused queue at the limit: %v", err)
	}
	err := e.PauseQueue("one-more")
	if !errors.Is(err, ErrTooManyPausedQueues) {
		t.Fatalf("pause beyond MaxPausedQueues: %v", err)
	}
	if err := e.ResumeQueue("q"); err != nil {
		t.Fatal(err)
	}
	if j, ok := e.Fetch("q"); !ok || j.ID != "b" {
		t.Errorf("after resume: fetch %q %v", j.ID, ok)
	}
	if err := e.PauseQueue("one-more"); err != nil {
		t.Errorf("pause after a resume: %v", err)
	}
	for i := 1; i < MaxPausedQueues; i++ {
		e.ResumeQueue("p" + strconv.Itoa(i)) //nolint:errcheck
	}
	e.ResumeQueue("one-more") //nolint:errcheck
	if len(e.paused) != 0 || len(e.queues) != 1 {
		t.Errorf("%d paused names, %d queue records left, want 0 and 1", len(e.paused), len(e.queues))
	}
}

// TestDistinctQueuesMemoryReturns pins the release of empty queues by its
// symptom: 100 000
// jobs, each in its own queue, run and pruned, leave the heap where it was
// (the maps of jobs, queues and types are rebuilt once mostly empty).
func TestDistinctQueuesMemoryReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("100 000 jobs")
	}
	e, c := fakeExecutor()
	before := heapInuse()
	const n = 100000
	for i := range n {
		q := "tenant-" + strconv.Itoa(i)
		e.Enqueue(JobSpec{Type: q, Queue: q}) //nolint:errcheck
		j, _ := e.Fetch(q)
		e.Ack(j.ID, j.Delivery) //nolint:errcheck
	}
	for i := range MaxPausedQueues + 10 {
		e.PauseQueue("p-" + strconv.Itoa(i)) //nolint:errcheck
	}
	c.Advance(defaultFinishedMaxAge + time.Second)
	e.Tick()
	for i := range MaxPausedQueues {
		e.ResumeQueue("p-" + strconv.Itoa(i)) //nolint:errcheck
	}
	if e.peaks.jobs >= shrinkMin || e.peaks.queues >= shrinkMin || e.peaks.types >= shrinkMin {
		t.Errorf("maps not rebuilt: peaks %+v", e.peaks)
	}
	if grown := int64(heapInuse()) - int64(before); grown > 2<<20 {
		t.Errorf("heap grew by %d KiB after every job was pruned, want under 2 MiB", grown>>10)
	}
}

func heapInuse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestWorkerStopFreesQueues: the queue records idle worker goroutines park
// on go when the worker stops.
func TestWorkerStopFreesQueues(t *testing.T) {
	e := New()
	w := NewWorker(e, WithConcurrency("emails", 3))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		parks := e.parks
		e.mu.Unlock()
		if parks >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queues) != 0 {
		t.Errorf("%d queue records left after Stop", len(e.queues))
	}
}
