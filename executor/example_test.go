package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/retrybudget"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A job fails twice and succeeds on its third attempt. The fake clock and
// a fixed jitter draw (r = 0.5, multiplier 1.0) make every time exact.
func Example() {
	clock := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(clock), executor.WithRand(backoff.Fixed(0.5)))

	e.Enqueue(executor.JobSpec{ID: "a", Type: "email.send", Retry: []byte(`{"max_attempts": 3}`)})
	for i := 0; i < 2; i++ {
		j, _ := e.Fetch("default")
		j, _ = e.Fail(j.ID, j.Delivery, executor.Failure{Type: "smtp.unavailable", Message: "try later"})
		fmt.Println(j.State, "attempt", j.Attempt, "next retry after", j.NextRetryAt.Sub(clock.Now()))
		_, ok := e.Fetch("default")
		fmt.Println("fetchable now:", ok)
		clock.Set(j.NextRetryAt)
	}
	j, _ := e.Fetch("default")
	j, _ = e.Ack(j.ID, j.Delivery)
	fmt.Println(j.State, "attempt", j.Attempt, "errors", len(j.Errors))
	// Output:
	// retryable attempt 1 next retry after 1s
	// fetchable now: false
	// retryable attempt 2 next retry after 2s
	// fetchable now: false
	// completed attempt 3 errors 2
}

// Handler codes take precedence over the policy: DEAD_LETTER moves the job
// to the dead letter set at once; a manual retry brings it back with
// attempt 0 and its error history.
func ExampleExecutor_Retry() {
	e := executor.New(executor.WithClock(executor.NewFakeClock(start)))
	e.Enqueue(executor.JobSpec{ID: "pay-1", Type: "payment.capture"})
	f, _ := e.Fetch("default")
	j, _ := e.Fail("pay-1", f.Delivery, executor.Failure{Type: "card.stolen", Message: "card reported stolen", Code: errmatch.CodeDeadLetter})
	fmt.Println(j.State, j.DeadLetter, e.Count(executor.Filter{DeadLetter: true}))

	j, _ = e.Retry("pay-1", nil)
	fmt.Println(j.State, j.DeadLetter, j.Attempt, len(j.Errors))
	// Output:
	// discarded true 1
	// available false 0 1
}

// An expired reservation is a failed attempt that follows the retry policy.
// Ack, Fail and Heartbeat name the delivery they answer: once the job is
// fetched again, the first consumer's late Ack is stale and the second
// consumer's run is untouched.
func ExampleExecutor_Heartbeat() {
	clock := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(clock), executor.WithRand(backoff.Fixed(0.5)))
	e.Enqueue(executor.JobSpec{ID: "a", Type: "report.build", VisibilityTimeout: 10 * time.Second})
	first, _ := e.Fetch("default")

	clock.Advance(8 * time.Second)
	j, _ := e.Heartbeat("a", first.Delivery)
	fmt.Println("reserved for", j.ReservedUntil.Sub(clock.Now()))

	clock.Advance(10 * time.Second) // no heartbeat in time
	j, _ = e.Get("a")
	fmt.Println(j.State, j.Errors[0].Type, j.NextRetryAt.Sub(start))

	_, err := e.Ack("a", first.Delivery)
	fmt.Println(err)

	clock.Advance(time.Second)
	second, _ := e.Fetch("default")
	_, err = e.Ack("a", first.Delivery)
	fmt.Println(errors.Is(err, executor.ErrStaleDelivery))
	j, _ = e.Ack("a", second.Delivery)
	fmt.Println(j.State, j.Attempt)
	// Output:
	// reserved for 10s
	// retryable executor.visibility_timeout 19s
	// executor: ack "a": invalid transition retryable -> completed
	// true
	// completed 2
}

// Invalid retry policies are rejected at enqueue time.
func ExampleExecutor_Enqueue() {
	e := executor.New()
	_, err := e.Enqueue(executor.JobSpec{Type: "t", Retry: []byte(`{"backoff_coefficient": 0.5}`)})
	fmt.Println(err != nil, e.Count(executor.Filter{}))
	// Output:
	// true 0
}

// Worker mode runs handlers by job type on the real clock.
func ExampleWorker() {
	e := executor.New()
	done := make(chan string, 1)
	w := executor.NewWorker(e, executor.WithConcurrency("default", 2))
	w.Handle("greet", func(ctx context.Context, j executor.Job) error {
		done <- "hello " + string(j.Args)
		return nil
	})
	w.Start()
	e.Enqueue(executor.JobSpec{Type: "greet", Args: []byte(`"world"`)})
	fmt.Println(<-done)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	fmt.Println(w.Stop(ctx))
	// Output:
	// hello "world"
	// <nil>
}

// Finished jobs are kept for a while and then pruned: here at most two
// completed jobs per queue. Delete removes a finished job at once.
func ExampleWithFinishedRetention() {
	e := executor.New(executor.WithClock(executor.NewFakeClock(start)),
		executor.WithFinishedRetention(time.Hour, 2))
	for _, id := range []string{"a", "b", "c"} {
		e.Enqueue(executor.JobSpec{ID: id, Type: "t"})
		j, _ := e.Fetch()
		e.Ack(j.ID, j.Delivery)
	}
	_, err := e.Get("a")
	fmt.Println(errors.Is(err, executor.ErrNotFound), e.Count(executor.Filter{}))

	fmt.Println(e.Delete("b"), e.Count(executor.Filter{}))
	// Output:
	// true 2
	// <nil> 1
}

// WaitIdle returns once every job of the worker's queues has finished,
// retries included: here a job that fails once and is retried after its
// backoff (50 ms, no jitter).
func ExampleWorker_WaitIdle() {
	e := executor.New()
	w := executor.NewWorker(e)
	w.Handle("sync", func(ctx context.Context, j executor.Job) error {
		if j.Attempt == 1 {
			return errors.New("remote busy")
		}
		return nil
	})
	w.Start()
	e.Enqueue(executor.JobSpec{ID: "s", Type: "sync", Retry: []byte(`{"initial_interval": "PT0.05S", "jitter": false}`)})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println(w.WaitIdle(ctx))
	j, _ := e.Get("s")
	fmt.Println(j.State, "after", j.Attempt, "attempts:", j.Errors[0].Message)
	fmt.Println(w.Stop(ctx))
	// Output:
	// <nil>
	// completed after 2 attempts: remote busy
	// <nil>
}

// A paused queue keeps its jobs until it is resumed; Fetch skips it.
func ExampleExecutor_PauseQueue() {
	e := executor.New(executor.WithClock(executor.NewFakeClock(start)))
	e.Enqueue(executor.JobSpec{ID: "a", Type: "t", Queue: "emails"})
	fmt.Println(e.PauseQueue("emails"))
	_, ok := e.Fetch("emails")
	fmt.Println("fetched while paused:", ok)
	e.ResumeQueue("emails")
	j, ok := e.Fetch("emails")
	fmt.Println("fetched after resume:", j.ID, ok)
	// Output:
	// <nil>
	// fetched while paused: false
	// fetched after resume: a true
}

// Within a queue, FETCH claims the highest priority first, and the first
// to become available among equal priorities (ojs-core §5).
func ExampleJobSpec_priority() {
	e := executor.New()
	e.Enqueue(executor.JobSpec{ID: "report", Type: "report.build", Priority: executor.PriorityLow})
	e.Enqueue(executor.JobSpec{ID: "email-1", Type: "email.send"})
	e.Enqueue(executor.JobSpec{ID: "alert", Type: "pager.notify", Priority: executor.PriorityHigh})
	e.Enqueue(executor.JobSpec{ID: "email-2", Type: "email.send"})
	for {
		j, ok := e.Fetch()
		if !ok {
			break
		}
		fmt.Println(j.ID, j.Priority)
	}
	// Output:
	// alert 10
	// email-1 0
	// email-2 0
	// report -10
}

// Two jobs share the key "api" with concurrency 1: while the first is
// active, Fetch skips the second for a job of no key, and the skipped job
// keeps attempt 0 until the first is acked (ojs-rate-limiting §5.1, §8.1).
func ExampleRateLimit() {
	e := executor.New(executor.WithClock(executor.NewFakeClock(start)))
	one := 1
	api := &executor.RateLimit{Key: "api", Concurrency: &one}
	e.Enqueue(executor.JobSpec{ID: "a", Type: "t", RateLimit: api})
	e.Enqueue(executor.JobSpec{ID: "b", Type: "t", RateLimit: api})
	e.Enqueue(executor.JobSpec{ID: "c", Type: "t"})
	a, _ := e.Fetch()
	c, _ := e.Fetch()
	b, _ := e.Get("b")
	fmt.Println(a.ID, c.ID, "| b:", b.State, "attempt", b.Attempt)
	e.Ack(a.ID, a.Delivery)
	b, _ = e.Fetch()
	fmt.Println(b.ID, "attempt", b.Attempt)
	// Output:
	// a c | b: available attempt 0
	// b attempt 1
}

// A snooze (docs/extensions.md §3.5) waits without spending the attempt
// or a token, and a retry budget refuses retries once spent: with one
// token, a's first failure is retried and its second is refused, so a is
// dead-lettered with three attempts left.
func ExampleWithRetryBudget() {
	clock := executor.NewFakeClock(start)
	bucket, err := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1})
	if err != nil {
		panic(err)
	}
	e := executor.New(executor.WithClock(clock), executor.WithRetryBudget(bucket))
	retry := json.RawMessage(`{"max_attempts": 5, "jitter": false, "max_snoozes": 2, "on_exhaustion": "dead_letter"}`)
	for _, id := range []string{"a", "b"} {
		if _, err := e.Enqueue(executor.JobSpec{ID: id, Type: "report", Retry: retry}); err != nil {
			panic(err)
		}
	}
	a, _ := e.Fetch()
	b, _ := e.Fetch()
	j, _ := e.Fail(b.ID, b.Delivery, executor.Failure{Request: errmatch.Request{Kind: errmatch.Snooze, Delay: time.Minute}})
	fmt.Println(j.ID, j.State, "attempt", j.Attempt, "snoozes", j.Snoozes)
	j, _ = e.Fail(a.ID, a.Delivery, executor.Failure{Type: "db.down"})
	fmt.Println(j.ID, j.State, "attempt", j.Attempt)
	clock.Advance(time.Second)
	a, _ = e.Fetch()
	j, _ = e.Fail(a.ID, a.Delivery, executor.Failure{Type: "db.down"})
	fmt.Println(j.ID, j.State, "attempt", j.Attempt, "dead letter", j.DeadLetter)
	// Output:
	// b retryable attempt 0 snoozes 1
	// a retryable attempt 1
	// a discarded attempt 2 dead letter true
}
