// Package budget is the time budget of an OJS job (the ojs-timeouts
// extension, urn:ojs:ext:timeouts): its five timeout fields, the expiries
// they detect, and the retry decision that takes the time left into
// account.
//
// # Model
//
// A job has a per-attempt execution timeout, an optional total timeout
// counted from its created_at across all attempts and backoff delays, an
// optional enqueue TTL, a grace period and a heartbeat timeout (spec §5,
// §6). [Spec] holds them as time.Duration values in whole seconds;
// [Budget] is a validated, immutable Spec, safe to share between
// goroutines.
//
// An expired limit is a failed attempt like any other (§7, §8): the
// execution timeout gives the error type "timeout", a missed heartbeat
// "stalled"; both are retryable unless the retry policy lists them in
// non_retryable_errors (§9.1). [Expiry] is the error object stored on the
// job: type, message, timeout_kind, limit_seconds and elapsed_seconds.
//
// # Entry points
//
//   - [Parse] decodes the five JSON fields (integer seconds) over
//     [DefaultSpec]; [New] validates a Spec built in Go.
//   - [Budget.Execution], [Budget.Stalled], [Budget.Total] and
//     [Budget.EnqueueTTL] say whether a limit has expired at a given
//     instant, and with which [Expiry].
//   - [Budget.DecideAt] (pure, the jitter draw given) and [Budget.Decide]
//     (drawing from a backoff.Source) decide after a failure: the retry
//     policy's decision (package policy), then the total timeout (§5.2:
//     discarded whatever attempts remain) and the rule of §9.1 (no retry
//     that cannot finish before the deadline).
//
// The rules where the spec is open are rows RK-215 to RK-220 of
// docs/decisions.md. Errors: [ErrInvalidBudget] with *[ValidationError] and
// *[FieldError] naming the field; [ErrInvalidFailure] with *[FailureError];
// a policy's own failure errors pass through unchanged (policy.ErrInvalidFailure).
//
// # Non-goals
//
// The package reads no clock and runs nothing: the executor and the
// server scan for expiries and apply the decisions. Grace-period
// signalling to handlers, workflows and metrics are out of scope.
package budget
