package executor_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
)

// Finished jobs that are not dead letters are kept per queue and per state
// up to the count limit, oldest removed first, and removed once older than
// the age limit (strictly).
func TestFinishedRetention(t *testing.T) {
	r := &recorder{}
	e, c := newFake(executor.WithObserver(r), executor.WithFinishedRetention(time.Minute, 2))
	finish := func(id, queue, how string) {
		t.Helper()
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: "t", Queue: queue, Retry: []byte(`{"max_attempts":1}`)})
		if how == "cancel" {
			e.Cancel(id)
			return
		}
		j, ok := e.Fetch(queue)
		if !ok {
			t.Fatalf("%s not fetched", id)
		}
		if how == "ack" {
			e.Ack(id, j.Delivery)
		} else {
			e.Fail(id, j.Delivery, executor.Failure{Type: "x"})
		}
	}
	finish("c1", "q", "ack")
	c.Advance(time.Second)
	finish("c2", "q", "ack")
	finish("x1", "q", "cancel")
	finish("d1", "q", "fail")
	finish("o1", "other", "ack")
	finish("c3", "q", "ack") // third completed job of q: c1 goes
	if _, err := e.Get("c1"); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("c1 kept beyond the count: %v", err)
	}
	for _, id := range []string{"c2", "c3", "x1", "d1", "o1"} {
		if _, err := e.Get(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if got := e.Count(executor.Filter{Queue: "q", States: []executor.State{executor.Completed}}); got != 2 {
		t.Errorf("%d completed in q", got)
	}
	// c2..o1 finished at 1 s: kept at exactly 61 s, gone 1 ns later
	c.Set(start.Add(61 * time.Second))
	if n := e.Count(executor.Filter{}); n != 5 {
		t.Errorf("%d jobs at max age, want 5", n)
	}
	if d, ok := e.NextDue(); !ok || !d.Equal(start.Add(61*time.Second+1)) {
		t.Errorf("NextDue %v %v", d, ok)
	}
	c.Advance(1)
	if n := e.Count(executor.Filter{}); n != 0 {
		t.Errorf("%d jobs past max age, want 0", n)
	}
	if got := strings.Count(strings.Join(r.events, "|"), "pruned"); got != 6 {
		t.Errorf("%d pruned events: %v", got, r.events)
	}
}

// Dead letters keep their own retention (WithRetention, executor-wide):
// finished-job retention does not touch them, and theirs does not touch
// other finished jobs.
func TestRetentionKindsApart(t *testing.T) {
	e, c := newFake(executor.WithFinishedRetention(time.Second, 1), executor.WithRetention(time.Hour, 2))
	for i := 0; i < 3; i++ {
		id := fmt.Sprint("dl", i)
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: "t", Queue: fmt.Sprint("q", i)})
		j, _ := e.Fetch(fmt.Sprint("q", i))
		e.Fail(id, j.Delivery, executor.Failure{Code: errmatch.CodeDeadLetter})
	}
	if n := e.Count(executor.Filter{DeadLetter: true}); n != 2 {
		t.Errorf("%d dead letters over three queues, want 2 (one executor-wide set)", n)
	}
	c.Advance(time.Minute)
	if n := e.Count(executor.Filter{DeadLetter: true}); n != 2 {
		t.Errorf("%d dead letters after a minute, want 2", n)
	}
}

func TestDelete(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	if err := e.Delete("a"); !errors.Is(err, executor.ErrInvalidTransition) || !strings.Contains(err.Error(), "available") {
		t.Errorf("delete of an available job: %v", err)
	}
	j := fetchID(t, e, "a")
	if err := e.Delete("a"); !errors.Is(err, executor.ErrInvalidTransition) {
		t.Errorf("delete of an active job: %v", err)
	}
	e.Ack("a", j.Delivery)
	if err := e.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Get("a"); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if err := e.Delete("a"); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	// the id can be used again, and its deliveries stay unique
	k := mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	if k.Delivery != 0 {
		t.Errorf("new job has delivery %d", k.Delivery)
	}
	if j2 := fetchID(t, e, "a"); j2.Delivery == j.Delivery {
		t.Errorf("delivery %d reused", j2.Delivery)
	}
	if n := e.Count(executor.Filter{}); n != 1 {
		t.Errorf("%d jobs", n)
	}
}
