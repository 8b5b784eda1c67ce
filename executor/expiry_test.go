package executor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
)

var expiryT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newExpiryExec() (*executor.Executor, *executor.FakeClock) {
	c := executor.NewFakeClock(expiryT0)
	return executor.New(executor.WithClock(c)), c
}

func get(t *testing.T, e *executor.Executor, id string) executor.Job {
	t.Helper()
	j, err := e.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func enq(t *testing.T, e *executor.Executor, s executor.JobSpec) executor.Job {
	t.Helper()
	if s.Type == "" {
		s.Type = "t"
	}
	j, err := e.Enqueue(s)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestExpiresAtDiscardsAWaitingJobPastItsDeadline: ojs-core §5.2 — a job
// still waiting once the clock is past its expires_at is discarded
// without running: a FETCH at the deadline gets it, 1 ns later it is gone
// (RK-179's boundary), FinishedAt is that first instant past the
// deadline, Expired names the deadline and no error entry is recorded.
func TestExpiresAtDiscardsAWaitingJobPastItsDeadline(t *testing.T) {
	e, c := newExpiryExec()
	dl := expiryT0.Add(2 * time.Second)
	past := dl.Add(time.Nanosecond)
	enq(t, e, executor.JobSpec{ID: "a", ExpiresAt: dl})
	enq(t, e, executor.JobSpec{ID: "b", Queue: "other", ExpiresAt: dl})
	if at, ok := e.NextDue(); !ok || !at.Equal(past) {
		t.Fatalf("NextDue %v %v, want 1 ns past the deadline %v", at, ok, dl)
	}
	c.Set(dl)
	if j, ok := e.Fetch("other"); !ok || j.ID != "b" {
		t.Fatalf("fetch at the deadline: %v %v", j.ID, ok)
	}
	c.Set(past)
	if j, ok := e.Fetch(); ok {
		t.Fatalf("fetched %s past its deadline", j.ID)
	}
	j := get(t, e, "a")
	if j.State != executor.Discarded || j.Expired != executor.ExpiredAt || !j.FinishedAt.Equal(past) || len(j.Errors) != 0 || j.Attempt != 0 || j.DeadLetter {
		t.Fatalf("expired job %+v", j)
	}
	if j.Expired.String() != "expires_at" || !j.ExpiresAt.Equal(dl) {
		t.Fatalf("Expired %q, ExpiresAt %v", j.Expired, j.ExpiresAt)
	}
	// b started before the deadline: the attempt runs to its end.
	b := get(t, e, "b")
	if _, err := e.Ack("b", b.Delivery); err != nil {
		t.Fatalf("ack after the deadline of a job started before it: %v", err)
	}
}

// TestExpiresAtBoundsEveryStart: a retry due after expires_at never runs;
// the job is discarded at the deadline while retryable. A job whose
// attempt fails after the deadline is discarded when it would wait, at
// the failure's instant.
func TestExpiresAtBoundsEveryStart(t *testing.T) {
	e, c := newExpiryExec()
	pol := []byte(`{"max_attempts":5,"initial_interval":"PT10S","jitter":false}`)
	enq(t, e, executor.JobSpec{ID: "r", Retry: pol, ExpiresAt: expiryT0.Add(5 * time.Second)})
	j, _ := e.Fetch()
	c.Advance(time.Second)
	if j, _ = e.Fail("r", j.Delivery, executor.Failure{}); j.State != executor.Retryable {
		t.Fatalf("after fail: %v", j.State)
	}
	c.Advance(4*time.Second + time.Nanosecond)
	j = get(t, e, "r")
	if j.State != executor.Discarded || j.Expired != executor.ExpiredAt || !j.FinishedAt.Equal(expiryT0.Add(5*time.Second+time.Nanosecond)) || len(j.Errors) != 1 {
		t.Fatalf("retryable past expires_at: %+v", j)
	}

	enq(t, e, executor.JobSpec{ID: "late", Retry: pol, ExpiresAt: c.Now().Add(time.Second)})
	j, _ = e.Fetch()
	c.Advance(3 * time.Second)
	failed := c.Now()
	if j, _ = e.Fail("late", j.Delivery, executor.Failure{}); j.State != executor.Discarded || j.Expired != executor.ExpiredAt || !j.FinishedAt.Equal(failed) {
		t.Fatalf("failed after expires_at: %+v", j)
	}
}

// TestEnqueueTTLBoundsTheFirstStartOnly: ojs-timeouts §5.3 — counted from
// creation, the TTL discards a job not started in time; once started, the
// job's retries are not bound by it.
func TestEnqueueTTLBoundsTheFirstStartOnly(t *testing.T) {
	e, c := newExpiryExec()
	pol := []byte(`{"max_attempts":3,"initial_interval":"PT1M","jitter":false}`)
	enq(t, e, executor.JobSpec{ID: "late", Queue: "q1", EnqueueTTL: 30 * time.Second})
	enq(t, e, executor.JobSpec{ID: "sched", Queue: "q1", EnqueueTTL: 30 * time.Second, ScheduledAt: expiryT0.Add(time.Minute)})
	enq(t, e, executor.JobSpec{ID: "ran", Queue: "q2", Retry: pol, EnqueueTTL: 30 * time.Second})
	j, _ := e.Fetch("q2")
	e.Fail("ran", j.Delivery, executor.Failure{})
	c.Advance(30 * time.Second)
	if j, ok := e.Fetch("q9"); ok {
		t.Fatalf("fetched %v", j.ID)
	}
	if j := get(t, e, "late"); j.State != executor.Available {
		t.Fatalf("at its TTL the job still waits: %+v", j)
	}
	c.Advance(time.Nanosecond)
	for _, id := range []string{"late", "sched"} {
		if j := get(t, e, id); j.State != executor.Discarded || j.Expired != executor.ExpiredEnqueueTTL || !j.FinishedAt.Equal(expiryT0.Add(30*time.Second+time.Nanosecond)) {
			t.Fatalf("%s: %+v", id, j)
		}
	}
	c.Advance(30 * time.Second)
	if j, ok := e.Fetch("q2"); !ok || j.ID != "ran" || j.Attempt != 2 {
		t.Fatalf("retry of a started job after its TTL: %v %v", j, ok)
	}
	if get(t, e, "late").Expired.String() != "enqueue_ttl" {
		t.Fatal("Expired.String")
	}
}

// TestExpiryTiesAndEdges: a job due (scheduled_at) 1 ns past its
// deadline expires rather than becoming available; a job enqueued past its
// deadline comes back discarded; the earlier of the two deadlines wins;
// a manual retry clears both; a negative TTL and an unrepresentable
// expires_at are refused.
func TestExpiryTiesAndEdges(t *testing.T) {
	e, c := newExpiryExec()
	at := expiryT0.Add(time.Second)
	enq(t, e, executor.JobSpec{ID: "tie", ScheduledAt: at.Add(time.Nanosecond), ExpiresAt: at})
	if j := enq(t, e, executor.JobSpec{ID: "past", ExpiresAt: expiryT0.Add(-time.Hour)}); j.State != executor.Discarded || !j.FinishedAt.Equal(expiryT0) {
		t.Fatalf("enqueued past its deadline: %+v", j)
	}
	enq(t, e, executor.JobSpec{ID: "both", Queue: "b", EnqueueTTL: 2 * time.Second, ExpiresAt: expiryT0.Add(3 * time.Second)})
	c.Set(at.Add(time.Nanosecond))
	if j := get(t, e, "tie"); j.State != executor.Discarded || j.Expired != executor.ExpiredAt {
		t.Fatalf("tie: %+v", j)
	}
	c.Set(expiryT0.Add(2*time.Second + time.Nanosecond))
	if j := get(t, e, "both"); j.State != executor.Discarded || j.Expired != executor.ExpiredEnqueueTTL {
		t.Fatalf("both: %+v", j)
	}
	j, err := e.Retry("both", nil)
	if err != nil || j.State != executor.Available || j.Expired != executor.NotExpired || !j.ExpiresAt.IsZero() || j.EnqueueTTL != 0 {
		t.Fatalf("manual retry: %+v %v", j, err)
	}
	c.Advance(time.Hour)
	if j, ok := e.Fetch("b"); !ok || j.ID != "both" {
		t.Fatal("manually retried job expired again")
	}
	for _, s := range []executor.JobSpec{
		{Type: "t", EnqueueTTL: -time.Second},
		{Type: "t", ExpiresAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if _, err := e.Enqueue(s); !errors.Is(err, executor.ErrInvalidJob) {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

// TestExpiryNextDueOfPending: the expiry heap feeds NextDue, so a
// pending job's deadline is what is due next.
func TestExpiryNextDueOfPending(t *testing.T) {
	e, c := newExpiryExec()
	enq(t, e, executor.JobSpec{ID: "p", Pending: true, ExpiresAt: expiryT0.Add(time.Minute)})
	if at, ok := e.NextDue(); !ok || !at.Equal(expiryT0.Add(time.Minute+time.Nanosecond)) {
		t.Fatalf("NextDue %v %v", at, ok)
	}
	c.Advance(time.Minute + time.Nanosecond)
	if _, err := e.Activate("p"); err == nil {
		t.Fatal("activated an expired job")
	}
	if at, ok := e.NextDue(); ok && !at.After(c.Now()) {
		t.Fatalf("something still due at %v", at)
	}
}
