// Scenarios of a job failing through its attempts: exhaustion, the
// dead letter queue, the error history, the default and partial policies.

package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

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
	wire := pol.wire(e)
	var last *nackAnswer
	var lastEx *exchange
	for n := 1; n <= pol.max; n++ {
		fl := e.failWith("external.timeout", n)
		a, ex, err := e.nackOK(ctx, id, fl)
		if err != nil {
			e.errored(err, ids...)
			return
		}
		e.recordFail("http-attempts", wire, fl, n, ex, a, nil)
		if n < pol.max {
			check := "http-next-attempt-at"
			if n == 3 {
				check = "http-cap"
			}
			e.recordFail(check, wire, fl, n, ex, a, nil)
		}
		last, lastEx = a, ex
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
			for _, id := range []string{"http-next-attempt-at", "http-cap", "http-discard", "http-history"} {
				e.notRun(id, fmt.Sprintf("the job was not retried after attempt %d (see http-attempts), so later attempts could not be judged", n))
			}
			return
		}
		lo, hi := pol.bounds(n)
		check := "http-next-attempt-at"
		if n == 3 { // 20ms·4 = 80ms, capped at 50ms
			check = "http-cap"
		}
		bad, next := e.judgeDelay(check, ex, a, lo, hi)
		if bad != "" {
			e.fail(check, "after attempt %d: %s", n, bad)
		} else {
			e.pass(check, "")
		}
		if next.IsZero() {
			e.errored(errors.New("live: no next_attempt_at to wait for"), ids...)
			return
		}
		f, err := e.await(ctx, q, id, next, 0)
		if err != nil {
			// Every check of the lifecycle is left unjudged, not only the
			// later ones: a verdict needs the whole lifecycle.
			e.errored(err, ids...)
			return
		}
		e.judgeAbsolute(servermodel.FetchAttempt, n+1, f.job.Attempt, fmt.Sprintf("FETCH of delivery %d", n+1))
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
	// the INFO attempt is an observation of http-attempts too: a failure
	// there is not the FAIL answers' to explain
	e.recordAttempt("http-attempts", servermodel.InfoAttempt, pol.max, j.Attempt)
	if !is(j.Attempt, pol.max) {
		e.fail("http-attempts", "INFO after %d failed attempts: attempt %s", pol.max, intOr(j.Attempt))
	}
	e.judgeAbsolute(servermodel.InfoAttempt, pol.max, j.Attempt, fmt.Sprintf("INFO after %d failed attempts", pol.max))
	judgeHistory(e, j, pol.max, "external.timeout")
	dl, err := e.listed(ctx, q, id)
	if err == nil && last != nil {
		e.recordFail("http-discard", wire, e.failWith("external.timeout", pol.max), pol.max, lastEx, last, &dl)
	}
	switch {
	case err != nil:
		e.errored(err, "http-discard")
	case dl:
		e.fail("http-discard", "a job under on_exhaustion discard is listed in the dead letter queue")
	default:
		e.pass("http-discard", "")
	}
	if last != nil && last.State == "retryable" {
		// after the INFO and dead-letter readings, which judge the job as
		// its last attempt left it
		e.followPastMax(ctx, q, id, wire, pol.max, last)
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
		e.recordAttempt("http-history", servermodel.HistoryAttempt, i+1, x.Attempt)
		e.judgeAbsolute(servermodel.HistoryAttempt, i+1, x.Attempt, fmt.Sprintf("error history entry %d of %d", i+1, n))
	}
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
		fl := e.failWith("external.timeout", 1)
		a, ex, err := e.nackOK(ctx, id, fl)
		if err != nil {
			e.errored(err, check)
			return
		}
		e.recordFail(check, pol.wire(e), fl, 1, ex, a, nil)
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
	_, _, a, ex, ok := e.startFailed(ctx, "partial", map[string]any{"max_attempts": 2}, "external.timeout", check)
	if !ok {
		return
	}
	e.recordFail(check, map[string]any{"max_attempts": 2}, e.failWith("external.timeout", 1), 1, ex, a, nil)
	def := retry{max: 2, initial: time.Second, coef: 2, maxIv: 5 * time.Minute, jitter: true}
	if bad := e.retried(check, ex, a, 1, def); bad != "" {
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
			e.notRun(check, fmt.Sprintf("the FAIL of attempt %d of %d answered state %q, so the history could not be filled (see http-attempts)", n, pol.max, a.State))
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
	// RET-15 is the count kept: entries are told apart by their types,
	// not their numbers (a history numbered from 0 is http-history's
	// failure, not this one's; RK-204).
	if e.sendsType() {
		for i, x := range h[len(h)-10:] {
			att := i + 3
			if x.Type != fmt.Sprintf("external.step_%d", att) {
				e.fail(check, "the %d-th most recent error history entry has type %q, want external.step_%d (the failure of attempt %d)", 10-i, trunc(x.Type, 64), att, att)
				return
			}
		}
	}
	e.pass(check, fmt.Sprintf("keeps %d entries after 12 failures", len(h)))
}

// scenDeadLetter spends two attempts under dead_letter, then retries the
// dead letter and fails it once more.
func scenDeadLetter(ctx context.Context, e *env) {
	ids := []string{"http-dead-letter", "http-dead-letter-retry"}
	pol := retry{max: 2, initial: 20 * ms, coef: 2, maxIv: time.Second, dead: true}
	q, id, a, ex, ok := e.startFailed(ctx, "dead", pol.wire(e), "external.timeout", ids...)
	if !ok {
		return
	}
	if !is(a.Attempt, 1) {
		// the attempt shown is judged (and modelled) beside the dead letter
		e.recordFail("http-attempts", pol.wire(e), e.failWith("external.timeout", 1), 1, ex, a, nil)
		e.fail("http-attempts", "the FAIL of attempt 1 of 2 answered state %q, attempt %s", a.State, intOr(a.Attempt))
	}
	if a.State != "retryable" {
		if is(a.Attempt, 1) { // else recorded and failed just above
			e.recordFail("http-attempts", pol.wire(e), e.failWith("external.timeout", 1), 1, ex, a, nil)
			e.fail("http-attempts", "the FAIL of attempt 1 of 2 answered state %q, attempt %s", a.State, intOr(a.Attempt))
		}
		e.notRun("http-dead-letter", "the job was not retried (see http-attempts)")
		e.notRun("http-dead-letter-content", "the job was not retried (see http-attempts)")
		e.notRun("http-dead-letter-retry", "the job was not retried (see http-attempts)")
		return
	}
	_, next := e.judgeDelay("", ex, a, 20*ms, 20*ms) // only the time to await
	if _, err := e.await(ctx, q, id, next, 0); err != nil {
		e.errored(err, ids...)
		return
	}
	fl := e.failWith("external.timeout", 2)
	a, ex, err := e.nackOK(ctx, id, fl)
	if err != nil {
		e.errored(err, ids...)
		return
	}
	if a.State != "discarded" || !is(a.Attempt, 2) {
		e.fail("http-dead-letter", "the FAIL of the last attempt answered state %q, attempt %s; want discarded, 2", a.State, intOr(a.Attempt))
	}
	dl, err := e.listed(ctx, q, id)
	if err != nil {
		e.errored(err, ids...)
		return
	}
	e.recordFail("http-dead-letter", pol.wire(e), fl, 2, ex, a, &dl)
	if !dl {
		e.fail("http-dead-letter", "the exhausted job is not listed by GET /ojs/v1/dead-letter?queue=%s", q)
		e.notRun("http-dead-letter-content", "the job never reached the dead letter queue (see http-dead-letter)")
		e.notRun("http-dead-letter-retry", "the job never reached the dead letter queue")
		return
	}
	e.pass("http-dead-letter", "")
	judgeDeadLetterContent(ctx, e, q, id)
	if err := e.c.deadLetterRetry(ctx, id); err != nil {
		e.errored(err, "http-dead-letter-retry")
		return
	}
	if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
		e.fail("http-dead-letter-retry", "after the dead letter retry: %v", err)
		return
	}
	fl = e.failWith("external.timeout", 1)
	a, ex, err = e.nackOK(ctx, id, fl)
	if err != nil {
		e.errored(err, "http-dead-letter-retry")
		return
	}
	// the retried job starts over under its policy: attempt 1 of 2
	e.recordFail("http-dead-letter-retry", pol.wire(e), fl, 1, ex, a, nil)
	if a.State != "retryable" || !is(a.Attempt, 1) {
		e.fail("http-dead-letter-retry", "the first FAIL after the dead letter retry answered state %q, attempt %s; want retryable, 1 (the attempt count is reset)", a.State, intOr(a.Attempt))
		return
	}
	e.pass("http-dead-letter-retry", "")
}

// scenDefault fails a job pushed without a policy once.
func scenDefault(ctx context.Context, e *env) {
	const check = "http-default-policy"
	_, _, a, ex, ok := e.startFailed(ctx, "default", nil, "external.timeout", check)
	if !ok {
		return
	}
	e.recordFail(check, nil, e.failWith("external.timeout", 1), 1, ex, a, nil)
	def := retry{max: 3, initial: time.Second, coef: 2, maxIv: 5 * time.Minute, jitter: true}
	if a.State != "retryable" || !is(a.Attempt, 1) || !is(a.MaxAttempts, 3) {
		e.fail(check, "the first FAIL answered state %q, attempt %s, max_attempts %s; want retryable, 1, 3", a.State, intOr(a.Attempt), intOr(a.MaxAttempts))
		return
	}
	lo, hi := def.bounds(1)
	if bad, _ := e.judgeDelay(check, ex, a, lo, hi); bad != "" {
		e.fail(check, "%s (the default policy)", bad)
		return
	}
	e.pass(check, "")
	// The job is left retryable; its queue is unique, so nobody fetches it.
}

// judgeDeadLetterContent reads a dead-lettered job (INFO) and judges that
// it is the job as pushed (type, queue, args) with its full error history:
// one entry per failed attempt, in order, each with the type and message
// its FAIL reported.
func judgeDeadLetterContent(ctx context.Context, e *env, q, id string) {
	const check = "http-dead-letter-content"
	j, err := e.c.info(ctx, id)
	if err != nil {
		e.errored(err, check)
		return
	}
	var args []string
	if err := json.Unmarshal(j.Args, &args); err != nil || len(args) != 1 || args[0] != q || j.Type != "retrykit.live.dead" || j.Queue != q {
		e.fail(check, "the dead letter is not the job as pushed: type %q, queue %q, args %s; want type %q, queue %q, args [%q]",
			trunc(j.Type, 64), trunc(j.Queue, 64), trunc(string(j.Args), 64), "retrykit.live.dead", q, q)
		return
	}
	errs := j.errorList()
	if len(errs) != 2 {
		e.fail(check, "the dead letter carries %d error history entries after 2 failed attempts, want 2", len(errs))
		return
	}
	for i, x := range errs {
		want := e.failWith("external.timeout", i+1)
		if x.Message != want.Message || want.Type != "" && x.Type != want.Type {
			e.fail(check, "error history entry %d is type %q, message %q; want type %q, message %q (in the order of the failures)", i+1, trunc(x.Type, 64), trunc(x.Message, 80), want.Type, want.Message)
			return
		}
	}
	e.pass(check, "")
}

// pastMaxProbes is how many deliveries past max_attempts followPastMax
// fails at most: enough to tell exhaustion one, two or three attempts
// late apart.
const pastMaxProbes = 3

// followPastMax follows a job that its last attempt (max) left retryable:
// it fetches and fails each further delivery, up to pastMaxProbes, and
// records every FAIL answer under http-attempts, so that the diagnosis
// sees how many attempts past max_attempts the server retries instead of
// guessing. It judges nothing itself and stops quietly at the first
// answer that is not retryable, a retry not fetchable in time, or an
// error: the check has failed already.
func (e *env) followPastMax(ctx context.Context, q, id string, wire map[string]any, max int, a *nackAnswer) {
	for n := max + 1; n <= max+pastMaxProbes && a.State == "retryable"; n++ {
		next, err := parseTime("next_attempt_at", a.NextAttemptAt)
		if err != nil || next.IsZero() {
			return
		}
		deadline, far := e.tooFar(id, next)
		if far != "" {
			return
		}
		var f *fetched
		for f == nil {
			if f, err = e.c.fetch(ctx, q, 0); err != nil || (f != nil && f.job.ID != id) {
				return
			}
			if f == nil {
				if time.Now().After(deadline) {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(e.cfg.poll):
				}
			}
		}
		fl := e.failWith("external.timeout", n)
		var ex *exchange
		if a, ex, err = e.nackOK(ctx, id, fl); err != nil {
			return
		}
		e.recordFail("http-attempts", wire, fl, n, ex, a, nil)
	}
}

// scenCoefficientFraction fails a job three times under PT0.2S and
// backoff_coefficient 1.5, jitter off, max_interval PT10S: the delays are
// 200ms, 300ms and 450ms (the retry spec's §3.3 example uses 1.5). Every
// other check sends a whole coefficient, so a server that stores the
// coefficient as an integer (200ms thrice for 1, or 200, 400ms for 2)
// passed them all.
func scenCoefficientFraction(ctx context.Context, e *env) {
	const check = "http-coefficient-fraction"
	pol := retry{max: 4, initial: 200 * ms, coef: 1.5, maxIv: 10 * time.Second}
	wire := pol.wire(e)
	q, id, err := e.start(ctx, "coef-fraction", wire)
	if err != nil {
		e.errored(err, check)
		return
	}
	defer e.c.cancel(ctx, id)
	switch msg, err := e.failThrough(ctx, check, q, id, wire, 3, pol.bounds); {
	case err != nil:
		e.errored(err, check)
	case msg != "":
		e.fail(check, "backoff_coefficient 1.5, %s", msg)
	default:
		e.pass(check, "")
	}
}

// failThrough fails the active job id of queue q, pushed under the retry
// object wire, at attempts 1 to rounds: it records each FAIL answer for
// check, judges its delay against bounds(n) and awaits the retry before
// the next. It returns what was wrong ("" for nothing) or the error that
// stopped it.
func (e *env) failThrough(ctx context.Context, check, q, id string, wire map[string]any, rounds int, bounds func(n int) (time.Duration, time.Duration)) (string, error) {
	for n := 1; n <= rounds; n++ {
		fl := e.failWith("external.timeout", n)
		a, ex, err := e.nackOK(ctx, id, fl)
		if err != nil {
			return "", err
		}
		e.recordFail(check, wire, fl, n, ex, a, nil)
		if a.State != "retryable" {
			return fmt.Sprintf("the FAIL of attempt %d answered state %q, want retryable", n, a.State), nil
		}
		lo, hi := bounds(n)
		msg, next := e.judgeDelay(check, ex, a, lo, hi)
		if msg != "" {
			return fmt.Sprintf("after attempt %d: %s", n, msg), nil
		}
		if n == rounds {
			break
		}
		if _, err := e.await(ctx, q, id, next, 0); err != nil {
			return "", err
		}
	}
	return "", nil
}
