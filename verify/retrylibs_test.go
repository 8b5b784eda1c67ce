package verify_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	retrygo "github.com/avast/retry-go/v5"
	cenkalti "github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
	goretry "github.com/sethvargo/go-retry"

	"github.com/retrykit/retrykit/profile"
)

// The Go retry libraries of the cenkalti, retryablehttp, failsafe, retry_go
// and go_retry profiles, from the module proxy at the versions go.mod pins.

// cenkaltiSample returns the n-th NextBackOff of a fresh ExponentialBackOff
// made by mk.
func cenkaltiSample(mk func() *cenkalti.ExponentialBackOff) sampler {
	return func(n int) (time.Duration, time.Duration) {
		b := mk()
		b.Reset()
		var d time.Duration
		for range n {
			d = b.NextBackOff()
		}
		return d, d
	}
}

// TestCenkaltiReal samples cenkalti/backoff v5's ExponentialBackOff at its
// defaults, and configured ones, against the profiles' bounds.
func TestCenkaltiReal(t *testing.T) {
	t.Logf("real implementation: github.com/cenkalti/backoff/v5 %s", moduleVersion(t, "github.com/cenkalti/backoff/v5"))
	sampledSystem{profile: "cenkalti", upTo: 20, sample: cenkaltiSample(cenkalti.NewExponentialBackOff)}.check(t)
	for _, c := range []struct {
		spec string
		b    cenkalti.ExponentialBackOff
	}{
		{"cenkalti:InitialInterval=100ms,RandomizationFactor=0.2,Multiplier=3,MaxInterval=5s", cenkalti.ExponentialBackOff{InitialInterval: 100 * time.Millisecond, RandomizationFactor: 0.2, Multiplier: 3, MaxInterval: 5 * time.Second}},
		{"cenkalti:RandomizationFactor=0,Multiplier=1.005", cenkalti.ExponentialBackOff{InitialInterval: 500 * time.Millisecond, Multiplier: 1.005, MaxInterval: time.Minute}},
		{"cenkalti:RandomizationFactor=1.5,Multiplier=0.5", cenkalti.ExponentialBackOff{InitialInterval: 500 * time.Millisecond, RandomizationFactor: 1.5, Multiplier: 0.5, MaxInterval: time.Minute}},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 12; n++ {
			lo, hi := p.Bounds(n)
			// A negative real delay is a timer that fires at once: 0.
			checkSampled(t, p.Name(), n, lo, hi, func(n int) (time.Duration, time.Duration) {
				d, _ := cenkaltiSample(func() *cenkalti.ExponentialBackOff { b := c.b; return &b })(n)
				return max(d, 0), max(d, 0)
			})
		}
	}
	// WithMaxTries(4) stops after the fourth attempt.
	p, err := profile.Parse("cenkalti:MaxTries=4,InitialInterval=1ns,MaxInterval=1ns")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, _ = cenkalti.Retry(context.Background(), func() (int, error) { calls++; return 0, errors.New("retrykit verify") },
		cenkalti.WithMaxTries(4), cenkalti.WithBackOff(&cenkalti.ExponentialBackOff{InitialInterval: 1, MaxInterval: 1, Multiplier: 1}))
	if calls != p.MaxAttempts() {
		t.Errorf("cenkalti Retry with WithMaxTries(4) made %d attempts; the profile says %d", calls, p.MaxAttempts())
	}
}

// TestRetryablehttpReal runs DefaultBackoff (exact: it draws nothing), with
// and without a Retry-After header, and counts a real Client's attempts
// against a loopback server that always answers 500.
func TestRetryablehttpReal(t *testing.T) {
	t.Logf("real implementation: github.com/hashicorp/go-retryablehttp %s", moduleVersion(t, "github.com/hashicorp/go-retryablehttp"))
	f := load(t, "retryablehttp")
	p := vectorProfile(t, "retryablehttp")
	real := func(n int) time.Duration {
		return retryablehttp.DefaultBackoff(time.Second, 30*time.Second, n-1, nil)
	}
	for _, v := range f.Of("delay") {
		if got := real(v.Attempt); int64(got) != v.DelayNS {
			t.Errorf("%s: attempt %d: DefaultBackoff %v, the vector %v", v.ID, v.Attempt, got, time.Duration(v.DelayNS))
		}
	}
	for n := 1; n <= 80; n++ {
		if got, want := real(n), p.DelayAt(n, 0.5); got != want {
			t.Errorf("attempt %d: DefaultBackoff %v, the profile %v", n, got, want)
		}
	}
	for _, c := range []struct {
		spec     string
		min, max time.Duration
	}{{"retryablehttp:RetryWaitMin=250ms,RetryWaitMax=1m", 250 * time.Millisecond, time.Minute}, {"retryablehttp:RetryWaitMin=3ns,RetryWaitMax=2562047h", 3, 2562047 * time.Hour}} {
		cp, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 80; n++ {
			if got, want := retryablehttp.DefaultBackoff(c.min, c.max, n-1, nil), cp.DelayAt(n, 0); got != want {
				t.Errorf("%s: attempt %d: DefaultBackoff %v, the profile %v", c.spec, n, got, want)
			}
		}
	}
	// Retry-After on a 429 replaces the delay, uncapped.
	pra, err := p.WithRetryAfter(45 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": []string{"45"}}}
	for n := 1; n <= 6; n++ {
		if got, want := retryablehttp.DefaultBackoff(time.Second, 30*time.Second, n-1, resp), pra.DelayAt(n, 0); got != want {
			t.Errorf("Retry-After 45: attempt %d: DefaultBackoff %v, the profile %v", n, got, want)
		}
	}
	// Exhaustion: a real Client, a loopback server, waits replaced by 0.
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	cl := retryablehttp.NewClient()
	cl.Logger = nil
	var attemptNums []int
	cl.Backoff = func(min, max time.Duration, attemptNum int, resp *http.Response) time.Duration {
		attemptNums = append(attemptNums, attemptNum)
		return 0
	}
	if r, err := cl.Get(srv.URL); err == nil {
		r.Body.Close()
		t.Fatal("the client did not give up")
	}
	runs := int(hits.Load())
	t.Logf("retryablehttp: the default client made %d attempts, passing attemptNum %v to Backoff", runs, attemptNums)
	for i, a := range attemptNums {
		if a != i {
			t.Errorf("Backoff call %d (after attempt %d) got attemptNum %d; the profile passes attempt-1 = %d", i, i+1, a, i)
		}
	}
	checkDecisions(t, "retryablehttp", upTo(6), func(t *testing.T, attempts []int) []bool {
		out := make([]bool, len(attempts))
		for i, n := range attempts {
			out[i] = n < runs
		}
		return out
	})
	// RetryMax below 0: remain = RetryMax - i <= 0 after the first attempt,
	// so the client gives up at once, as with RetryMax 0.
	for _, rm := range []int{0, -1, -7} {
		spec := fmt.Sprintf("retryablehttp:RetryMax=%d", rm)
		p, err := profile.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		hits.Store(0)
		cl.RetryMax = rm
		if r, err := cl.Get(srv.URL); err == nil {
			r.Body.Close()
		}
		if got := int(hits.Load()); got != p.MaxAttempts() {
			t.Errorf("%s: the real client made %d attempts, the profile %d", spec, got, p.MaxAttempts())
		}
	}
}

// failsafeDelays runs an always-failing execution through a real
// retrypolicy built by build, and returns the delays it scheduled.
func failsafeDelays(build func() retrypolicy.Builder[any]) (delays []time.Duration, attempts int) {
	rp := build().OnRetryScheduled(func(e failsafe.ExecutionScheduledEvent[any]) {
		delays = append(delays, e.Delay)
	}).Build()
	_, _ = failsafe.With[any](rp).Get(func() (any, error) {
		attempts++
		return nil, errors.New("retrykit verify")
	})
	return delays, attempts
}

// TestFailsafeReal runs failsafe-go's retry executor: the defaults (no
// wait, 3 attempts) exactly, and configured backoffs with jitter sampled
// from many executions run side by side (each waits its real delays).
func TestFailsafeReal(t *testing.T) {
	t.Logf("real implementation: github.com/failsafe-go/failsafe-go %s", moduleVersion(t, "github.com/failsafe-go/failsafe-go"))
	delays, runs := failsafeDelays(retrypolicy.NewBuilder[any])
	p := vectorProfile(t, "failsafe")
	for i, d := range delays {
		if want := p.DelayAt(i+1, 0.5); d != want {
			t.Errorf("defaults: delay after attempt %d: failsafe %v, the profile %v", i+1, d, want)
		}
	}
	checkDecisions(t, "failsafe", upTo(5), func(t *testing.T, attempts []int) []bool {
		out := make([]bool, len(attempts))
		for i, n := range attempts {
			out[i] = n < runs
		}
		return out
	})
	for _, c := range []struct {
		spec  string
		build func() retrypolicy.Builder[any]
	}{
		{"failsafe:MaxRetries=5,Delay=1ms,MaxDelay=8ms,JitterFactor=0.5", func() retrypolicy.Builder[any] {
			return retrypolicy.NewBuilder[any]().WithMaxRetries(5).WithBackoff(time.Millisecond, 8*time.Millisecond).WithJitterFactor(0.5)
		}},
		{"failsafe:MaxRetries=4,Delay=2ms,MaxDelay=9ms,DelayFactor=1.5,Jitter=1500us", func() retrypolicy.Builder[any] {
			return retrypolicy.NewBuilder[any]().WithMaxRetries(4).WithBackoffFactor(2*time.Millisecond, 9*time.Millisecond, 1.5).WithJitter(1500 * time.Microsecond)
		}},
	} {
		cp, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		const execs = 400
		all := make([][]time.Duration, execs)
		var wg sync.WaitGroup
		for i := range execs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				all[i], _ = failsafeDelays(c.build)
			}()
		}
		wg.Wait()
		for n := 1; n < cp.MaxAttempts(); n++ {
			lo, hi := cp.Bounds(n)
			smin, smax := time.Duration(1<<63-1), time.Duration(-1)
			for _, ds := range all {
				if len(ds) != cp.MaxAttempts()-1 {
					t.Fatalf("%s: %d delays, the profile retries %d times", c.spec, len(ds), cp.MaxAttempts()-1)
				}
				d := ds[n-1]
				if d < lo || d > hi {
					t.Errorf("%s: attempt %d: failsafe %v outside the profile's [%v, %v]", c.spec, n, d, lo, hi)
				}
				smin, smax = minD(smin, d), maxD(smax, d)
			}
			if w := float64(hi - lo); float64(smin-lo) > 0.1*w || float64(hi-smax) > 0.1*w {
				t.Errorf("%s: attempt %d: %d executions span [%v, %v], not close to both ends of [%v, %v]", c.spec, n, execs, smin, smax, lo, hi)
			}
		}
	}
}

// recordingTimer is a retry-go Timer that records each wait and returns at
// once.
type recordingTimer struct{ waits []time.Duration }

func (r *recordingTimer) After(d time.Duration) <-chan time.Time {
	r.waits = append(r.waits, d)
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

// retryGoWaits runs an always-failing function through retry-go's real Do
// with opts and a recording timer.
func retryGoWaits(opts ...retrygo.Option) (waits []time.Duration, attempts int) {
	tm := &recordingTimer{}
	_ = retrygo.New(append(opts, retrygo.WithTimer(tm))...).Do(func() error {
		attempts++
		return errors.New("retrykit verify")
	})
	return tm.waits, attempts
}

// TestRetryGoReal samples avast/retry-go's Do, which waits through an
// injectable Timer: the real delays are recorded without sleeping.
func TestRetryGoReal(t *testing.T) {
	t.Logf("real implementation: github.com/avast/retry-go/v5 %s", moduleVersion(t, "github.com/avast/retry-go/v5"))
	_, runs := retryGoWaits()
	sampledSystem{
		profile: "retry_go",
		upTo:    12,
		sample: func(n int) (time.Duration, time.Duration) {
			w, _ := retryGoWaits(retrygo.Attempts(uint(n + 1)))
			return w[n-1], w[n-1]
		},
		retry: func(n int) bool { return n < runs },
	}.check(t)
	for _, c := range []struct {
		spec string
		opts []retrygo.Option
	}{
		{"retry_go:DelayType=full_jitter,Delay=10ms,MaxDelay=1s,Attempts=0", []retrygo.Option{retrygo.DelayType(retrygo.FullJitterBackoffDelay), retrygo.Delay(10 * time.Millisecond), retrygo.MaxDelay(time.Second)}},
		{"retry_go:Delay=1s,MaxJitter=250ms,MaxDelay=20s", []retrygo.Option{retrygo.Delay(time.Second), retrygo.MaxJitter(250 * time.Millisecond), retrygo.MaxDelay(20 * time.Second)}},
		{"retry_go:DelayType=fixed,Delay=-5s", []retrygo.Option{retrygo.DelayType(retrygo.FixedDelay), retrygo.Delay(-5 * time.Second)}},
		{"retry_go:DelayType=backoff,Delay=3ns", []retrygo.Option{retrygo.DelayType(retrygo.BackOffDelay), retrygo.Delay(3)}},
	} {
		cp, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, 5, 8, 13, 21, 34, 40, 65} {
			lo, hi := cp.Bounds(n)
			checkSampled(t, cp.Name(), n, lo, hi, func(n int) (time.Duration, time.Duration) {
				w, _ := retryGoWaits(append(c.opts, retrygo.Attempts(uint(n+1)))...)
				return w[n-1], w[n-1]
			})
		}
	}
}

// goRetryChain returns the n-th Next of the backoff mk builds.
func goRetryChain(mk func() goretry.Backoff) sampler {
	return func(n int) (time.Duration, time.Duration) {
		b := mk()
		var d time.Duration
		for range n {
			d, _ = b.Next()
		}
		return d, d
	}
}

// TestGoRetryReal samples sethvargo/go-retry's backoffs and wrappers, and
// counts Do's attempts under WithMaxRetries.
func TestGoRetryReal(t *testing.T) {
	t.Logf("real implementation: github.com/sethvargo/go-retry %s", moduleVersion(t, "github.com/sethvargo/go-retry"))
	sampledSystem{profile: "go_retry", upTo: 40, sample: goRetryChain(func() goretry.Backoff { return goretry.NewExponential(time.Second) })}.check(t)
	for _, c := range []struct {
		spec string
		mk   func() goretry.Backoff
	}{
		{"go_retry:backoff=fibonacci,base=10ms,jitter_percent=10,capped_duration=1m", func() goretry.Backoff {
			return goretry.WithCappedDuration(time.Minute, goretry.WithJitterPercent(10, goretry.NewFibonacci(10*time.Millisecond)))
		}},
		{"go_retry:backoff=exponential,base=3ns,jitter=5ms", func() goretry.Backoff {
			return goretry.WithJitter(5*time.Millisecond, goretry.NewExponential(3))
		}},
		{"go_retry:backoff=constant,base=2s,full_jitter=true", func() goretry.Backoff {
			return goretry.WithFullJitter(goretry.NewConstant(2 * time.Second))
		}},
		{"go_retry:backoff=fibonacci,base=1h", func() goretry.Backoff { return goretry.NewFibonacci(time.Hour) }},
	} {
		cp, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 2, 3, 4, 5, 8, 13, 21, 34, 35, 36, 55, 64, 65, 66, 90, 100} {
			lo, hi := cp.Bounds(n)
			checkSampled(t, fmt.Sprintf("%s attempt %d", cp.Name(), n), n, lo, hi, goRetryChain(c.mk))
		}
	}
	p, err := profile.Parse("go_retry:backoff=constant,base=1ns,max_retries=4")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_ = goretry.Do(context.Background(), goretry.WithMaxRetries(4, goretry.NewConstant(1)), func(context.Context) error {
		calls++
		return goretry.RetryableError(errors.New("retrykit verify"))
	})
	if calls != p.MaxAttempts() {
		t.Errorf("go-retry Do with WithMaxRetries(4) made %d attempts; the profile says %d", calls, p.MaxAttempts())
	}
}
