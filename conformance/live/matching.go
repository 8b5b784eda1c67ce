// Scenarios of non_retryable_errors matching and handler codes.

package live

import (
	"context"
	"fmt"
	"sync"
	"time"
)

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
