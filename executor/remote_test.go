package executor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
)

func TestEnqueueBatchAtomic(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "taken", Type: "t"})
	for _, bad := range [][]executor.JobSpec{
		{{ID: "a", Type: "t"}, {ID: "taken", Type: "t"}},
		{{ID: "b", Type: "t"}, {ID: "b", Type: "t"}},
		{{ID: "c", Type: "t"}, {Type: ""}},
		{{ID: "d", Type: "t"}, {Type: "t", Retry: []byte(`{"max_attempts":-1}`)}},
	} {
		_, err := e.EnqueueBatch(bad)
		var be *executor.BatchError
		if !errors.As(err, &be) || be.Index != 1 || !strings.HasPrefix(err.Error(), "executor: batch[1]: ") {
			t.Fatalf("%v: error %v, want a *BatchError for index 1", bad, err)
		}
		if n := e.Len(); n != 1 {
			t.Fatalf("%v: a rejected batch left %d jobs", bad, n)
		}
	}
	_, err := e.EnqueueBatch([]executor.JobSpec{{ID: "x", Type: "t"}, {ID: "x", Type: "t"}})
	if !errors.Is(err, executor.ErrDuplicateID) {
		t.Fatalf("duplicate in batch: %v", err)
	}
	jobs, err := e.EnqueueBatch([]executor.JobSpec{{Type: "t", Queue: "q"}, {Type: "u", Queue: "q"}, {Type: "v", Queue: "q"}})
	if err != nil || len(jobs) != 3 || e.Len() != 4 {
		t.Fatalf("batch: %v %v len %d", jobs, err, e.Len())
	}
	got := e.FetchN(2, 0, "q")
	if len(got) != 2 || got[0].Type != "t" || got[1].Type != "u" || got[0].Attempt != 1 {
		t.Fatalf("FetchN order: %+v", got)
	}
}

func TestFetchNAcrossQueuesAndVisibility(t *testing.T) {
	e, clock := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "a1", Type: "t", Queue: "a"})
	mustEnqueue(t, e, executor.JobSpec{ID: "b1", Type: "t", Queue: "b"})
	mustEnqueue(t, e, executor.JobSpec{ID: "b2", Type: "t", Queue: "b"})
	e.PauseQueue("a")
	got := e.FetchN(5, 2*time.Second, "a", "b")
	if len(got) != 2 || got[0].ID != "b1" || got[1].ID != "b2" {
		t.Fatalf("FetchN: %+v", got)
	}
	if want := clock.Now().Add(2 * time.Second); !got[0].ReservedUntil.Equal(want) {
		t.Fatalf("reserved until %v, want %v", got[0].ReservedUntil, want)
	}
	if e.FetchN(0, 0, "b") != nil {
		t.Fatal("FetchN(0) claimed jobs")
	}
	clock.Advance(time.Second)
	j, err := e.HeartbeatFor("b1", got[0].Delivery, 5*time.Second)
	if err != nil || !j.ReservedUntil.Equal(clock.Now().Add(5*time.Second)) || j.VisibilityTimeout != 5*time.Second {
		t.Fatalf("HeartbeatFor: %+v %v", j, err)
	}
	if _, err := e.HeartbeatFor("b1", got[0].Delivery+100, time.Second); !errors.Is(err, executor.ErrStaleDelivery) {
		t.Fatalf("stale heartbeat: %v", err)
	}
	clock.Advance(time.Second + time.Nanosecond) // b2's 2s reservation has expired
	if j, _ := e.Get("b2"); j.State != executor.Retryable {
		t.Fatalf("b2: %v", j.State)
	}
	if j, _ := e.Get("b1"); j.State != executor.Active {
		t.Fatalf("b1: %v", j.State)
	}
}

func TestQueuesInfo(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "1", Type: "t", Queue: "z"})
	mustEnqueue(t, e, executor.JobSpec{ID: "2", Type: "t", Queue: "z", Retry: []byte(`{"max_attempts":1,"on_exhaustion":"dead_letter"}`)})
	mustEnqueue(t, e, executor.JobSpec{ID: "3", Type: "t"})
	j, _ := e.Fetch("z")
	e.Fetch("z")
	e.Ack(j.ID, j.Delivery)
	j2, _ := e.Get("2")
	e.Fail("2", j2.Delivery, executor.Failure{Message: "x"})
	e.PauseQueue("empty")
	qs := e.Queues()
	if len(qs) != 3 || qs[0].Name != "default" || qs[1].Name != "empty" || !qs[1].Paused || qs[2].Name != "z" {
		t.Fatalf("Queues: %+v", qs)
	}
	z := qs[2]
	if z.Counts[executor.Completed] != 1 || z.Counts[executor.Discarded] != 1 || z.DeadLetter != 1 || z.Counts[executor.Available] != 0 {
		t.Fatalf("z: %+v", z)
	}
	if _, ok := e.Queue("nope"); ok {
		t.Fatal("unknown queue reported")
	}
	if d, ok := e.Queue(""); !ok || d.Counts[executor.Available] != 1 {
		t.Fatalf("default: %+v", d)
	}
	if e.Len() != 3 {
		t.Fatalf("Len %d", e.Len())
	}
	if err := e.Delete("1"); err != nil || e.Len() != 2 {
		t.Fatalf("Len after delete: %d %v", e.Len(), err)
	}
}

func TestRelease(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "r", Type: "t"})
	j, _ := e.Fetch()
	rel, err := e.Release("r", j.Delivery)
	if err != nil || rel.State != executor.Available || rel.Attempt != 0 || len(rel.Errors) != 0 {
		t.Fatalf("Release: %+v %v", rel, err)
	}
	if _, err := e.Ack("r", j.Delivery); err == nil {
		t.Fatal("the released delivery still acks")
	}
	j2, ok := e.Fetch()
	if !ok || j2.Attempt != 1 || j2.Delivery == j.Delivery {
		t.Fatalf("fetch after release: %+v", j2)
	}
	if _, err := e.Release("r", j.Delivery); !errors.Is(err, executor.ErrStaleDelivery) {
		t.Fatalf("stale release: %v", err)
	}
}
