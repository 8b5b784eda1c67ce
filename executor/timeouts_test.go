package executor_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/replay"
)

var budgetEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustBudget(t *testing.T, s string) *budget.Budget {
	t.Helper()
	b, err := budget.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func budgetExecutor(t *testing.T, opts ...executor.Option) (*executor.Executor, *executor.FakeClock) {
	t.Helper()
	clk := executor.NewFakeClock(budgetEpoch)
	return executor.New(append([]executor.Option{executor.WithClock(clk), executor.WithRand(backoff.Fixed(0.5)),
		executor.WithDefaultVisibilityTimeout(time.Hour)}, opts...)...), clk
}

func lastError(t *testing.T, j executor.Job) executor.ErrorEntry {
	t.Helper()
	if len(j.Errors) == 0 {
		t.Fatalf("job %s has no error", j.ID)
	}
	return j.Errors[len(j.Errors)-1]
}

// A job whose worker stops sending heartbeats fails its attempt with type
// "stalled" once more than heartbeat_timeout has passed (ojs-timeouts
// §5.5, §7.3), is retried under its policy, and the §8 object is stored.
func TestStalledJobIsRetriedWithTypeStalled(t *testing.T) {
	e, clk := budgetExecutor(t)
	_, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t", Retry: json.RawMessage(`{"jitter": false}`),
		Budget: mustBudget(t, `{"timeout": 600, "heartbeat_timeout": 60}`)})
	if err != nil {
		t.Fatal(err)
	}
	j, _ := e.Fetch()
	clk.Advance(50 * time.Second)
	if _, err := e.Heartbeat("a", j.Delivery); err != nil {
		t.Fatal(err)
	}
	clk.Advance(60 * time.Second) // exactly heartbeat_timeout since the beat: still alive
	if g, _ := e.Get("a"); g.State != executor.Active {
		t.Fatalf("at the heartbeat timeout itself: %s, want active", g.State)
	}
	clk.Advance(time.Nanosecond)
	g, _ := e.Get("a")
	if g.State != executor.Retryable || g.Attempt != 1 {
		t.Fatalf("after a missed heartbeat: %s attempt %d, want retryable 1", g.State, g.Attempt)
	}
	ent := lastError(t, g)
	if ent.Type != budget.ErrorTypeStalled || ent.Time != budgetEpoch.Add(110*time.Second+time.Nanosecond) {
		t.Fatalf("error entry %+v", ent)
	}
	var obj map[string]any
	if err := json.Unmarshal(ent.Details, &obj); err != nil || obj["timeout_kind"] != "stalled" || obj["limit_seconds"] != 60.0 || obj["elapsed_seconds"] != 61.0 {
		t.Fatalf("details %s (%v)", ent.Details, err)
	}
	if want := budgetEpoch.Add(111*time.Second + time.Nanosecond); !g.NextRetryAt.Equal(want) {
		t.Fatalf("next retry %v, want %v (the default first delay, 1 s)", g.NextRetryAt, want)
	}
}

// An attempt that runs past timeout + grace_period fails with type
// "timeout" (§7.1), and the timeout counts as an attempt: after
// max_attempts of them the job is discarded.
func TestExecutionTimeoutCountsAsAnAttempt(t *testing.T) {
	e, clk := budgetExecutor(t)
	_, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t", Retry: json.RawMessage(`{"max_attempts": 2, "jitter": false}`),
		Budget: mustBudget(t, `{"timeout": 30, "grace_period": 5, "heartbeat_timeout": 600}`)})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		j, ok := e.Fetch()
		if !ok || j.Attempt != attempt {
			t.Fatalf("fetch %d: %v %+v", attempt, ok, j)
		}
		clk.Advance(35*time.Second + time.Nanosecond)
		clk.Advance(10 * time.Second) // past any backoff
	}
	g, _ := e.Get("a")
	if g.State != executor.Discarded || len(g.Errors) != 2 {
		t.Fatalf("%s with %d errors, want discarded after two timeouts", g.State, len(g.Errors))
	}
	for _, ent := range g.Errors {
		if ent.Type != budget.ErrorTypeTimeout {
			t.Fatalf("entry %+v, want type timeout", ent)
		}
	}
}

// §9.1: a failure whose retry could not finish before created_at +
// total_timeout discards the job at once, with attempts left.
func TestJobDiscardedEarlyWhenARetryCannotFinish(t *testing.T) {
	e, clk := budgetExecutor(t)
	_, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t",
		Retry:  json.RawMessage(`{"max_attempts": 10, "initial_interval": "PT30S", "backoff_coefficient": 1, "jitter": false}`),
		Budget: mustBudget(t, `{"timeout": 60, "total_timeout": 600, "heartbeat_timeout": 600}`)})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(480 * time.Second) // waits in the queue
	j, _ := e.Fetch()
	clk.Advance(30 * time.Second)
	g, err := e.Fail("a", j.Delivery, executor.Failure{Type: "x.err"})
	if err != nil || g.State != executor.Retryable {
		t.Fatalf("failure at 510 s: %s %v, want retryable (the retry ends at the deadline)", g.State, err)
	}
	clk.Advance(30 * time.Second)
	j, _ = e.Fetch()
	clk.Advance(time.Millisecond)
	g, _ = e.Fail("a", j.Delivery, executor.Failure{Type: "x.err"})
	if g.State != executor.Discarded || g.Attempt != 2 {
		t.Fatalf("failure at 540.001 s: %s attempt %d, want discarded at attempt 2", g.State, g.Attempt)
	}
}

// §5.2: a job still waiting when its total timeout passes is ended, with
// type "total_timeout", when a fetch reaches it.
func TestWaitingJobEndsAtTotalTimeout(t *testing.T) {
	e, clk := budgetExecutor(t)
	_, err := e.Enqueue(executor.JobSpec{ID: "a", Type: "t", Retry: json.RawMessage(`{"on_exhaustion": "dead_letter"}`),
		Budget: mustBudget(t, `{"timeout": 10, "total_timeout": 100}`)})
	if err != nil {
		t.Fatal(err)
	}
	e.Enqueue(executor.JobSpec{ID: "b", Type: "t"})
	clk.Advance(100*time.Second + time.Nanosecond)
	j, ok := e.Fetch()
	if !ok || j.ID != "b" {
		t.Fatalf("fetched %v %q, want b (a is past its total timeout)", ok, j.ID)
	}
	g, _ := e.Get("a")
	if g.State != executor.Discarded || !g.DeadLetter || lastError(t, g).Type != budget.ErrorTypeTotalTimeout {
		t.Fatalf("a: %s dead %v errors %+v", g.State, g.DeadLetter, g.Errors)
	}
}

type replayRecorder struct {
	executor.NopObserver
	replayed []executor.Job
}

func (r *replayRecorder) Replayed(j executor.Job) { r.replayed = append(r.replayed, j) }

// A rule with max_replays 2 replays a dead letter twice, each time delay
// after it was dead-lettered, then leaves it (ojs-dead-letter §7).
func TestDeadLetterReplayedTwiceThenLeft(t *testing.T) {
	rules, err := replay.Parse([]byte(`{"replay_rules": [{"name": "outage", "filter": {"error_type": "db.down"}, "delay": "PT1H", "max_replays": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rec := &replayRecorder{}
	e, clk := budgetExecutor(t, executor.WithReplayRules(rules), executor.WithObserver(rec))
	_, err = e.Enqueue(executor.JobSpec{ID: "a", Type: "t", Retry: json.RawMessage(`{"max_attempts": 1, "on_exhaustion": "dead_letter"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var deadAt []time.Time
	for round := 0; round < 3; round++ {
		j, ok := e.Fetch()
		if !ok {
			t.Fatalf("round %d: nothing to fetch", round)
		}
		clk.Advance(time.Minute)
		g, err := e.Fail("a", j.Delivery, executor.Failure{Type: "db.down"})
		if err != nil || !g.DeadLetter {
			t.Fatalf("round %d: %+v %v", round, g, err)
		}
		deadAt = append(deadAt, clk.Now())
		at, rule, planned := e.ReplayAt("a")
		if round < 2 && (!planned || rule != "outage" || !at.Equal(clk.Now().Add(time.Hour))) {
			t.Fatalf("round %d: replay planned %v at %v by %q", round, planned, at, rule)
		}
		if round == 2 && planned {
			t.Fatalf("a third replay is planned, max_replays is 2")
		}
		clk.Advance(time.Hour - time.Nanosecond)
		if g, _ := e.Get("a"); round < 2 && g.State != executor.Discarded {
			t.Fatalf("round %d: replayed before the delay passed", round)
		}
		clk.Advance(time.Nanosecond)
		if round < 2 {
			g, _ := e.Get("a")
			if g.State != executor.Available || g.Attempt != 0 || g.Replay.Count != round+1 || g.Replay.Rule != "outage" || !g.Replay.LastAt.Equal(clk.Now()) {
				t.Fatalf("round %d: after the delay: %s attempt %d replay %+v", round, g.State, g.Attempt, g.Replay)
			}
		}
	}
	g, _ := e.Get("a")
	if g.State != executor.Discarded || !g.DeadLetter || g.Replay.Count != 2 || len(rec.replayed) != 2 {
		t.Fatalf("after two replays: %s dead %v replay %+v, %d replay events", g.State, g.DeadLetter, g.Replay, len(rec.replayed))
	}
	if len(g.Errors) != 3 {
		t.Fatalf("error history %d entries, want the 3 failures kept across replays", len(g.Errors))
	}
	_ = deadAt
}

// A queue's own rules replace the executor's; a manual retry cancels a
// planned replay.
func TestQueueReplayRulesAndManualRetry(t *testing.T) {
	all, _ := replay.New([]replay.Rule{{Name: "all", Delay: time.Minute, MaxReplays: 5, Enabled: true}})
	e, clk := budgetExecutor(t, executor.WithReplayRules(all), executor.WithQueueReplayRules("quiet", nil))
	for _, q := range []string{"default", "quiet"} {
		e.Enqueue(executor.JobSpec{ID: q, Type: "t", Queue: q, Policy: mustPolicy(t, `{"max_attempts": 1, "on_exhaustion": "dead_letter"}`)})
		j, _ := e.Fetch(q)
		e.Fail(q, j.Delivery, executor.Failure{Type: "x"})
	}
	if _, _, ok := e.ReplayAt("quiet"); ok {
		t.Fatal("queue quiet has no rules, yet a replay is planned")
	}
	if _, _, ok := e.ReplayAt("default"); !ok {
		t.Fatal("no replay planned under the executor's rules")
	}
	if _, err := e.Retry("default", nil); err != nil {
		t.Fatal(err)
	}
	j, _ := e.Fetch("default")
	clk.Advance(2 * time.Minute) // the cancelled replay's time passes while the job runs
	if g, _ := e.Get("default"); g.State != executor.Active || g.Replay.Count != 0 {
		t.Fatalf("manual retry did not cancel the planned replay: %s %+v", g.State, g.Replay)
	}
	_ = j
}

func mustPolicy(t *testing.T, s string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
