// Scenarios of jittered delays: their range and both caps.

package live

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// scenCapBeforeJitter fails jitterJobs jobs twice under initial 20ms,
// coefficient 4, max_interval 40ms, jitter on: after attempt 2 the raw
// delay is 80ms, capped to 40ms, jittered to [20ms, 40ms]. A server that
// caps only after jitter gives min(80ms·m, 40ms) = 40ms every time; with
// the right order every draw of m ≥ 1 lands on the cap too, so all 16
// delays within a millisecond of 40ms have a chance of about 0.525^16
// (3·10^-5) on a correct server.
func scenCapBeforeJitter(ctx context.Context, e *env) {
	const check = "http-cap-before-jitter"
	pol := retry{max: 3, initial: 20 * ms, coef: 4, maxIv: 40 * ms, jitter: true}
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		below, narrow int
	)
	sem := make(chan struct{}, 8)
	for i := 0; i < jitterJobs; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			q, id, a, ex, ok := e.startFailed(ctx, "capjitter", pol.wire(e), "external.timeout", check)
			if !ok {
				return
			}
			if bad := e.retried(check, ex, a, 1, pol); bad != "" {
				e.recordFail(check, pol.wire(e), e.failWith("external.timeout", 1), 1, ex, a, nil)
				e.fail(check, "after attempt 1: %s", bad)
				return
			}
			a, ex, ok = e.failRetried(ctx, check, pol.wire(e), q, id, a, 2)
			if !ok {
				return
			}
			if a.State != "retryable" || !is(a.Attempt, 2) {
				e.fail(check, "the FAIL of attempt 2 of 3 answered state %q, attempt %s; want retryable, 2", a.State, intOr(a.Attempt))
				return
			}
			// Up to 1.5·max_interval is left to http-jitter-cap (the cap
			// after jitter); this check looks only at the cap before it.
			bad, next := e.judgeDelay(check, ex, a, pol.maxIv/2, pol.maxIv*3/2)
			if bad != "" {
				e.fail(check, "after attempt 2: %s", bad)
				return
			}
			dlo, dhi := e.delayRange(ex, next)
			mu.Lock()
			if dhi < pol.maxIv-resolution {
				below++
			}
			if dhi-dlo <= 2*ms {
				narrow++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	switch {
	case below > 0:
		e.pass(check, "")
	case narrow >= jitterJobs/2:
		e.fail(check, "all %d delays after attempt 2 (raw 80ms, max_interval 40ms, jitter on) are max_interval: the cap comes only after jitter", jitterJobs)
	default:
		e.pass(check, fmt.Sprintf("the cap before jitter could not be seen: only %d of %d delays were timed within 2ms (slow round trips)", narrow, jitterJobs))
	}
}

// jitterJobs is how many jobs each jitter check fails once. With a server
// that does not cap after jitter, each sample of http-jitter-cap exceeds
// max_interval with probability about 1/2, so 16 samples miss the bug
// with probability about 2^-16.
const jitterJobs = 16

// scenJitter fails jitterJobs jobs once under two jittered policies.
func scenJitter(ctx context.Context, e *env) {
	type job struct {
		check string
		pol   retry
	}
	var jobs []job
	for i := 0; i < jitterJobs; i++ {
		jobs = append(jobs,
			job{"http-jitter-range", retry{max: 2, initial: 40 * ms, coef: 2, maxIv: time.Second, jitter: true}},
			job{"http-jitter-cap", retry{max: 2, initial: 60 * ms, coef: 2, maxIv: 60 * ms, jitter: true}})
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		varied = map[string]int{}
		narrow = map[string]int{}
	)
	sem := make(chan struct{}, 8)
	for _, jb := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			wire := jb.pol.wire(e)
			q, id, a, ex, ok := e.startFailed(ctx, "jitter", wire, "external.timeout", jb.check)
			if !ok {
				return
			}
			e.recordFail(jb.check, wire, e.failWith("external.timeout", 1), 1, ex, a, nil)
			if a.State != "retryable" {
				e.fail(jb.check, "the FAIL of attempt 1 of 2 answered state %q, want retryable", a.State)
				return
			}
			lo, hi := jb.pol.bounds(1)
			bad, next := e.judgeDelay(jb.check, ex, a, lo, hi)
			if bad != "" {
				e.fail(jb.check, "%s (jitter on, initial_interval %v, max_interval %v)", bad, jb.pol.initial, jb.pol.maxIv)
				return
			}
			// A sample shows jitter when its delay window excludes the base
			// delay; it can when the window is narrow (a tenth of the
			// jitter range).
			dlo, dhi := e.delayRange(ex, next)
			mu.Lock()
			// next_attempt_at carries milliseconds (RK-110): a window off
			// the base by less than that proves nothing.
			if dhi < jb.pol.initial-resolution || dlo > jb.pol.initial+resolution {
				varied[jb.check]++
			}
			if dhi-dlo <= (hi-lo)/10 {
				narrow[jb.check]++
			}
			mu.Unlock()
			if _, err := e.await(ctx, q, id, next, 0); err != nil {
				e.errored(err, jb.check)
				return
			}
			if err := e.c.ack(ctx, id); err != nil {
				e.errored(err, jb.check)
				return
			}
			e.pass(jb.check, "")
		}()
	}
	wg.Wait()
	// Without jitter every window contains the base delay; with the
	// spec's jitter, 8 narrow windows all containing it have a chance
	// below 10^-8.
	switch {
	case varied["http-jitter-range"] > 0:
	case narrow["http-jitter-range"] >= jitterJobs/2:
		e.fail("http-jitter-range", "all %d jittered delays equal the base delay 40ms (%d of them within a few ms): no jitter is applied", jitterJobs, narrow["http-jitter-range"])
	default:
		e.pass("http-jitter-range", fmt.Sprintf("whether jitter is applied could not be seen: only %d of %d delays were timed within 4ms (slow round trips)", narrow["http-jitter-range"], jitterJobs))
	}
}
