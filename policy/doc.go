// Package policy is the OJS retry policy data model: strict parsing,
// validation, canonical JSON and the retry decision.
//
// # Model
//
// A retry policy (OJS retry spec §2) is seven JSON fields plus retrykit's
// extension field backoff_strategy. [Spec] holds them as plain Go values;
// [Policy] is a validated, compiled, immutable Spec, with its
// [backoff.Backoff] delay calculator and its [errmatch.Matcher] for
// non_retryable_errors. A Policy is safe to share between goroutines.
//
// The rules where the spec is silent or contradicts itself are those of
// docs/decisions.md (RK-01 … RK-20): unknown fields, duplicate keys and null
// values are rejected; max_attempts 0 behaves as 1; the strategy comes only
// from backoff_strategy; durations follow the schema grammar exactly and are
// exact to the nanosecond.
//
// # Extensions
//
// The retry extensions of docs/extensions.md (a proposal for OJS) add
// per-error-type rules ([Spec.ErrorRules], [ErrorRule]), the full, equal
// and decorrelated jitter of [backoff.JitterMode], a bound on the delay a
// handler asks for ([Spec.MaxRetryAfter]) and snoozes that wait without
// spending an attempt ([Spec.MaxSnoozes], [Spec.MaxSnooze]). A [Failure]
// carries the handler's [errmatch.Request] and the job's previous delay
// and snooze count; [Policy.DecideAt] applies the rules of §3.1 in order
// and says which decided ([ReasonRetryAfter], [ReasonSnoozed]). A policy
// without the extension fields decides exactly as OJS 1.0.
//
// # Entry points
//
//   - [Parse] (and [Policy.UnmarshalJSON]) decodes OJS JSON, merges it over
//     [DefaultSpec] and reports every problem in one [*ValidationError].
//     [ParseWith] is Parse with options: [BindingDialect] accepts the OJS
//     HTTP binding's `*_ms` intervals and `backoff_type`, [Over] reads the
//     document as changes to another policy (a dead letter's override).
//     Both read through the project's one strict JSON reader.
//   - [New] validates a Spec built in Go; [Default] is the OJS default.
//   - [Policy.MarshalJSON] writes the canonical form; Parse reads it back
//     to an equal Policy.
//   - [Policy.DecideAt] (pure, with the jitter draw r given) and
//     [Policy.Decide] (drawing from a [backoff.Source]) turn a [Failure]
//     into a [Decision]: retry after a delay, discard, or dead letter.
//   - [Policy.Schedule] yields the delay after each retried attempt of a
//     job that keeps failing.
//   - [ParseDuration] and [FormatDuration] convert OJS ISO 8601 durations.
//
// Errors: [ErrInvalidPolicy] with [*ValidationError] and [*FieldError]
// (an unknown key also matches [ErrUnknownField] and carries the nearest
// known field in [FieldError.Suggestion]: "jiter" gives `did you mean
// "jitter"?`), [ErrInvalidDuration] with [*DurationError], [ErrInvalidFailure] with
// [*FailureError]. Input from untrusted sources is bounded (RK-20): a
// document larger than [MaxDocumentSize] matches [ErrDocumentTooLarge], a
// duration longer than [MaxDurationLen] [ErrDurationTooLong], and one
// error lists at most [MaxListedErrors] problems; every parser costs time
// linear in its input. [ValidationError.Type] is [ErrorType],
// "validation.retry_policy_invalid".
//
// # Non-goals
//
// The package does not run jobs, keep retry state or read clocks: it is
// pure data and arithmetic (the executor package does the rest). It
// does not parse the enclosing OJS job envelope, only the retry object.
// Calendar-aware durations are out of scope: a year is 365 days and a month
// 730 hours.
package policy
