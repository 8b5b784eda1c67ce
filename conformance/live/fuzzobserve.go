// What fuzz --server claims from what it saw: a case it could not
// observe in time is played again or said to be inconclusive, never a
// disagreement; a delay that differs is grouped by the deviation seen.

package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// retryable is the executor state of a retry, as refStep.state spells it.
var retryable = executor.Retryable.String()

// ErrInconclusive is wrapped by the error of a play that could not observe
// an answer in time ([ReplayCase] returns it when every play was): a retry
// not handed out within the late bound (WithLateBound), a request that
// timed out (WithTimeout), a reservation that lapsed before the FAIL. It
// says nothing of the server's conformance: a loaded host looks the same.
var ErrInconclusive = errors.New("live: inconclusive")

// inconclusiveError is a play stopped because an answer could not be
// observed in time; reason says which and why.
type inconclusiveError struct{ reason string }

func (e *inconclusiveError) Error() string { return "live: inconclusive: " + e.reason }
func (e *inconclusiveError) Unwrap() error { return ErrInconclusive }

// unobserved turns err, met by a play while doing step (a few words: "the
// FETCH of delivery 2"), into an inconclusive error when it says an
// answer could not be observed in time: a job not fetchable within the
// late bound, a request that timed out while the run's time still ran
// (the run's own deadline is no such case), a FAIL refused with 409
// Conflict (the reservation lapsed and the job moved on). Any
// other error is returned as it is: the server failed the request.
func unobserved(ctx context.Context, step string, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var (
		le *lateError
		se *serverError
	)
	switch {
	case errors.As(err, &le):
		why := "the late bound passed"
		if le.slow != "" {
			why += "; " + le.slow
		}
		return &inconclusiveError{fmt.Sprintf("%s: %s (%s)", step, le.msg, why)}
	case isTimeout(err):
		return &inconclusiveError{fmt.Sprintf("%s: no answer in time (a slow round trip): %v", step, err)}
	case errors.As(err, &se) && se.Op == "FAIL" && se.Status == http.StatusConflict:
		return &inconclusiveError{fmt.Sprintf("%s: refused with HTTP %d, the reservation may have lapsed before it: %v", step, se.Status, err)}
	}
	return err
}

// maxReobserve is how many times a case that could not be observed in
// time is played again (each a new job) before it is counted inconclusive.
const maxReobserve = 2

// maxReasons bounds the reasons FuzzResult keeps for its inconclusive
// cases.
const maxReasons = 5

// observe plays c with playCase, and plays it again (at most maxReobserve
// times, each a job of the at most left) while it could not be observed in
// time. It returns the plays made; err wraps ErrInconclusive when the last
// play could not observe either.
func (e *env) observe(ctx context.Context, c *FuzzCase, left int, judged func(string) bool) (bad bool, plays int, err error) {
	for {
		bad, err = e.playCase(ctx, c, judged)
		plays++
		if !errors.Is(err, ErrInconclusive) || plays > maxReobserve || plays >= left || ctx.Err() != nil {
			return bad, plays, err
		}
	}
}

// delayKind is the kind of a retry delay that differs, by the deviation
// seen, in this order:
//
//  1. "delay:above-cap": the delay is above the policy's max_interval,
//     yet within the range of the same policy without a cap (a delay the
//     cap, or the cap after jitter, would have cut), whatever the
//     strategy;
//  2. "delay:initial": the first retry, where every strategy gives the
//     initial interval (jittered, capped);
//  3. "delay:STRATEGY": a later retry, whose growth is the strategy's.
//
// The spelling of a field (initial_interval_ms, backoff_type) makes no
// kind of its own: shrinking respells the case where the deviation
// stays, so the shrunk case shows the binding's spelling only where it
// matters. lo is the shortest delay the server's answer allows, on its
// clock; n the failure it followed (1-based).
func delayKind(c *FuzzCase, ref refTrace, n int, lo time.Duration) string {
	if ref.cap > 0 && lo > ref.cap+resolution {
		u := FuzzCase{Policy: make(map[string]any, len(c.Policy)), Failures: c.Failures}
		for k, v := range c.Policy {
			if k != "max_interval" && k != "max_interval_ms" {
				u.Policy[k] = v
			}
		}
		if ur := reference(&u); n <= len(ur.steps) && ur.steps[n-1].state == retryable && lo <= ur.steps[n-1].hi+resolution {
			return "delay:above-cap"
		}
	}
	if n == 1 {
		return "delay:initial"
	}
	return "delay:" + ref.strategy
}

// ratio says how the server's delay [lo, hi] compares with the
// reference's single value want: " (about 2× the reference's)"; "" when
// the reference gives a range (jitter) or the server's window is wider
// than a tenth of want.
func ratio(lo, hi, want, whi time.Duration) string {
	if want != whi || want <= 0 || (hi-lo)*10 > want {
		return ""
	}
	return fmt.Sprintf(" (about %.3g× the reference's)", (float64(lo)+float64(hi))/2/float64(want))
}

// The outcomes of the state and dead-letter kinds, the server's first
// ("retried-not-discarded": the server retried, the reference executor
// discarded). See stateKind and deadLetterKind.
var (
	stateOutcomes      = []string{"retried-not-dead-lettered", "retried-not-discarded", "ended-not-retried", "ended-otherwise"}
	deadLetterOutcomes = []string{"dead-lettered-not-discarded", "discarded-not-dead-lettered"}
	// endRules are the reasons a kind gives in parentheses: the rule
	// that ended the job on the reference (refStep.why), or, for
	// ended-not-retried, what the case shows that the server may have
	// read (a RETRY handler code, non_retryable_errors).
	endRules = []string{"DISCARD", "FAIL", "DEAD_LETTER", "RETRY", "non_retryable_errors", "max_attempts", "on_exhaustion"}
)

// stateKind is the kind of a FAIL answer whose state (got) differs from
// the reference's (want, after failure n of c), by the deviation seen
// (RK-401):
//
//   - "state:retried-not-dead-lettered(WHY)" and
//     "state:retried-not-discarded(WHY)": the server retried a job the
//     reference ended, WHY the rule that ended it (refStep.why: the
//     handler code DEAD_LETTER, DISCARD or FAIL, non_retryable_errors,
//     max_attempts);
//   - "state:ended-not-retried(WHY)": the server ended a job the
//     reference retried, WHY what the case shows that may have ended it
//     on the server: RETRY (the failure's handler code), else
//     non_retryable_errors (the policy lists patterns, none of which
//     matches the error type by the spec's rules), else nothing
//     ("state:ended-not-retried"); FuzzServer confirms it by playing the
//     case once without it (settleWhy);
//   - "state:ended-otherwise(WHY)": both ended the job under other state
//     names.
func stateKind(c *FuzzCase, want refStep, n int, got string) string {
	if want.state == retryable {
		why := ""
		if n >= 1 && n <= len(c.Failures) && c.Failures[n-1].Code == "RETRY" {
			why = "RETRY"
		} else if hasPatterns(c.Policy) {
			why = "non_retryable_errors"
		}
		return "state:ended-not-retried" + paren(why)
	}
	switch {
	case got == retryable && want.dead:
		return "state:retried-not-dead-lettered" + paren(want.why)
	case got == retryable:
		return "state:retried-not-discarded" + paren(want.why)
	}
	return "state:ended-otherwise" + paren(want.why)
}

// deadLetterKind is the kind of an ended job listed in the dead-letter
// list when the reference discarded it without a dead letter
// ("dead-letter:dead-lettered-not-discarded(WHY)"), or not listed when
// the reference dead-lettered it
// ("dead-letter:discarded-not-dead-lettered(WHY)"), WHY the rule that
// chose between the two on the reference: the handler code (DISCARD,
// FAIL, DEAD_LETTER), or on_exhaustion, which decides both for an
// exhausted job and for a non_retryable_errors match (ojs-retry §7.2).
func deadLetterKind(want refStep) string {
	why := want.why
	if why == "max_attempts" || why == "non_retryable_errors" {
		why = "on_exhaustion"
	}
	if want.dead {
		return "dead-letter:discarded-not-dead-lettered" + paren(why)
	}
	return "dead-letter:dead-lettered-not-discarded" + paren(why)
}

func paren(why string) string {
	if why == "" {
		return ""
	}
	return "(" + why + ")"
}

// hasPatterns reports whether a case's policy lists non_retryable_errors
// (as generated, []string; as read back from a file, []any).
func hasPatterns(p map[string]any) bool {
	switch l := p["non_retryable_errors"].(type) {
	case []string:
		return len(l) > 0
	case []any:
		return len(l) > 0
	}
	return false
}

// legacyKinds are the kinds an earlier build wrote that now group several
// (RK-400): a case file of one replays judged in any kind of the group.
var legacyKinds = []string{"state", "dead-letter"}

// outcomeKind reports whether k is "GROUP:OUTCOME" or
// "GROUP:OUTCOME(WHY)", OUTCOME one of outcomes and WHY one of endRules.
func outcomeKind(k, group string, outcomes []string) bool {
	rest, ok := strings.CutPrefix(k, group+":")
	if !ok {
		return false
	}
	out, why, paren := strings.Cut(rest, "(")
	if !slices.Contains(outcomes, out) {
		return false
	}
	if !paren {
		return true
	}
	why, ok = strings.CutSuffix(why, ")")
	return ok && slices.Contains(endRules, why)
}
