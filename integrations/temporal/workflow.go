package temporalretry

import (
	"math"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// callPolicyKey is the workflow.Context key of a call's policy.
type callPolicyKey struct{}

// WithPolicy returns a workflow context whose activities run under p: the
// interceptor's workflow side sends p in the header [HeaderKey] and sets
// the activity's RetryPolicy to [RetryPolicy](p). A nil p removes a policy
// set by an outer WithPolicy, so the activity type's policy applies.
func WithPolicy(ctx workflow.Context, p *policy.Policy) workflow.Context {
	return workflow.WithValue(ctx, callPolicyKey{}, p)
}

// InterceptWorkflow wraps a workflow's outbound calls so that each activity
// it schedules carries its policy: the one set with [WithPolicy], else the
// activity type's, else the default. The activity's RetryPolicy becomes
// [RetryPolicy] of that policy, keeping the NonRetryableErrorTypes the
// workflow gave. Local activities are left alone.
func (i *Interceptor) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	w := &workflowInbound{i: i}
	w.Next = next
	return w
}

type workflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	i *Interceptor
}

func (w *workflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	o := &workflowOutbound{i: w.i}
	o.Next = outbound
	return w.Next.Init(o)
}

type workflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	i *Interceptor
}

func (o *workflowOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	p, call := ctx.Value(callPolicyKey{}).(*policy.Policy)
	if p == nil {
		call = false
		p = o.i.typePolicy(activityType)
	}
	opts := workflow.GetActivityOptions(ctx)
	rp := RetryPolicy(p)
	if opts.RetryPolicy != nil {
		rp.NonRetryableErrorTypes = opts.RetryPolicy.NonRetryableErrorTypes
	}
	opts.RetryPolicy = rp
	applyBudget(ctx, &opts)
	ctx = workflow.WithActivityOptions(ctx, opts)
	if call {
		pj, _ := p.MarshalJSON() // never fails for a Policy
		if pl, err := converter.GetDefaultDataConverter().ToPayload(string(pj)); err == nil {
			if h := interceptor.WorkflowHeader(ctx); h != nil {
				h[HeaderKey] = pl
			}
		}
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

// RetryPolicy returns the Temporal RetryPolicy for an activity run under p
// (nil p: the OJS default), for workflows that set activity options without
// the interceptor. The activity's own errors are decided by
// [Interceptor.Handle], which overrides the interval with NextRetryDelay;
// the RetryPolicy matters where no error is returned: a timeout or a lost
// worker. So:
//
//	RetryPolicy field   from the OJS policy
//	InitialInterval     initial_interval
//	BackoffCoefficient  backoff_coefficient (1 for backoff_strategy "none")
//	MaximumInterval     max_interval
//	MaximumAttempts     MaximumAttempts(the most max_attempts of the policy and its error_rules)
//
// Temporal's schedule is exponential without jitter, so a timed-out attempt
// is retried after the OJS delay exactly for the exponential and none
// strategies without jitter, and after Temporal's exponential delay
// otherwise.
func RetryPolicy(p *policy.Policy) *temporal.RetryPolicy {
	s := p.Spec()
	c := s.BackoffCoefficient
	if s.Strategy == backoff.None {
		c = 1
	}
	return &temporal.RetryPolicy{
		InitialInterval:    s.InitialInterval,
		BackoffCoefficient: c,
		MaximumInterval:    s.MaxInterval,
		MaximumAttempts:    MaximumAttempts(int64(maxAttemptsOf(p))),
	}
}

// MaximumAttempts maps OJS max_attempts onto Temporal's int32
// RetryPolicy.MaximumAttempts, where 0 means unlimited. It saturates and
// never wraps:
//
//	max_attempts            MaximumAttempts
//	< 1 (0 behaves as 1)    1
//	1 … math.MaxInt32       the same number
//	> math.MaxInt32         0 (unlimited: Temporal cannot count that far)
func MaximumAttempts(maxAttempts int64) int32 {
	switch {
	case maxAttempts < 1:
		return 1
	case maxAttempts > math.MaxInt32:
		return 0
	}
	return int32(maxAttempts)
}
