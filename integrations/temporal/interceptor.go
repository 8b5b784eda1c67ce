package temporalretry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// HeaderKey is the activity header that carries a call's own OJS retry
// policy, as canonical JSON in a payload of the default data converter.
const HeaderKey = "retrykit-policy"

// minDelay is the shortest NextRetryDelay sent: the server reads a zero
// delay as "none given" in the SDK and as a timeout in its retry code.
const minDelay = time.Nanosecond

// Interceptor applies OJS retry policies to Temporal activities. It is an
// interceptor.WorkerInterceptor: put it in worker.Options.Interceptors. On
// the activity side it turns each failure into the policy's decision
// ([Interceptor.Handle]); on the workflow side it sends the call's policy
// in the header [HeaderKey] and sets the activity's RetryPolicy from it.
//
// An Interceptor's settings are fixed once built, and it is safe for
// concurrent use. Do not copy one after first use. The zero Interceptor is
// usable and behaves as New(nil): the OJS default policy, jitter from
// [backoff.Random], no dead-letter hook.
type Interceptor struct {
	interceptor.WorkerInterceptorBase
	def        *policy.Policy
	byType     map[string]*policy.Policy // per activity type defaults
	src        backoff.Source
	deadLetter DeadLetterFunc
	cache      policyCache
	infoOf     func(context.Context) (activity.Info, bool) // nil: activityInfo; a test seam
}

var _ interceptor.WorkerInterceptor = (*Interceptor)(nil)

// Option configures an Interceptor.
type Option func(*Interceptor)

// WithSource makes the interceptor draw jitter from src instead of
// [backoff.Random]. src must be safe for concurrent use, since activities
// run on many goroutines ([backoff.Fixed] is; a *math/rand/v2.Rand is not).
// A nil src keeps the default.
func WithSource(src backoff.Source) Option {
	return func(i *Interceptor) { i.src = src }
}

// WithActivityPolicy makes p the policy of activities of type activityType,
// in place of the interceptor's default. A call's own policy ([WithPolicy])
// still wins. A nil p removes the entry.
func WithActivityPolicy(activityType string, p *policy.Policy) Option {
	return func(i *Interceptor) {
		if p == nil {
			delete(i.byType, activityType)
			return
		}
		if i.byType == nil {
			i.byType = map[string]*policy.Policy{}
		}
		i.byType[activityType] = p
	}
}

// WithDeadLetter sets the hook called, in the activity's worker, for every
// failure the policy sends to the dead letter queue, before the activity
// fails for good. A nil fn removes the hook.
func WithDeadLetter(fn DeadLetterFunc) Option {
	return func(i *Interceptor) { i.deadLetter = fn }
}

// DeadLetterFunc publishes a dead-lettered activity elsewhere: another
// queue, a table, a topic. Temporal has no dead-letter state, so the
// activity fails either way, with its error kept in the workflow history
// (docs/decisions.md RK-140). An error returned by the hook is joined to
// the activity's final error. The hook runs on the activity's goroutine
// with the activity's context; it must be safe for concurrent use.
type DeadLetterFunc func(ctx context.Context, dl DeadLetter) error

// DeadLetter describes an activity sent to the dead letter queue.
// It is a plain value; Args is shared with the activity, so do not modify it.
type DeadLetter struct {
	Info     activity.Info // the activity, its workflow and the attempt that failed
	Args     []any         // the activity's arguments, nil when called through Handle
	Decision policy.Decision
	Err      error // the handler's error
}

// New returns an Interceptor whose default policy is def; a nil def means
// policy.Default().
func New(def *policy.Policy, opts ...Option) *Interceptor {
	i := &Interceptor{def: def}
	for _, o := range opts {
		o(i)
	}
	return i
}

// Parse is New with the default policy decoded from OJS JSON by
// [policy.Parse]; its errors are policy's (errors.Is policy.ErrInvalidPolicy).
func Parse(data []byte, opts ...Option) (*Interceptor, error) {
	def, err := policy.Parse(data)
	if err != nil {
		return nil, err
	}
	return New(def, opts...), nil
}

// typePolicy returns the policy for an activity type without a call policy.
func (i *Interceptor) typePolicy(activityType string) *policy.Policy {
	if i == nil {
		return nil
	}
	if p, ok := i.byType[activityType]; ok {
		return p
	}
	return i.def
}

// policyFor returns the policy of a call: the header's when there is a
// valid one, else its type's, with the error of an unreadable header.
func (i *Interceptor) policyFor(activityType string, header map[string]*commonpb.Payload) (*policy.Policy, error) {
	def := i.typePolicy(activityType)
	pl, ok := header[HeaderKey]
	if !ok {
		return def, nil
	}
	parse := func() (*policy.Policy, error) {
		var raw string
		if err := converter.GetDefaultDataConverter().FromPayload(pl, &raw); err != nil {
			return nil, err
		}
		return policy.Parse([]byte(raw))
	}
	var p *policy.Policy
	var err error
	if i == nil || len(pl.GetData()) > cacheKeyLimit ||
		string(pl.GetMetadata()[converter.MetadataEncoding]) != converter.MetadataEncodingJSON {
		p, err = parse()
	} else {
		p, err = i.cache.get(string(pl.GetData()), parse)
	}
	if err != nil {
		return def, fmt.Errorf("temporalretry: activity %s header %s: %w", activityType, HeaderKey, err)
	}
	return p, nil
}

// InterceptActivity wraps an activity so that the error it returns goes
// through [Interceptor.Handle], with the call's header policy.
func (i *Interceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	a := &activityInbound{i: i}
	a.Next = next
	return a
}

type activityInbound struct {
	interceptor.ActivityInboundInterceptorBase
	i *Interceptor
}

func (a *activityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	if err == nil {
		return res, nil
	}
	return res, a.i.handle(ctx, err, interceptor.Header(ctx), in.Args)
}

// Handle turns err, returned by the activity running in ctx, into the error
// the activity should return so that Temporal follows the activity's OJS
// policy. It is what the interceptor does after every activity; call it
// directly (return rk.Handle(ctx, err)) where the interceptor cannot be
// installed. Without the interceptor there is no header, so the policy is
// the activity type's or the default. For each error, in order:
//
//  1. nil, activity.ErrResultPending, a cancellation, a context outside an
//     activity or in a local activity, or an ApplicationError already
//     marked non-retryable: returned unchanged.
//  2. The failure is classified: the type and code attached with
//     errmatch.Wrap, else the type of a temporal.ApplicationError in the
//     chain; the attempt is activity.GetInfo(ctx).Attempt. The policy
//     decides ([policy.Policy.Decide], jitter from the interceptor's source).
//  3. Retry: a retryable ApplicationError with NextRetryDelay set to the
//     decision's delay (at least 1ns, since Temporal reads 0 as unset).
//  4. Discard or DeadLetter: a non-retryable ApplicationError, so the
//     activity fails now; for DeadLetter the [DeadLetterFunc] runs first.
//
// The ApplicationError's type is the failure's type (for an untyped Go
// error, the name Temporal itself would give it), its message
// "temporalretry: retry after DELAY" or "temporalretry: ACTION (REASON)",
// its cause the handler's error, and its one detail an [Outcome]. A failure
// the policy cannot judge (an unknown handler code) is dead-lettered with
// that problem joined to the error, as is an unreadable header policy
// (whose call then uses the type's policy).
func (i *Interceptor) Handle(ctx context.Context, err error) error {
	return i.handle(ctx, err, nil, nil)
}

func (i *Interceptor) handle(ctx context.Context, err error, header map[string]*commonpb.Payload, args []any) error {
	if err == nil || errors.Is(err, activity.ErrResultPending) ||
		temporal.IsCanceledError(err) || errors.Is(err, context.Canceled) {
		return err
	}
	infoOf := activityInfo
	if i != nil && i.infoOf != nil {
		infoOf = i.infoOf
	}
	info, ok := infoOf(ctx)
	if !ok || info.IsLocalActivity {
		return err
	}
	var app *temporal.ApplicationError
	isApp := errors.As(err, &app)
	if isApp && app.NonRetryable() {
		if cut, size := fitFailure(err, app.Type(), true); size > 0 {
			return cut
		}
		return err
	}
	pol, perr := i.policyFor(info.ActivityType.Name, header)
	errType, code, typed := errmatch.Classify(err)
	if !typed && isApp {
		errType = app.Type()
	}
	var src backoff.Source
	if i != nil {
		src = i.src
	}
	d, why, derr := decideFailure(info, pol, policy.Failure{Attempt: max(int(info.Attempt), 1), ErrorType: errType, Code: code,
		Request: requestOf(err, app)}, src, time.Now())
	if derr != nil {
		d, why = policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonHandlerCode}, budget.ReasonPolicy
	}
	reason := d.Reason.String()
	if why != budget.ReasonPolicy {
		reason = why.String()
	}
	orig := err
	if perr != nil || derr != nil {
		err = errors.Join(err, perr, derr)
	}
	tType := errType
	if !typed && !isApp {
		tType = goTypeName(orig)
	}
	out := Outcome{Action: d.Action.String(), Reason: reason, Attempt: int(info.Attempt), ErrorType: errType, Delay: d.Delay}
	if cut, size := fitFailure(err, tType, false); size > 0 {
		err, out.CutFrom = cut, size
	}
	if d.Action == policy.Retry {
		delay := max(d.Delay, minDelay)
		return temporal.NewApplicationErrorWithOptions("temporalretry: retry after "+delay.String(), tType, temporal.ApplicationErrorOptions{
			Cause:          err,
			Details:        []any{out},
			NextRetryDelay: delay,
		})
	}
	if d.Action == policy.DeadLetter && i != nil && i.deadLetter != nil {
		if herr := i.deadLetter(ctx, DeadLetter{Info: info, Args: args, Decision: d, Err: orig}); herr != nil {
			err = errors.Join(err, fmt.Errorf("temporalretry: dead-letter hook: %w", herr))
		}
	}
	return temporal.NewApplicationErrorWithOptions("temporalretry: "+d.Action.String()+" ("+reason+")", tType, temporal.ApplicationErrorOptions{
		NonRetryable: true,
		Cause:        err,
		Details:      []any{out},
	})
}

// activityInfo returns the info of the activity running in ctx, with ok
// false outside an activity.
func activityInfo(ctx context.Context) (activity.Info, bool) {
	if ctx == nil || !activity.IsActivity(ctx) {
		return activity.Info{}, false
	}
	return activity.GetInfo(ctx), true
}

// goTypeName is the error type Temporal's SDK gives a Go error it converts
// to an ApplicationError: the name of its type with pointers removed, and ""
// for the errors.New type.
func goTypeName(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "errorString" {
		return ""
	}
	return t.Name()
}

// Outcome is the decision recorded as the one detail of every error
// [Interceptor.Handle] returns, so that a workflow can read why its
// activity failed with [OutcomeOf]. It is a plain value.
type Outcome struct {
	Action    string        `json:"action"`     // "retry", "discard" or "dead_letter"
	Reason    string        `json:"reason"`     // "retry", "handler_code", "non_retryable", "exhausted", "total_timeout" or "no_time_left"
	Attempt   int           `json:"attempt"`    // the attempt that failed, from 1
	ErrorType string        `json:"error_type"` // the OJS error type, "" when untyped
	Delay     time.Duration `json:"delay_ns"`   // the requested NextRetryDelay; 0 unless Action is "retry"
	// CutFrom is the size in bytes of the handler's error as Temporal
	// would have received it (its failure message), when it was over
	// [MaxFailureBytes] and so cut to fit; 0 when it was not cut.
	CutFrom int `json:"cut_from,omitempty"`
}

// MaxFailureBytes bounds the failure an activity reports through the
// interceptor (the handler's error and its causes, encoded as Temporal's
// Failure message), well under Temporal's own limits: the server replaces
// a failure over limit.blobSize.error (2 MB by default) with a
// non-retryable "Failure exceeds size limit." (so a retryable error ran
// once), and a response over gRPC's 4 MiB cannot be sent at all (the
// attempt then ends only at its StartToClose timeout, and the error is
// lost). A larger error is replaced by a temporal.ApplicationError of the
// same type and non-retryable flag whose message is the original's cut to
// fit and says so; its causes and details are dropped, and the
// [Outcome]'s CutFrom gives the original size (docs/decisions.md RK-171).
const MaxFailureBytes = 64 << 10

// fitFailure returns, for an error whose failure (as the default failure
// converter encodes it) is over MaxFailureBytes less room for the
// interceptor's own wrapper, an ApplicationError of type typ and flag
// nonRetryable with the error's message cut to fit, and the original
// failure's size; otherwise nil and 0.
func fitFailure(err error, typ string, nonRetryable bool) (error, int) {
	const room = 4 << 10 // the wrapper's message, type and Outcome detail
	size := temporal.GetDefaultFailureConverter().ErrorToFailure(err).Size()
	if size <= MaxFailureBytes-room {
		return nil, 0
	}
	msg := err.Error()
	note := fmt.Sprintf(" [temporalretry: error of %d bytes cut to fit Temporal's size limits]", size)
	keep := max(min(len(msg), MaxFailureBytes-2*room-len(note)-len(typ)), 0)
	for keep > 0 && keep < len(msg) && !utf8.RuneStart(msg[keep]) {
		keep-- // cut at a rune boundary
	}
	return temporal.NewApplicationErrorWithOptions(strings.ToValidUTF8(msg[:keep], "\uFFFD")+note, typ,
		temporal.ApplicationErrorOptions{NonRetryable: nonRetryable}), size
}

// OutcomeOf finds, in err's chain (an activity's error as a workflow sees
// it, a *temporal.ActivityError, or Handle's own result), the ApplicationError
// made by [Interceptor.Handle] and returns its Outcome, with ok false when
// there is none.
func OutcomeOf(err error) (o Outcome, ok bool) {
	var app *temporal.ApplicationError
	for e := err; errors.As(e, &app); e = app.Unwrap() {
		if o, ok = details(app); ok {
			return o, true
		}
	}
	return Outcome{}, false
}

// details reads app's one detail as an Outcome. The SDK panics when a
// local error's detail has another type, so that is recovered as "none".
func details(app *temporal.ApplicationError) (o Outcome, ok bool) {
	defer func() {
		if recover() != nil {
			o, ok = Outcome{}, false
		}
	}()
	if !app.HasDetails() || app.Details(&o) != nil || o.Action == "" {
		return Outcome{}, false
	}
	return o, true
}
