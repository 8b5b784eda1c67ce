// Scenarios of non_retryable_errors matching and handler codes.

package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// nonRetryableCases are the failures of scenNonRetryable: each job (5
// attempts, on_exhaustion dead_letter when dead) fails once with typ.
var nonRetryableCases = []struct {
	check    string
	patterns []string
	typ      string
	retried  bool
	dead     bool
	msg      string // the error message, when it matters
}{
	{"http-nonretryable-exact", []string{"validation.payload_invalid"}, "validation.payload_invalid", false, false, ""},
	{"http-nonretryable-prefix", []string{"auth.*"}, "auth.token_expired", false, false, ""},
	{"http-nonretryable-prefix", []string{"auth.*"}, "auth.token.revoked", false, false, ""},
	{"http-prefix-boundary", []string{"auth.*"}, "authx", true, false, ""},
	{"http-prefix-boundary", []string{"auth.*"}, "auth", true, false, ""},
	{"http-prefix-boundary", []string{"auth.*"}, "external.auth.failure", true, false, ""},
	{"http-exact-literal", []string{"a.b"}, "axb", true, false, ""},
	{"http-nonretryable-dead-letter", []string{"auth.*"}, "auth.revoked", false, true, ""},
	{"http-match-glob", []string{"auth*"}, "authx", true, false, ""},
	{"http-match-glob", []string{"auth*"}, "auth", true, false, ""},
	{"http-match-glob", []string{"a?b"}, "axb", true, false, ""},
	{"http-match-message", []string{"external.down"}, "external.timeout", true, false, "external.down"},
	{"http-match-message", []string{"db.*"}, "external.timeout", true, false, "db.connection_lost"},
	{"http-match-case", []string{"Auth.Failed"}, "auth.failed", true, false, ""},
	{"http-match-case", []string{"Auth.*"}, "auth.x", true, false, ""},
}

// literalOnly reports whether a check's patterns are ones the retry spec
// reads only as literals (globs, upper case), so that a server may also
// reject them at PUSH.
func literalOnly(check string) bool { return check == "http-match-glob" || check == "http-match-case" }

// scenNonRetryable fails jobs once with types that do and do not match
// their policy's non_retryable_errors.
func scenNonRetryable(ctx context.Context, e *env) {
	var wg sync.WaitGroup
	for _, tc := range nonRetryableCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pol := retry{max: 5, initial: 20 * ms, coef: 2, maxIv: time.Second, nonRetry: tc.patterns, dead: tc.dead}
			wire := pol.wire(e)
			q := e.queue("nonretry")
			id, status, err := e.c.pushStatus(ctx, q, "retrykit.live.nonretry", wire)
			switch {
			case err != nil:
				e.errored(err, tc.check)
				return
			case id == "" && literalOnly(tc.check):
				e.pass(tc.check, fmt.Sprintf("non_retryable_errors %q rejected at PUSH (HTTP %d)", tc.patterns, status))
				return
			case id == "":
				e.errored(fmt.Errorf("live: PUSH of non_retryable_errors %q answered HTTP %d", tc.patterns, status), tc.check)
				return
			}
			f, err := e.await(ctx, q, id, time.Time{}, 0)
			if err != nil {
				e.errored(err, tc.check)
				return
			}
			e.judgeAbsolute(servermodel.FetchAttempt, 1, f.job.Attempt, "the first FETCH")
			fl := e.failWith(tc.typ, 1)
			if tc.msg != "" {
				fl.Message = tc.msg
			}
			a, ex, err := e.nackOK(ctx, id, fl)
			if err != nil {
				if tc.check == "http-nonretryable-exact" || tc.check == "http-nonretryable-prefix" {
					e.errored(fmt.Errorf("%w (for a server that refuses error.type: --error-type-field=code)", err), tc.check)
					return
				}
				e.errored(err, tc.check)
				return
			}
			if !tc.dead {
				e.recordFail(tc.check, wire, fl, 1, ex, a, nil)
			}
			switch {
			case tc.retried:
				// the subject is the match, not the delay: a delay outside
				// its bounds fails the check, a wide window inside them
				// does not make it inconclusive (RK-395 holds delay checks)
				if bad := e.retried("", ex, a, 1, pol); bad != "" {
					if tc.msg != "" {
						e.fail(tc.check, "non_retryable_errors %q, error type %q, message %q (only the type is matched): %s", tc.patterns, tc.typ, tc.msg, bad)
						return
					}
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
				judgeNonRetryableDead(ctx, e, q, id, a, wire, fl, ex)
			}
		}()
	}
	wg.Wait()
}

// judgeNonRetryableDead judges a non-retryable failure under dead_letter
// by the reading asked for (RK-115).
func judgeNonRetryableDead(ctx context.Context, e *env, q, id string, a *nackAnswer, wire map[string]any, fl failure, ex *exchange) {
	const check = "http-nonretryable-dead-letter"
	if a.State != "discarded" {
		e.recordFail(check, wire, fl, 1, ex, a, nil)
		e.fail(check, "non-retryable failure at attempt 1 of 5: state %q, want discarded (in the dead letter queue or not)", a.State)
		return
	}
	dl, err := e.listed(ctx, q, id)
	if err != nil {
		e.errored(err, check)
		return
	}
	e.recordFail(check, wire, fl, 1, ex, a, &dl)
	switch {
	case dl:
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
			wire := pol.wire(e)
			q, id, err := e.start(ctx, "code", wire)
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
			var dl *bool
			if a.State == "discarded" {
				l, err := e.listed(ctx, q, id)
				if err != nil {
					e.errored(err, tc.check)
					return
				}
				dl = &l
			}
			e.recordFail(tc.check, wire, f, 1, ex, a, dl)
			if a.State != tc.state {
				e.fail(tc.check, "code %s at attempt 1 of 5: state %q, want %s", tc.code, a.State, tc.state)
				return
			}
			if tc.state == "retryable" {
				if bad := e.retried("", ex, a, 1, pol); bad != "" { // the subject is the code, as above
					e.fail(tc.check, "code %s at attempt 1 of 5: %s", tc.code, bad)
					return
				}
			}
			if tc.state == "discarded" {
				if *dl != tc.dead {
					e.fail(tc.check, "code %s: listed in the dead letter queue: %v, want %v", tc.code, *dl, tc.dead)
					return
				}
			}
			e.pass(tc.check, "")
		}()
	}
	wg.Wait()
}
