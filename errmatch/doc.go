// Package errmatch decides which handler errors are non-retryable and reads
// the type and response code a handler attached to its error.
//
// # Model
//
// In the Open Job Spec a failed job carries an error type, a dot-namespaced
// string such as "external.stripe.card_declined", and optionally a handler
// response code. A retry policy lists non_retryable_errors patterns; an error
// whose type matches one of them goes straight to the policy's on_exhaustion
// outcome instead of being retried. The code, when not RETRY, overrides the
// policy altogether.
//
// # Matching
//
// An error type t matches a pattern list when, for at least one entry p:
//
//  1. p does not end in ".*" and t == p (exact match), or
//  2. p ends in ".*" and t starts with p minus its final "*" — the prefix
//     keeps its dot (prefix match).
//
// Comparison is byte-wise and case-sensitive, anchored at the start of t.
// Only a trailing ".*" is special: "*", "auth*", "a.*.b" and "a.b*" are
// plain strings that match only themselves. With the patterns
// ["validation.payload_invalid", "auth.*"]:
//
//	error type                  match  why
//	validation.payload_invalid  yes    exact
//	validation.schema_error     no     no entry
//	auth.token_expired          yes    starts with "auth."
//	auth.x.y                    yes    starts with "auth."
//	auth                        no     does not start with "auth."
//	authx                       no     does not start with "auth."
//	external.auth.failure       no     the prefix is anchored at the start
//	Auth.token_expired          no     case-sensitive
//
// Rule 2 is taken literally: "auth." itself starts with "auth." and so
// matches "auth.*", although it is not a well-formed type.
//
// Two entries are rejected by [Compile]: the empty string, and ".*" on its
// own, whose prefix would be "." and so could never match a dot-namespaced
// type. Duplicates are allowed.
// A list may hold at most [MaxPatterns] entries of at most [MaxPatternLen]
// bytes each ([ErrTooManyPatterns], [ErrPatternTooLong]), so that a list
// from an untrusted source has a bounded cost; a [*CompileError] lists the
// first 20 rejected entries and counts the rest.
//
// # Entry points
//
//   - [Compile] checks a pattern list and builds a [Matcher];
//     [Matcher.Match] tests one error type, without allocating, in time
//     that depends on the length of the type and not on the number of
//     patterns.
//   - [Code] and [ParseCode] handle the four response codes, [CodeRetry],
//     [CodeDiscard], [CodeDeadLetter] and [CodeFail] ("" means RETRY). They
//     are named Code* so that they are never confused with the decisions
//     of package policy (policy.Retry, policy.Discard, policy.DeadLetter),
//     which a code can lead to but is not.
//   - [Wrap] attaches a type and a code to a Go error as an [*Error];
//     [Classify] (and its shorthand [Type]) reads them back from anywhere in
//     an error tree; [Find] returns the *Error itself. The walk is bounded
//     ([MaxUnwrapDepth], [MaxUnwrapErrors]), so a cyclic tree cannot hang it.
//   - [WithRetryAfter] and [Snoozed] let a handler ask for a delay before
//     the next attempt or for a snooze (docs/extensions.md), carried as a
//     [Request] on the *Error; [RequestOf] reads it back. Package policy
//     bounds both when it decides.
//
// # Non-goals
//
// errmatch does no regular expressions, no globbing, no case folding and no
// matching in the middle of a type; it does not check that error types
// follow the dot-namespace convention. It does not decide what to do with a
// job either: combining codes, matches and attempt counts is the job of
// package policy.
package errmatch
