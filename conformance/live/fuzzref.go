// The oracle of fuzz --server: the reference executor, run in process on
// a manual clock, playing the same job with the same failures.

package live

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// refStep is what the reference executor did with one delivery of a case:
// the attempt its fetch showed, and its answer to the failure.
type refStep struct {
	fetchAttempt int
	state        string // executor.State's name: "retryable", "discarded"
	attempt, max int
	// lo and hi bound the retry delay (retryable only): the delays of the
	// lowest and the highest jitter draw, equal without jitter.
	lo, hi time.Duration
	dead   bool                  // discarded into the dead letter set
	errors []executor.ErrorEntry // the error history after the failure
	// why is the rule that ended the job (not retryable only), as a kind
	// writes it: the handler code ("DISCARD", "FAIL", "DEAD_LETTER"),
	// "non_retryable_errors" (the error type matched a pattern) or
	// "max_attempts" (the last attempt failed); see endRule.
	why string
}

// refTrace is the reference's play of a whole case.
type refTrace struct {
	// refused is the policy reader's error when the reference refuses
	// the case's policy at PUSH (no steps then).
	refused error
	steps   []refStep
	// strategy is the policy's backoff strategy, as read.
	strategy string
	// cap is the policy's max_interval, as read (merged over the
	// defaults).
	cap time.Duration
}

// refEpoch is where the reference's manual clock starts.
var refEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// reference plays c on the reference executor, in process: the policy is
// read as retrykit serve reads a PUSH (policy.ParseWith with the binding
// dialect), the job is enqueued on two executors sharing one manual clock,
// one drawing the lowest jitter (backoff.Fixed(0)) and one the highest
// (backoff.Fixed(1), clamped below 1), so that their delays bound every
// delay a correct server may choose; each failure is fetched and failed on
// both as serve's FAIL hands it to the executor (bindingFailure), and the
// clock then moves to the later of the two retry times. Playing stops at
// the first answer that is not retryable.
func reference(c *FuzzCase) refTrace {
	raw, err := json.Marshal(c.Policy)
	if err != nil {
		return refTrace{refused: err}
	}
	pol, err := policy.ParseWith(raw, policy.BindingDialect())
	if err != nil {
		return refTrace{refused: err}
	}
	clock := executor.NewFakeClock(refEpoch)
	lo := executor.New(executor.WithClock(clock), executor.WithRand(backoff.Fixed(0)))
	hi := executor.New(executor.WithClock(clock), executor.WithRand(backoff.Fixed(1)))
	const id = "fuzz-case"
	for _, x := range []*executor.Executor{lo, hi} {
		if _, err := x.Enqueue(executor.JobSpec{ID: id, Type: "retrykit.fuzz", Policy: pol}); err != nil {
			return refTrace{refused: err}
		}
	}
	tr := refTrace{strategy: pol.Spec().Strategy.String(), cap: pol.Spec().MaxInterval}
	for i, f := range c.Failures {
		jl, okl := lo.Fetch()
		jh, okh := hi.Fetch()
		if !okl || !okh {
			break // cannot happen: the clock stands at the retry time
		}
		now := clock.Now()
		bf := bindingFailure(f, i+1)
		al, errl := lo.Fail(id, jl.Delivery, bf)
		ah, errh := hi.Fail(id, jh.Delivery, bf)
		if errl != nil || errh != nil {
			// A failure the executor refuses (the generator draws none):
			// the case ends here, as the server's 4xx would end it.
			break
		}
		st := refStep{fetchAttempt: jl.Attempt, state: al.State.String(), attempt: al.Attempt,
			max: pol.Spec().MaxAttempts, dead: al.DeadLetter, errors: al.Errors}
		if al.State == executor.Retryable {
			st.lo, st.hi = al.NextRetryAt.Sub(now), ah.NextRetryAt.Sub(now)
			tr.steps = append(tr.steps, st)
			clock.Set(later(al.NextRetryAt, ah.NextRetryAt))
			continue
		}
		st.why = endRule(pol, jl.Attempt, bf)
		tr.steps = append(tr.steps, st)
		break
	}
	return tr
}

// endRule is the rule of ojs-retry §7.2 (policy.DecideAt's, which the
// executor follows) that ends a job whose attempt failed with f:
// the handler code's name, "non_retryable_errors" or "max_attempts";
// "" when the policy retries it.
func endRule(pol *policy.Policy, attempt int, f executor.Failure) string {
	d, err := pol.DecideAt(policy.Failure{Attempt: attempt, ErrorType: f.Type, Code: f.Code}, 0)
	switch {
	case err != nil:
		return ""
	case d.Reason == policy.ReasonHandlerCode:
		return string(f.Code)
	case d.Reason == policy.ReasonNonRetryable:
		return "non_retryable_errors"
	case d.Reason == policy.ReasonExhausted:
		return "max_attempts"
	}
	return ""
}

// jittered reports whether a delay of the trace is a range, not one value.
func (tr refTrace) jittered() bool {
	for _, s := range tr.steps {
		if s.lo != s.hi {
			return true
		}
	}
	return false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// failMessage is the message of the n-th failure of a case.
func failMessage(n int) string { return fmt.Sprintf("fuzz failure %d", n) }

// bindingFailure is the executor failure a FAIL of f carries under the
// HTTP binding, as retrykit serve hands it over: error.type is the type
// (error.code stands in when no type is given), and error.code is the
// handler's verdict when it is one of the handler codes (RETRY, DISCARD,
// DEAD_LETTER, FAIL), else no verdict.
func bindingFailure(f FuzzFailure, n int) executor.Failure {
	bf := executor.Failure{Type: f.Type, Message: failMessage(n)}
	if bf.Type == "" {
		bf.Type = f.Code
	}
	if c, err := errmatch.ParseCode(f.Code); err == nil && f.Code != "" {
		bf.Code = c
	}
	return bf
}

// answer formats a reference step as the server's answer is formatted.
func (s refStep) answer() string {
	out := fmt.Sprintf("%s, attempt %d, max_attempts %d", s.state, s.attempt, s.max)
	switch {
	case s.state == executor.Retryable.String():
		out += ", retry after " + span(s.lo, s.hi)
	case s.dead:
		out += ", dead-lettered"
	case s.state == executor.Discarded.String():
		out += ", not dead-lettered"
	}
	return out
}
