package temporalretry

import (
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/policy"
)

// callBudgetKey is the workflow.Context key of a call's time budget.
type callBudgetKey struct{}

// WithBudget returns a workflow context whose activities run under the OJS
// time budget b (package budget, the ojs-timeouts extension): the
// interceptor's workflow side sets the activity's StartToCloseTimeout to
// b's timeout and, when b has one, its ScheduleToCloseTimeout to b's
// total_timeout, Temporal's own time limit across all attempts counted
// from the activity's first scheduling. A nil b leaves the activity
// options as the workflow set them.
func WithBudget(ctx workflow.Context, b *budget.Budget) workflow.Context {
	return workflow.WithValue(ctx, callBudgetKey{}, b)
}

// applyBudget sets the timeouts of opts from the budget of ctx, if any.
func applyBudget(ctx workflow.Context, opts *workflow.ActivityOptions) {
	b, _ := ctx.Value(callBudgetKey{}).(*budget.Budget)
	if b == nil {
		return
	}
	s := b.Spec()
	opts.StartToCloseTimeout = s.Timeout
	if s.TotalTimeout != 0 {
		opts.ScheduleToCloseTimeout = s.TotalTimeout
	}
}

// infoBudget is the time budget an activity runs under, read from its
// info: timeout = StartToCloseTimeout (1 s when unset or not shorter than
// the schedule-to-close timeout),
// total_timeout = ScheduleToCloseTimeout, created_at = ScheduledTime (the
// first attempt's scheduling). Temporal's timeouts need not be whole
// seconds, a budget's are: the timeout is rounded up and the total
// timeout down, so that a retry judged to fit does fit (docs/decisions.md
// RK-234). ok is false without a schedule-to-close timeout of at least a
// second or without a scheduled time.
func infoBudget(info activity.Info) (b *budget.Budget, createdAt time.Time, ok bool) {
	total := info.ScheduleToCloseTimeout.Truncate(time.Second)
	if total < time.Second || info.ScheduledTime.IsZero() {
		return nil, time.Time{}, false
	}
	timeout := info.StartToCloseTimeout
	if timeout <= 0 || timeout >= info.ScheduleToCloseTimeout {
		// No attempt limit of its own (the SDK then reports the
		// schedule-to-close timeout): counted as the least a budget
		// allows, 1 s, so that a retry is not refused merely because a
		// whole schedule-to-close could not fit again.
		timeout = time.Second
	}
	if r := timeout % time.Second; r != 0 {
		timeout += time.Second - r
	}
	s := budget.DefaultSpec()
	s.Timeout, s.TotalTimeout = min(timeout, total), total
	b, err := budget.New(s)
	if err != nil {
		return nil, time.Time{}, false
	}
	return b, info.ScheduledTime, true
}

// decideFailure is the decision for failure f of the activity with info
// under pol: pol.Decide, or, for an activity with a schedule-to-close
// timeout, budget.Budget.Decide with the same jitter source, so that §9.1
// is judged with the delay Temporal is then given (NextRetryDelay). why
// says which rule decided.
func decideFailure(info activity.Info, pol *policy.Policy, f policy.Failure, src backoff.Source, now time.Time) (policy.Decision, budget.Reason, error) {
	b, createdAt, ok := infoBudget(info)
	if !ok {
		d, err := pol.Decide(f, src)
		return d, budget.ReasonPolicy, err
	}
	if now.Before(createdAt) { // the server's clock ahead of the worker's
		now = createdAt
	}
	bd, err := b.Decide(pol, budget.Failure{Failure: f, CreatedAt: createdAt, At: now}, src)
	if err != nil {
		return policy.Decision{}, budget.ReasonPolicy, err
	}
	if bd.Reason == budget.ReasonPolicy {
		return bd.Policy, budget.ReasonPolicy, nil
	}
	return policy.Decision{Action: bd.Action, Reason: bd.Policy.Reason}, bd.Reason, nil
}
