package executor_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

func newFake(opts ...executor.Option) (*executor.Executor, *executor.FakeClock) {
	c := executor.NewFakeClock(start)
	return executor.New(append([]executor.Option{executor.WithClock(c), executor.WithRand(backoff.Fixed(0.5))}, opts...)...), c
}

func mustEnqueue(t testing.TB, e *executor.Executor, s executor.JobSpec) executor.Job {
	t.Helper()
	j, err := e.Enqueue(s)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestErrors(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	_, err := e.Ack("a", 0)
	var te *executor.TransitionError
	if !errors.As(err, &te) || te.From != executor.Available || te.To != executor.Completed || te.Op != "ack" || te.ID != "a" {
		t.Fatalf("ack of available: %v", err)
	}
	if !errors.Is(err, executor.ErrInvalidTransition) || !strings.Contains(err.Error(), "available -> completed") {
		t.Errorf("error %q", err)
	}
	if _, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t"}); !errors.Is(err, executor.ErrDuplicateID) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := e.Get("zzz"); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("get unknown: %v", err)
	}
	if _, err := e.Enqueue(executor.JobSpec{Retry: []byte(`{}`)}); !errors.Is(err, executor.ErrInvalidJob) {
		t.Errorf("empty type: %v", err)
	}
	if _, err := e.Enqueue(executor.JobSpec{Type: "t", Pending: true, ScheduledAt: start}); !errors.Is(err, executor.ErrInvalidJob) {
		t.Errorf("pending+scheduled: %v", err)
	}
	if _, err := e.Enqueue(executor.JobSpec{Type: "t", Retry: []byte(`{}`), Policy: policy.Default()}); !errors.Is(err, executor.ErrInvalidJob) {
		t.Errorf("both policies: %v", err)
	}
	_, err = e.Enqueue(executor.JobSpec{Type: "t", Retry: []byte(`{"max_attempts": -1}`)})
	if !errors.Is(err, policy.ErrInvalidPolicy) || !strings.Contains(err.Error(), "max_attempts") {
		t.Errorf("invalid policy: %v", err)
	}
	f, _ := e.Fetch("default")
	if _, err := e.Fail("a", f.Delivery, executor.Failure{Type: "x", Code: "NOPE"}); !errors.Is(err, executor.ErrInvalidJob) || !errors.Is(err, errmatch.ErrUnknownCode) {
		t.Errorf("unknown code: %v", err)
	}
	if j, _ := e.Get("a"); j.State != executor.Active || len(j.Errors) != 0 {
		t.Errorf("after rejected fail: %s %d", j.State, len(j.Errors))
	}
}

func TestPolicySharing(t *testing.T) {
	e, _ := newFake()
	a := mustEnqueue(t, e, executor.JobSpec{Type: "t"})
	b := mustEnqueue(t, e, executor.JobSpec{Type: "t", Retry: []byte(`{"max_attempts": 3}`)})
	c := mustEnqueue(t, e, executor.JobSpec{Type: "t", Retry: []byte(`{"max_attempts": 7}`)})
	d := mustEnqueue(t, e, executor.JobSpec{Type: "t", Retry: []byte(`{"max_attempts": 7}`)})
	if a.Policy != policy.Default() || b.Policy != policy.Default() {
		t.Error("default policy not shared")
	}
	if c.Policy != d.Policy || c.Policy.Spec().MaxAttempts != 7 {
		t.Error("identical policy texts not shared")
	}
}

// Snapshots share the error history with the executor; later failures must
// not change an earlier snapshot.
func TestErrorHistoryWindow(t *testing.T) {
	e, c := newFake(executor.WithErrorHistory(3)) // raised to 10
	p, _ := policy.New(policy.Spec{MaxAttempts: 40, InitialInterval: time.Second, BackoffCoefficient: 1, MaxInterval: time.Second, OnExhaustion: policy.Discard})
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", Policy: p})
	var snaps []executor.Job
	for i := 1; i <= 35; i++ {
		queues := []string{"default"}
		if i%2 == 0 {
			queues = nil // no queue: the default one
		}
		f, ok := e.Fetch(queues...)
		if !ok {
			t.Fatalf("attempt %d not fetchable from %v", i, queues)
		}
		j, err := e.Fail("a", f.Delivery, executor.Failure{Type: "x", Message: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, j)
		c.Advance(time.Second)
	}
	for i, j := range snaps {
		n := i + 1
		want := min(n, 10)
		if len(j.Errors) != want {
			t.Fatalf("after %d failures: %d entries", n, len(j.Errors))
		}
		for k, x := range j.Errors {
			if wantAttempt := n - want + 1 + k; x.Attempt != wantAttempt || x.Message != fmt.Sprint(wantAttempt) {
				t.Fatalf("snapshot %d entry %d = attempt %d %q, want %d", n, k, x.Attempt, x.Message, wantAttempt)
			}
		}
		// appending to a snapshot must not reach into the executor
		_ = append(j.Errors, executor.ErrorEntry{Attempt: -1})
	}
	j, _ := e.Get("a")
	if last := j.Errors[len(j.Errors)-1]; last.Attempt != 35 {
		t.Errorf("last entry %+v", last)
	}
}

type recorder struct {
	executor.NopObserver
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) Retrying(j executor.Job, attempt int, d time.Duration) {
	r.add(fmt.Sprintf("retrying %s %d %v", j.ID, attempt, d))
}
func (r *recorder) Discarded(j executor.Job)    { r.add("discarded " + j.ID) }
func (r *recorder) DeadLettered(j executor.Job) { r.add("dead " + j.ID) }
func (r *recorder) Completed(j executor.Job)    { r.add("completed " + j.ID) }
func (r *recorder) TimedOut(j executor.Job)     { r.add("timeout " + j.ID) }
func (r *recorder) Pruned(j executor.Job)       { r.add("pruned " + j.ID) }
func (r *recorder) Cancelled(j executor.Job)    { r.add("cancelled " + j.ID) }

// fetchFail fetches the next job of the default queue and fails it.
func fetchFail(t *testing.T, e *executor.Executor, f executor.Failure) executor.Job {
	t.Helper()
	j, ok := e.Fetch()
	if !ok {
		t.Fatal("nothing to fetch")
	}
	r, err := e.Fail(j.ID, j.Delivery, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fetchAck fetches the next job of the default queue and acknowledges it.
func fetchAck(t *testing.T, e *executor.Executor) executor.Job {
	t.Helper()
	j, ok := e.Fetch()
	if !ok {
		t.Fatal("nothing to fetch")
	}
	r, err := e.Ack(j.ID, j.Delivery)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestObserver(t *testing.T) {
	r := &recorder{}
	e, c := newFake(executor.WithObserver(r), executor.WithRetention(time.Hour, 1))
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", VisibilityTimeout: 10 * time.Second})
	mustEnqueue(t, e, executor.JobSpec{ID: "b", Type: "t", Retry: []byte(`{"max_attempts":1}`)})
	mustEnqueue(t, e, executor.JobSpec{ID: "c", Type: "t", Retry: []byte(`{"on_exhaustion":"dead_letter","max_attempts":1}`)})
	mustEnqueue(t, e, executor.JobSpec{ID: "d", Type: "t"})
	mustEnqueue(t, e, executor.JobSpec{ID: "s", Type: "t", Pending: true})
	e.Fetch("default")                                                          // a
	c.Advance(10 * time.Second)                                                 // a times out: retry after 1s
	fetchFail(t, e, executor.Failure{Type: "x"})                                // b discarded
	fetchFail(t, e, executor.Failure{Type: "x"})                                // c dead
	fetchFail(t, e, executor.Failure{Type: "x", Code: errmatch.CodeDeadLetter}) // d dead, prunes c (max count 1)
	c.Advance(time.Second)                                                      // a available
	fetchAck(t, e)                                                              // a completed
	e.Cancel("s")                                                               // s cancelled
	want := "timeout a|retrying a 1 1s|discarded b|dead c|dead d|pruned c|completed a|cancelled s"
	if got := strings.Join(r.events, "|"); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
}

func TestNextDueAndTick(t *testing.T) {
	e, c := newFake(executor.WithRetention(time.Minute, 0))
	if _, ok := e.NextDue(); ok {
		t.Error("NextDue on empty executor")
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "s", Type: "t", ScheduledAt: start.Add(5 * time.Second)})
	if d, ok := e.NextDue(); !ok || !d.Equal(start.Add(5*time.Second)) {
		t.Errorf("NextDue = %v %v", d, ok)
	}
	e.Cancel("s")
	mustEnqueue(t, e, executor.JobSpec{ID: "d", Type: "t", Retry: []byte(`{"max_attempts":1,"on_exhaustion":"dead_letter"}`)})
	fetchFail(t, e, executor.Failure{Type: "x"})
	// strictly older than max age: due one nanosecond after the minute
	if d, ok := e.NextDue(); !ok || !d.Equal(start.Add(time.Minute+1)) {
		t.Errorf("NextDue = %v %v", d, ok)
	}
	c.Set(start.Add(time.Minute + 1))
	e.Tick()
	if _, err := e.Get("d"); !errors.Is(err, executor.ErrNotFound) {
		t.Errorf("not pruned: %v", err)
	}
}

func TestPauseResume(t *testing.T) {
	e, _ := newFake()
	e.PauseQueue("")
	mustEnqueue(t, e, executor.JobSpec{Type: "t"})
	if _, ok := e.Fetch("default"); ok {
		t.Error("fetched from paused queue")
	}
	e.ResumeQueue("default")
	if _, ok := e.Fetch("default"); !ok {
		t.Error("not fetched after resume")
	}
}

func TestListFilter(t *testing.T) {
	e, _ := newFake()
	for i := 0; i < 5; i++ {
		mustEnqueue(t, e, executor.JobSpec{ID: fmt.Sprint("a", i), Type: "t", Queue: "a"})
		mustEnqueue(t, e, executor.JobSpec{ID: fmt.Sprint("b", i), Type: "t", Queue: "b", Pending: true})
	}
	e.Fetch("a")
	if n := e.Count(executor.Filter{Queue: "a", States: []executor.State{executor.Available}}); n != 4 {
		t.Errorf("available in a: %d", n)
	}
	l := e.List(executor.Filter{States: []executor.State{executor.Pending, executor.Active}})
	if len(l) != 6 || l[0].ID != "a0" || l[1].ID != "b0" || l[5].ID != "b4" {
		t.Errorf("list %v", l)
	}
}

// Many goroutines fetch, ack and fail concurrently while another advances
// the clock: every job ends completed or discarded exactly once, no job is
// claimed by two workers at the same time, nothing is lost.
func TestConcurrentNothingLost(t *testing.T) {
	const jobs, workers = 3000, 16
	e, c := newFake()
	p, _ := policy.New(policy.Spec{MaxAttempts: 3, InitialInterval: time.Millisecond, BackoffCoefficient: 2, MaxInterval: time.Second, OnExhaustion: policy.DeadLetter})
	for i := 0; i < jobs; i++ {
		mustEnqueue(t, e, executor.JobSpec{ID: fmt.Sprint(i), Type: "t", Queue: []string{"q1", "q2"}[i%2], Policy: p})
	}
	var acked, failedFinal atomic.Int64
	var holders sync.Map
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				c.Advance(time.Millisecond)
				time.Sleep(10 * time.Microsecond)
			}
		}
	}()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			idle := 0
			for i := 0; idle < 2000; i++ {
				j, ok := e.Fetch("q1", "q2")
				if !ok {
					idle++
					time.Sleep(20 * time.Microsecond)
					continue
				}
				idle = 0
				if _, loaded := holders.LoadOrStore(j.ID, w); loaded {
					t.Errorf("job %s claimed twice", j.ID)
				}
				holders.Delete(j.ID)
				if (i+w)%3 == 0 {
					if _, err := e.Ack(j.ID, j.Delivery); err != nil {
						t.Error(err)
					}
					acked.Add(1)
				} else {
					r, err := e.Fail(j.ID, j.Delivery, executor.Failure{Type: "x"})
					if err != nil {
						t.Error(err)
					}
					if r.State == executor.Discarded {
						failedFinal.Add(1)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	completed := e.Count(executor.Filter{States: []executor.State{executor.Completed}})
	discarded := e.Count(executor.Filter{States: []executor.State{executor.Discarded}})
	if int64(completed) != acked.Load() || int64(discarded) != failedFinal.Load() || completed+discarded != jobs {
		t.Errorf("completed %d (acked %d), discarded %d (final fails %d), want %d in all",
			completed, acked.Load(), discarded, failedFinal.Load(), jobs)
	}
	if n := e.Count(executor.Filter{}); n != jobs {
		t.Errorf("%d jobs held, want %d", n, jobs)
	}
	for _, j := range e.List(executor.Filter{}) {
		if j.Attempt > 3 || j.Attempt < 1 {
			t.Errorf("job %s attempt %d", j.ID, j.Attempt)
		}
	}
}

func TestJobSnapshotJSONFriendly(t *testing.T) {
	e, _ := newFake()
	j := mustEnqueue(t, e, executor.JobSpec{Type: "t", Args: json.RawMessage(`[1,2]`)})
	if string(j.Args) != "[1,2]" || j.ID != "job-1" || j.Queue != "default" || !j.CreatedAt.Equal(start) || !j.EnqueuedAt.Equal(start) {
		t.Errorf("%+v", j)
	}
}

func TestScheduledAtOutOfRange(t *testing.T) {
	e, _ := newFake()
	for _, tc := range []struct {
		name string
		at   time.Time
	}{
		{"year 9999", time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"year 1500", time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"just after 2262-04-11T23:47:16.854775807Z", time.Unix(0, math.MaxInt64).Add(time.Nanosecond)},
		{"the reserved instant 1677-09-21T00:12:43.145224192Z", time.Unix(0, math.MinInt64)},
	} {
		_, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t", ScheduledAt: tc.at})
		if !errors.Is(err, executor.ErrInvalidJob) || !strings.Contains(err.Error(), "scheduled_at") ||
			!strings.Contains(err.Error(), "outside the representable range") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if n := e.Count(executor.Filter{}); n != 0 {
		t.Errorf("%d jobs after rejected enqueues", n)
	}
	// The bounds themselves are accepted: the latest one is scheduled
	// (never due before the clock reaches it), the earliest available.
	late := mustEnqueue(t, e, executor.JobSpec{ID: "late", Type: "t", ScheduledAt: time.Unix(0, math.MaxInt64)})
	if late.State != executor.Scheduled || !late.ScheduledAt.Equal(time.Unix(0, math.MaxInt64)) {
		t.Errorf("late: %s %v", late.State, late.ScheduledAt)
	}
	early := mustEnqueue(t, e, executor.JobSpec{ID: "early", Type: "t", ScheduledAt: time.Unix(0, math.MinInt64+1)})
	if early.State != executor.Available || !early.ScheduledAt.Equal(time.Unix(0, math.MinInt64+1)) {
		t.Errorf("early: %s %v", early.State, early.ScheduledAt)
	}
	if j, ok := e.Fetch(); !ok || j.ID != "early" {
		t.Errorf("fetch: %v %v", j.ID, ok)
	}
	if _, ok := e.Fetch(); ok {
		t.Error("the job scheduled for 2262 was fetched in 2026")
	}
}

func TestFakeClockSaturates(t *testing.T) {
	maxT, minT := time.Unix(0, math.MaxInt64).UTC(), time.Unix(0, math.MinInt64+1).UTC()
	c := executor.NewFakeClock(start)
	if got := c.Advance(math.MaxInt64); !got.Equal(maxT) {
		t.Errorf("Advance(MaxInt64) = %v, want %v", got, maxT)
	}
	if got := c.Advance(time.Hour); !got.Equal(maxT) {
		t.Errorf("Advance past the end = %v, want %v", got, maxT)
	}
	c.Set(start)
	if got := c.Advance(-time.Hour); !got.Equal(start) {
		t.Errorf("Advance(-1h) = %v, want the clock unchanged at %v", got, start)
	}
	if got := c.Advance(math.MinInt64); !got.Equal(start) {
		t.Errorf("Advance(MinInt64) = %v, want the clock unchanged at %v", got, start)
	}
	for _, tc := range []struct {
		in, want time.Time
	}{
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), maxT},
		{time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC), minT},
		{time.Unix(0, math.MinInt64), minT},
	} {
		c.Set(tc.in)
		if got := c.Now(); !got.Equal(tc.want) {
			t.Errorf("Set(%v): Now() = %v, want %v", tc.in, got, tc.want)
		}
		if got := executor.NewFakeClock(tc.in).Now(); !got.Equal(tc.want) {
			t.Errorf("NewFakeClock(%v).Now() = %v, want %v", tc.in, got, tc.want)
		}
	}
	// A clock saturated at the end still drives the executor: the job
	// scheduled for the last instant becomes due, and nothing wraps into
	// the past.
	c.Set(start)
	e := executor.New(executor.WithClock(c))
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", ScheduledAt: start.Add(time.Hour)})
	c.Advance(math.MaxInt64)
	if j, err := e.Get("a"); err != nil || j.State != executor.Available {
		t.Errorf("after Advance(MaxInt64): %v %v", j.State, err)
	}
}

// farClock is a Clock that is not a FakeClock, reading a fixed time.
type farClock struct{ t time.Time }

func (c farClock) Now() time.Time { return c.t }

func TestCustomClockOutOfRange(t *testing.T) {
	e := executor.New(executor.WithClock(farClock{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)}))
	j := mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	if want := time.Unix(0, math.MaxInt64); !j.CreatedAt.Equal(want) {
		t.Errorf("created at %v, want the clock clamped to %v", j.CreatedAt, want)
	}
	e = executor.New(executor.WithClock(farClock{time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}))
	j = mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t", ScheduledAt: start})
	if want := time.Unix(0, math.MinInt64+1); !j.CreatedAt.Equal(want) || j.State != executor.Scheduled {
		t.Errorf("created at %v (%s), want the clock clamped to %v and the job scheduled", j.CreatedAt, j.State, want)
	}
}

func TestFetchDefaultQueue(t *testing.T) {
	e, _ := newFake()
	mustEnqueue(t, e, executor.JobSpec{ID: "other", Type: "t", Queue: "other"})
	if j, ok := e.Fetch(); ok {
		t.Fatalf("Fetch() claimed %s from another queue", j.ID)
	}
	mustEnqueue(t, e, executor.JobSpec{ID: "a", Type: "t"})
	mustEnqueue(t, e, executor.JobSpec{ID: "b", Type: "t", Queue: executor.DefaultQueue})
	mustEnqueue(t, e, executor.JobSpec{ID: "c", Type: "t"})
	if j, ok := e.Fetch(); !ok || j.ID != "a" || j.Queue != executor.DefaultQueue || j.State != executor.Active {
		t.Errorf("Fetch() = %s %s %s %v, want a from %q", j.ID, j.Queue, j.State, ok, executor.DefaultQueue)
	}
	if j, ok := e.Fetch(""); !ok || j.ID != "b" {
		t.Errorf(`Fetch("") = %s %v, want b`, j.ID, ok)
	}
	e.PauseQueue(executor.DefaultQueue)
	if j, ok := e.Fetch(); ok {
		t.Errorf("Fetch() claimed %s from the paused default queue", j.ID)
	}
	e.ResumeQueue("")
	if j, ok := e.Fetch(); !ok || j.ID != "c" {
		t.Errorf("Fetch() after resume = %s %v, want c", j.ID, ok)
	}
	if j, ok := e.Fetch("other"); !ok || j.ID != "other" {
		t.Errorf(`Fetch("other") = %s %v`, j.ID, ok)
	}
}
