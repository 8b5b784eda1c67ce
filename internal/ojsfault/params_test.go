package ojsfault_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/policy"
)

// TestJitterSourceNarrowsTheRange: every multiplier 0.5 + r drawn through
// JitterSource(0.75, 1.25) lies in [0.75, 1.25), and both ends are
// approached; a range outside [0.5, 1.5) or empty is refused.
func TestJitterSourceNarrowsTheRange(t *testing.T) {
	src, err := ojsfault.JitterSource(0.75, 1.25, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 2.0, 0.0
	for range 10000 {
		m := 0.5 + src.Float64()
		if m < 0.75 || m >= 1.25 {
			t.Fatalf("multiplier %v outside [0.75, 1.25)", m)
		}
		lo, hi = min(lo, m), max(hi, m)
	}
	if lo > 0.76 || hi < 1.24 {
		t.Errorf("10000 draws span [%v, %v], want the ends within 0.01", lo, hi)
	}
	for _, r := range [][2]float64{{0.4, 1}, {1, 1.6}, {1, 1}, {1.2, 0.8}} {
		if _, err := ojsfault.JitterSource(r[0], r[1], rand.New(rand.NewPCG(1, 2))); err == nil {
			t.Errorf("range %v accepted", r)
		}
	}
}

// TestParamsApply: each parameterised fault changes the policy a server
// runs as its family says, error rules included.
func TestParamsApply(t *testing.T) {
	sp := policy.DefaultSpec() // 3 attempts, PT1S, 2.0, PT5M
	sp.ErrorRules = []policy.ErrorRule{{Match: []string{"x.*"}, MaxAttempts: 3, InitialInterval: 200 * time.Millisecond, MaxInterval: time.Second}}
	for _, tc := range []struct {
		p     ojsfault.Params
		check func(policy.Spec) bool
	}{
		// every interval doubled: the delay after attempt n is 2× the spec's
		{ojsfault.Params{TimeFactor: 2}, func(s policy.Spec) bool {
			return s.InitialInterval == 2*time.Second && s.MaxInterval == 10*time.Minute && s.ErrorRules[0].InitialInterval == 400*time.Millisecond
		}},
		// initial × 2^(n−1+1): initial_interval × coefficient
		{ojsfault.Params{ExponentOffset: 1}, func(s policy.Spec) bool { return s.InitialInterval == 2*time.Second }},
		{ojsfault.Params{ExponentOffset: -1}, func(s policy.Spec) bool { return s.InitialInterval == 500*time.Millisecond }},
		// exhausted one attempt early, the rule's limit too
		{ojsfault.Params{ExhaustShift: -1}, func(s policy.Spec) bool { return s.MaxAttempts == 2 && s.ErrorRules[0].MaxAttempts == 2 }},
		// never below one attempt
		{ojsfault.Params{ExhaustShift: -5}, func(s policy.Spec) bool { return s.MaxAttempts == 1 }},
		{ojsfault.Params{StrategySet: true, StrategyFrom: backoff.Exponential, StrategyTo: backoff.Linear}, func(s policy.Spec) bool { return s.Strategy == backoff.Linear }},
	} {
		got := tc.p.Apply(sp)
		if !tc.check(got) {
			t.Errorf("%v: got %+v", tc.p, got)
		}
		if sp.ErrorRules[0].MaxAttempts != 3 || sp.ErrorRules[0].InitialInterval != 200*time.Millisecond {
			t.Fatalf("%v changed the spec it was given", tc.p)
		}
	}
}
