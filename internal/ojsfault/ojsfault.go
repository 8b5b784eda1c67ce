// Package ojsfault holds the planted bugs that a deliberately faulty
// ojshttp server can be made to have, so that a checker of live OJS servers
// (retrykit conformance --server) can prove it catches them. It is test
// machinery: nothing in it is reachable from the public API.
//
// A fault set is attached to one server value with [Plant] and read back by
// the server with [Of] on every operation it affects; a server without a
// planted set behaves correctly. From the command line the hidden,
// test-only flag `retrykit serve --plant NAME[,NAME...]` does the same.
//
// The faults (see each constant for exactly what goes wrong):
//
//	attempt-off-by-one   the attempt reported on the wire is 0-based
//	no-cap-after-jitter  jittered delays may exceed max_interval
//	regex-match          non_retryable_errors matched as anchored regexps
//	early-retry          a retry becomes fetchable at half its delay
//	fetch-attempt-high   a FETCH answer shows the attempt one too high
//	no-defaults-merge    a partial policy is stored without the defaults
//	message-match        non_retryable_errors also matched against the message
//	glob-match           non_retryable_errors also matched as shell globs
//	dead-letter-pages    the dead-letter list ignores queue, 2 jobs a page
//	polynomial-as-exponential  backoff_strategy polynomial computed as exponential
//	linear-as-exponential      backoff_strategy linear computed as exponential
//	delay-doubled        every delay twice the policy's
//	exhaust-late         one attempt past max_attempts retried
//	discard-code-ignored the handler code DISCARD ignored
//	dead-letter-code-ignored the handler code DEAD_LETTER ignored
//	late-retry           a retry becomes fetchable at twice its delay
//	no-location          a 201 PUSH has no Location header
//	no-version-on-errors error answers have no OJS-Version header
//	bad-error-object     error answers lack retryable, request_id differs
//	text-errors          error answers are text/plain
//	paused-accepts       a PUSH to a paused queue is accepted
//	rate-limit-ignored   rate_limit is accepted but never applied
//	rate-limit-spends-attempt  each FETCH holding a limited job back costs it an attempt
//	prefix-no-boundary   "auth.*" in non_retryable_errors also matches "auth" and "authx"
//	message-not-type     non_retryable_errors matched against the message, not the type
//
// Beside the fixed faults, [Params] plants one bug of each family the live
// diagnosis fits, with a parameter (a time factor, an exponent or
// exhaustion offset, a strategy computed as another), attached with
// [PlantParams]; [JitterSource] narrows an executor's jitter range. Tests
// draw these parameters at random and require the diagnosis to name them.
package ojsfault

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Set is a set of planted faults; the zero value plants none.
type Set uint32

// The faults.
const (
	// AttemptOffByOne reports every job's attempt one lower than it is (the
	// number of earlier attempts instead of the 1-based number of the
	// current or last one), in the nack answer and every job view. The
	// retry decisions themselves are right.
	AttemptOffByOne Set = 1 << iota
	// NoCapAfterJitter drops the final cap of the cap-jitter-cap order for
	// jittered policies: the server runs the job under its policy with
	// max_interval raised by half, so a jittered delay can exceed the
	// max_interval the client gave (by up to half of it).
	NoCapAfterJitter
	// RegexMatch matches non_retryable_errors as anchored regular
	// expressions ^(?:pattern)$ in addition to the OJS rules, so "auth.*"
	// also matches "authx" and "auth": such a failure is treated as
	// non-retryable (on_exhaustion applies at once).
	RegexMatch
	// EarlyRetry runs the job under its policy with every interval halved
	// while reporting the delay of the real policy in next_attempt_at: the
	// job becomes fetchable again halfway to the time the server announced.
	// A delay a retry extension asked for (an error rule's, retry_after, a
	// snooze) runs and is announced as asked.
	EarlyRetry
	// FetchAttemptHigh shows the attempt of every job in a FETCH answer one
	// higher than it is (2 on the first delivery); the FAIL answer, INFO
	// and the retry decisions are right.
	FetchAttemptHigh
	// NoDefaultsMerge stores a partial retry policy without merging it
	// over the defaults: an absent max_attempts is 0 (the job is never
	// retried), an absent max_interval is no cap, an absent jitter is off.
	// An absent initial_interval, backoff_coefficient or on_exhaustion
	// keeps its default, as the public servers' delay code does.
	NoDefaultsMerge
	// MessageMatch matches non_retryable_errors (by the OJS rules) against
	// the error message as well as the type.
	MessageMatch
	// GlobMatch matches non_retryable_errors as shell globs (path.Match:
	// "*" any run, "?" one character) in addition to the OJS rules, so
	// "auth*" matches "authx" and "a?b" matches "axb".
	GlobMatch
	// DeadLetterPages makes GET /ojs/v1/dead-letter ignore its queue
	// parameter and answer at most 2 jobs a page (pagination still right),
	// as servers that list one global dead letter set do: a reader of one
	// page misses jobs.
	DeadLetterPages
	// PolynomialAsExponential accepts backoff_strategy polynomial and
	// computes the exponential delay, as the four public OJS servers do.
	PolynomialAsExponential
	// LinearAsExponential computes the linear strategy as exponential.
	LinearAsExponential
	// DelayDoubled runs every policy with its intervals doubled (every
	// delay twice the policy's), showing the client's policy.
	DelayDoubled
	// ExhaustLate retries one attempt past max_attempts, showing the
	// client's max_attempts.
	ExhaustLate
	// DiscardCodeIgnored ignores the handler code DISCARD (the policy
	// decides), obeying the other codes.
	DiscardCodeIgnored
	// NoLocation leaves the Location header out of a 201 PUSH answer
	// (the binding §9.1 MUST).
	NoLocation
	// NoVersionOnErrors leaves the OJS-Version header out of every error
	// answer (the binding §6.5: every response MUST carry it).
	NoVersionOnErrors
	// BadErrorObject answers errors without error.retryable, with an
	// error.request_id that is not the X-Request-Id header (the binding
	// §16.1).
	BadErrorObject
	// TextErrors answers errors with Content-Type text/plain (the body is
	// unchanged; the binding §4.1 MUST).
	TextErrors
	// PausedAccepts accepts a PUSH to a paused queue (201, the job waits
	// as available) instead of 422 queue_paused (the binding §11.3).
	PausedAccepts
	// RateLimitIgnored accepts rate_limit at PUSH but never applies it:
	// a job of a key at its concurrency still starts.
	RateLimitIgnored
	// RateLimitSpendsAttempt charges a rate-limited job one attempt for
	// every FETCH that held it back, as a server that claims and gives
	// back a limited job would: its attempt shows one more per such FETCH
	// (ojs-rate-limiting §8.1: it MUST remain available).
	RateLimitSpendsAttempt
	// SnoozeSpendsAttempt reads a FAIL's snooze as a requested delay: the
	// job waits as asked (bounded) but its attempt is spent and the
	// failure recorded, as a queue whose "snooze" is only a delay does
	// (docs/extensions.md §3.5: the attempt stays where it was).
	SnoozeSpendsAttempt
	// RetryExtensionsUnclaimed leaves x-retry-extensions out of the
	// manifest while the server still implements them: a checker must
	// then judge none of their checks.
	RetryExtensionsUnclaimed
	// LateRetry announces every retry's next_attempt_at right but holds
	// the retry back at FETCH until twice its delay after the failure: the
	// job becomes fetchable at twice the delay the server announced.
	LateRetry
	// DeadLetterCodeIgnored ignores the handler code DEAD_LETTER (the
	// policy decides: a retry while attempts are left), obeying the other
	// codes.
	DeadLetterCodeIgnored
	// PrefixNoBoundary reads a non_retryable_errors entry "p.*" as the
	// bare prefix "p", without the dot boundary, in addition to the OJS
	// rules: "auth.*" also matches "auth" and "authx".
	PrefixNoBoundary
	// MessageNotType matches non_retryable_errors (by the OJS rules)
	// against the error message instead of the type: a type the list
	// names is retried, a message it names ends the job.
	MessageNotType
)

// all lists the faults in flag order with their names.
var all = []struct {
	s    Set
	name string
}{
	{AttemptOffByOne, "attempt-off-by-one"},
	{NoCapAfterJitter, "no-cap-after-jitter"},
	{RegexMatch, "regex-match"},
	{EarlyRetry, "early-retry"},
	{FetchAttemptHigh, "fetch-attempt-high"},
	{NoDefaultsMerge, "no-defaults-merge"},
	{MessageMatch, "message-match"},
	{GlobMatch, "glob-match"},
	{DeadLetterPages, "dead-letter-pages"},
	{PolynomialAsExponential, "polynomial-as-exponential"},
	{LinearAsExponential, "linear-as-exponential"},
	{DelayDoubled, "delay-doubled"},
	{ExhaustLate, "exhaust-late"},
	{DiscardCodeIgnored, "discard-code-ignored"},
	{NoLocation, "no-location"},
	{NoVersionOnErrors, "no-version-on-errors"},
	{BadErrorObject, "bad-error-object"},
	{TextErrors, "text-errors"},
	{PausedAccepts, "paused-accepts"},
	{RateLimitIgnored, "rate-limit-ignored"},
	{RateLimitSpendsAttempt, "rate-limit-spends-attempt"},
	{SnoozeSpendsAttempt, "snooze-spends-attempt"},
	{RetryExtensionsUnclaimed, "retry-extensions-unclaimed"},
	{LateRetry, "late-retry"},
	{DeadLetterCodeIgnored, "dead-letter-code-ignored"},
	{PrefixNoBoundary, "prefix-no-boundary"},
	{MessageNotType, "message-not-type"},
}

// ErrUnknown is wrapped by Parse's error for a name that is not a fault.
var ErrUnknown = errors.New("ojsfault: unknown fault")

// Parse reads a comma-separated list of fault names ("" is the empty set).
func Parse(s string) (Set, error) {
	var set Set
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, f := range all {
			if f.name == name {
				set |= f.s
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("%w %q (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
		}
	}
	return set, nil
}

// Names returns the names of all faults, sorted.
func Names() []string {
	out := make([]string, 0, len(all))
	for _, f := range all {
		out = append(out, f.name)
	}
	sort.Strings(out)
	return out
}

// String returns the comma-separated names of the faults in s.
func (s Set) String() string {
	var names []string
	for _, f := range all {
		if s&f.s != 0 {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, ",")
}

// Has reports whether every fault of f is in s.
func (s Set) Has(f Set) bool { return s&f == f && f != 0 }

// planted maps a server value to its faults.
var planted sync.Map

// Plant attaches the faults s to server (a pointer the server uses as its
// identity, such as *ojshttp.Server). Planting the empty set removes the
// entry. It should be called before the server handles requests.
func Plant(server any, s Set) {
	if s == 0 {
		planted.Delete(server)
		return
	}
	planted.Store(server, s)
}

// Of returns the faults planted in server, the empty set when none.
func Of(server any) Set {
	if v, ok := planted.Load(server); ok {
		return v.(Set)
	}
	return 0
}
