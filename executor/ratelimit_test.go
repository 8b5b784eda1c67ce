package executor_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"pgregory.net/rapid"
)

// rlStart is the manual clock's start in these tests.
var rlStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ptr(n int) *int { return &n }

func rlExec(t *testing.T) (*executor.Executor, *executor.FakeClock) {
	t.Helper()
	c := executor.NewFakeClock(rlStart)
	return executor.New(executor.WithClock(c)), c
}

// started returns the id of the job a fetch claims, "" for none.
func started(e *executor.Executor, queues ...string) string {
	j, ok := e.Fetch(queues...)
	if !ok {
		return ""
	}
	return j.ID
}

// TestConcurrencyLimitedJobWaitsWithoutAnAttempt: ojs-rate-limiting §5.1.
// With concurrency 1 the second job of the key is skipped while the first
// is active: it stays available with attempt 0, and a job of another key
// behind it is fetched instead (§8.1); once the first is acked it starts,
// as attempt 1.
func TestConcurrencyLimitedJobWaitsWithoutAnAttempt(t *testing.T) {
	e, _ := rlExec(t)
	one := &executor.RateLimit{Key: "api", Concurrency: ptr(1)}
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "a", Queue: "q", RateLimit: one})
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "b", Queue: "q", RateLimit: one})
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "c", Queue: "q", RateLimit: &executor.RateLimit{Key: "other", Concurrency: ptr(1)}})
	if got := started(e, "q"); got != "a" {
		t.Fatalf("first fetch %q, want a", got)
	}
	if got := started(e, "q"); got != "c" {
		t.Fatalf("second fetch %q, want c (b is held back by its key)", got)
	}
	if got := started(e, "q"); got != "" {
		t.Fatalf("third fetch %q, want none", got)
	}
	if b := get(t, e, "b"); b.State != executor.Available || b.Attempt != 0 {
		t.Fatalf("held-back job: %v attempt %d, want available attempt 0", b.State, b.Attempt)
	}
	a := get(t, e, "a")
	if _, err := e.Ack("a", a.Delivery); err != nil {
		t.Fatal(err)
	}
	if got := started(e, "q"); got != "b" {
		t.Fatalf("after the ack: %q, want b", got)
	}
	if b := get(t, e, "b"); b.Attempt != 1 {
		t.Fatalf("b's first start is attempt %d, want 1", b.Attempt)
	}
}

// TestConcurrencyZeroStopsTheKey: concurrency 0 lets no job of the key
// start (§6.2).
func TestConcurrencyZeroStopsTheKey(t *testing.T) {
	e, _ := rlExec(t)
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "a", RateLimit: &executor.RateLimit{Key: "k", Concurrency: ptr(0)}})
	if got := started(e); got != "" {
		t.Fatalf("fetched %q under concurrency 0", got)
	}
}

// TestSlidingWindowBoundary: RK-285's worked example. Rate 2 per 10 s,
// starts at 0 s and 3 s: a fetch at 9.999 s is held back; at 10 s the
// start at 0 s has left (now − 10 s, now], so the job starts; the next
// may start at 13 s, not at 12.999 s.
func TestSlidingWindowBoundary(t *testing.T) {
	e, c := rlExec(t)
	r := &executor.RateLimit{Key: "k", Rate: executor.Window{Limit: 2, Period: 10 * time.Second}}
	for _, id := range []string{"a", "b", "c", "d"} {
		mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: id, RateLimit: r})
	}
	steps := []struct {
		at   time.Duration
		want string
	}{
		{0, "a"}, {3 * time.Second, "b"}, {9999 * time.Millisecond, ""}, {10 * time.Second, "c"},
		{12999 * time.Millisecond, ""}, {13 * time.Second, "d"},
	}
	for _, s := range steps {
		c.Set(rlStart.Add(s.at))
		if got := started(e); got != s.want {
			t.Fatalf("fetch at %v: %q, want %q", s.at, got, s.want)
		}
	}
	if n, until := e.StartsWithin("k", 10*time.Second); n != 2 || !until.Equal(rlStart.Add(20*time.Second)) {
		t.Fatalf("StartsWithin at 13 s: %d, until %v; want 2 (10 s and 13 s), until 20 s", n, until)
	}
}

// TestThrottleSpacing: RK-286. A throttle of 3 per second spaces starts
// by ⌈1 s / 3⌉ = 333333334 ns, the first start free.
func TestThrottleSpacing(t *testing.T) {
	e, c := rlExec(t)
	r := &executor.RateLimit{Key: "k", Throttle: executor.Window{Limit: 3, Period: time.Second}}
	for _, id := range []string{"a", "b", "c"} {
		mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: id, RateLimit: r})
	}
	for _, s := range []struct {
		at   time.Duration
		want string
	}{{0, "a"}, {333333333, ""}, {333333334, "b"}, {666666667, ""}, {666666668, "c"}} {
		c.Set(rlStart.Add(s.at))
		if got := started(e); got != s.want {
			t.Fatalf("fetch at %d ns: %q, want %q", s.at, got, s.want)
		}
	}
}

// TestRescheduleAndDrop: on_limit reschedule makes the job scheduled for
// the time its window allows it, attempt unchanged; drop discards it
// without running (§6.2).
func TestRescheduleAndDrop(t *testing.T) {
	e, c := rlExec(t)
	w := executor.Window{Limit: 1, Period: time.Minute}
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "a", RateLimit: &executor.RateLimit{Key: "k", Rate: w}})
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "r", RateLimit: &executor.RateLimit{Key: "k", Rate: w, OnLimit: executor.LimitReschedule}})
	mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: "d", RateLimit: &executor.RateLimit{Key: "k", Rate: w, OnLimit: executor.LimitDrop}})
	c.Set(rlStart.Add(time.Second))
	if got := started(e); got != "a" {
		t.Fatalf("fetched %q, want a", got)
	}
	if got := started(e); got != "" {
		t.Fatalf("fetched %q within the window", got)
	}
	r := get(t, e, "r")
	if r.State != executor.Scheduled || !r.ScheduledAt.Equal(rlStart.Add(61*time.Second)) || r.Attempt != 0 {
		t.Fatalf("rescheduled: %v at %v attempt %d; want scheduled at 61 s, attempt 0", r.State, r.ScheduledAt, r.Attempt)
	}
	d := get(t, e, "d")
	if d.State != executor.Discarded || d.Expired != executor.DroppedByRateLimit || d.Attempt != 0 || d.DeadLetter || len(d.Errors) != 0 {
		t.Fatalf("dropped: %+v", d)
	}
	c.Set(rlStart.Add(61 * time.Second))
	if got := started(e); got != "r" {
		t.Fatalf("at 61 s: %q, want r", got)
	}
}

// TestQueueRateLimit: a queue's own limit (§7.2) holds every job of the
// queue; removing it frees them.
func TestQueueRateLimit(t *testing.T) {
	e, c := rlExec(t)
	if err := e.SetQueueRateLimit("q", &executor.QueueRateLimit{Concurrency: ptr(1), Rate: executor.Window{Limit: 2, Period: time.Second}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		mustEnqueue(t, e, executor.JobSpec{Type: "t", ID: id, Queue: "q"})
	}
	if got := started(e, "q"); got != "a" {
		t.Fatalf("fetched %q", got)
	}
	if got := started(e, "q"); got != "" {
		t.Fatalf("second active job %q under queue concurrency 1", got)
	}
	if _, err := e.Ack("a", get(t, e, "a").Delivery); err != nil {
		t.Fatal(err)
	}
	if got := started(e, "q"); got != "b" {
		t.Fatalf("after ack: %q, want b", got)
	}
	if _, err := e.Ack("b", get(t, e, "b").Delivery); err != nil {
		t.Fatal(err)
	}
	if got := started(e, "q"); got != "" {
		t.Fatalf("third start %q within the queue's window of 2 per second", got)
	}
	c.Set(rlStart.Add(time.Second))
	if got := started(e, "q"); got != "c" {
		t.Fatalf("at 1 s: %q, want c", got)
	}
	if l, ok := e.QueueRateLimit("q"); !ok || *l.Concurrency != 1 {
		t.Fatalf("QueueRateLimit: %+v %v", l, ok)
	}
	if err := e.SetQueueRateLimit("q", &executor.QueueRateLimit{Rate: executor.Window{Limit: 0, Period: time.Second}}); !errors.Is(err, executor.ErrInvalidJob) || !strings.Contains(err.Error(), "rate.limit") {
		t.Fatalf("invalid queue limit: %v", err)
	}
}

// TestInvalidRateLimitRefused: each invalid field is refused at enqueue,
// named, and nothing is created.
func TestInvalidRateLimitRefused(t *testing.T) {
	e, _ := rlExec(t)
	for _, c := range []struct {
		r     executor.RateLimit
		field string
	}{
		{executor.RateLimit{}, "key"},
		{executor.RateLimit{Key: strings.Repeat("k", 256)}, "key"},
		{executor.RateLimit{Key: "k", Concurrency: ptr(-1)}, "concurrency"},
		{executor.RateLimit{Key: "k", Rate: executor.Window{Limit: 0, Period: time.Second}}, "rate.limit"},
		{executor.RateLimit{Key: "k", Rate: executor.Window{Limit: executor.MaxWindowLimit + 1, Period: time.Second}}, "rate.limit"},
		{executor.RateLimit{Key: "k", Throttle: executor.Window{Limit: 1}}, "throttle.period"},
		{executor.RateLimit{Key: "k", OnLimit: 7}, "on_limit"},
	} {
		r := c.r
		_, err := e.Enqueue(executor.JobSpec{Type: "t", RateLimit: &r})
		if !errors.Is(err, executor.ErrInvalidJob) || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: err = %v, want ErrInvalidJob naming %s", c.r, err, c.field)
		}
	}
	if e.Len() != 0 {
		t.Fatalf("refused enqueues left %d jobs", e.Len())
	}
}

// TestConcurrencyCheckedAndTakenInOneStep: §6.2 "check limit → assign job
// → increment counter as a single atomic operation". 200 goroutines fetch
// 100 jobs of a key with concurrency 3, acking each; at no moment are
// more than 3 active.
func TestConcurrencyCheckedAndTakenInOneStep(t *testing.T) {
	e := executor.New()
	r := &executor.RateLimit{Key: "k", Concurrency: ptr(3)}
	for range 100 {
		if _, err := e.Enqueue(executor.JobSpec{Type: "t", RateLimit: r}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	active, peak, done := 0, 0, 0
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j, ok := e.Fetch()
				if !ok {
					mu.Lock()
					finished := done == 100
					mu.Unlock()
					if finished {
						return
					}
					continue
				}
				// The count rises after the executor's and falls before it,
				// so it never exceeds the executor's true active count.
				mu.Lock()
				active++
				peak = max(peak, active)
				mu.Unlock()
				runtime.Gosched()
				mu.Lock()
				active--
				done++
				mu.Unlock()
				if _, err := e.Ack(j.ID, j.Delivery); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s, _ := e.RateLimitKey("k"); s.Active != 0 || peak > 3 {
		t.Fatalf("peak %d active (want ≤ 3), %d left active", peak, s.Active)
	}
}

// TestPropRateLimitedJobNeverSpendsAnAttempt: over random sequences of
// enqueues, fetches, acks, fails and clock steps on jobs with random
// limits, every job's attempt equals the number of times a fetch
// returned it, a job starts only while fewer jobs of its key are active
// than its concurrency, and the executor's active count of each key is
// the number of its jobs active.
func TestPropRateLimitedJobNeverSpendsAnAttempt(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := executor.NewFakeClock(rlStart)
		e := executor.New(executor.WithClock(c))
		keys := []string{"a", "b"}
		starts := map[string]int{}
		var ids []string
		var active []executor.Job
		retry := []byte(`{"max_attempts":3,"initial_interval":"PT1S","jitter":false}`)
		for i := range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0:
				key := rapid.SampledFrom(keys).Draw(rt, "key")
				r := &executor.RateLimit{Key: key, OnLimit: executor.OnLimit(rapid.IntRange(0, 2).Draw(rt, "on_limit"))}
				if rapid.Bool().Draw(rt, "conc") {
					n := rapid.IntRange(0, 2).Draw(rt, "concurrency")
					r.Concurrency = &n
				}
				if rapid.Bool().Draw(rt, "rate") {
					r.Rate = executor.Window{Limit: rapid.IntRange(1, 3).Draw(rt, "limit"), Period: time.Duration(rapid.IntRange(1, 5).Draw(rt, "period_s")) * time.Second}
				}
				if rapid.Bool().Draw(rt, "throttle") {
					r.Throttle = executor.Window{Limit: rapid.IntRange(1, 3).Draw(rt, "tlimit"), Period: time.Second}
				}
				id := "j" + string(rune('a'+i%26)) + string(rune('0'+i/26))
				if _, err := e.Enqueue(executor.JobSpec{ID: id, Type: "t", Retry: retry, RateLimit: r}); err != nil {
					rt.Fatal(err)
				}
				ids = append(ids, id)
			case 1:
				if j, ok := e.Fetch(); ok {
					starts[j.ID]++
					if c := j.RateLimit.Concurrency; c != nil {
						same := 0
						for _, a := range active {
							if a.RateLimit.Key == j.RateLimit.Key {
								same++
							}
						}
						if same >= *c {
							rt.Fatalf("job %s started with %d jobs of key %s active, concurrency %d", j.ID, same, j.RateLimit.Key, *c)
						}
					}
					active = append(active, j)
				}
			case 2, 3:
				if len(active) > 0 {
					k := rapid.IntRange(0, len(active)-1).Draw(rt, "which")
					j := active[k]
					active = append(active[:k], active[k+1:]...)
					if rapid.Bool().Draw(rt, "ack") {
						e.Ack(j.ID, j.Delivery)
					} else {
						e.Fail(j.ID, j.Delivery, executor.Failure{Type: "x"})
					}
				}
			case 4:
				c.Advance(time.Duration(rapid.IntRange(0, 3000).Draw(rt, "ms")) * time.Millisecond)
			}
			perKey := map[string]int{}
			for _, id := range ids {
				j, err := e.Get(id)
				if err != nil {
					rt.Fatal(err)
				}
				if j.Attempt != starts[id] {
					rt.Fatalf("job %s: attempt %d, started %d times", id, j.Attempt, starts[id])
				}
				if j.State == executor.Active {
					perKey[j.RateLimit.Key]++
				}
			}
			for k, n := range perKey {
				if s, _ := e.RateLimitKey(k); s.Active != n {
					rt.Fatalf("key %s: executor counts %d active, %d are", k, s.Active, n)
				}
			}
		}
	})
}

// TestWorkerWakesForRateLimitedJobs: worker goroutines parked while a
// limit holds jobs back are woken when it frees, by an ACK (concurrency)
// or by time (throttle): every job runs, never two of the key at once,
// and starts are spaced by the throttle.
func TestWorkerWakesForRateLimitedJobs(t *testing.T) {
	e := executor.New()
	r := &executor.RateLimit{Key: "k", Concurrency: ptr(1), Throttle: executor.Window{Limit: 1, Period: 30 * time.Millisecond}}
	const n = 5
	for range n {
		if _, err := e.Enqueue(executor.JobSpec{Type: "t", RateLimit: r}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	running, peak := 0, 0
	var starts []time.Time
	done := make(chan struct{}, n)
	w := executor.NewWorker(e, executor.WithConcurrency("default", 4))
	w.Handle("t", func(ctx context.Context, j executor.Job) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		done <- struct{}{}
		return nil
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	for i := range n {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d rate-limited jobs ran: parked workers were not woken", i, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > 1 {
		t.Errorf("%d jobs of the key ran at once, concurrency 1", peak)
	}
	for i := 1; i < len(starts); i++ {
		// The handler sees the start a little after the executor's claim;
		// allow 5 ms of scheduling slack below the 30 ms spacing.
		if d := starts[i].Sub(starts[i-1]); d < 25*time.Millisecond {
			t.Errorf("starts %d and %d are %v apart, throttle 30ms", i-1, i, d)
		}
	}
}
