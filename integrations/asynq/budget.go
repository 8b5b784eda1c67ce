package asynqretry

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/policy"
)

// Task headers of a task's OJS time budget (package budget, the
// ojs-timeouts extension). asynq keeps no creation time a handler can read,
// so the time the task was made is carried beside the budget.
const (
	// BudgetHeaderKey holds the budget as the JSON object budget.Parse
	// reads (timeout, total_timeout, … in whole seconds).
	BudgetHeaderKey = "retrykit-timeouts"
	// CreatedAtHeaderKey holds the task's created_at, RFC 3339 with
	// nanoseconds, UTC.
	CreatedAtHeaderKey = "retrykit-created-at"
)

// BudgetHeaders returns a copy of headers (nil: none) with b and createdAt
// set under [BudgetHeaderKey] and [CreatedAtHeaderKey], for
// asynq.NewTaskWithHeaders. A nil b writes the default budget; a zero
// createdAt writes the current time.
func BudgetHeaders(headers map[string]string, b *budget.Budget, createdAt time.Time) map[string]string {
	if createdAt.IsZero() {
		createdAt = time.Now()
	}
	out := make(map[string]string, len(headers)+2)
	maps.Copy(out, headers)
	bj, _ := b.MarshalJSON() // never fails
	out[BudgetHeaderKey] = string(bj)
	out[CreatedAtHeaderKey] = createdAt.UTC().Format(time.RFC3339Nano)
	return out
}

// NewTaskWithBudget is [NewTask] for a task that also carries the time
// budget b, created at createdAt (zero: now), in the headers
// [BudgetHeaderKey] and [CreatedAtHeaderKey]. It adds, after opts,
// asynq.Timeout(timeout + grace_period), at least a second more than the
// budget's timeout: [Plugin.Handler] cancels the attempt's context at the
// timeout itself, so that the failure reaches the policy, and asynq's own
// cut (which bypasses the middleware) is the forceful stop of the grace
// period. A nil pol keeps the plugin's default policy.
func NewTaskWithBudget(typename string, payload []byte, pol *policy.Policy, b *budget.Budget, createdAt time.Time, opts ...asynq.Option) *asynq.Task {
	var headers map[string]string
	if pol != nil {
		pj, _ := pol.MarshalJSON() // never fails for a Policy
		headers = map[string]string{HeaderKey: string(pj)}
		opts = append(append([]asynq.Option(nil), opts...), MaxRetry(pol))
	}
	s := b.Spec()
	opts = append(append([]asynq.Option(nil), opts...), asynq.Timeout(s.Timeout+max(s.GracePeriod, time.Second)))
	return asynq.NewTaskWithHeaders(typename, payload, BudgetHeaders(headers, b, createdAt), opts...)
}

// TaskBudget returns the time budget and creation time t carries; ok is
// false when it carries no budget. err reports a budget budget.Parse
// refuses (errors.Is budget.ErrInvalidBudget) or a budget whose creation
// time is missing or not RFC 3339.
func TaskBudget(t *asynq.Task) (b *budget.Budget, createdAt time.Time, ok bool, err error) {
	if t == nil {
		return nil, time.Time{}, false, nil
	}
	raw, ok := t.Headers()[BudgetHeaderKey]
	if !ok {
		return nil, time.Time{}, false, nil
	}
	if b, err = budget.Parse([]byte(raw)); err != nil {
		return nil, time.Time{}, false, fmt.Errorf("asynqretry: task %s header %s: %w", t.Type(), BudgetHeaderKey, err)
	}
	ca, has := t.Headers()[CreatedAtHeaderKey]
	if !has {
		return nil, time.Time{}, false, fmt.Errorf("asynqretry: task %s header %s: missing, required with %s", t.Type(), CreatedAtHeaderKey, BudgetHeaderKey)
	}
	if createdAt, err = time.Parse(time.RFC3339Nano, ca); err != nil {
		return nil, time.Time{}, false, fmt.Errorf("asynqretry: task %s header %s: %w", t.Type(), CreatedAtHeaderKey, err)
	}
	return b, createdAt, true, nil
}

// attemptContext bounds the attempt's context by the budget's timeout and
// by created_at + total_timeout, when t carries a budget.
func attemptContext(ctx context.Context, t *asynq.Task, now time.Time) (context.Context, context.CancelFunc) {
	b, createdAt, ok, _ := TaskBudget(t)
	if !ok {
		return ctx, func() {}
	}
	dl := now.Add(b.Spec().Timeout)
	if end, has := b.Deadline(createdAt); has && end.Before(dl) {
		dl = end
	}
	return context.WithDeadline(ctx, dl)
}

// decideFailure is the middleware's decision for failure f of t under pol:
// the policy's alone (jitter at 0.5) when t carries no budget, else
// budget.Budget.DecideBeforeDraw with t's created_at, since asynq draws
// the delay (RetryDelayFunc) after the middleware decided
// (docs/decisions.md RK-233); an enqueuer's clock ahead of the worker's is
// read as no time spent yet. why says which rule decided; berr is an
// unreadable budget (the policy then decides alone).
func (p *Plugin) decideFailure(t *asynq.Task, pol *policy.Policy, f policy.Failure) (d policy.Decision, why budget.Reason, berr, derr error) {
	b, createdAt, ok, berr := TaskBudget(t)
	if !ok {
		d, derr = pol.DecideAt(f, 0.5)
		return d, budget.ReasonPolicy, berr, derr
	}
	now := time.Now
	if p != nil && p.now != nil {
		now = p.now
	}
	bd, derr := b.DecideBeforeDraw(pol, budget.Failure{Failure: f, CreatedAt: createdAt, At: now()})
	if derr != nil {
		return policy.Decision{}, budget.ReasonPolicy, nil, derr
	}
	if bd.Reason == budget.ReasonPolicy {
		return bd.Policy, budget.ReasonPolicy, nil, nil
	}
	return policy.Decision{Action: bd.Action, Reason: bd.Policy.Reason}, bd.Reason, nil, nil
}
