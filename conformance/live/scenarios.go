package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ms is a millisecond, the unit of the scenarios' short intervals.
const ms = time.Millisecond

// scenario is one job lifecycle (or a few run together) that adds verdicts
// to the checks it names.
type scenario struct {
	name string
	ids  []string // the checks it judges
	run  func(ctx context.Context, e *env)
}

// scenarios lists every scenario; Run plays them concurrently, each on
// queues of its own.
var scenarios = []scenario{
	{"exhaust-discard", []string{"http-attempts", "http-next-attempt-at", "http-cap", "http-discard", "http-history"}, scenExhaustDiscard},
	{"exhaust-dead-letter", []string{"http-attempts", "http-dead-letter", "http-dead-letter-retry"}, scenDeadLetter},
	{"jitter", []string{"http-jitter-range", "http-jitter-cap"}, scenJitter},
	{"history-12", []string{"http-history-10"}, scenHistory12},
	{"cap-before-jitter", []string{"http-cap-before-jitter"}, scenCapBeforeJitter},
	{"max-attempts-one", []string{"http-max-attempts-one"}, scenMaxAttemptsOne},
	{"partial-policy", []string{"http-partial-policy"}, scenPartial},
	{"non-retryable", []string{"http-nonretryable-exact", "http-nonretryable-prefix", "http-prefix-boundary", "http-exact-literal", "http-nonretryable-dead-letter"}, scenNonRetryable},
	{"handler-codes", []string{"http-code-retry", "http-code-discard", "http-code-fail", "http-code-dead-letter"}, scenCodes},
	{"visibility-timeout", []string{"http-visibility-timeout"}, scenVisibility},
	{"heartbeat", []string{"http-heartbeat"}, scenHeartbeat},
	{"default-policy", []string{"http-default-policy"}, scenDefault},
	{"interval-ms", []string{"http-interval-ms"}, scenIntervalMs},
	{"backoff-type", []string{"http-backoff-type"}, scenBackoffType},
}

// start pushes a job with policy r (nil for none) to a fresh queue and
// fetches it: the first attempt, active.
func (e *env) start(ctx context.Context, name string, r map[string]any) (queue, id string, err error) {
	queue = e.queue(name)
	if id, err = e.c.push(ctx, queue, "retrykit.live."+name, r); err != nil {
		return "", "", err
	}
	if _, err = e.await(ctx, queue, id, time.Time{}, 0); err != nil {
		return "", "", err
	}
	return queue, id, nil
}

// sendsType reports whether FAIL requests carry error.type (RK-111); else
// the type goes in error.code.
func (e *env) sendsType() bool { return e.cfg.typeField != "code" }

// failWith is the failure a scenario reports for an error type t.
func (e *env) failWith(t string, n int) failure {
	f := failure{Message: fmt.Sprintf("retrykit live check: attempt %d failed", n)}
	if e.sendsType() {
		f.Type = t
	} else {
		f.Code = t
	}
	return f
}

// retried returns "" when a is the answer of a retried attempt n of a
// job under pol: state retryable, that attempt, and next_attempt_at
// within the policy's bounds; else what differs.
func (e *env) retried(ex *exchange, a *nackAnswer, n int, pol retry) string {
	if a.State != "retryable" {
		return fmt.Sprintf("state %q, want retryable", a.State)
	}
	if !is(a.Attempt, n) {
		return fmt.Sprintf("retryable, but attempt %s, want %d", intOr(a.Attempt), n)
	}
	lo, hi := pol.bounds(n)
	if bad, _ := e.judgeDelay(ex, a, lo, hi); bad != "" {
		return "retryable, but " + bad
	}
	return ""
}

// nackOK sends FAIL and requires a 200 answer.
func (e *env) nackOK(ctx context.Context, id string, f failure) (*nackAnswer, *exchange, error) {
	a, ex, err := e.c.nack(ctx, id, f)
	if err != nil {
		return nil, nil, err
	}
	if a == nil {
		return nil, nil, errFromStatus(ex)
	}
	return a, ex, nil
}

// scenExhaustDiscard fails a job until its four attempts are spent:
// exponential 20ms·2^(n-1) capped at 50ms, no jitter, discard.
func scenExhaustDiscard(ctx context.Context, e *env) {
	ids := []string{"http-attempts", "http-next-attempt-at", "http-cap", "http-discard", "http-history"}
	pol := retry{max: 4, initial: 20 * ms, coef: 2, maxIv: 50 * ms}
	q, id, err := e.start(ctx, "exhaust", pol.wire(e))
	if err != nil {
		e.errored(err, ids...)
		return
	}
	for n := 1; n <= pol.max; n++ {
		a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", n))
		if err != nil {
			e.errored(err, ids...)
			return
		}
		if !is(a.Attempt, n) || !is(a.MaxAttempts, pol.max) {
			e.fail("http-attempts", "the FAIL of attempt %d of %d answered attempt %s, max_attempts %s", n, pol.max, intOr(a.Attempt), intOr(a.MaxAttempts))
		}
		if n == pol.max {
			if a.State != "discarded" {
				e.fail("http-attempts", "the FAIL of the last attempt (%d of %d) answered state %q, want discarded", n, pol.max, a.State)
				e.fail("http-discard", "the FAIL of the last attempt answered state %q, want discarded", a.State)
			}
			break
		}
		if a.State != "retryable" {
			e.fail("http-attempts", "the FAIL of attempt %d of %d answered state %q, want retryable", n, pol.max, a.State)
			e.errored(errors.New("live: the job was not retried, so later attempts could not be checked"), "http-next-attempt-at", "http-cap", "http-discard", "http-history")
			return
		}
		lo, hi := pol.bounds(n)
		bad, next := e.judgeDelay(ex, a, lo, hi)
		check := "http-next-attempt-at"
		if n == 3 { // 20ms·4 = 80ms, capped at 50ms
			check = "http-cap"
		}
		if bad != "" {
			e.fail(check, "after attempt %d: %s", n, bad)
		} else {
			e.pass(check, "")
		}
		if next.IsZero() {
			e.errored(errors.New("live: no next_attempt_at to wait for"), ids...)
			return
		}
		if _, err := e.await(ctx, q, id, next, 0); err != nil {
			e.errored(err, "http-discard", "http-history")
			return
		}
	}
	e.pass("http-attempts", "")
	j, err := e.c.info(ctx, id)
	if err != nil {
		e.errored(err, "http-discard", "http-history")
		return
	}
	if j.State != "discarded" {
		e.fail("http-discard", "INFO after the last failure: state %q, want discarded", j.State)
	}
	if !is(j.Attempt, pol.max) {
		e.fail("http-attempts", "INFO after %d failed attempts: attempt %s", pol.max, intOr(j.Attempt))
	}
	judgeHistory(e, j, pol.max, "external.timeout")
	dl, err := e.c.deadLetterIDs(ctx, q)
	switch {
	case err != nil:
		e.errored(err, "http-discard")
	case dl[id]:
		e.fail("http-discard", "a job under on_exhaustion discard is listed in the dead letter queue")
	default:
		e.pass("http-discard", "")
	}
}

// judgeHistory checks a job's error history after n failures of type t.
func judgeHistory(e *env, j *job, n int, t string) {
	h := j.errorList()
	if len(h) < n {
		e.fail("http-history", "after %d failures the job has %d error history entries (errors or error_history)", n, len(h))
		return
	}
	h = h[len(h)-n:]
	for i, x := range h {
		if !is(x.Attempt, i+1) {
			e.fail("http-history", "error history entry %d of %d has attempt %s, want %d", i+1, n, intOr(x.Attempt), i+1)
			return
		}
		if e.sendsType() && x.Type != t {
			e.fail("http-history", "error history entry %d has type %q, want %q", i+1, trunc(x.Type, 64), t)
			return
		}
		if x.Message == "" {
			e.fail("http-history", "error history entry %d has no message", i+1)
			return
		}
	}
	e.pass("http-history", "")
}

// scenCapBeforeJitter fails jitterJobs jobs twice under initial 20ms,
// coefficient 4, max_interval 40ms, jitter on: after attempt 2 the raw
// delay is 80ms, capped to 40ms, jittered to [20ms, 40ms]. A server that
// caps only after jitter gives min(80ms·m, 40ms) = 40ms every time; with
// the right order, all 16 delays within a millisecond of 40ms have a
// chance of 20^-16.
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
			q, id, err := e.start(ctx, "capjitter", pol.wire(e))
			if err != nil {
				e.errored(err, check)
				return
			}
			a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", 1))
			if err != nil {
				e.errored(err, check)
				return
			}
			if bad := e.retried(ex, a, 1, pol); bad != "" {
				e.fail(check, "after attempt 1: %s", bad)
				return
			}
			next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
			if _, err := e.await(ctx, q, id, next, 0); err != nil {
				e.errored(err, check)
				return
			}
			a, ex, err = e.nackOK(ctx, id, e.failWith("external.timeout", 2))
			if err != nil {
				e.errored(err, check)
				return
			}
			if a.State != "retryable" || !is(a.Attempt, 2) {
				e.fail(check, "the FAIL of attempt 2 of 3 answered state %q, attempt %s; want retryable, 2", a.State, intOr(a.Attempt))
				return
			}
			// Up to 1.5·max_interval is left to http-jitter-cap (the cap
			// after jitter); this check looks only at the cap before it.
			bad, next := e.judgeDelay(ex, a, pol.maxIv/2, pol.maxIv*3/2)
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

// scenMaxAttemptsOne fails a job of max_attempts 1 and one of 0 once.
func scenMaxAttemptsOne(ctx context.Context, e *env) {
	const check = "http-max-attempts-one"
	for _, max := range []int{1, 0} {
		pol := retry{max: max, initial: 20 * ms, coef: 2, maxIv: time.Second}
		q := e.queue("max-one")
		id, status, err := e.c.pushStatus(ctx, q, "retrykit.live.max-one", pol.wire(e))
		switch {
		case err != nil:
			e.errored(err, check)
			return
		case id == "":
			e.fail(check, "PUSH of a policy with max_attempts %d answered HTTP %d; the spec allows it", max, status)
			return
		}
		if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
			e.errored(err, check)
			return
		}
		a, _, err := e.nackOK(ctx, id, e.failWith("external.timeout", 1))
		if err != nil {
			e.errored(err, check)
			return
		}
		if a.State != "discarded" || !is(a.Attempt, 1) {
			e.fail(check, "max_attempts %d: the first FAIL answered state %q, attempt %s; want discarded, 1", max, a.State, intOr(a.Attempt))
			return
		}
	}
	e.pass(check, "")
}

// scenPartial fails a job whose policy gives only max_attempts 2.
func scenPartial(ctx context.Context, e *env) {
	const check = "http-partial-policy"
	_, id, err := e.start(ctx, "partial", map[string]any{"max_attempts": 2})
	if err != nil {
		e.errored(err, check)
		return
	}
	a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", 1))
	if err != nil {
		e.errored(err, check)
		return
	}
	def := retry{max: 2, initial: time.Second, coef: 2, maxIv: 5 * time.Minute, jitter: true}
	if bad := e.retried(ex, a, 1, def); bad != "" {
		e.fail(check, "{max_attempts: 2}, attempt 1: %s (the defaults: PT1S, jitter)", bad)
		return
	}
	if !is(a.MaxAttempts, 2) {
		e.fail(check, "{max_attempts: 2}: the FAIL answer has max_attempts %s", intOr(a.MaxAttempts))
		return
	}
	e.pass(check, "") // the job is left retryable on its own queue
}

// scenHistory12 fails a job of 12 attempts 12 times, 2ms apart, and reads
// its error history (RET-15: at least the 10 most recent entries).
func scenHistory12(ctx context.Context, e *env) {
	const check = "http-history-10"
	pol := retry{max: 12, initial: 2 * ms, coef: 1, maxIv: 2 * ms}
	q, id, err := e.start(ctx, "history", pol.wire(e))
	if err != nil {
		e.errored(err, check)
		return
	}
	for n := 1; n <= pol.max; n++ {
		a, _, err := e.nackOK(ctx, id, e.failWith(fmt.Sprintf("external.step_%d", n), n))
		if err != nil {
			e.errored(err, check)
			return
		}
		if n == pol.max {
			break
		}
		if a.State != "retryable" {
			e.errored(fmt.Errorf("live: the FAIL of attempt %d of %d answered state %q, so the history could not be filled (see http-attempts)", n, pol.max, a.State), check)
			return
		}
		next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
		if _, err := e.await(ctx, q, id, next, 0); err != nil {
			e.errored(err, check)
			return
		}
	}
	j, err := e.c.info(ctx, id)
	if err != nil {
		e.errored(err, check)
		return
	}
	h := j.errorList()
	if len(h) < 10 {
		e.fail(check, "after 12 failures the job keeps %d error history entries, want at least 10", len(h))
		return
	}
	for i, x := range h[len(h)-10:] {
		att := i + 3
		if !is(x.Attempt, att) || (e.sendsType() && x.Type != fmt.Sprintf("external.step_%d", att)) {
			e.fail(check, "the %d-th most recent error history entry has attempt %s, type %q; want attempt %d, type external.step_%d", 10-i, intOr(x.Attempt), trunc(x.Type, 64), att, att)
			return
		}
	}
	e.pass(check, "")
}

// scenDeadLetter spends two attempts under dead_letter, then retries the
// dead letter and fails it once more.
func scenDeadLetter(ctx context.Context, e *env) {
	ids := []string{"http-dead-letter", "http-dead-letter-retry"}
	pol := retry{max: 2, initial: 20 * ms, coef: 2, maxIv: time.Second, dead: true}
	q, id, err := e.start(ctx, "dead", pol.wire(e))
	if err != nil {
		e.errored(err, ids...)
		return
	}
	a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", 1))
	if err != nil {
		e.errored(err, ids...)
		return
	}
	if a.State != "retryable" || !is(a.Attempt, 1) {
		e.fail("http-attempts", "the FAIL of attempt 1 of 2 answered state %q, attempt %s", a.State, intOr(a.Attempt))
		e.errored(errors.New("live: the job was not retried"), ids...)
		return
	}
	_, next := e.judgeDelay(ex, a, 20*ms, 20*ms)
	if _, err := e.await(ctx, q, id, next, 0); err != nil {
		e.errored(err, ids...)
		return
	}
	a, _, err = e.nackOK(ctx, id, e.failWith("external.timeout", 2))
	if err != nil {
		e.errored(err, ids...)
		return
	}
	if a.State != "discarded" || !is(a.Attempt, 2) {
		e.fail("http-dead-letter", "the FAIL of the last attempt answered state %q, attempt %s; want discarded, 2", a.State, intOr(a.Attempt))
	}
	dl, err := e.c.deadLetterIDs(ctx, q)
	if err != nil {
		e.errored(err, ids...)
		return
	}
	if !dl[id] {
		e.fail("http-dead-letter", "the exhausted job is not listed by GET /ojs/v1/dead-letter?queue=%s", q)
		e.notRun("http-dead-letter-retry", "the job never reached the dead letter queue")
		return
	}
	e.pass("http-dead-letter", "")
	if err := e.c.deadLetterRetry(ctx, id); err != nil {
		e.errored(err, "http-dead-letter-retry")
		return
	}
	if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
		e.fail("http-dead-letter-retry", "after the dead letter retry: %v", err)
		return
	}
	a, _, err = e.nackOK(ctx, id, e.failWith("external.timeout", 1))
	if err != nil {
		e.errored(err, "http-dead-letter-retry")
		return
	}
	if a.State != "retryable" || !is(a.Attempt, 1) {
		e.fail("http-dead-letter-retry", "the first FAIL after the dead letter retry answered state %q, attempt %s; want retryable, 1 (the attempt count is reset)", a.State, intOr(a.Attempt))
		return
	}
	e.pass("http-dead-letter-retry", "")
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
			q, id, err := e.start(ctx, "jitter", jb.pol.wire(e))
			if err != nil {
				e.errored(err, jb.check)
				return
			}
			a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", 1))
			if err != nil {
				e.errored(err, jb.check)
				return
			}
			if a.State != "retryable" {
				e.fail(jb.check, "the FAIL of attempt 1 of 2 answered state %q, want retryable", a.State)
				return
			}
			lo, hi := jb.pol.bounds(1)
			bad, next := e.judgeDelay(ex, a, lo, hi)
			if bad != "" {
				e.fail(jb.check, "%s (jitter on, initial_interval %v, max_interval %v)", bad, jb.pol.initial, jb.pol.maxIv)
				return
			}
			// A sample shows jitter when its delay window excludes the base
			// delay; it can when the window is narrow (a tenth of the
			// jitter range).
			dlo, dhi := e.delayRange(ex, next)
			mu.Lock()
			if dhi < jb.pol.initial || dlo > jb.pol.initial {
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

// nonRetryableCases are the failures of scenNonRetryable: each job (5
// attempts, on_exhaustion dead_letter when dead) fails once with typ.
var nonRetryableCases = []struct {
	check    string
	patterns []string
	typ      string
	retried  bool
	dead     bool
}{
	{"http-nonretryable-exact", []string{"validation.payload_invalid"}, "validation.payload_invalid", false, false},
	{"http-nonretryable-prefix", []string{"auth.*"}, "auth.token_expired", false, false},
	{"http-nonretryable-prefix", []string{"auth.*"}, "auth.token.revoked", false, false},
	{"http-prefix-boundary", []string{"auth.*"}, "authx", true, false},
	{"http-prefix-boundary", []string{"auth.*"}, "auth", true, false},
	{"http-prefix-boundary", []string{"auth.*"}, "external.auth.failure", true, false},
	{"http-exact-literal", []string{"a.b"}, "axb", true, false},
	{"http-nonretryable-dead-letter", []string{"auth.*"}, "auth.revoked", false, true},
}

// scenNonRetryable fails jobs once with types that do and do not match
// their policy's non_retryable_errors.
func scenNonRetryable(ctx context.Context, e *env) {
	var wg sync.WaitGroup
	for _, tc := range nonRetryableCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pol := retry{max: 5, initial: 20 * ms, coef: 2, maxIv: time.Second, nonRetry: tc.patterns, dead: tc.dead}
			q, id, err := e.start(ctx, "nonretry", pol.wire(e))
			if err != nil {
				e.errored(err, tc.check)
				return
			}
			a, ex, err := e.nackOK(ctx, id, e.failWith(tc.typ, 1))
			if err != nil {
				if tc.check == "http-nonretryable-exact" || tc.check == "http-nonretryable-prefix" {
					e.errored(fmt.Errorf("%w (for a server that refuses error.type: --error-type-field=code)", err), tc.check)
					return
				}
				e.errored(err, tc.check)
				return
			}
			switch {
			case tc.retried:
				if bad := e.retried(ex, a, 1, pol); bad != "" {
					e.fail(tc.check, "non_retryable_errors %q, error type %q (no match): %s", tc.patterns, tc.typ, bad)
					return
				}
				e.pass(tc.check, "")
			case !tc.dead:
				if a.State != "discarded" || !is(a.Attempt, 1) {
					e.fail(tc.check, "non_retryable_errors %q, error type %q, attempt 1 of 5: state %q, attempt %s; want discarded, 1", tc.patterns, tc.typ, a.State, intOr(a.Attempt))
					return
				}
				e.pass(tc.check, "")
			default:
				judgeNonRetryableDead(ctx, e, q, id, a)
			}
		}()
	}
	wg.Wait()
}

// judgeNonRetryableDead judges a non-retryable failure under dead_letter
// by the reading asked for (RK-115).
func judgeNonRetryableDead(ctx context.Context, e *env, q, id string, a *nackAnswer) {
	const check = "http-nonretryable-dead-letter"
	if a.State != "discarded" {
		e.fail(check, "non-retryable failure at attempt 1 of 5: state %q, want discarded (in the dead letter queue or not)", a.State)
		return
	}
	dl, err := e.c.deadLetterIDs(ctx, q)
	if err != nil {
		e.errored(err, check)
		return
	}
	switch {
	case dl[id]:
		e.pass(check, "follows the retry spec (dead letter)")
	case e.cfg.nrDiscards:
		e.pass(check, "follows the binding's L1-RET-003 (discarded, no dead letter; --nonretryable-discards)")
	default:
		e.fail(check, "discarded without a dead letter, as the binding's L1-RET-003 has it; the retry spec applies on_exhaustion (dead_letter). --nonretryable-discards accepts this reading")
	}
}

// codeCases are the failures of scenCodes: a job of 5 attempts, under
// on_exhaustion dead_letter unless the code is DEAD_LETTER (so that the
// code must win either way), fails once with code; want state and dead
// letter.
var codeCases = []struct {
	check, code, state string
	dead               bool
}{
	{"http-code-retry", "RETRY", "retryable", false},
	{"http-code-discard", "DISCARD", "discarded", false},
	{"http-code-fail", "FAIL", "discarded", false},
	{"http-code-dead-letter", "DEAD_LETTER", "discarded", true},
}

// scenCodes fails jobs once with each handler code of the retry spec.
func scenCodes(ctx context.Context, e *env) {
	all := []string{"http-code-retry", "http-code-discard", "http-code-fail", "http-code-dead-letter"}
	if !e.cfg.handlerCodes || !e.sendsType() {
		for _, id := range all {
			e.notRun(id, "handler codes not sent (--handler-codes=false, or --error-type-field=code; RK-112)")
		}
		return
	}
	var wg sync.WaitGroup
	for _, tc := range codeCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// dead_letter for DISCARD and FAIL, discard for DEAD_LETTER: the
			// code must win over on_exhaustion either way.
			pol := retry{max: 5, initial: 20 * ms, coef: 2, maxIv: time.Second, dead: !tc.dead}
			q, id, err := e.start(ctx, "code", pol.wire(e))
			if err != nil {
				e.errored(err, tc.check)
				return
			}
			f := e.failWith("external.declined", 1)
			f.Code = tc.code
			a, ex, err := e.c.nack(ctx, id, f)
			if err != nil {
				e.errored(err, tc.check)
				return
			}
			if a == nil {
				if ex != nil && ex.status >= 400 && ex.status < 500 {
					e.notRun(tc.check, fmt.Sprintf("the server rejects error.code %q with HTTP %d (the binding's code catalogue, RK-112)", tc.code, ex.status))
					return
				}
				e.errored(errFromStatus(ex), tc.check)
				return
			}
			if a.State != tc.state {
				e.fail(tc.check, "code %s at attempt 1 of 5: state %q, want %s", tc.code, a.State, tc.state)
				return
			}
			if tc.state == "retryable" {
				if bad := e.retried(ex, a, 1, pol); bad != "" {
					e.fail(tc.check, "code %s at attempt 1 of 5: %s", tc.code, bad)
					return
				}
			}
			if tc.state == "discarded" {
				dl, err := e.c.deadLetterIDs(ctx, q)
				if err != nil {
					e.errored(err, tc.check)
					return
				}
				if dl[id] != tc.dead {
					e.fail(tc.check, "code %s: listed in the dead letter queue: %v, want %v", tc.code, dl[id], tc.dead)
					return
				}
			}
			e.pass(tc.check, "")
		}()
	}
	wg.Wait()
}

// visibility is the reservation of the visibility-timeout and heartbeat
// scenarios.
const visibility = 80 * ms

// scenVisibility lets a two-attempt job's reservation expire twice.
func scenVisibility(ctx context.Context, e *env) {
	const check = "http-visibility-timeout"
	pol := retry{max: 2, initial: 20 * ms, coef: 2, maxIv: time.Second}
	q := e.queue("visibility")
	id, err := e.c.push(ctx, q, "retrykit.live.visibility", pol.wire(e))
	if err != nil {
		e.errored(err, check)
		return
	}
	f, err := e.await(ctx, q, id, time.Time{}, visibility)
	if err != nil {
		e.errored(err, check)
		return
	}
	// The reservation ends visibility after the fetch, on the server's
	// clock; the job may come back at once or after a backoff delay
	// (RK-118), never before.
	reserved := f.at
	if reserved.IsZero() {
		reserved, _, _ = e.c.window(f.ex)
	}
	g, err := e.awaitOpt(ctx, q, id, reserved.Add(visibility), visibility, false)
	if err != nil {
		e.fail(check, "the job did not come back after its reservation expired: %v", err)
		return
	}
	if g.job.Attempt != nil && f.job.Attempt != nil && *g.job.Attempt != *f.job.Attempt+1 {
		e.fail(check, "the delivery after the expiry has attempt %d, the first had %d: the expiry did not count as an attempt", *g.job.Attempt, *f.job.Attempt)
		return
	}
	// Let the second reservation expire too: with max_attempts 2 the job is
	// then exhausted.
	deadline := time.Now().Add(visibility + e.cfg.lateBound)
	for {
		j, err := e.c.info(ctx, id)
		if err != nil {
			e.errored(err, check)
			return
		}
		if j.State == "discarded" {
			break
		}
		if j.State == "available" || j.State == "scheduled" || j.State == "retryable" {
			if h, _ := e.c.fetch(ctx, q, visibility); h != nil {
				e.fail(check, "after two expired reservations of a job with max_attempts 2 it was handed out a third time (attempt %s)", intOr(h.job.Attempt))
				return
			}
		}
		if time.Now().After(deadline) {
			e.fail(check, "two reservations of a job with max_attempts 2 expired, yet %v later its state is %q, want discarded", e.cfg.lateBound, j.State)
			return
		}
		select {
		case <-ctx.Done():
			e.errored(ctx.Err(), check)
			return
		case <-time.After(5 * e.cfg.poll):
		}
	}
	e.pass(check, "")
}

// beatVisibility is the reservation the heartbeat scenario extends, every
// beatVisibility/8.
const beatVisibility = time.Second

// errStalled reports that the checker itself paused for longer than a
// check can tolerate (an overloaded machine), so the check is retried.
var errStalled = errors.New("live: the checker paused too long to judge")

// scenHeartbeat keeps a job reserved by heartbeats for two reservation
// periods while another worker polls its queue. A run in which the
// checker itself paused for half a reservation between heartbeats (an
// overloaded machine) proves nothing and is played again, up to 3 times.
func scenHeartbeat(ctx context.Context, e *env) {
	const check = "http-heartbeat"
	var err error
	for try := 0; try < 3; try++ {
		if err = playHeartbeat(ctx, e); !errors.Is(err, errStalled) {
			break
		}
	}
	if err != nil {
		e.errored(err, check)
	}
}

// playHeartbeat plays the heartbeat scenario once; it records a pass or a
// failure and returns an error when nothing could be judged.
func playHeartbeat(ctx context.Context, e *env) error {
	const check = "http-heartbeat"
	const visibility = beatVisibility
	q := e.queue("heartbeat")
	id, err := e.c.push(ctx, q, "retrykit.live.heartbeat", retry{max: 3, initial: 20 * ms, coef: 2, maxIv: time.Second}.wire(e))
	if err != nil {
		return err
	}
	if _, err := e.await(ctx, q, id, time.Time{}, visibility); err != nil {
		return err
	}
	lastBeat := time.Now() // when the last extension was sent (or the fetch answered)
	stalled := func() bool { return time.Since(lastBeat) > visibility/2 }
	end := time.Now().Add(2 * visibility)
	for time.Now().Before(end) {
		if time.Since(lastBeat) >= visibility/8 {
			if stalled() {
				return errStalled
			}
			sent := time.Now()
			if err := e.c.heartbeat(ctx, id, visibility); err != nil {
				if stalled() {
					return errStalled
				}
				if j, ierr := e.c.info(ctx, id); ierr == nil {
					err = fmt.Errorf("%w (INFO: state %s, attempt %s)", err, j.State, intOr(j.Attempt))
				}
				e.fail(check, "a heartbeat %v after the previous one: %v", sent.Sub(lastBeat).Round(time.Millisecond), err)
				return nil
			}
			lastBeat = sent
		}
		f, err := e.c.fetch(ctx, q, visibility)
		if err != nil {
			return err
		}
		if f != nil {
			if stalled() {
				return errStalled
			}
			e.fail(check, "the job was handed out again (attempt %s, %v after the last heartbeat) while its worker sent heartbeats every %v extending by %v", intOr(f.job.Attempt), time.Since(lastBeat).Round(time.Millisecond), visibility/8, visibility)
			return nil
		}
		time.Sleep(e.cfg.poll)
	}
	if stalled() {
		return errStalled
	}
	if err := e.c.ack(ctx, id); err != nil {
		e.fail(check, "ACK after %v of heartbeats: %v", 2*visibility, err)
		return nil
	}
	e.pass(check, "")
	return nil
}

// scenDefault fails a job pushed without a policy once.
func scenDefault(ctx context.Context, e *env) {
	const check = "http-default-policy"
	_, id, err := e.start(ctx, "default", nil)
	if err != nil {
		e.errored(err, check)
		return
	}
	a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", 1))
	if err != nil {
		e.errored(err, check)
		return
	}
	def := retry{max: 3, initial: time.Second, coef: 2, maxIv: 5 * time.Minute, jitter: true}
	if a.State != "retryable" || !is(a.Attempt, 1) || !is(a.MaxAttempts, 3) {
		e.fail(check, "the first FAIL answered state %q, attempt %s, max_attempts %s; want retryable, 1, 3", a.State, intOr(a.Attempt), intOr(a.MaxAttempts))
		return
	}
	lo, hi := def.bounds(1)
	if bad, _ := e.judgeDelay(ex, a, lo, hi); bad != "" {
		e.fail(check, "%s (the default policy)", bad)
		return
	}
	e.pass(check, "")
	// The job is left retryable; its queue is unique, so nobody fetches it.
}

// judgeReading runs one reading check: a policy that the retry spec's
// reading rejects at PUSH and the other reading honours with the given
// delay after attempt n.
func judgeReading(ctx context.Context, e *env, check, name string, pol map[string]any, n int, honoured, ignored time.Duration) {
	q := e.queue(name)
	id, status, err := e.c.pushStatus(ctx, q, "retrykit.live."+name, pol)
	if err != nil {
		e.errored(err, check)
		return
	}
	if id == "" {
		e.pass(check, fmt.Sprintf("follows the spec reading (PUSH rejected with HTTP %d)", status))
		return
	}
	if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
		e.errored(err, check)
		return
	}
	for i := 1; i <= n; i++ {
		a, ex, err := e.nackOK(ctx, id, e.failWith("external.timeout", i))
		if err != nil {
			e.errored(err, check)
			return
		}
		if a.State != "retryable" {
			e.fail(check, "the FAIL of attempt %d answered state %q, want retryable", i, a.State)
			return
		}
		if i < n {
			next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
			if _, err := e.await(ctx, q, id, next, 0); err != nil {
				e.errored(err, check)
				return
			}
			continue
		}
		if bad, _ := e.judgeDelay(ex, a, honoured, honoured); bad != "" {
			if ig, _ := e.judgeDelay(ex, a, ignored, ignored); ig == "" {
				e.fail(check, "PUSH accepted the policy and the field was ignored: after attempt %d %s", i, bad)
				return
			}
			e.fail(check, "PUSH accepted the policy, and after attempt %d %s", i, bad)
			return
		}
		e.pass(check, "follows the binding reading (honoured)")
	}
}

// scenIntervalMs pushes a policy with initial_interval_ms 30 instead of
// initial_interval (RK-113).
func scenIntervalMs(ctx context.Context, e *env) {
	pol := retry{max: 3, coef: 2, maxIv: time.Second, extra: map[string]any{"initial_interval_ms": 30}, omit: []string{"initial_interval"}}.raw()
	judgeReading(ctx, e, "http-interval-ms", "interval-ms", pol, 1, 30*ms, time.Second)
}

// scenBackoffType pushes a policy with backoff_type constant (RK-114):
// after attempt 2 the delay is 20ms when honoured, 40ms when ignored.
func scenBackoffType(ctx context.Context, e *env) {
	pol := retry{max: 3, initial: 20 * ms, coef: 2, maxIv: time.Second, extra: map[string]any{"backoff_type": "constant"}}.raw()
	judgeReading(ctx, e, "http-backoff-type", "backoff-type", pol, 2, 20*ms, 40*ms)
}

// checkServer probes the server once before the scenarios: a transport
// error or a health answer other than 200 ends the run with an error.
func (c *client) checkServer(ctx context.Context) error {
	ex, err := c.do(ctx, "HEALTH", http.MethodGet, "/health", nil)
	if err != nil {
		return err
	}
	if ex.status != http.StatusOK {
		return unexpected("HEALTH", ex)
	}
	return nil
}
