package executor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/errmatch"
)

// TestStress drives one executor from many goroutines at once — enqueue
// (one or a batch; available, scheduled, pending), fetch (one or N), ack,
// fail, release, heartbeat (with or without a new timeout), abandon
// (reservation timeout), cancel, pause and resume, delete, manual retry,
// WaitIdle — on a fake clock that another goroutine keeps moving, and then
// checks that nothing was lost or duplicated:
//
//   - every delivery number is handed out once, and a job is never held by
//     two deliveries that are both accepted;
//   - every state change is in the transition table and starts from the
//     state the job was last seen in (the executor's own transition seam);
//   - a job is acknowledged at most once per run (once, plus once per
//     manual retry), and the Completed events match the accepted Acks;
//   - once drained, every job enqueued and neither deleted nor pruned by
//     retention (which runs with small limits) exists, in a terminal state,
//     and Count agrees.
//
// It runs for one second by default (skipped with -short); set
// RETRYKIT_STRESS to a duration ("60s") for a longer run. CI runs it with
// -race for 15 s (.ci/run).
func TestStress(t *testing.T) {
	d := time.Second
	if s := os.Getenv("RETRYKIT_STRESS"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("RETRYKIT_STRESS=%q: %v", s, err)
		}
	} else if testing.Short() {
		t.Skip("stress run; RETRYKIT_STRESS=60s for a long one")
	}

	clock := NewFakeClock(time.Unix(1_700_000_000, 0))
	obs := &stressObserver{pruned: map[string]bool{}}
	// Retention runs too, with small limits: pruned jobs are recorded by
	// the observer, so that they are not taken for lost.
	e := New(WithClock(clock), WithRetention(time.Minute, 5000), WithFinishedRetention(time.Minute, 5000),
		WithFinishedRetentionTotal(20000), WithObserver(obs))

	// Per-job bookkeeping of the transition seam; it runs under e.mu.
	states := map[string]State{}
	var seamErrs []string
	e.onTransition = func(id string, from, to State) {
		if states[id] != from || !transitions[from][to] {
			if len(seamErrs) < 10 {
				seamErrs = append(seamErrs, fmt.Sprintf("%s: %s -> %s, last seen %s", id, from, to, states[id]))
			}
		}
		states[id] = to
	}

	queues := []string{"default", "q1", "q2", "q3"}
	var (
		mu         sync.Mutex
		ids        []string            // every id enqueued
		deleted    = map[string]bool{} // deleted by the test
		acks       = map[string]int{}  // accepted Acks per job
		retries    = map[string]int{}  // accepted manual retries per job
		deliveries = map[uint64]string{}
		failures   []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	pick := func(r *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return "none"
		}
		return ids[r.IntN(len(ids))]
	}
	// gone holds the jobs an Ack or Fail found deleted: legitimate only if
	// the job was deleted or pruned meanwhile (checked at the end).
	gone := map[string]bool{}
	late := func(id string, err error) bool {
		if errors.Is(err, ErrNotFound) {
			mu.Lock()
			gone[id] = true
			mu.Unlock()
			return true
		}
		return lateOK(err)
	}
	fast := []byte(`{"max_attempts":3,"initial_interval":"PT0.002S","jitter":true}`)

	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	var wg sync.WaitGroup
	spawn := func(n int, seed uint64, fn func(r *rand.Rand)) {
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(seed, uint64(i)))
				for ctx.Err() == nil {
					fn(r)
				}
			}()
		}
	}
	var seq atomic.Int64
	spawn(3, 1, func(r *rand.Rand) { // producers, a few thousand jobs ahead of the consumers
		if e.Count(Filter{States: []State{Available}}) > 2000 {
			time.Sleep(time.Millisecond)
			return
		}
		specs := make([]JobSpec, 1+r.IntN(2)) // one: Enqueue; two: EnqueueBatch
		for i := range specs {
			spec := JobSpec{ID: "j" + strconv.FormatInt(seq.Add(1), 10), Type: "t", Queue: queues[r.IntN(len(queues))],
				Retry: fast, VisibilityTimeout: time.Duration(1+r.IntN(20)) * time.Millisecond}
			switch r.IntN(10) {
			case 0:
				spec.Pending = true
			case 1:
				spec.ScheduledAt = clock.Now().Add(time.Duration(r.IntN(10)) * time.Millisecond)
			}
			specs[i] = spec
		}
		var err error
		if len(specs) == 1 {
			_, err = e.Enqueue(specs[0])
		} else {
			_, err = e.EnqueueBatch(specs)
		}
		if err != nil {
			fail("enqueue %s: %v", specs[0].ID, err)
			return
		}
		mu.Lock()
		for _, sp := range specs {
			ids = append(ids, sp.ID)
		}
		mu.Unlock()
		for _, sp := range specs {
			if sp.Pending && r.IntN(2) == 0 {
				e.Activate(sp.ID) //nolint:errcheck // may have been cancelled meanwhile
			}
		}
	})
	spawn(6, 2, func(r *rand.Rand) { // consumers
		q := []string{queues[r.IntN(len(queues))], queues[r.IntN(len(queues))]}
		var got []Job
		if r.IntN(4) == 0 {
			got = e.FetchN(1+r.IntN(3), time.Duration(r.IntN(3))*time.Millisecond, q...)
		} else if j, ok := e.Fetch(q...); ok {
			got = []Job{j}
		}
		for _, j := range got {
			mu.Lock()
			if prev, dup := deliveries[j.Delivery]; dup {
				failures = append(failures, fmt.Sprintf("delivery %d handed out twice (%s, %s)", j.Delivery, prev, j.ID))
			}
			deliveries[j.Delivery] = j.ID
			mu.Unlock()
			if j.State != Active {
				fail("fetched %s in state %s", j.ID, j.State)
			}
			switch r.IntN(6) {
			case 0:
				e.Heartbeat(j.ID, j.Delivery) //nolint:errcheck // may have expired
			case 1:
				e.HeartbeatFor(j.ID, j.Delivery, time.Duration(1+r.IntN(5))*time.Millisecond) //nolint:errcheck
			}
			switch r.IntN(9) {
			case 0: // abandon: the reservation expires
			case 1:
				if _, err := e.Release(j.ID, j.Delivery); err != nil && !late(j.ID, err) {
					fail("release %s: %v", j.ID, err)
				}
			case 2, 3, 4:
				code := []string{"", "", "DISCARD", "DEAD_LETTER"}[r.IntN(4)]
				if _, err := e.Fail(j.ID, j.Delivery, Failure{Type: "x.y", Message: "no", Code: errmatch.Code(code)}); err != nil && !late(j.ID, err) {
					fail("fail %s: %v", j.ID, err)
				}
			default:
				if _, err := e.Ack(j.ID, j.Delivery); err == nil {
					mu.Lock()
					acks[j.ID]++
					mu.Unlock()
				} else if !late(j.ID, err) {
					fail("ack %s: %v", j.ID, err)
				}
			}
		}
	})
	spawn(1, 3, func(r *rand.Rand) { // canceller
		e.Cancel(pick(r)) //nolint:errcheck // unknown or finished ids are fine
	})
	spawn(1, 4, func(r *rand.Rand) { // pause and resume
		q := queues[r.IntN(len(queues))]
		if err := e.PauseQueue(q); err != nil {
			fail("pause %s: %v", q, err)
		}
		time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
		if err := e.ResumeQueue(q); err != nil {
			fail("resume %s: %v", q, err)
		}
	})
	spawn(1, 5, func(r *rand.Rand) { // deleter and manual retrier
		id := pick(r)
		j, err := e.Get(id)
		if err != nil || !j.State.Terminal() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if r.IntN(2) == 0 {
			if err := e.Delete(id); err == nil {
				deleted[id] = true
			}
		} else if j.State == Discarded {
			if _, err := e.Retry(id, nil); err == nil {
				retries[id]++
			}
		}
	})
	spawn(1, 6, func(r *rand.Rand) { // clock, Tick, Count, List, WaitIdle
		clock.Advance(time.Duration(r.IntN(500)) * time.Microsecond)
		e.Tick()
		if r.IntN(50) == 0 {
			n := e.Count(Filter{})
			if l := len(e.List(Filter{Queue: "q1", States: []State{Active}})); l > n {
				fail("List %d > Count %d", l, n)
			}
			wctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			e.WaitIdle(wctx, queues...) //nolint:errcheck // exercised, not asserted here
			cancel()
		}
		time.Sleep(50 * time.Microsecond)
	})
	wg.Wait()

	// Drain: resume everything, activate the pending, run what is left.
	for _, q := range queues {
		e.ResumeQueue(q) //nolint:errcheck
	}
	for _, j := range e.List(Filter{States: []State{Pending}}) {
		e.Activate(j.ID) //nolint:errcheck
	}
	dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idle := make(chan error, 1)
	go func() { idle <- e.WaitIdle(dctx, queues...) }()
drain:
	for {
		select {
		case err := <-idle:
			if err != nil {
				t.Fatalf("drain: %v", err)
			}
			break drain
		default:
		}
		clock.Advance(50 * time.Millisecond)
		if j, ok := e.Fetch(queues...); ok {
			if _, err := e.Ack(j.ID, j.Delivery); err == nil {
				acks[j.ID]++
			}
		} else {
			e.Tick()
		}
	}

	for _, s := range seamErrs {
		t.Error("transition seam:", s)
	}
	for _, f := range failures {
		t.Error(f)
	}
	var acked int64
	for id, n := range acks {
		acked += int64(n)
		if n > 1+retries[id] {
			t.Errorf("%s acknowledged %d times with %d manual retries", id, n, retries[id])
		}
	}
	if got := obs.completed.Load(); got != acked {
		t.Errorf("%d Completed events, %d accepted Acks", got, acked)
	}
	for id := range gone {
		if !deleted[id] && !obs.pruned[id] {
			t.Errorf("%s: an Ack or Fail found it gone, but it was neither deleted nor pruned", id)
		}
	}
	kept := 0
	for _, id := range ids {
		j, err := e.Get(id)
		switch {
		case deleted[id] || obs.pruned[id]:
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("deleted or pruned %s: Get = %v", id, err)
			}
		case err != nil:
			t.Errorf("%s lost: %v", id, err)
		case !j.State.Terminal():
			t.Errorf("%s is %s after the drain", id, j.State)
		default:
			kept++
		}
	}
	if n := e.Count(Filter{}); n != kept {
		t.Errorf("Count = %d, want %d (enqueued %d, deleted %d)", n, kept, len(ids), len(deleted))
	}
	t.Logf("%v: %d jobs, %d deliveries, %d acks, %d deleted, %d pruned, %d manual retries",
		d, len(ids), len(deliveries), acked, len(deleted), len(obs.pruned), len(retries))
}

// lateOK reports whether an Ack or Fail error is the expected answer to a
// late or raced result: the reservation expired, the job was cancelled or
// fetched again. (A job deleted or pruned meanwhile gives ErrNotFound,
// checked separately.)
func lateOK(err error) bool {
	var te *TransitionError
	return errors.As(err, &te) || errors.Is(err, ErrStaleDelivery)
}

// stressObserver counts Completed events and records pruned jobs (it runs
// under the executor's lock, so the map needs no lock of its own until the
// test reads it after every goroutine has stopped).
type stressObserver struct {
	NopObserver
	completed atomic.Int64
	pruned    map[string]bool
}

func (o *stressObserver) Completed(Job) { o.completed.Add(1) }
func (o *stressObserver) Pruned(j Job)  { o.pruned[j.ID] = true }
