// Scenarios of the readings where the HTTP binding contradicts the retry
// spec (RK-113, RK-114).

package live

import (
	"context"
	"fmt"
	"time"
)

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
		fl := e.failWith("external.timeout", i)
		a, ex, err := e.nackOK(ctx, id, fl)
		if err != nil {
			e.errored(err, check)
			return
		}
		e.recordFail(check, pol, fl, i, ex, a, nil)
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
		if bad, _ := e.judgeDelay(check, ex, a, honoured, honoured); bad != "" {
			if ig, _ := e.judgeDelay("", ex, a, ignored, ignored); ig == "" {
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
