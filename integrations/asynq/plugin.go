package asynqretry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// HeaderKey is the task header that holds a task's own OJS retry policy, as
// canonical JSON.
const HeaderKey = "retrykit-policy"

// Plugin connects an OJS retry policy to an asynq server. Build one with
// [New] or [Parse]; install it with [Plugin.Install] and [Plugin.Handler].
//
// A Plugin's settings are fixed once built, and it is safe for concurrent
// use (the per-task policy cache inside it is synchronized). Do not copy a
// Plugin after first use. The zero Plugin is usable and behaves as New(nil):
// the OJS default policy with jitter from [backoff.Random].
type Plugin struct {
	def    *policy.Policy
	byType map[string]*policy.Policy // per task type defaults
	src    backoff.Source
	now    func() time.Time                             // nil: time.Now
	count  func(context.Context) (retried int, ok bool) // nil: asynq.GetRetryCount
	cache  policyCache
}

// Compile-time checks of the asynq roles.
var (
	_ asynq.RetryDelayFunc = (*Plugin)(nil).RetryDelay
	_ asynq.MiddlewareFunc = (*Plugin)(nil).Handler
)

// Option configures a Plugin.
type Option func(*Plugin)

// WithSource makes the plugin draw jitter from src instead of
// [backoff.Random]. src must be safe for concurrent use, since asynq calls
// RetryDelay from its worker goroutines (a *math/rand/v2.Rand is not;
// [backoff.Fixed] is). A nil src keeps the default.
func WithSource(src backoff.Source) Option {
	return func(p *Plugin) { p.src = src }
}

// WithTypePolicy makes p the default policy of tasks of type typename (the
// handler's default), in place of the plugin's default. A task's own policy
// ([NewTask]) still wins. A nil p removes typename's entry. Enqueue such
// tasks with [MaxRetry](p) when p allows more than 26 attempts.
func WithTypePolicy(typename string, p *policy.Policy) Option {
	return func(pl *Plugin) {
		if p == nil {
			delete(pl.byType, typename)
			return
		}
		if pl.byType == nil {
			pl.byType = map[string]*policy.Policy{}
		}
		pl.byType[typename] = p
	}
}

// New returns a Plugin whose default policy is def; a nil def means
// policy.Default().
func New(def *policy.Policy, opts ...Option) *Plugin {
	p := &Plugin{def: def}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Parse is New with the default policy decoded from OJS JSON by
// [policy.Parse]; its errors are policy's (errors.Is policy.ErrInvalidPolicy).
func Parse(data []byte, opts ...Option) (*Plugin, error) {
	def, err := policy.Parse(data)
	if err != nil {
		return nil, err
	}
	return New(def, opts...), nil
}

// Install sets cfg.RetryDelayFunc to [Plugin.RetryDelay] and
// cfg.IsFailure to [Plugin.IsFailure] (kept in force after an IsFailure
// the config already had: an error is a failure when both say so). The
// server must also run its handler through [Plugin.Handler]. A nil cfg is
// left alone.
func (p *Plugin) Install(cfg *asynq.Config) {
	if cfg == nil {
		return
	}
	cfg.RetryDelayFunc = p.RetryDelay
	if prev := cfg.IsFailure; prev != nil {
		cfg.IsFailure = func(err error) bool { return p.IsFailure(err) && prev(err) }
	} else {
		cfg.IsFailure = p.IsFailure
	}
}

// Policy returns the policy that decides for t: the per-task policy in its
// [HeaderKey] header when there is a valid one, else the policy of its type
// ([WithTypePolicy]), else the plugin's default. A nil t gets the default.
func (p *Plugin) Policy(t *asynq.Task) *policy.Policy {
	pol, _ := p.policyFor(t)
	return pol
}

// policyFor is Policy with the error of an unreadable header.
func (p *Plugin) policyFor(t *asynq.Task) (*policy.Policy, error) {
	if t == nil {
		if p == nil {
			return nil, nil
		}
		return p.def, nil
	}
	var def *policy.Policy
	if p != nil {
		def = p.def
		if tp, ok := p.byType[t.Type()]; ok {
			def = tp
		}
	}
	raw, ok := t.Headers()[HeaderKey]
	if !ok {
		return def, nil
	}
	var pol *policy.Policy
	var err error
	if p == nil {
		pol, err = policy.Parse([]byte(raw))
	} else {
		pol, err = p.cache.get(raw)
	}
	if err != nil {
		return def, fmt.Errorf("asynqretry: task %s header %s: %w", t.Type(), HeaderKey, err)
	}
	return pol, nil
}

// RetryDelay is the asynq.RetryDelayFunc of the plugin: [Plugin.Delay], the
// backoff delay of t's policy after attempt n+1, n being asynq's count of
// retries done so far (0 after the first attempt), lengthened so that now
// plus the delay is a whole Unix second.
//
// A granted snooze ([*SnoozeError]), a requested delay
// (errmatch.WithRetryAfter) and an error rule in force for the error's type
// are decided with the error (docs/extensions.md): the snooze's wait, the
// requested delay bounded by max_retry_after, the rule's backoff.
//
// The rounding is there because asynq stores a retry's due time in whole
// seconds, truncated: unrounded, a retry could run up to a second before
// the policy's delay has passed. Rounded up, it never runs early and runs at
// most a second late (docs/decisions.md RK-84). A delay too close to the
// largest time.Duration to round is returned as computed.
//
// A negative n counts as 0; n = math.MaxInt gives the delay of attempt
// math.MaxInt. asynq calls RetryDelay only for a failure that is to be
// retried; the decision to end a task early is taken by [Plugin.Handler].
func (p *Plugin) RetryDelay(n int, err error, t *asynq.Task) time.Duration {
	now := time.Now
	if p != nil && p.now != nil {
		now = p.now
	}
	if d, ok := p.extensionDelay(n, err, t); ok {
		return roundUp(now(), d)
	}
	return roundUp(now(), p.Delay(n, t))
}

// source is the plugin's jitter source (nil: backoff.Random).
func (p *Plugin) source() backoff.Source {
	if p == nil {
		return nil
	}
	return p.src
}

// Delay is the backoff delay of t's policy after attempt n+1, n being
// asynq's retry count, with jitter drawn from the plugin's source: RetryDelay
// before its rounding to a whole second. A negative n counts as 0.
func (p *Plugin) Delay(n int, t *asynq.Task) time.Duration {
	var src backoff.Source
	if p != nil {
		src = p.src
	}
	return p.Policy(t).Backoff().Delay(attemptOf(n), src)
}

// roundUp lengthens d so that now+d falls on a whole Unix second, without
// overflowing.
func roundUp(now time.Time, d time.Duration) time.Duration {
	frac := time.Duration(now.Add(d).Nanosecond())
	if frac == 0 {
		return d
	}
	if d > math.MaxInt64-time.Second {
		return d
	}
	return d + time.Second - frac
}

// attemptOf maps asynq's retry count to the 1-based attempt that just
// failed, saturating.
func attemptOf(retried int) int {
	if retried < 0 {
		return 1
	}
	if retried == math.MaxInt {
		return math.MaxInt
	}
	return retried + 1
}

// Handler wraps next, the server's handler (often an *asynq.ServeMux), so
// that failures are decided by the task's policy. It is an
// asynq.MiddlewareFunc, so mux.Use(p.Handler) works too. For each failure:
//
//  1. A nil error, an error matching asynq.SkipRetry or asynq.RevokeTask,
//     or a call outside an asynq server (no retry count in ctx) returns the
//     error unchanged.
//  2. Retry: the error is returned unchanged, and asynq retries the task
//     after [Plugin.RetryDelay] (or archives it if its MaxRetry is lower than
//     the policy allows).
//  3. Discard or DeadLetter: an [*EndError], which matches asynq.SkipRetry,
//     so asynq archives the task now with that error as its last error.
//
// A failure the policy cannot judge (an unknown handler code) is not guessed
// at: the task is archived as dead_letter, with that problem joined to the
// handler's error. A per-task policy header that cannot be read gives way to
// the default policy, and its error is joined to the handler's error.
//
// A handler that panics never returns through the middleware: asynq turns
// the panic into an error after it and, as for an untyped failure, retries
// the task at [Plugin.RetryDelay] until its MaxRetry, where asynq archives
// it.
func (p *Plugin) Handler(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		now := time.Now
		if p != nil && p.now != nil {
			now = p.now
		}
		actx, cancel := attemptContext(ctx, t, now())
		err := next.ProcessTask(actx, t)
		cancel()
		if err == nil || errors.Is(err, asynq.SkipRetry) || errors.Is(err, asynq.RevokeTask) {
			return err
		}
		count := asynq.GetRetryCount
		if p != nil && p.count != nil {
			count = p.count
		}
		retried, ok := count(ctx)
		if !ok {
			return err
		}
		pol, perr := p.policyFor(t)
		errType, code, _ := errmatch.Classify(err)
		f := policy.Failure{Attempt: attemptOf(retried), ErrorType: errType, Code: code, Request: errmatch.RequestOf(err)}
		d, why, berr, derr := p.decideFailure(t, pol, f)
		if derr != nil {
			d, why = policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonHandlerCode}, budget.ReasonPolicy
		}
		if perr != nil || berr != nil || derr != nil {
			err = errors.Join(err, perr, berr, derr)
		}
		if d.Action == policy.Retry {
			if d.Reason == policy.ReasonSnoozed {
				return &SnoozeError{Delay: d.Delay, Err: err} // IsFailure: false, no retry counted
			}
			return err
		}
		return &EndError{Decision: d, Budget: why, Err: err}
	})
}

// EndError is the error a task ends with when its policy stops retrying it
// early: the decision and the handler's error. It matches asynq.SkipRetry
// with errors.Is, so asynq archives the task, and the handler's error with
// errors.Is and errors.As.
//
// The zero value is a retry decision with no cause. An EndError is never
// modified after Handler returns it, so it is safe to share.
type EndError struct {
	Decision policy.Decision // Action Discard or DeadLetter, and its Reason
	// Budget is the time-budget rule that ended the task (total_timeout,
	// no_time_left), or budget.ReasonPolicy when the policy did.
	Budget budget.Reason
	Err    error // the handler's error
}

// Error returns "asynqretry: ACTION (REASON): CAUSE", e.g.
// "asynqretry: discard (non_retryable): validation.bad_input: no such user";
// REASON is the budget rule (total_timeout, no_time_left) when one decided.
func (e *EndError) Error() string {
	reason := e.Decision.Reason.String()
	if e.Budget != budget.ReasonPolicy {
		reason = e.Budget.String()
	}
	msg := "asynqretry: " + e.Decision.Action.String() + " (" + reason + ")"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the handler's error.
func (e *EndError) Unwrap() error { return e.Err }

// Is reports whether target is asynq.SkipRetry.
func (e *EndError) Is(target error) bool { return target == asynq.SkipRetry }

// MaxRetry returns the asynq.MaxRetry option for p's max_attempts, or the
// largest max_attempts of its error rules if that is more (asynq archives a
// task at MaxRetry whatever a rule allows; the policy itself ends the task
// at the limit of the rule in force): asynq
// counts retries after the first attempt, so it is max_attempts-1, and
// max_attempts 0 behaves as 1 (no retry). asynq keeps the count as a 32-bit
// integer, so a policy allowing more than 2^31 attempts saturates at
// [MaxRetryLimit] retries, effectively unlimited, and never wraps
// (docs/decisions.md RK-150). A nil p is the OJS default (3 attempts,
// MaxRetry 2).
func MaxRetry(p *policy.Policy) asynq.Option {
	m := p.Spec().MaxAttempts
	for _, r := range p.Spec().ErrorRules {
		m = max(m, r.MaxAttempts) // asynq archives at MaxRetry whatever the rule
	}
	return asynq.MaxRetry(retryCount(m))
}

// MaxRetryLimit is the largest retry count asynq can store: its task
// message keeps MaxRetry as an int32, and a larger int wraps when the task
// is enqueued (2^31+1 becomes -2^31: the task is archived after its first
// failure).
const MaxRetryLimit = math.MaxInt32

// retryCount maps OJS max_attempts to asynq's MaxRetry: max_attempts-1, 0
// counting as 1, saturated at MaxRetryLimit.
func retryCount(maxAttempts int) int {
	return min(max(maxAttempts, 1)-1, MaxRetryLimit)
}

// NewTask returns an asynq task that carries pol as its own retry policy:
// pol's canonical JSON in the header [HeaderKey], and [MaxRetry](pol) after
// opts, so that the policy's max_attempts wins over a MaxRetry in opts. A
// nil pol makes a plain task (asynq.NewTask) that the plugin's default
// policy decides. A task that needs other headers too can be built with
// asynq.NewTaskWithHeaders, HeaderKey set to pol's MarshalJSON.
func NewTask(typename string, payload []byte, pol *policy.Policy, opts ...asynq.Option) *asynq.Task {
	if pol == nil {
		return asynq.NewTask(typename, payload, opts...)
	}
	pj, _ := pol.MarshalJSON() // never fails for a Policy
	headers := map[string]string{HeaderKey: string(pj)}
	return asynq.NewTaskWithHeaders(typename, payload, headers, append(append([]asynq.Option(nil), opts...), MaxRetry(pol))...)
}
