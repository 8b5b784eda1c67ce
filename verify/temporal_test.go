package verify_test

import (
	"testing"
	"time"

	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/server/common/backoff"
	"go.temporal.io/server/common/retrypolicy"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/retrykit/retrykit/profile"
)

// TestTemporalReal computes the Temporal server's retry interval with the
// server's own code: a retry policy left empty, filled in by
// retrypolicy.EnsureDefaults with DefaultDefaultRetrySettings (what the
// server applies to an activity without a policy), then
// backoff.CalculateExponentialRetryInterval for the attempt that just failed
// (Temporal counts attempts from 1). Temporal draws no jitter, so every
// vector and every draw must give the same exact delay.
func TestTemporalReal(t *testing.T) {
	t.Logf("real implementation: go.temporal.io/server %s", moduleVersion(t, "go.temporal.io/server"))
	policy := &commonpb.RetryPolicy{}
	retrypolicy.EnsureDefaults(policy, retrypolicy.DefaultDefaultRetrySettings)
	t.Logf("server defaults: initial %v, coefficient %v, maximum %v, maximum attempts %d (0 = unlimited)",
		policy.GetInitialInterval().AsDuration(), policy.GetBackoffCoefficient(),
		policy.GetMaximumInterval().AsDuration(), policy.GetMaximumAttempts())
	real := func(n int) time.Duration {
		return backoff.CalculateExponentialRetryInterval(policy, int32(n))
	}

	f := load(t, "temporal")
	for _, v := range f.Of("delay") {
		if g := real(v.Attempt); g != time.Duration(v.DelayNS) {
			t.Errorf("%s: attempt %d: real interval %v, vector says %v", v.ID, v.Attempt, g, time.Duration(v.DelayNS))
		}
	}
	for _, v := range f.Of("bounds") {
		if g := real(v.Attempt); g != time.Duration(v.MinNS) || g != time.Duration(v.MaxNS) {
			t.Errorf("%s: attempt %d: real interval %v, vector bounds [%v, %v]", v.ID, v.Attempt, g, time.Duration(v.MinNS), time.Duration(v.MaxNS))
		}
	}
	// The server stops when MaximumAttempts > 0 and the attempt that just
	// failed reaches it; with the default 0 it never stops on attempts.
	unlimited := policy.GetMaximumAttempts() == 0
	for _, v := range f.Of("decision") {
		want := unlimited || int32(v.Attempt) < policy.GetMaximumAttempts()
		if v.Retry != want {
			t.Errorf("%s: after attempt %d the vector says retry=%v; the server's default MaximumAttempts %d says %v", v.ID, v.Attempt, v.Retry, policy.GetMaximumAttempts(), want)
		}
	}
	t.Logf("temporal: %d delay, %d bounds, %d decision vectors match the server's code",
		len(f.Of("delay")), len(f.Of("bounds")), len(f.Of("decision")))

	t.Run("profile", func(t *testing.T) {
		p, err := profile.Lookup("temporal")
		if err != nil {
			t.Fatalf("package profile has no %q: %v", "temporal", err)
		}
		for n := 1; n <= 70; n++ {
			want := real(n)
			for _, r := range drawGrid {
				if d := p.DelayAt(n, r); d != want {
					t.Errorf("profile.DelayAt(%d, %v) = %v, the server gives %v", n, r, d, want)
				}
			}
			if lo, hi := p.Bounds(n); lo != want || hi != want {
				t.Errorf("profile.Bounds(%d) = [%v, %v], the server gives %v", n, lo, hi, want)
			}
		}
		if int32(p.MaxAttempts()) != policy.GetMaximumAttempts() {
			t.Errorf("profile.MaxAttempts() = %d, the server's default MaximumAttempts is %d", p.MaxAttempts(), policy.GetMaximumAttempts())
		}
	})
}

// TestTemporalConfigured runs configured RetryPolicies through the server's
// own code: retrypolicy.Validate accepts or rejects each as profile.Parse
// does, EnsureDefaults fills what is left out (maximum interval 100 x
// initial), and CalculateExponentialRetryInterval gives every delay.
func TestTemporalConfigured(t *testing.T) {
	for _, c := range []struct {
		ini, max time.Duration
		coef     float64
		attempts int32
	}{
		{2 * time.Second, time.Minute, 3, 0},
		{500 * time.Millisecond, 0, 1.5, 7},
		{time.Second, 10 * time.Second, 1, 3},
		{10 * time.Second, time.Second, 2, 0}, // maximum below initial: both reject it
	} {
		spec := fmt.Sprintf("temporal:initial_interval=%v,backoff_coefficient=%v,maximum_interval=%v,maximum_attempts=%d", c.ini, c.coef, c.max, c.attempts)
		pol := &commonpb.RetryPolicy{InitialInterval: durationpb.New(c.ini), BackoffCoefficient: c.coef, MaximumInterval: durationpb.New(c.max), MaximumAttempts: c.attempts}
		verr := retrypolicy.Validate(pol)
		p, perr := profile.Parse(spec)
		if (verr == nil) != (perr == nil) {
			t.Errorf("%s: the server's Validate says %v, profile.Parse says %v", spec, verr, perr)
			continue
		}
		if verr != nil {
			continue
		}
		retrypolicy.EnsureDefaults(pol, retrypolicy.DefaultDefaultRetrySettings)
		for n := 1; n <= 40; n++ {
			want := backoff.CalculateExponentialRetryInterval(pol, int32(n))
			if got := p.DelayAt(n, 0.5); got != want {
				t.Errorf("%s: attempt %d: profile %v, the server %v", spec, n, got, want)
			}
		}
		if int32(p.MaxAttempts()) != pol.GetMaximumAttempts() {
			t.Errorf("%s: MaxAttempts %d, the server's %d", spec, p.MaxAttempts(), pol.GetMaximumAttempts())
		}
	}
}
