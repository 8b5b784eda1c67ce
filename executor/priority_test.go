package executor_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// fetchIDs fetches from queue until nothing is available and returns the ids
// in the order they were claimed.
func fetchIDs(e *executor.Executor, queue string) []string {
	var ids []string
	for {
		j, ok := e.Fetch(queue)
		if !ok {
			return ids
		}
		ids = append(ids, j.ID)
	}
}

// ojs-core §5: "Within a queue, jobs with higher priority values MUST be
// fetched before jobs with lower priority values. Jobs with equal priority
// MUST be fetched in FIFO order." The expected order is read off that rule:
// 10s first (b then e), then 0s (a, c), then -10 (d).
func TestFetchHigherPriorityFirstFIFOWithin(t *testing.T) {
	e, _ := newFake()
	for _, s := range []struct {
		id   string
		prio int
	}{{"a", 0}, {"b", executor.PriorityHigh}, {"c", 0}, {"d", executor.PriorityLow}, {"e", 10}} {
		j := mustEnqueue(t, e, executor.JobSpec{ID: s.id, Type: "t", Queue: "q", Priority: s.prio})
		if j.Priority != s.prio {
			t.Fatalf("%s: snapshot priority %d, want %d", s.id, j.Priority, s.prio)
		}
	}
	if got, want := fetchIDs(e, "q"), []string{"b", "e", "a", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
}

// The suite's L4-PRI-001 shape: -10, 10, 0 enqueued in that order come out
// 10, 0, -10; the extreme int32 priorities order as numbers do.
func TestFetchPriorityExtremes(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "low", Type: "t", Priority: -10})
	mustEnqueue(t, e, executor.JobSpec{ID: "min", Type: "t", Priority: executor.MinPriority})
	mustEnqueue(t, e, executor.JobSpec{ID: "high", Type: "t", Priority: 10})
	mustEnqueue(t, e, executor.JobSpec{ID: "max", Type: "t", Priority: executor.MaxPriority})
	mustEnqueue(t, e, executor.JobSpec{ID: "normal", Type: "t"})
	if got, want := fetchIDs(e, "default"), []string{"max", "high", "normal", "low", "min"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
}

func TestPriorityOutOfRangeRefused(t *testing.T) {
	e, _ := newFake()
	for _, p := range []int{math.MinInt32 - 1, math.MaxInt32 + 1} {
		_, err := e.Enqueue(executor.JobSpec{Type: "t", Priority: p})
		if !errors.Is(err, executor.ErrInvalidJob) {
			t.Fatalf("priority %d: %v, want ErrInvalidJob", p, err)
		}
		if e.Len() != 0 {
			t.Fatalf("priority %d: a refused job was kept", p)
		}
	}
}

// A job whose backoff ends joins the tail of its own priority: after the
// already available job of the same priority, before lower ones.
func TestRetriedJobJoinsTailOfItsPriority(t *testing.T) {
	e, c := newFake()
	pol := mustParse(t, `{"max_attempts": 3, "initial_interval": "PT1S", "jitter": false}`)
	mustEnqueue(t, e, executor.JobSpec{ID: "r", Type: "t", Priority: 5, Policy: pol})
	j, _ := e.Fetch()
	if _, err := e.Fail("r", j.Delivery, executor.Failure{Message: "x"}); err != nil {
		t.Fatal(err)
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "p5", Type: "t", Priority: 5})
	mustEnqueue(t, e, executor.JobSpec{ID: "p0", Type: "t"})
	mustEnqueue(t, e, executor.JobSpec{ID: "p9", Type: "t", Priority: 9})
	c.Advance(time.Second)
	if got, want := fetchIDs(e, "default"), []string{"p9", "p5", "r", "p0"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
}

// Cancelling jobs in the middle, at the head and at the tail of a priority
// keeps the order of the rest.
func TestCancelKeepsPriorityOrder(t *testing.T) {
	e, _ := newFake()
	for i, p := range []int{1, 2, 1, 2, 3, 1} {
		mustEnqueue(t, e, executor.JobSpec{ID: "j" + strconv.Itoa(i), Type: "t", Priority: p})
	}
	for _, id := range []string{"j4", "j3", "j2"} { // the only 3; the tail of the 2s; the middle of the 1s
		if _, err := e.Cancel(id); err != nil {
			t.Fatal(err)
		}
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "k2", Type: "t", Priority: 2})
	mustEnqueue(t, e, executor.JobSpec{ID: "k3", Type: "t", Priority: 3})
	if got, want := fetchIDs(e, "default"), []string{"k3", "j1", "k2", "j0", "j5"}; !slices.Equal(got, want) {
		t.Fatalf("fetch order %v, want %v", got, want)
	}
}

// Property: whatever the interleaving of enqueues (scheduled or not),
// cancels, fetches and time, every FETCH claims the available job of
// highest priority, and among equals the one that became available first.
// The model keeps the available jobs as (priority, became-available order).
func TestPropFetchOrderIsPriorityThenFIFO(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e, c := newFake()
		type entry struct {
			id    string
			prio  int
			order int // when it became available
		}
		var avail []entry
		scheduled := map[string]entry{} // id -> entry with due time in order (ms)
		order := 0
		n := 0
		now := 0
		// becomeDue moves scheduled jobs due by now into avail, in due
		// order, then enqueue order (the executor's timer order).
		becomeDue := func() {
			var due []entry
			for id, s := range scheduled {
				if s.order <= now {
					due = append(due, s)
					delete(scheduled, id)
				}
			}
			slices.SortFunc(due, func(a, b entry) int {
				if a.order != b.order {
					return a.order - b.order
				}
				ai, _ := strconv.Atoi(a.id)
				bi, _ := strconv.Atoi(b.id)
				return ai - bi
			})
			for _, s := range due {
				order++
				avail = append(avail, entry{s.id, s.prio, order})
			}
		}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0, 1:
				p := rapid.IntRange(-2, 2).Draw(t, "prio")
				id := strconv.Itoa(n)
				n++
				spec := executor.JobSpec{ID: id, Type: "t", Priority: p}
				if rapid.Bool().Draw(t, "scheduled") {
					at := now + rapid.IntRange(1, 5).Draw(t, "delay")
					spec.ScheduledAt = start.Add(time.Duration(at) * time.Millisecond)
					scheduled[id] = entry{id, p, at}
				} else {
					order++
					avail = append(avail, entry{id, p, order})
				}
				if _, err := e.Enqueue(spec); err != nil {
					t.Fatal(err)
				}
			case 2:
				if len(avail) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(avail)-1).Draw(t, "cancel")
				if _, err := e.Cancel(avail[i].id); err != nil {
					t.Fatal(err)
				}
				avail = slices.Delete(avail, i, i+1)
			case 3:
				j, ok := e.Fetch()
				if len(avail) == 0 {
					if ok {
						t.Fatalf("fetched %s, the model has nothing available", j.ID)
					}
					continue
				}
				best := 0
				for i, a := range avail {
					if a.prio > avail[best].prio || (a.prio == avail[best].prio && a.order < avail[best].order) {
						best = i
					}
				}
				if !ok || j.ID != avail[best].id {
					t.Fatalf("fetched %q (ok %v), want %q of priority %d", j.ID, ok, avail[best].id, avail[best].prio)
				}
				avail = slices.Delete(avail, best, best+1)
			case 4:
				d := rapid.IntRange(1, 3).Draw(t, "advance")
				now += d
				c.Advance(time.Duration(d) * time.Millisecond)
				e.Tick()
				becomeDue()
			}
		}
	})
}

// RetryWith applies ojs-dead-letter §6.3's modifications: the job moves to
// the new queue with its new args, priority and policy, attempt 0, errors
// kept; the old queue no longer has it.
func TestRetryWithMovesQueueArgsPriorityPolicy(t *testing.T) {
	e, _ := newFake()
	dl := mustParse(t, `{"max_attempts": 1, "on_exhaustion": "dead_letter"}`)
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", Queue: "billing", Args: json.RawMessage(`[1]`), Policy: dl})
	j, _ := e.Fetch("billing")
	if j, _ = e.Fail("a", j.Delivery, executor.Failure{Type: "db.down", Message: "x"}); !j.DeadLetter {
		t.Fatalf("not dead-lettered: %+v", j)
	}
	three := mustParse(t, `{"max_attempts": 3}`)
	prio := 7
	r, err := e.RetryWith("a", executor.RetryOptions{Queue: "billing-retry", Args: json.RawMessage(`[2]`), Priority: &prio, Policy: three})
	if err != nil {
		t.Fatal(err)
	}
	if r.Queue != "billing-retry" || string(r.Args) != "[2]" || r.Priority != 7 || r.Policy != three ||
		r.State != executor.Available || r.Attempt != 0 || r.DeadLetter || len(r.Errors) != 1 {
		t.Fatalf("after RetryWith: %+v", r)
	}
	if n := e.Count(executor.Filter{Queue: "billing"}); n != 0 {
		t.Fatalf("the old queue still counts %d jobs", n)
	}
	if _, ok := e.Fetch("billing"); ok {
		t.Fatal("fetched from the old queue")
	}
	if f, ok := e.Fetch("billing-retry"); !ok || f.ID != "a" || f.Attempt != 1 {
		t.Fatalf("fetch from the new queue: %+v %v", f, ok)
	}
}

func TestRetryWithInvalidOptionsChangesNothing(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", Policy: mustParse(t, `{"max_attempts": 1}`)})
	j, _ := e.Fetch()
	if _, err := e.Fail("a", j.Delivery, executor.Failure{Message: "x"}); err != nil {
		t.Fatal(err)
	}
	big := math.MaxInt32 + 1
	for name, o := range map[string]executor.RetryOptions{
		"args":     {Args: json.RawMessage(`[1`)},
		"queue":    {Queue: string(make([]byte, executor.MaxQueueLen+1))},
		"priority": {Priority: &big},
	} {
		if _, err := e.RetryWith("a", o); !errors.Is(err, executor.ErrInvalidJob) {
			t.Fatalf("%s: %v, want ErrInvalidJob", name, err)
		}
		if g, _ := e.Get("a"); g.State != executor.Discarded {
			t.Fatalf("%s: state %s after a refused retry", name, g.State)
		}
	}
}

func mustParse(t testing.TB, s string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// DeleteDeadLetter and RetryWith with DeadLetterOnly leave a plainly
// discarded job alone (ErrNotDeadLetter); a dead letter is deleted.
func TestDeadLetterOnlyOperationsSkipPlainDiscards(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "plain", Type: "t", Policy: mustParse(t, `{"max_attempts": 1}`)})
	mustEnqueue(t, e, executor.JobSpec{ID: "dead", Type: "t", Policy: mustParse(t, `{"max_attempts": 1, "on_exhaustion": "dead_letter"}`)})
	for range 2 {
		j, _ := e.Fetch()
		if _, err := e.Fail(j.ID, j.Delivery, executor.Failure{Message: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.DeleteDeadLetter("plain"); !errors.Is(err, executor.ErrNotDeadLetter) {
		t.Fatalf("delete plain: %v", err)
	}
	if _, err := e.RetryWith("plain", executor.RetryOptions{DeadLetterOnly: true}); !errors.Is(err, executor.ErrNotDeadLetter) {
		t.Fatalf("retry plain: %v", err)
	}
	if j, _ := e.Get("plain"); j.State != executor.Discarded {
		t.Fatalf("plain: %s", j.State)
	}
	if err := e.DeleteDeadLetter("dead"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Get("dead"); !errors.Is(err, executor.ErrNotFound) {
		t.Fatalf("dead after delete: %v", err)
	}
	if err := e.DeleteDeadLetter("dead"); !errors.Is(err, executor.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// DeadLetters walks the set in dead-lettering order (newest first by
// default), counts every match and snapshots only the page;
// DeadLetterStats counts by queue and by the last error's type.
func TestDeadLettersPageAndStats(t *testing.T) {
	e, c := newFake()
	dl := mustParse(t, `{"max_attempts": 1, "on_exhaustion": "dead_letter"}`)
	for i, q := range []string{"a", "b", "a", "a"} {
		id := "j" + strconv.Itoa(i)
		mustEnqueue(t, e, executor.JobSpec{ID: id, Type: "t", Queue: q, Policy: dl})
		j, _ := e.Fetch(q)
		if _, err := e.Fail(id, j.Delivery, executor.Failure{Type: "e" + q, Message: "m"}); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Second)
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "plain", Type: "t", Queue: "a", Policy: mustParse(t, `{"max_attempts": 1}`)})
	j, _ := e.Fetch("a")
	e.Fail("plain", j.Delivery, executor.Failure{Message: "m"})
	inA := func(d executor.DeadLetterEntry) bool { return d.Queue == "a" }
	page, total := e.DeadLetters(executor.DeadLetterQuery{Accept: inA, Offset: 1, Limit: 1})
	if total != 3 || len(page) != 1 || page[0].ID != "j2" {
		t.Fatalf("newest first, page 2 of 1: %d %+v", total, page)
	}
	page, total = e.DeadLetters(executor.DeadLetterQuery{Limit: 10, OldestFirst: true})
	var got []string
	for _, p := range page {
		got = append(got, p.ID)
	}
	if total != 4 || !slices.Equal(got, []string{"j0", "j1", "j2", "j3"}) {
		t.Fatalf("oldest first: %d %v", total, got)
	}
	st := e.DeadLetterStats()
	if st.Total != 4 || st.ByQueue["a"] != 3 || st.ByQueue["b"] != 1 || st.ByErrorType["ea"] != 3 || st.ByErrorType["eb"] != 1 ||
		!st.Oldest.Equal(start) || !st.Newest.Equal(start.Add(3*time.Second)) {
		t.Fatalf("stats: %+v", st)
	}
}
