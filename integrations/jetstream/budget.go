package jetstreamretry

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/policy"
)

// HeaderTimeouts is the message header that holds a message's OJS time
// budget (package budget, the ojs-timeouts extension), as the JSON object
// budget.Parse reads (timeout, total_timeout, … in whole seconds). The
// message's created_at is the time the stream stored it (its metadata
// timestamp), the server's clock.
const HeaderTimeouts = "Retrykit-Timeouts"

// SetBudget sets b under [HeaderTimeouts] in h (a nil h is left alone; a
// nil b writes the default budget).
func SetBudget(h nats.Header, b *budget.Budget) {
	if h == nil {
		return
	}
	bj, _ := b.MarshalJSON() // never fails
	h.Set(HeaderTimeouts, string(bj))
}

// MessageBudget returns the budget in h; ok is false when h has none. err
// reports one budget.Parse refuses (errors.Is budget.ErrInvalidBudget).
func MessageBudget(h nats.Header) (b *budget.Budget, ok bool, err error) {
	raw := h.Get(HeaderTimeouts)
	if raw == "" {
		return nil, false, nil
	}
	if b, err = budget.Parse([]byte(raw)); err != nil {
		return nil, false, fmt.Errorf("jetstreamretry: header %s: %w", HeaderTimeouts, err)
	}
	return b, true, nil
}

// attemptContext bounds the handler's context by the budget's timeout and
// by created_at + total_timeout, when the message carries a budget.
func attemptContext(ctx context.Context, h nats.Header, md *jetstream.MsgMetadata, now time.Time) (context.Context, context.CancelFunc) {
	b, ok, _ := MessageBudget(h)
	if !ok {
		return ctx, func() {}
	}
	dl := now.Add(b.Spec().Timeout)
	if end, has := b.Deadline(md.Timestamp); has && end.Before(dl) {
		dl = end
	}
	return context.WithDeadline(ctx, dl)
}

// decideFailure is the decision for failure f of a message with headers h
// and metadata md under pol: pol.Decide when the message carries no budget
// with a total timeout, else budget.Budget.Decide with the stream's
// timestamp as created_at. Both draw the jitter of the delay that is then
// used for NakWithDelay, so §9.1 is judged with the real delay. why says
// which rule decided; berr is an unreadable budget (the policy then decides
// alone).
func (p *Plugin) decideFailure(h nats.Header, md *jetstream.MsgMetadata, pol *policy.Policy, f policy.Failure) (d policy.Decision, why budget.Reason, berr, derr error) {
	b, ok, berr := MessageBudget(h)
	if !ok || b.Spec().TotalTimeout == 0 || md.Timestamp.IsZero() {
		d, derr = pol.Decide(f, p.source())
		return d, budget.ReasonPolicy, berr, derr
	}
	at := time.Now()
	if at.Before(md.Timestamp) { // the server's clock ahead of the worker's
		at = md.Timestamp
	}
	bd, derr := b.Decide(pol, budget.Failure{Failure: f, CreatedAt: md.Timestamp, At: at}, p.source())
	if derr != nil {
		return policy.Decision{}, budget.ReasonPolicy, nil, derr
	}
	if bd.Reason == budget.ReasonPolicy {
		return bd.Policy, budget.ReasonPolicy, nil, nil
	}
	return policy.Decision{Action: bd.Action, Reason: bd.Policy.Reason}, bd.Reason, nil, nil
}
