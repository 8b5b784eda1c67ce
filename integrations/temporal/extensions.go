package temporalretry

import (
	"go.temporal.io/sdk/temporal"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The retry extensions (docs/extensions.md) on Temporal's own mechanisms:
//
//   - a requested delay, given the retrykit way (errmatch.WithRetryAfter)
//     or Temporal's own (an ApplicationError with NextRetryDelay), is
//     decided by the policy and returned as NextRetryDelay, bounded by
//     max_retry_after;
//   - an error rule's backoff is the NextRetryDelay of its error type, and
//     its max_attempts the limit: the workflow side's RetryPolicy allows the
//     most attempts of the policy and its rules, and the interceptor ends
//     the activity at the limit of the rule in force;
//   - a snooze (errmatch.Snoozed) is a NextRetryDelay of min(snooze,
//     max_snooze): Temporal counts every failed attempt and keeps no count
//     the interceptor could read, so the snooze spends the attempt.

// requestOf is the handler's request in err: errmatch's, or else the
// NextRetryDelay of a retryable ApplicationError the activity returned.
func requestOf(err error, app *temporal.ApplicationError) errmatch.Request {
	if r := errmatch.RequestOf(err); r.Kind != errmatch.NoRequest {
		return r
	}
	if app != nil && !app.NonRetryable() && app.NextRetryDelay() > 0 {
		return errmatch.Request{Kind: errmatch.RetryAfter, Delay: app.NextRetryDelay()}
	}
	return errmatch.Request{}
}

// maxAttemptsOf is the most attempts the policy or one of its error rules
// allows.
func maxAttemptsOf(p *policy.Policy) int {
	s := p.Spec()
	m := s.MaxAttempts
	for _, r := range s.ErrorRules {
		m = max(m, r.MaxAttempts)
	}
	return m
}
