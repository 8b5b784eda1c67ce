package asynqretry

import (
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The retry extensions (docs/extensions.md) on asynq's own mechanisms:
//
//   - a snooze (errmatch.Snoozed) that the policy grants: the middleware
//     returns a [*SnoozeError], for which [Plugin.IsFailure] (asynq's
//     Config.IsFailure) says false, so asynq retries the task without
//     counting the retry, after the snooze's wait from RetryDelayFunc;
//   - a requested delay (errmatch.WithRetryAfter) and an error rule's own
//     backoff: RetryDelayFunc receives the handler's error, so
//     [Plugin.RetryDelay] decides with it.

// SnoozeError is what the middleware returns for a snooze the policy
// grants: asynq runs the task again after Delay without counting a retry
// (Plugin.IsFailure is false for it). It wraps the handler's error.
//
// The zero value snoozes for 0 with no cause. A SnoozeError is never
// mutated after it is returned.
type SnoozeError struct {
	Delay time.Duration
	Err   error
}

// Error returns "asynqretry: snoozed for DELAY: CAUSE".
func (e *SnoozeError) Error() string {
	msg := "asynqretry: snoozed for " + e.Delay.String()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the handler's error.
func (e *SnoozeError) Unwrap() error { return e.Err }

// IsFailure is the plugin's asynq Config.IsFailure: false for a nil error
// and for a [*SnoozeError] (a granted snooze spends no retry), true for
// every other error. [Plugin.Install] sets it.
func (p *Plugin) IsFailure(err error) bool {
	var s *SnoozeError
	return err != nil && !errors.As(err, &s)
}

// extensionDelay is the delay of a failure that the policy's own delay for
// the attempt does not give: a granted snooze, a requested delay or an
// error rule in force. ok is false for any other failure.
func (p *Plugin) extensionDelay(n int, err error, t *asynq.Task) (d time.Duration, ok bool) {
	var s *SnoozeError
	if errors.As(err, &s) {
		return s.Delay, true
	}
	pol := p.Policy(t)
	errType, code, _ := errmatch.Classify(err)
	f := policy.Failure{Attempt: attemptOf(n), ErrorType: errType, Code: code, Request: errmatch.RequestOf(err)}
	if f.Request.Kind == errmatch.NoRequest && pol.RuleFor(errType) == 0 {
		return 0, false
	}
	var src = p.source()
	dec, derr := pol.Decide(f, src)
	if derr != nil || dec.Action != policy.Retry {
		return 0, false
	}
	return dec.Delay, true
}
