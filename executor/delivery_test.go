package executor_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// fetchID fetches from the default queue and checks it got job id.
func fetchID(t *testing.T, e *executor.Executor, id string) executor.Job {
	t.Helper()
	j, ok := e.Fetch()
	if !ok || j.ID != id {
		t.Fatalf("fetched %q %v, want %s", j.ID, ok, id)
	}
	return j
}

// redelivered enqueues job "a" (visibility 10 s, 3 attempts, 1 s backoff),
// lets consumer A's reservation expire and has consumer B fetch it again:
// the setup of the stale-delivery cases.
func redelivered(t *testing.T) (e *executor.Executor, c *executor.FakeClock, a, b executor.Job) {
	e, c = newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: 10 * time.Second,
		Retry: []byte(`{"max_attempts":3,"initial_interval":"PT1S","jitter":false}`)})
	a = fetchID(t, e, "a")
	c.Advance(11 * time.Second) // timeout at 10 s, retryable until 11 s
	b = fetchID(t, e, "a")
	if a.Delivery == b.Delivery || b.Attempt != 2 {
		t.Fatalf("deliveries %d and %d, attempt %d", a.Delivery, b.Delivery, b.Attempt)
	}
	return e, c, a, b
}

func wantStale(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, executor.ErrStaleDelivery) || errors.Is(err, executor.ErrInvalidTransition) ||
		!strings.Contains(err.Error(), op) {
		t.Fatalf("%s with A's delivery: %v, want ErrStaleDelivery", op, err)
	}
}

func TestStaleAckAfterRedelivery(t *testing.T) {
	e, _, a, b := redelivered(t)
	_, err := e.Ack("a", a.Delivery)
	wantStale(t, "ack", err)
	if j, _ := e.Get("a"); j.State != executor.Active || j.Delivery != b.Delivery {
		t.Fatalf("after A's stale ack: %s delivery %d", j.State, j.Delivery)
	}
	j, err := e.Ack("a", b.Delivery)
	if err != nil || j.State != executor.Completed || j.Attempt != 2 {
		t.Fatalf("B's ack: %v %s attempt %d", err, j.State, j.Attempt)
	}
}

func TestStaleFailAfterRedelivery(t *testing.T) {
	e, _, a, b := redelivered(t)
	_, err := e.Fail("a", a.Delivery, executor.Failure{Type: "late"})
	wantStale(t, "fail", err)
	j, _ := e.Get("a")
	if j.State != executor.Active || j.Attempt != 2 || len(j.Errors) != 1 || j.Errors[0].Type != executor.TimeoutErrorType {
		t.Fatalf("A's stale fail touched B's attempt: %s attempt %d errors %+v", j.State, j.Attempt, j.Errors)
	}
	j, err = e.Fail("a", b.Delivery, executor.Failure{Type: "mine"})
	if err != nil || j.State != executor.Retryable || len(j.Errors) != 2 || j.Errors[1].Attempt != 2 {
		t.Fatalf("B's fail: %v %s %+v", err, j.State, j.Errors)
	}
}

func TestStaleHeartbeatAfterRedelivery(t *testing.T) {
	e, c, a, b := redelivered(t)
	c.Advance(5 * time.Second)
	_, err := e.Heartbeat("a", a.Delivery)
	wantStale(t, "heartbeat", err)
	if j, _ := e.Get("a"); !j.ReservedUntil.Equal(b.ReservedUntil) {
		t.Fatalf("A's stale heartbeat moved B's lease from %v to %v", b.ReservedUntil, j.ReservedUntil)
	}
	c.Advance(5 * time.Second) // B's lease ends 10 s after its fetch
	if j, _ := e.Get("a"); j.State != executor.Retryable || j.Errors[len(j.Errors)-1].Attempt != 2 {
		t.Fatalf("B's lease did not end on time: %s %+v", j.State, j.Errors)
	}
}

// A manual retry resets the attempt to 0, so the next run has attempt 1
// again: only the delivery tells the runs apart.
func TestStaleAcrossManualRetry(t *testing.T) {
	for _, op := range []string{"ack", "fail", "heartbeat"} {
		t.Run(op, func(t *testing.T) {
			e, c := newFake()
			mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: 10 * time.Second, Retry: []byte(`{"max_attempts":1}`)})
			a := fetchID(t, e, "a")
			c.Advance(10 * time.Second) // A's reservation expires: discarded
			if _, err := e.Retry("a", nil); err != nil {
				t.Fatal(err)
			}
			b := fetchID(t, e, "a")
			if b.Attempt != a.Attempt || b.Delivery <= a.Delivery {
				t.Fatalf("A attempt %d delivery %d, B attempt %d delivery %d", a.Attempt, a.Delivery, b.Attempt, b.Delivery)
			}
			c.Advance(time.Second)
			var err error
			switch op {
			case "ack":
				_, err = e.Ack("a", a.Delivery)
			case "fail":
				_, err = e.Fail("a", a.Delivery, executor.Failure{Type: "late"})
			case "heartbeat":
				_, err = e.Heartbeat("a", a.Delivery)
			}
			wantStale(t, op, err)
			j, _ := e.Get("a")
			if j.State != executor.Active || !j.ReservedUntil.Equal(b.ReservedUntil) || len(j.Errors) != 1 {
				t.Fatalf("stale %s changed B's run: %s until %v errors %d", op, j.State, j.ReservedUntil, len(j.Errors))
			}
			if j, err := e.Ack("a", b.Delivery); err != nil || j.State != executor.Completed {
				t.Fatalf("B's ack: %v %s", err, j.State)
			}
		})
	}
}

// The checks come in a fixed order: unknown id, stale delivery, state.
func TestDeliveryErrorOrder(t *testing.T) {
	e, c := newFake()
	if _, err := e.Ack("zzz", 1); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: time.Second})
	if _, err := e.Ack("a", 7); !errors.Is(err, executor.ErrStaleDelivery) {
		t.Errorf("never fetched, delivery 7: %v", err)
	}
	a := fetchID(t, e, "a")
	c.Advance(time.Second) // expired, not yet fetched again: A's delivery is still the latest
	_, err := e.Heartbeat("a", a.Delivery)
	var te *executor.TransitionError
	if !errors.As(err, &te) || te.From != executor.Retryable || errors.Is(err, executor.ErrStaleDelivery) {
		t.Errorf("heartbeat after expiry: %v", err)
	}
}

// Deliveries are executor-wide and never handed out twice.
func TestDeliveriesUnique(t *testing.T) {
	e, c := newFake()
	seen := map[uint64]bool{}
	for i := 0; i < 3; i++ {
		mustEnqueue(t, e, executor.JobSpec{ID: string(rune('a' + i)), Type: "t", Retry: []byte(`{"max_attempts":2,"initial_interval":"PT1S","jitter":false}`)})
	}
	for round := 0; round < 4; round++ {
		for {
			j, ok := e.Fetch()
			if !ok {
				break
			}
			if j.Delivery == 0 || seen[j.Delivery] {
				t.Fatalf("delivery %d handed out twice", j.Delivery)
			}
			seen[j.Delivery] = true
			if _, err := e.Fail(j.ID, j.Delivery, executor.Failure{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"a", "b", "c"} {
			e.Retry(id, nil) //nolint:errcheck // only the discarded ones
		}
		c.Advance(time.Second)
	}
	if len(seen) < 12 {
		t.Errorf("%d deliveries", len(seen))
	}
}

// A clock saturated at the last representable instant cannot make a lease
// end at its start: the reservation saturates there and never expires.
func TestLeaseOnSaturatedClock(t *testing.T) {
	e, c := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: time.Minute})
	c.Advance(1 << 62)
	c.Advance(1 << 62) // saturated
	j := fetchID(t, e, "a")
	if !j.ReservedUntil.Equal(c.Now()) {
		t.Fatalf("reserved until %v, clock %v", j.ReservedUntil, c.Now())
	}
	e.Tick()
	if g, _ := e.Get("a"); g.State != executor.Active {
		t.Fatalf("lease ended at its start: %s", g.State)
	}
	if _, err := e.Heartbeat("a", j.Delivery); err != nil {
		t.Fatal(err)
	}
	if g, err := e.Ack("a", j.Delivery); err != nil || g.State != executor.Completed {
		t.Fatalf("ack: %v %s", err, g.State)
	}
}

// RealClock counts from one wall-clock reading on the monotonic clock: two
// readings differ by exactly the monotonic time between them, whatever the
// wall clock does meanwhile.
func TestRealClockMonotonic(t *testing.T) {
	var c executor.RealClock
	m0 := time.Now()
	a := c.Now()
	time.Sleep(time.Millisecond)
	b := c.Now()
	m1 := time.Now()
	if d := b.Sub(a); d <= 0 || d > m1.Sub(m0) {
		t.Errorf("readings %v apart, monotonic window %v", d, m1.Sub(m0))
	}
	if a.Location() != time.UTC {
		t.Errorf("location %v", a.Location())
	}
}

// The in-flight path allocates nothing: fetch, heartbeat and ack of a job
// already enqueued.
func TestInFlightAllocs(t *testing.T) {
	e, _ := newFake()
	for i := 0; i < 200; i++ {
		mustEnqueue(t, e, executor.JobSpec{Type: "t"})
	}
	allocs := testing.AllocsPerRun(100, func() {
		j, ok := e.Fetch()
		if !ok {
			t.Fatal("empty")
		}
		if _, err := e.Heartbeat(j.ID, j.Delivery); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Ack(j.ID, j.Delivery); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per fetch+heartbeat+ack, want 0", allocs)
	}
}
