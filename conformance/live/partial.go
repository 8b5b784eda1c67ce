// Scenarios of partial policies, each field omitted in turn (retry spec
// §8.1: a partial policy is merged over the defaults field by field), and
// of the extra retries timed for the latency figure.

package live

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// without returns the retry object of r in the run's dialect with field
// (in either interval form) left out.
func (e *env) without(r retry, field string) map[string]any {
	m := r.wire(e)
	delete(m, field)
	delete(m, field+"_ms")
	return m
}

// partialBase is the full policy each partial-policy job starts from:
// 20ms, coefficient 2, cap 1s, no jitter, 3 attempts, discard.
var partialBase = retry{max: 3, initial: 20 * ms, coef: 2, maxIv: time.Second}

// partialJitterJobs is how many jobs http-partial-jitter fails once. The
// base delay is an hour, so that a FAIL round trip is tiny beside the
// jitter's spread even on a slow or loaded server: with jitter on, 8 delay
// windows of a few seconds all containing the base have a chance below
// 10^-25. The jobs are never awaited (the run cancels them).
const partialJitterJobs = 8

// scenPartialFields pushes policies each without one field and judges the
// first FAIL answers against the merged policy (RK-201).
func scenPartialFields(ctx context.Context, e *env) {
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	// max_attempts absent: 3, so the first failure is retried.
	run(func() {
		const check = "http-partial-max-attempts"
		pol := e.without(partialBase, "max_attempts")
		_, _, a, ex, ok := e.startFailed(ctx, "partial-max", pol, "external.timeout", check)
		if !ok {
			return
		}
		e.recordFail(check, pol, e.failWith("external.timeout", 1), 1, ex, a, nil)
		switch {
		case a.State != "retryable" || !is(a.MaxAttempts, 3):
			e.fail(check, "a policy without max_attempts: the first FAIL answered state %q, max_attempts %s; want retryable, 3 (an absent max_attempts is the default 3; stored as 0 the job is never retried)", a.State, intOr(a.MaxAttempts))
		default:
			lo, hi := partialBase.bounds(1)
			// the subject is the default max_attempts, not the delay: judged
			// against its bounds, not held to the timing resolution (RK-395)
			if bad, _ := e.judgeDelay("", ex, a, lo, hi); bad != "" {
				e.fail(check, "a policy without max_attempts, after attempt 1: %s", bad)
				return
			}
			e.pass(check, "")
		}
	})
	// initial_interval, backoff_coefficient and max_interval absent: one
	// delay each, judged against the merged policy (partialDelays).
	for _, c := range partialDelays {
		run(func() { e.partialDelay(ctx, c) })
	}
	// jitter absent: on, judged over several jobs.
	run(func() {
		const check = "http-partial-jitter"
		base := retry{max: 3, initial: time.Hour, coef: 2, maxIv: 2 * time.Hour}
		pol := e.without(base, "jitter")
		var mu sync.Mutex
		varied, narrow, judged := 0, 0, 0
		var jw sync.WaitGroup
		for i := 0; i < partialJitterJobs; i++ {
			jw.Add(1)
			go func() {
				defer jw.Done()
				_, _, a, ex, ok := e.startFailed(ctx, "partial-jitter", pol, "external.timeout", check)
				if !ok {
					return
				}
				e.recordFail(check, pol, e.failWith("external.timeout", 1), 1, ex, a, nil)
				jit := base
				jit.jitter = true
				lo, hi := jit.bounds(1)
				bad, next := e.judgeDelay(check, ex, a, lo, hi)
				if a.State != "retryable" || bad != "" {
					e.fail(check, "a policy without jitter, attempt 1: state %q %s (jitter on by default: [%v, %v])", a.State, bad, lo, hi)
					return
				}
				dlo, dhi := e.delayRange(ex, next)
				mu.Lock()
				judged++
				// next_attempt_at carries milliseconds: a window off the
				// base by less than that proves nothing.
				if dhi < base.initial-resolution || dlo > base.initial+resolution {
					varied++
				}
				if dhi-dlo <= (hi-lo)/10 {
					narrow++
				}
				mu.Unlock()
			}()
		}
		jw.Wait()
		switch {
		case judged < partialJitterJobs:
		case varied > 0:
			e.pass(check, "")
		case narrow >= partialJitterJobs/2:
			e.fail(check, "a policy without jitter: all %d first delays equal the base %v (%d timed within %v): jitter is off, the default is on", partialJitterJobs, base.initial, narrow, base.initial/10)
		default:
			e.pass(check, fmt.Sprintf("whether jitter is on could not be seen: only %d of %d delays were timed within %v", narrow, partialJitterJobs, base.initial/10))
		}
	})
	// on_exhaustion absent: discard.
	run(func() {
		const check = "http-partial-on-exhaustion"
		one := partialBase
		one.max = 1
		pol := e.without(one, "on_exhaustion")
		q, id, a, ex, ok := e.startFailed(ctx, "partial-onex", pol, "external.timeout", check)
		if !ok {
			return
		}
		dl, err := e.listed(ctx, q, id)
		if err != nil {
			e.errored(err, check)
			return
		}
		e.recordFail(check, pol, e.failWith("external.timeout", 1), 1, ex, a, &dl)
		switch {
		case a.State != "discarded":
			e.fail(check, "a policy of max_attempts 1 without on_exhaustion: the first FAIL answered state %q, want discarded", a.State)
		case dl:
			e.fail(check, "a policy without on_exhaustion: the exhausted job is in the dead letter queue; the default is discard")
		default:
			e.pass(check, "")
		}
	})
	wg.Wait()
}

// partialDelay is a partial-policy check judged on one delay: a job whose
// policy is base without field fails until attempt at, and the delay after
// it must be want's (jitter off), the policy merged with the default the
// message names.
type partialDelay struct {
	check, queue, field string
	base, want          retry
	at                  int
	dflt                string
}

// partialDelays are the partial-policy checks of one delay each. max_interval
// is seen with PT0.5S × 1000, capped after attempt 2 at 300s, not 500s (an
// initial_interval above PT5M would show it at once, but the merged policy
// is then invalid, RK-201).
var partialDelays = []partialDelay{
	{"http-partial-initial-interval", "partial-initial", "initial_interval", partialBase,
		retry{max: 3, initial: time.Second, coef: 2, maxIv: time.Second}, 1, "the default PT1S"},
	{"http-partial-coefficient", "partial-coef", "backoff_coefficient", partialBase,
		partialBase, 2, "the default 2.0"},
	{"http-partial-max-interval", "partial-maxiv", "max_interval", retry{max: 3, initial: 500 * ms, coef: 1000, maxIv: 10 * time.Minute},
		retry{max: 3, initial: 500 * ms, coef: 1000, maxIv: 5 * time.Minute}, 2, "capped at the default PT5M"},
}

// partialDelay runs one check of partialDelays.
func (e *env) partialDelay(ctx context.Context, c partialDelay) {
	pol := e.without(c.base, c.field)
	q, id, a, ex, ok := e.startFailed(ctx, c.queue, pol, "external.timeout", c.check)
	if !ok {
		return
	}
	e.recordFail(c.check, pol, e.failWith("external.timeout", 1), 1, ex, a, nil)
	if c.at > 1 {
		if a.State != "retryable" {
			e.fail(c.check, "a policy without %s: the first FAIL answered state %q, want retryable", c.field, a.State)
			return
		}
		if a, ex, ok = e.failRetried(ctx, c.check, pol, q, id, a, c.at); !ok {
			return
		}
	}
	if bad := e.retried(c.check, ex, a, c.at, c.want); bad != "" {
		e.fail(c.check, "a policy without %s (jitter off), attempt %d: %s (%s)", c.field, c.at, bad, c.dflt)
		return
	}
	e.pass(c.check, "")
}

// latencyRetriesPerJob is how many retries each job of scenLatency makes.
const latencyRetriesPerJob = 10

// scenLatency times cfg.latRetries extra retries of 20ms, on jobs of
// latencyRetriesPerJob retries each run side by side, for the promotion
// latency figure; they are judged by http-not-early and http-promoted like
// every other retry.
func scenLatency(ctx context.Context, e *env) {
	n := e.cfg.latRetries
	if n <= 0 {
		return
	}
	pol := retry{max: latencyRetriesPerJob + 1, initial: 20 * ms, coef: 1, maxIv: 20 * ms}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for left := n; left > 0; left -= latencyRetriesPerJob {
		k := min(left, latencyRetriesPerJob)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			q, id, err := e.start(ctx, "latency", pol.wire(e))
			if err != nil {
				e.errored(err, "http-promoted")
				return
			}
			for i := 1; i <= k; i++ {
				a, _, err := e.nackOK(ctx, id, e.failWith("external.timeout", i))
				if err != nil || a.State != "retryable" {
					return // judged by the other checks
				}
				next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
				if _, err := e.await(ctx, q, id, next, 0); err != nil {
					return
				}
			}
			_ = e.c.ack(ctx, id)
		}()
	}
	wg.Wait()
}
