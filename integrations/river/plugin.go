package riverretry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// maxRiverAttempts is the largest value River's smallint attempt and
// max_attempts columns hold.
const maxRiverAttempts = math.MaxInt16

// Plugin connects an OJS retry policy to a River client. Build one with
// [New] or [Parse] and hand it to a client with [Plugin.Install].
//
// A Plugin's settings are fixed once built, and it is safe for concurrent
// use by any number of clients and workers (the per-job policy caches inside
// it are synchronized). Do not copy a Plugin after first use. The zero Plugin
// is usable and behaves as New(nil): the OJS default policy with jitter from
// [backoff.Random].
type Plugin struct {
	river.PluginDefaults

	def   *policy.Policy
	src   backoff.Source
	now   func() time.Time // nil: time.Now
	byRaw policyCache      // policy JSON -> policy
	byMD  policyCache      // a job's whole metadata -> its policy
	// pending hands a failure from the middleware to NextRetry
	// (extensions.go).
	pending pendingFailures
}

// Compile-time checks of the three River roles.
var (
	_ river.ClientRetryPolicy    = (*Plugin)(nil)
	_ rivertype.HookInsertBegin  = (*Plugin)(nil)
	_ rivertype.WorkerMiddleware = (*Plugin)(nil)
	_ rivertype.Plugin           = (*Plugin)(nil)
)

// Option configures a Plugin.
type Option func(*Plugin)

// WithSource makes the plugin draw jitter from src instead of
// [backoff.Random]. src must be safe for concurrent use when the client
// runs several workers (a *math/rand/v2.Rand is not; [backoff.Fixed] is).
// A nil src keeps the default.
func WithSource(src backoff.Source) Option {
	return func(p *Plugin) { p.src = src }
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

// Install makes cfg use the plugin: it sets cfg.RetryPolicy and appends the
// plugin to cfg.Plugins, where River finds its insert hook and its worker
// middleware. Call it before river.NewClient. A nil cfg is left alone.
func (p *Plugin) Install(cfg *river.Config) {
	if cfg == nil {
		return
	}
	cfg.RetryPolicy = p
	cfg.Plugins = append(cfg.Plugins, p)
}

// Policy returns the policy that decides for job: the per-job policy in its
// metadata ([MetadataKey]) when there is a valid one, else the plugin's
// default. A nil job gets the default.
func (p *Plugin) Policy(job *rivertype.JobRow) *policy.Policy {
	pol, _ := p.policyFor(job)
	return pol
}

// policyFor is Policy with the error of an unreadable per-job policy.
func (p *Plugin) policyFor(job *rivertype.JobRow) (*policy.Policy, error) {
	var def *policy.Policy
	if p != nil {
		def = p.def
	}
	if job == nil {
		return def, nil
	}
	if !hasPolicyKey(job.Metadata) {
		return def, nil
	}
	if p != nil {
		if pol, ok := p.byMD.load(job.Metadata); ok {
			if pol == nil { // metadata seen before, without a policy
				return def, nil
			}
			return pol, nil
		}
	}
	raw, ok, err := metadataPolicy(job.Metadata)
	if err != nil {
		return def, err
	}
	if !ok {
		if p != nil {
			p.byMD.store(job.Metadata, nil)
		}
		return def, nil
	}
	pol, err := p.parse(raw)
	if err != nil {
		return def, fmt.Errorf("riverretry: job %d metadata %s: %w", job.ID, MetadataKey, err)
	}
	if p != nil {
		p.byMD.store(job.Metadata, pol)
	}
	return pol, nil
}

// Delay returns the backoff delay after the failed attempt job.Attempt under
// the job's policy, with jitter drawn from the plugin's source. An attempt
// below 1 counts as 1. A nil job gets the first delay of the default policy.
func (p *Plugin) Delay(job *rivertype.JobRow) time.Duration {
	attempt := 1
	if job != nil {
		attempt = max(job.Attempt, 1)
	}
	var src backoff.Source
	if p != nil {
		src = p.src
	}
	return p.Policy(job).Backoff().Delay(attempt, src)
}

// NextRetry implements river.ClientRetryPolicy: the time of the next attempt
// is now plus [Plugin.Delay]. River calls it only for a failure that is to be
// retried; the decision to end a job early is taken by [Plugin.Work].
//
// River counts differently from its own default policy here on purpose: the
// default uses len(job.Errors)+1 for compatibility with old snoozes, the
// plugin uses job.Attempt, which River keeps equal to the number of the
// attempt that just failed (docs/decisions.md RK-80).
func (p *Plugin) NextRetry(job *rivertype.JobRow) time.Time {
	now := time.Now
	if p != nil && p.now != nil {
		now = p.now
	}
	if p != nil && job != nil {
		if f, ok := p.pending.take(job.ID); ok {
			var src backoff.Source = p.src
			if d, err := p.Policy(job).Decide(f, src); err == nil && d.Action == policy.Retry {
				return now().UTC().Add(d.Delay)
			}
		}
	}
	return now().UTC().Add(p.Delay(job))
}

// Decide is the decision for the failure err of the attempt job.Attempt, as
// [Plugin.Work] takes it: the error type and code come from
// errmatch.Classify(err), the policy from [Plugin.Policy]. It reports an
// error (errors.Is policy.ErrInvalidFailure) for an attempt below 1 or a code
// errmatch does not know. The jitter of a Retry delay is drawn at 0.5 (no
// change); the delay River uses is the one NextRetry draws.
func (p *Plugin) Decide(job *rivertype.JobRow, err error) (policy.Decision, error) {
	attempt := 0
	if job != nil {
		attempt = job.Attempt
	}
	errType, code, _ := errmatch.Classify(err)
	return p.Policy(job).DecideAt(policy.Failure{Attempt: attempt, ErrorType: errType, Code: code}, 0.5)
}

// Work implements rivertype.WorkerMiddleware. It runs the worker and, when
// it fails with an ordinary error, decides with the job's policy:
//
//  1. A nil error, or an error River defines itself (river.JobCancel,
//     river.JobSnooze), is returned unchanged.
//  2. Retry: the error is returned unchanged and River retries the job after
//     [Plugin.NextRetry] (or discards it if River's own max_attempts is
//     lower than the policy's).
//  3. Discard: river.JobCancel of an [*EndError]: the job is cancelled with
//     the error recorded.
//  4. DeadLetter: the [*EndError] is returned and the job's MaxAttempts is
//     lowered to its current attempt, so River discards it now with the
//     error recorded (RK-82).
//
// A failure Decide cannot judge (an unknown handler code) is not guessed at:
// the job is dead-lettered, with that problem joined to the worker's error,
// so that it is kept for inspection. A per-job policy that cannot be read
// (metadata written around [Plugin.InsertBegin]) gives way to the default
// policy, and its error is joined to the worker's error that River records.
//
// A worker that panics never returns through the middleware: River records
// the panic and, as for an untyped failure, retries it at [Plugin.NextRetry]
// until the job's max_attempts, where River discards it.
func (p *Plugin) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	ctx, cancel := attemptContext(ctx, job)
	err := doInner(ctx)
	cancel()
	if err == nil || job == nil {
		return err
	}
	var cancelErr *rivertype.JobCancelError
	var snoozeErr *rivertype.JobSnoozeError
	if errors.As(err, &cancelErr) || errors.As(err, &snoozeErr) {
		return err
	}
	pol, perr := p.policyFor(job)
	f := failureOf(job, err)
	d, why, berr, derr := p.decideFailure(job, pol, f)
	if derr != nil {
		d, why = policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonHandlerCode}, budget.ReasonPolicy
	}
	if perr != nil || berr != nil || derr != nil {
		err = errors.Join(err, perr, berr, derr)
	}
	if d.Action == policy.Retry {
		if d.Reason == policy.ReasonSnoozed {
			return river.JobSnooze(d.Delay) // River gives the attempt back
		}
		if job.Attempt >= job.MaxAttempts && job.Attempt < maxRiverAttempts {
			job.MaxAttempts = job.Attempt + 1 // an error rule allows more attempts than the row
		}
		if p != nil && needsHandOver(pol, f, d) {
			p.pending.put(job.ID, f)
		}
	}
	switch d.Action {
	case policy.Discard:
		return river.JobCancel(&EndError{Decision: d, Budget: why, Err: err})
	case policy.DeadLetter:
		job.MaxAttempts = job.Attempt
		return &EndError{Decision: d, Budget: why, Err: err}
	default:
		return err
	}
}

// EndError is the error a job ends with when its policy stops retrying it
// early: the decision and the worker's error. River records its message in
// the job's errors. It matches the worker's error with errors.Is and
// errors.As.
//
// The zero value is a retry decision with no cause. An EndError is never
// modified after Work returns it, so it is safe to share.
type EndError struct {
	Decision policy.Decision // Action Discard or DeadLetter, and its Reason
	// Budget is the time-budget rule that ended the job (total_timeout,
	// no_time_left), or budget.ReasonPolicy when the policy did.
	Budget budget.Reason
	Err    error // the worker's error
}

// Error returns "riverretry: ACTION (REASON): CAUSE", e.g.
// "riverretry: discard (non_retryable): validation.bad_input: no such user";
// REASON is the budget rule (total_timeout, no_time_left) when one decided.
func (e *EndError) Error() string {
	reason := e.Decision.Reason.String()
	if e.Budget != budget.ReasonPolicy {
		reason = e.Budget.String()
	}
	msg := "riverretry: " + e.Decision.Action.String() + " (" + reason + ")"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the worker's error.
func (e *EndError) Unwrap() error { return e.Err }

// InsertBegin implements rivertype.HookInsertBegin. Before a job is inserted
// it settles the job's policy and sets max_attempts from it:
//
//  1. Args implementing [ArgsWithPolicy] with a non-nil policy: the policy
//     is written into the metadata under [MetadataKey].
//  2. Otherwise a policy already under MetadataKey (put there with
//     [Metadata]) must parse, or the insert fails with an error naming the key.
//  3. Otherwise the default policy applies and the metadata is unchanged.
//
// max_attempts becomes the policy's max_attempts (0 counts as 1), clamped to
// River's column limit 32767 (RK-80, RK-83).
func (p *Plugin) InsertBegin(_ context.Context, params *rivertype.JobInsertParams) error {
	if params == nil {
		return nil
	}
	var pol *policy.Policy
	if a, ok := params.Args.(ArgsWithPolicy); ok {
		pol = a.RetryPolicy()
	}
	if pol != nil {
		md, err := withPolicy(params.Metadata, pol)
		if err != nil {
			return err
		}
		params.Metadata = md
	} else {
		raw, ok, err := metadataPolicy(params.Metadata)
		if err != nil {
			return err
		}
		if ok {
			if pol, err = p.parse(raw); err != nil {
				return fmt.Errorf("riverretry: insert %s: metadata %s: %w", params.Kind, MetadataKey, err)
			}
		} else if p != nil {
			pol = p.def
		}
	}
	if _, _, err := metadataBudget(params.Metadata); err != nil {
		return fmt.Errorf("riverretry: insert %s: %w", params.Kind, err)
	}
	params.MaxAttempts = riverAttempts(pol.Spec().MaxAttempts)
	return nil
}

// riverAttempts maps OJS max_attempts to River's: 0 behaves as 1 (RK-04) and
// the smallint column caps it.
func riverAttempts(n int) int {
	return min(max(n, 1), maxRiverAttempts)
}

// parse returns the parsed per-job policy raw, cached.
func (p *Plugin) parse(raw []byte) (*policy.Policy, error) {
	if p == nil {
		return policy.Parse(raw)
	}
	return p.byRaw.get(raw)
}
