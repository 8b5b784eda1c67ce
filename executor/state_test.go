package executor

import (
	"errors"
	"testing"
	"time"
)

// states lists the eight job states in the order of ojs-core §6.1.
func states() []State {
	return []State{Scheduled, Available, Pending, Active, Completed, Retryable, Cancelled, Discarded}
}

func TestTransitionTable(t *testing.T) {
	// ojs-core §6.3: 17 rows; "initial" is the zero State. Plus the four
	// expiries of a waiting job (ojs-core §5.2 expires_at, ojs-timeouts
	// §5.3: "MUST transition the job to discarded"), which the table
	// does not list (RK-179), and a rate-limited job rescheduled
	// (ojs-rate-limiting §6.2 on_limit "reschedule", RK-287).
	want := map[string]bool{
		"initial>scheduled": true, "initial>available": true, "initial>pending": true,
		"scheduled>available": true, "pending>available": true, "available>active": true,
		"active>completed": true, "active>retryable": true, "active>discarded": true,
		"active>cancelled": true, "active>available": true, "retryable>available": true,
		"scheduled>cancelled": true, "available>cancelled": true, "pending>cancelled": true,
		"retryable>cancelled": true, "discarded>available": true,
		"scheduled>discarded": true, "available>discarded": true, "pending>discarded": true, "retryable>discarded": true,
		"available>scheduled": true,
	}
	n := 0
	for from := State(0); from <= Discarded; from++ {
		for to := State(0); to <= Discarded+1; to++ {
			got := allowed(from, to)
			if got {
				n++
			}
			if got != want[from.String()+">"+to.String()] {
				t.Errorf("allowed(%s, %s) = %v", from, to, got)
			}
		}
	}
	if n != 22 {
		t.Errorf("%d transitions, want 22", n)
	}
	if s := State(200).String(); s != "state(200)" {
		t.Errorf("State(200) prints %q", s)
	}
}

// TestTransitionsCovered takes every transition of the table the executor
// can take, by a fixed script, and checks that the transition hook saw each
// (active -> available is never taken: a timeout is a failed attempt, see
// the package doc). It is the deterministic half of TestStateMachine.
func TestTransitionsCovered(t *testing.T) {
	clock := NewFakeClock(t0)
	e := New(WithClock(clock))
	seen := map[[2]State]bool{}
	e.onTransition = func(id string, from, to State) { seen[[2]State{from, to}] = true }
	must := func(_ Job, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fetch := func(id string) Job {
		t.Helper()
		j, ok := e.Fetch()
		if !ok || j.ID != id {
			t.Fatalf("fetched %q %v, want %s", j.ID, ok, id)
		}
		return j
	}
	one := []byte(`{"max_attempts":1}`)
	two := []byte(`{"max_attempts":2,"initial_interval":"PT1S","jitter":false}`)
	must(e.Enqueue(JobSpec{ID: "s", Type: "t", ScheduledAt: t0.Add(time.Second)})) // initial -> scheduled
	must(e.Enqueue(JobSpec{ID: "p", Type: "t", Pending: true}))                    // initial -> pending
	must(e.Enqueue(JobSpec{ID: "a", Type: "t", Retry: two}))                       // initial -> available
	must(e.Cancel("s"))                                                            // scheduled -> cancelled
	must(e.Cancel("p"))                                                            // pending -> cancelled
	j := fetch("a")                                                                // available -> active
	must(e.Fail("a", j.Delivery, Failure{}))                                       // active -> retryable
	must(e.Cancel("a"))                                                            // retryable -> cancelled
	must(e.Enqueue(JobSpec{ID: "b", Type: "t", Retry: two}))
	j = fetch("b")
	must(e.Fail("b", j.Delivery, Failure{}))
	clock.Advance(time.Second) // retryable -> available
	j = fetch("b")
	must(e.Ack("b", j.Delivery)) // active -> completed
	must(e.Enqueue(JobSpec{ID: "c", Type: "t", Retry: one}))
	j = fetch("c")
	must(e.Fail("c", j.Delivery, Failure{})) // active -> discarded
	must(e.Retry("c", nil))                  // discarded -> available
	must(e.Cancel("c"))                      // available -> cancelled
	must(e.Enqueue(JobSpec{ID: "d", Type: "t", ScheduledAt: clock.Now().Add(time.Second)}))
	clock.Advance(time.Second) // scheduled -> available
	fetch("d")
	must(e.Cancel("d")) // active -> cancelled
	must(e.Enqueue(JobSpec{ID: "e", Type: "t", Pending: true}))
	must(e.Activate("e")) // pending -> available
	// Expiry of each waiting state.
	must(e.Enqueue(JobSpec{ID: "xs", Type: "t", ScheduledAt: clock.Now().Add(2 * time.Second), ExpiresAt: clock.Now().Add(time.Second)}))
	must(e.Enqueue(JobSpec{ID: "xa", Type: "t", EnqueueTTL: time.Second}))
	must(e.Enqueue(JobSpec{ID: "xp", Type: "t", Pending: true, ExpiresAt: clock.Now().Add(time.Second)}))
	must(e.Enqueue(JobSpec{ID: "xr", Type: "t", Queue: "xq", Retry: two, ExpiresAt: clock.Now().Add(500 * time.Millisecond)}))
	j, _ = e.Fetch("xq")
	must(e.Fail("xr", j.Delivery, Failure{})) // retryable until +1s, expires at +0.5s
	clock.Advance(time.Second + time.Nanosecond)
	e.Tick() // scheduled, available, pending, retryable -> discarded
	// A rate-limited job rescheduled: the second start within the window.
	rl := &RateLimit{Key: "k", Rate: Window{Limit: 1, Period: time.Hour}, OnLimit: LimitReschedule}
	must(e.Enqueue(JobSpec{ID: "r1", Type: "t", Queue: "rq", RateLimit: rl}))
	must(e.Enqueue(JobSpec{ID: "r2", Type: "t", Queue: "rq", RateLimit: rl}))
	if j, _ := e.Fetch("rq"); j.ID != "r1" {
		t.Fatalf("fetched %q, want r1", j.ID)
	}
	if _, ok := e.Fetch("rq"); ok { // available -> scheduled
		t.Fatal("the second job started within its window")
	}
	for from := 0; from < numStates; from++ {
		for to := 1; to < numStates; to++ {
			p := [2]State{State(from), State(to)}
			if transitions[from][to] && p != [2]State{Active, Available} && !seen[p] {
				t.Errorf("transition %s -> %s never taken", p[0], p[1])
			}
		}
	}
	if err := e.Delete("e"); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("delete of an available job: %v", err)
	}
}

// RealClock is realStart's wall reading plus the monotonic time since
// realStart: time.Since reads the monotonic clock, so a wall-clock step
// between two readings cannot move it.
func TestRealClockDefinition(t *testing.T) {
	lo := time.Since(realStart)
	n := RealClock{}.nowNanos()
	hi := time.Since(realStart)
	if off := time.Duration(n - realStart.UnixNano()); off < lo || off > hi {
		t.Errorf("RealClock is %v after its start, monotonic window [%v, %v]", off, lo, hi)
	}
}
