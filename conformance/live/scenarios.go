package live

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
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
	{"exhaust-discard", []string{"http-attempts", "http-attempt-absolute", "http-next-attempt-at", "http-cap", "http-discard", "http-history"}, scenExhaustDiscard},
	{"exhaust-dead-letter", []string{"http-attempts", "http-dead-letter", "http-dead-letter-content", "http-dead-letter-retry"}, scenDeadLetter},
	{"jitter", []string{"http-jitter-range", "http-jitter-cap"}, scenJitter},
	{"history-12", []string{"http-history-10"}, scenHistory12},
	{"cap-before-jitter", []string{"http-cap-before-jitter"}, scenCapBeforeJitter},
	{"coefficient-fraction", []string{"http-coefficient-fraction"}, scenCoefficientFraction},
	{"max-attempts-one", []string{"http-max-attempts-one"}, scenMaxAttemptsOne},
	{"partial-policy", []string{"http-partial-policy"}, scenPartial},
	{"non-retryable", []string{"http-nonretryable-exact", "http-nonretryable-prefix", "http-prefix-boundary", "http-exact-literal", "http-match-glob", "http-match-message", "http-match-case", "http-nonretryable-dead-letter"}, scenNonRetryable},
	{"handler-codes", []string{"http-code-retry", "http-code-discard", "http-code-fail", "http-code-dead-letter"}, scenCodes},
	{"visibility-timeout", []string{"http-visibility-timeout"}, scenVisibility},
	{"heartbeat", []string{"http-heartbeat"}, scenHeartbeat},
	{"default-policy", []string{"http-default-policy"}, scenDefault},
	{"interval-ms", []string{"http-interval-ms"}, scenIntervalMs},
	{"backoff-type", []string{"http-backoff-type"}, scenBackoffType},
	{"partial-fields", []string{"http-partial-max-attempts", "http-partial-initial-interval", "http-partial-coefficient", "http-partial-max-interval", "http-partial-jitter", "http-partial-on-exhaustion"}, scenPartialFields},
	{"latency", []string{"http-promoted", "http-not-early"}, scenLatency},
	{"strategies", []string{"http-strategy-none", "http-strategy-linear", "http-strategy-exponential", "http-strategy-polynomial"}, scenStrategies},
	{"jitter-distribution", []string{"http-jitter-distribution"}, scenJitterDistribution},
	{"relative-lateness", []string{"http-promoted-relative"}, scenRelativeLateness},
	{"location", []string{"http-location"}, scenLocation},
	{"paused-queue", []string{"http-paused-queue"}, scenPaused},
	{"rate-limit", []string{"http-rate-limit-attempt"}, scenRateLimit},
}

// start pushes a job with policy r (nil for none) to a fresh queue and
// fetches it: the first attempt, active.
func (e *env) start(ctx context.Context, name string, r map[string]any) (queue, id string, err error) {
	queue = e.queue(name)
	if id, err = e.c.push(ctx, queue, "retrykit.live."+name, r); err != nil {
		return "", "", err
	}
	f, err := e.await(ctx, queue, id, time.Time{}, 0)
	if err != nil {
		return "", "", err
	}
	e.judgeAbsolute(servermodel.FetchAttempt, 1, f.job.Attempt, "the first FETCH")
	return queue, id, nil
}

// judgeAbsolute judges an attempt shown by a FETCH, INFO or error history
// entry against n, the 1-based attempt it must be (RK-200), and keeps the
// observation.
func (e *env) judgeAbsolute(k servermodel.Kind, n int, shown *int, what string) {
	const check = "http-attempt-absolute"
	e.recordAttempt(check, k, n, shown)
	if !is(shown, n) {
		e.fail(check, "%s shows attempt %s, want %d (attempts are 1-based: the first execution is attempt 1)", what, intOr(shown), n)
		return
	}
	e.pass(check, "")
}

// startFailed is start followed by a FAIL of the first attempt with error
// type t, answered 200. On any error it records the error against ids and
// returns ok false.
func (e *env) startFailed(ctx context.Context, name string, r map[string]any, t string, ids ...string) (queue, id string, a *nackAnswer, ex *exchange, ok bool) {
	queue, id, err := e.start(ctx, name, r)
	if err == nil {
		a, ex, err = e.nackOK(ctx, id, e.failWith(t, 1))
	}
	if err != nil {
		e.errored(err, ids...)
		return "", "", nil, nil, false
	}
	return queue, id, a, ex, true
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
// within the policy's bounds; else what differs. The delay is judged for
// check (see judgeDelay; "" for a check whose subject is not the delay).
func (e *env) retried(check string, ex *exchange, a *nackAnswer, n int, pol retry) string {
	if a.State != "retryable" {
		return fmt.Sprintf("state %q, want retryable", a.State)
	}
	if !is(a.Attempt, n) {
		return fmt.Sprintf("retryable, but attempt %s, want %d", intOr(a.Attempt), n)
	}
	lo, hi := pol.bounds(n)
	if bad, _ := e.judgeDelay(check, ex, a, lo, hi); bad != "" {
		return "retryable, but " + bad
	}
	return ""
}

// failRetried waits for the retry that a (the answer to the FAIL of
// attempt n-1 of job id in queue q) promised, fails attempt n with a
// timeout and records the answer under check, policy pol. ok is false when
// the check has already ended: an error was recorded.
func (e *env) failRetried(ctx context.Context, check string, pol map[string]any, q, id string, a *nackAnswer, n int) (*nackAnswer, *exchange, bool) {
	next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
	if _, msg := e.tooFar(id, next); !next.IsZero() && msg != "" {
		// the delay announced (recorded by the caller) is the finding, not
		// a lateness: the check fails on it alone
		e.fail(check, "after attempt %d: %s", n-1, msg)
		return nil, nil, false
	}
	if _, err := e.await(ctx, q, id, next, 0); err != nil {
		e.errored(err, check)
		return nil, nil, false
	}
	fl := e.failWith("external.timeout", n)
	a, ex, err := e.nackOK(ctx, id, fl)
	if err != nil {
		e.errored(err, check)
		return nil, nil, false
	}
	e.recordFail(check, pol, fl, n, ex, a, nil)
	return a, ex, true
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
