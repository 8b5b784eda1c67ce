package executor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// smModel is what the state-machine test remembers between steps.
type smModel struct {
	e       *Executor
	clock   *FakeClock
	ids     []string
	attempt map[string]int // last seen attempt
	maxAtt  map[string]int // max(max_attempts, 1) of the job's current policy
	gone    map[string]bool
	retried map[string]bool     // manual retry since last check: attempt may drop
	dels    map[string][]uint64 // every delivery seen per job, in order
	bad     []string            // invariant violations seen by the transition hook
	finMax  int                 // finished-job retention count
	dlMax   int                 // dead letter retention count
}

func randomPolicy(t *rapid.T, label string) *policy.Policy {
	s := policy.DefaultSpec()
	s.MaxAttempts = rapid.IntRange(0, 5).Draw(t, label+"max_attempts")
	s.InitialInterval = time.Duration(rapid.IntRange(1, 5000).Draw(t, label+"initial_ms")) * time.Millisecond
	s.BackoffCoefficient = rapid.SampledFrom([]float64{1, 1.5, 2, 3}).Draw(t, label+"coef")
	s.MaxInterval = s.InitialInterval * time.Duration(rapid.IntRange(1, 20).Draw(t, label+"max_factor"))
	s.Jitter = rapid.Bool().Draw(t, label+"jitter")
	s.Strategy = rapid.SampledFrom([]backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial}).Draw(t, label+"strategy")
	if rapid.Bool().Draw(t, label+"nre") {
		s.NonRetryableErrors = []string{"fatal.*"}
	}
	if rapid.Bool().Draw(t, label+"dl") {
		s.OnExhaustion = policy.DeadLetter
	}
	p, err := policy.New(s)
	if err != nil {
		t.Fatalf("random policy invalid: %v", err)
	}
	return p
}

func effMax(p *policy.Policy) int {
	if m := p.Spec().MaxAttempts; m > 1 {
		return m
	}
	return 1
}

func (m *smModel) pick(t *rapid.T) string {
	if len(m.ids) == 0 || rapid.IntRange(0, 20).Draw(t, "unknown") == 0 {
		return "nope"
	}
	return rapid.SampledFrom(m.ids).Draw(t, "id")
}

func (m *smModel) check(t *rapid.T) {
	if len(m.bad) > 0 {
		t.Fatalf("transition hook: %v", m.bad)
	}
	st := m.e.stats()
	all := m.e.List(Filter{})
	if int64(len(all)) != st.enqueued-st.pruned-st.deleted {
		t.Fatalf("%d jobs listed, enqueued %d - pruned %d - deleted %d", len(all), st.enqueued, st.pruned, st.deleted)
	}
	for _, q := range []string{"q1", "q2"} {
		for _, s := range []State{Completed, Cancelled} {
			if n := m.e.Count(Filter{Queue: q, States: []State{s}}); n > m.finMax {
				t.Fatalf("%d %s jobs in %s, retention %d", n, s, q, m.finMax)
			}
		}
		if n := m.e.Count(Filter{Queue: q, States: []State{Discarded}}) - m.e.Count(Filter{Queue: q, DeadLetter: true}); n > m.finMax {
			t.Fatalf("%d plainly discarded jobs in %s, retention %d", n, q, m.finMax)
		}
	}
	// each job in exactly one state: the per-state lists partition the jobs
	sum := 0
	where := map[string]State{}
	for _, s := range states() {
		c := m.e.Count(Filter{States: []State{s}})
		l := m.e.List(Filter{States: []State{s}})
		if c != len(l) {
			t.Fatalf("Count(%s)=%d, List has %d", s, c, len(l))
		}
		for _, j := range l {
			if prev, dup := where[j.ID]; dup {
				t.Fatalf("job %s in %s and %s", j.ID, prev, s)
			}
			where[j.ID] = s
		}
		sum += c
	}
	if sum != len(all) || m.e.Count(Filter{}) != len(all) {
		t.Fatalf("state counts add up to %d, %d jobs", sum, len(all))
	}
	dl := 0
	for _, j := range all {
		if j.DeadLetter {
			dl++
			if j.State != Discarded {
				t.Fatalf("dead letter flag on %s job %s", j.State, j.ID)
			}
		}
		if j.Attempt > m.maxAtt[j.ID] {
			t.Fatalf("job %s attempt %d > max %d", j.ID, j.Attempt, m.maxAtt[j.ID])
		}
		if j.Attempt < m.attempt[j.ID] && !m.retried[j.ID] {
			t.Fatalf("job %s attempt went down %d -> %d", j.ID, m.attempt[j.ID], j.Attempt)
		}
		m.attempt[j.ID] = j.Attempt
		if (j.State == Retryable) != !j.NextRetryAt.IsZero() {
			t.Fatalf("job %s %s with next_retry_at %v", j.ID, j.State, j.NextRetryAt)
		}
		if j.State == Retryable && !j.NextRetryAt.After(m.clock.Now()) {
			t.Fatalf("job %s still retryable at %v, due %v", j.ID, m.clock.Now(), j.NextRetryAt)
		}
		if len(j.Errors) > defaultErrorHistory {
			t.Fatalf("job %s keeps %d errors", j.ID, len(j.Errors))
		}
	}
	if dl > m.dlMax || dl != m.e.Count(Filter{DeadLetter: true}) {
		t.Fatalf("dead letters %d vs count %d", dl, m.e.Count(Filter{DeadLetter: true}))
	}
	m.retried = map[string]bool{}
}

// TestStateMachine runs random operation sequences against the executor
// and checks its invariants after every step. Which transitions a run
// takes depends on rapid's draws, so coverage of the transition table is
// checked by TestTransitionsCovered with a fixed script instead: this test
// passes or fails on the invariants alone.
func TestStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clock := NewFakeClock(t0)
		seed := rapid.Uint64().Draw(t, "seed")
		dlMax := rapid.IntRange(1, 5).Draw(t, "max_count")
		finMax := rapid.IntRange(1, 5).Draw(t, "finished_max_count")
		e := New(WithClock(clock), WithRand(rand.New(rand.NewPCG(seed, 1))),
			WithRetention(time.Duration(rapid.IntRange(1, 60).Draw(t, "max_age_s"))*time.Second, dlMax),
			WithFinishedRetention(time.Duration(rapid.IntRange(1, 60).Draw(t, "finished_max_age_s"))*time.Second, finMax))
		m := &smModel{e: e, clock: clock, attempt: map[string]int{}, maxAtt: map[string]int{},
			gone: map[string]bool{}, retried: map[string]bool{}, dels: map[string][]uint64{}, finMax: finMax, dlMax: dlMax}
		e.onTransition = func(id string, from, to State) {
			if !allowed(from, to) {
				m.bad = append(m.bad, fmt.Sprintf("%s: %s -> %s", id, from, to))
			}
			j := e.jobs[id]
			now := e.now()
			switch {
			case from == Retryable && to == Available && (now < j.due || j.enqueued > now):
				m.bad = append(m.bad, fmt.Sprintf("%s available at %d before next_retry_at %d", id, now, j.due))
			case from == Scheduled && to == Available && now < j.rare().scheduled:
				m.bad = append(m.bad, fmt.Sprintf("%s available before scheduled_at", id))
			case from == Available && to == Active && j.enqueued > now:
				m.bad = append(m.bad, fmt.Sprintf("%s fetched before it was available", id))
			}
		}
		queues := []string{"q1", "q2"}
		t.Repeat(map[string]func(*rapid.T){
			"": m.check,
			"enqueue": func(t *rapid.T) {
				p := randomPolicy(t, "")
				spec := JobSpec{Type: "t", Queue: rapid.SampledFrom(queues).Draw(t, "queue"), Policy: p,
					VisibilityTimeout: time.Duration(rapid.IntRange(1, 10).Draw(t, "vis_s")) * time.Second}
				switch rapid.IntRange(0, 4).Draw(t, "mode") {
				case 0:
					spec.Pending = true
				case 1:
					spec.ScheduledAt = clock.Now().Add(time.Duration(rapid.IntRange(-2000, 5000).Draw(t, "sched_ms")) * time.Millisecond)
				}
				j, err := e.Enqueue(spec)
				if err != nil {
					t.Fatal(err)
				}
				m.ids = append(m.ids, j.ID)
				m.maxAtt[j.ID] = effMax(p)
			},
			"fetch": func(t *rapid.T) {
				qs := rapid.SliceOfNDistinct(rapid.SampledFrom(queues), 1, 2, rapid.ID[string]).Draw(t, "queues")
				j, ok := e.Fetch(qs...)
				if ok && (j.State != Active || j.Attempt < 1 || !j.ReservedUntil.After(clock.Now())) {
					t.Fatalf("fetched %+v", j)
				}
				if ok {
					for _, d := range m.dels[j.ID] {
						if d >= j.Delivery {
							t.Fatalf("job %s fetched with delivery %d after %v", j.ID, j.Delivery, m.dels[j.ID])
						}
					}
					m.dels[j.ID] = append(m.dels[j.ID], j.Delivery)
				}
			},
			"ack": func(t *rapid.T) {
				id := m.pick(t)
				before, gerr := e.Get(id)
				d, stale := m.delivery(t, id, before)
				j, err := e.Ack(id, d)
				m.checkStale(t, "ack", id, before, stale, err)
				if gerr == nil && !stale && before.State == Active && (err != nil || j.State != Completed) {
					t.Fatalf("ack of active job: %v %v", err, j.State)
				}
				if err == nil && j.State != Completed {
					t.Fatalf("ack gave %s", j.State)
				}
				if gerr == nil && !stale && before.State != Active && !errors.Is(err, ErrInvalidTransition) {
					t.Fatalf("ack of %s job: %v", before.State, err)
				}
			},
			"fail": func(t *rapid.T) {
				id := m.pick(t)
				f := Failure{Type: rapid.SampledFrom([]string{"net.timeout", "fatal.bug", "other"}).Draw(t, "type"),
					Message: "m", Code: rapid.SampledFrom([]errmatch.Code{"", errmatch.CodeRetry, errmatch.CodeDiscard, errmatch.CodeDeadLetter, errmatch.CodeFail}).Draw(t, "code")}
				before, gerr := e.Get(id)
				d, stale := m.delivery(t, id, before)
				j, err := e.Fail(id, d, f)
				m.checkStale(t, "fail", id, before, stale, err)
				if gerr == nil && !stale && before.State == Active {
					if err != nil {
						t.Fatalf("fail of active job: %v", err)
					}
					if j.State != Retryable && j.State != Discarded {
						t.Fatalf("fail gave %s", j.State)
					}
					if last := j.Errors[len(j.Errors)-1]; last.Attempt != before.Attempt || last.Type != f.Type {
						t.Fatalf("last error %+v", last)
					}
					wantDL := f.Code == errmatch.CodeDeadLetter || (f.Code != errmatch.CodeDiscard && f.Code != errmatch.CodeFail && j.State == Discarded && before.Policy.Spec().OnExhaustion == policy.DeadLetter)
					if j.State == Discarded && j.DeadLetter != wantDL {
						// the job may already be pruned by count; only compare when it still exists
						if _, gerr := e.Get(id); gerr == nil {
							t.Fatalf("dead letter %v, want %v (code %q)", j.DeadLetter, wantDL, f.Code)
						}
					}
				}
			},
			"heartbeat": func(t *rapid.T) {
				id := m.pick(t)
				before, _ := e.Get(id)
				d, stale := m.delivery(t, id, before)
				j, err := e.Heartbeat(id, d)
				m.checkStale(t, "heartbeat", id, before, stale, err)
				if err == nil && j.ReservedUntil != clock.Now().Add(j.VisibilityTimeout) {
					t.Fatalf("heartbeat reservation %v", j.ReservedUntil)
				}
			},
			"delete": func(t *rapid.T) {
				id := m.pick(t)
				before, gerr := e.Get(id)
				err := e.Delete(id)
				switch {
				case gerr != nil:
					if !errors.Is(err, ErrNotFound) {
						t.Fatalf("delete of unknown job: %v", err)
					}
				case before.State.Terminal():
					if err != nil {
						t.Fatalf("delete of %s job: %v", before.State, err)
					}
					if _, err := e.Get(id); !errors.Is(err, ErrNotFound) {
						t.Fatalf("deleted job still there: %v", err)
					}
				default:
					if !errors.Is(err, ErrInvalidTransition) {
						t.Fatalf("delete of %s job: %v", before.State, err)
					}
				}
			},
			"cancel": func(t *rapid.T) {
				id := m.pick(t)
				before, gerr := e.Get(id)
				j, err := e.Cancel(id)
				if gerr == nil {
					if err != nil {
						t.Fatalf("cancel: %v", err)
					}
					if !before.State.Terminal() && j.State != Cancelled || before.State.Terminal() && j.State != before.State {
						t.Fatalf("cancel of %s gave %s", before.State, j.State)
					}
				}
			},
			"activate": func(t *rapid.T) { e.Activate(m.pick(t)) },
			"tick":     func(t *rapid.T) { e.Tick() },
			"retry": func(t *rapid.T) {
				id := m.pick(t)
				var p *policy.Policy
				if rapid.Bool().Draw(t, "override") {
					p = randomPolicy(t, "override_")
				}
				if j, err := e.Retry(id, p); err == nil {
					if j.Attempt != 0 || j.State != Available || j.DeadLetter {
						t.Fatalf("manual retry gave %+v", j)
					}
					m.retried[id] = true
					m.maxAtt[id] = effMax(j.Policy)
				}
			},
			// redeliver makes a redelivery likely: the clock runs past the
			// job's reservation and backoff, and its queue is fetched.
			"redeliver": func(t *rapid.T) {
				j, err := e.Get(m.pick(t))
				if err != nil || j.State != Active {
					return
				}
				clock.Set(j.ReservedUntil)
				if r, _ := e.Get(j.ID); r.State == Retryable {
					clock.Set(r.NextRetryAt)
				}
				if f, ok := e.Fetch(j.Queue); ok {
					m.dels[f.ID] = append(m.dels[f.ID], f.Delivery)
				}
			},
			"pause":  func(t *rapid.T) { e.PauseQueue(rapid.SampledFrom(queues).Draw(t, "queue")) },
			"resume": func(t *rapid.T) { e.ResumeQueue(rapid.SampledFrom(queues).Draw(t, "queue")) },
			"advance": func(t *rapid.T) {
				clock.Advance(time.Duration(rapid.IntRange(0, 8000).Draw(t, "ms")) * time.Millisecond)
			},
		})
	})
}

// delivery draws the delivery an ack, fail or heartbeat step names: usually
// the job's latest, sometimes an earlier one (stale).
func (m *smModel) delivery(t *rapid.T, id string, before Job) (d uint64, stale bool) {
	ds := m.dels[id]
	if len(ds) > 1 && rapid.Bool().Draw(t, "stale") {
		return ds[rapid.IntRange(0, len(ds)-2).Draw(t, "which")], true
	}
	return before.Delivery, false
}

// checkStale checks that a stale delivery was rejected with ErrStaleDelivery
// and changed nothing.
func (m *smModel) checkStale(t *rapid.T, op, id string, before Job, stale bool, err error) {
	if before.ID == "" { // unknown or pruned: not found comes first
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s of an unknown job: %v", op, err)
		}
		return
	}
	if !stale {
		if errors.Is(err, ErrStaleDelivery) {
			t.Fatalf("%s with the latest delivery: %v", op, err)
		}
		return
	}
	if !errors.Is(err, ErrStaleDelivery) {
		t.Fatalf("%s with a stale delivery: %v", op, err)
	}
	// the clock did not move since before was read: nothing may differ
	after, _ := m.e.Get(id)
	if after.State != before.State || after.Attempt != before.Attempt || after.Delivery != before.Delivery ||
		!after.ReservedUntil.Equal(before.ReservedUntil) || len(after.Errors) != len(before.Errors) {
		t.Fatalf("stale %s changed the job: %+v -> %+v", op, before, after)
	}
}
