package executor

import (
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrybudget"
)

// Retry budgets (docs/extensions.md §2.3, §3.6). A budget is asked, at
// the failure's instant, for every retry of a failed attempt after every
// other rule has allowed it (a snooze is not asked); a refused retry ends
// the job with its policy's on_exhaustion action, the failure recorded as
// usual. A budget hears every first attempt (DepositAt, at the fetch that
// makes the attempt 1) and every success (SuccessAt, at the ack). Budgets
// are shared by the jobs of the queues they serve, on the executor's clock.

// WithRetryBudget sets the retry budget of every queue without one of its
// own (WithQueueRetryBudget); nil, the default, means none.
func WithRetryBudget(b retrybudget.Budget) Option {
	return func(cfg *config) { cfg.budget = b }
}

// WithQueueRetryBudget sets the retry budget of one queue ("" is
// DefaultQueue), in place of WithRetryBudget's; a nil b gives the queue
// none.
func WithQueueRetryBudget(queue string, b retrybudget.Budget) Option {
	return func(cfg *config) {
		if queue == "" {
			queue = DefaultQueue
		}
		if cfg.queueBudget == nil {
			cfg.queueBudget = map[string]retrybudget.Budget{}
		}
		cfg.queueBudget[queue] = b
	}
}

// budgetFor returns the retry budget of queue, or nil.
func (e *Executor) budgetFor(queue string) retrybudget.Budget {
	if b, ok := e.cfg.queueBudget[queue]; ok {
		return b
	}
	return e.cfg.budget
}

// budgeted turns a retry of j's failed attempt at at into the
// on_exhaustion action when its queue's retry budget refuses it.
func (e *Executor) budgeted(j *job, d policy.Decision, at int64) policy.Decision {
	if d.Action != policy.Retry || d.Reason == policy.ReasonSnoozed {
		return d
	}
	b := e.budgetFor(j.q.name)
	if b == nil || b.AllowAt(nsTime(at)) {
		return d
	}
	return policy.Decision{Action: j.pol.Spec().OnExhaustion, Reason: d.Reason}
}
