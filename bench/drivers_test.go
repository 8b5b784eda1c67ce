package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	retrygo "github.com/avast/retry-go/v5"
	cenkalti "github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/common"
	fspolicy "github.com/failsafe-go/failsafe-go/policy"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	goretry "github.com/sethvargo/go-retry"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// The shared schedule. Every driver below is configured from these values only.
const (
	initial    = time.Second
	multiplier = 2.0
	maxDelay   = 5 * time.Minute
	// cycle is how many attempts a driver walks before it starts again at 1.
	cycle = 20
	// additiveJitter is retry-go's MaxJitter: its jitter adds [0, additiveJitter).
	additiveJitter = initial
)

// policyJSON is the OJS retry policy with the shared schedule.
func policyJSON(jitter bool) string {
	return fmt.Sprintf(`{"initial_interval":"PT1S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":%t}`, jitter)
}

func mustPolicy(tb testing.TB, jitter bool) *policy.Policy {
	tb.Helper()
	p, err := policy.Parse([]byte(policyJSON(jitter)))
	if err != nil {
		tb.Fatalf("policy.Parse(%s): %v", policyJSON(jitter), err)
	}
	return p
}

// fixedDraw is the r given to backoff.Fixed and DelayAt.
const fixedDraw = 0.37

// ---- retrykit ----

// retrykitDriver computes delays through Backoff.Delay with an injected source.
type retrykitDriver struct {
	bo  *backoff.Backoff
	src backoff.Source
	n   int
}

func newRetrykitPCG(tb testing.TB, jitter bool) *retrykitDriver {
	return &retrykitDriver{bo: mustPolicy(tb, jitter).Backoff(), src: backoff.NewPCG(1, 2)}
}

func newRetrykitRandPCG(tb testing.TB, jitter bool) *retrykitDriver {
	return &retrykitDriver{bo: mustPolicy(tb, jitter).Backoff(), src: rand.New(rand.NewPCG(1, 2))}
}

func newRetrykitFixed(tb testing.TB, jitter bool) *retrykitDriver {
	return &retrykitDriver{bo: mustPolicy(tb, jitter).Backoff(), src: backoff.Fixed(fixedDraw)}
}

func newRetrykitDefaultSource(tb testing.TB, jitter bool) *retrykitDriver {
	return &retrykitDriver{bo: mustPolicy(tb, jitter).Backoff(), src: backoff.Random()}
}

func (d *retrykitDriver) next() time.Duration {
	d.n++
	if d.n > cycle {
		d.n = 1
	}
	return d.bo.Delay(d.n, d.src)
}

// retrykitAtDriver computes delays through the pure Backoff.DelayAt.
type retrykitAtDriver struct {
	bo *backoff.Backoff
	r  float64
	n  int
}

func newRetrykitAt(tb testing.TB, jitter bool) *retrykitAtDriver {
	return &retrykitAtDriver{bo: mustPolicy(tb, jitter).Backoff(), r: fixedDraw}
}

func (d *retrykitAtDriver) next() time.Duration {
	d.n++
	if d.n > cycle {
		d.n = 1
	}
	return d.bo.DelayAt(d.n, d.r)
}

// ---- cenkalti/backoff/v5 ----

// cenkaltiDriver calls ExponentialBackOff.NextBackOff and resets it every cycle.
// Jitter: RandomizationFactor 0.5 draws from [0.5, 1.5] times the capped
// interval (from the global math/rand/v2 generator); there is no cap after it.
type cenkaltiDriver struct {
	eb *cenkalti.ExponentialBackOff
	n  int
}

func newCenkalti(jitter bool) *cenkaltiDriver {
	rf := 0.0
	if jitter {
		rf = 0.5
	}
	eb := &cenkalti.ExponentialBackOff{
		InitialInterval:     initial,
		RandomizationFactor: rf,
		Multiplier:          multiplier,
		MaxInterval:         maxDelay,
	}
	eb.Reset()
	return &cenkaltiDriver{eb: eb}
}

func (d *cenkaltiDriver) next() time.Duration {
	d.n++
	if d.n > cycle {
		d.n = 1
		d.eb.Reset()
	}
	return d.eb.NextBackOff()
}

// ---- sethvargo/go-retry ----

// goRetryDriver calls Backoff.Next on NewExponential wrapped in
// WithCappedDuration, rebuilt every cycle (the exponential backoff has no
// reset). Jitter: WithJitterPercent(50) multiplies by 1 - k/100 for an integer
// k drawn from [-50, 49] (global math/rand/v2), capped again afterwards.
type goRetryDriver struct {
	b      goretry.Backoff
	jitter bool
	n      int
}

func buildGoRetry(jitter bool) goretry.Backoff {
	b := goretry.WithCappedDuration(maxDelay, goretry.NewExponential(initial))
	if jitter {
		b = goretry.WithCappedDuration(maxDelay, goretry.WithJitterPercent(50, b))
	}
	return b
}

func newGoRetry(jitter bool) *goRetryDriver {
	return &goRetryDriver{b: buildGoRetry(jitter), jitter: jitter}
}

func (d *goRetryDriver) next() time.Duration {
	d.n++
	if d.n > cycle {
		d.n = 1
		d.b = buildGoRetry(d.jitter)
	}
	v, _ := d.b.Next()
	return v
}

// ---- avast/retry-go/v5 ----

// retryGoDriver calls the configured DelayTypeFunc with the Retrier as its
// DelayContext, then applies the Retrier's MaxDelay the way the library's
// retry loop does. Jitter: CombineDelay(BackOffDelay, RandomDelay) adds a
// uniform [0, MaxJitter) (global math/rand) to the exponential delay.
type retryGoDriver struct {
	r     *retrygo.Retrier
	delay retrygo.DelayTypeFunc
	n     uint
}

func newRetryGo(jitter bool) *retryGoDriver {
	delay := retrygo.BackOffDelay
	if jitter {
		delay = retrygo.CombineDelay(retrygo.BackOffDelay, retrygo.RandomDelay)
	}
	r := retrygo.New(
		retrygo.Delay(initial),
		retrygo.MaxDelay(maxDelay),
		retrygo.MaxJitter(additiveJitter),
		retrygo.DelayType(delay),
	)
	return &retryGoDriver{r: r, delay: delay}
}

func (d *retryGoDriver) next() time.Duration {
	d.n++
	if d.n > cycle {
		d.n = 1
	}
	v := d.delay(d.n, nil, d.r)
	if m := d.r.MaxDelay(); m > 0 && v > m {
		v = m
	}
	return v
}

// ---- failsafe-go ----

// failsafe-go computes its retry delay only inside the retry policy's
// executor, which is unexported. failsafeDriver runs that executor's real
// retry loop (Apply) over an execution whose cancellation channel is already
// closed, so the loop computes each delay, arms a timer and moves on at once.
// One run is one cycle: 20 failed attempts that are retried, with delays for
// attempts 1..20, then a 21st that exhausts the policy.
type failsafeDriver struct {
	rp    retrypolicy.RetryPolicy[any]
	exec  *fakeExecution
	inner func(failsafe.Execution[any]) *common.PolicyResult[any]
}

var errAttempt = errors.New("bench: attempt failed")

func newFailsafe(jitter bool, onDelay func(time.Duration)) *failsafeDriver {
	bld := retrypolicy.NewBuilder[any]().
		WithBackoffFactor(initial, maxDelay, multiplier).
		WithMaxRetries(cycle)
	if jitter {
		bld = bld.WithJitterFactor(0.5)
	}
	if onDelay != nil {
		bld = bld.OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[any]) { onDelay(e.Delay) })
	}
	failed := &common.PolicyResult[any]{Error: errAttempt}
	closed := make(chan struct{})
	close(closed)
	return &failsafeDriver{
		rp:    bld.Build(),
		exec:  &fakeExecution{canceled: closed},
		inner: func(failsafe.Execution[any]) *common.PolicyResult[any] { return failed },
	}
}

// run performs one cycle and reports whether it ended with the policy's
// retries-exceeded error.
func (d *failsafeDriver) run() bool {
	ex := d.rp.ToExecutor(nil).(fspolicy.Executor[any])
	d.exec.retries = 0
	res := ex.Apply(d.inner)(d.exec)
	var exceeded retrypolicy.ExceededError
	return res != nil && errors.As(res.Error, &exceeded)
}

// fakeExecution is the smallest policy.ExecutionInternal the retry loop needs:
// no elapsed time, never cancelled with a result, and a Canceled channel that
// is already closed so that no timer is waited for.
type fakeExecution struct {
	retries  int
	canceled chan struct{}
}

var _ fspolicy.ExecutionInternal[any] = (*fakeExecution)(nil)

func (e *fakeExecution) Context() context.Context                    { return context.Background() }
func (e *fakeExecution) Attempts() int                               { return e.retries + 1 }
func (e *fakeExecution) Executions() int                             { return e.retries + 1 }
func (e *fakeExecution) Retries() int                                { return e.retries }
func (e *fakeExecution) Hedges() int                                 { return 0 }
func (e *fakeExecution) StartTime() time.Time                        { return time.Time{} }
func (e *fakeExecution) ElapsedTime() time.Duration                  { return 0 }
func (e *fakeExecution) LastResult() any                             { return nil }
func (e *fakeExecution) LastError() error                            { return nil }
func (e *fakeExecution) IsFirstAttempt() bool                        { return e.retries == 0 }
func (e *fakeExecution) IsRetry() bool                               { return e.retries > 0 }
func (e *fakeExecution) IsHedge() bool                               { return false }
func (e *fakeExecution) AttemptStartTime() time.Time                 { return time.Time{} }
func (e *fakeExecution) ElapsedAttemptTime() time.Duration           { return 0 }
func (e *fakeExecution) IsCanceled() bool                            { return false }
func (e *fakeExecution) Canceled() <-chan struct{}                   { return e.canceled }
func (e *fakeExecution) Cancel(*common.PolicyResult[any])            {}
func (e *fakeExecution) DeferCancel() func()                         { return func() {} }
func (e *fakeExecution) CopyForCancellable() failsafe.Execution[any] { return e }
func (e *fakeExecution) CopyForHedge() failsafe.Execution[any]       { return e }

func (e *fakeExecution) RecordResult(*common.PolicyResult[any]) *common.PolicyResult[any] {
	return nil
}

func (e *fakeExecution) InitializeRetry() *common.PolicyResult[any] {
	e.retries++
	return nil
}

func (e *fakeExecution) IsCanceledWithResult() (bool, *common.PolicyResult[any]) {
	return false, nil
}

func (e *fakeExecution) CopyWithResult(*common.PolicyResult[any]) failsafe.Execution[any] {
	return e
}

func policyDefaultBackoffConfig() backoff.Config { return policy.Default().Backoff().Config() }
