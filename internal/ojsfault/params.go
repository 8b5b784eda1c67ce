package ojsfault

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// Params are the parameterised faults: one bug of each family the live
// diagnosis fits (servermodel.Families), with its parameter, so that a
// test can draw parameters at random and require the diagnosis to name
// the family with the value drawn. The zero value plants none; each field
// at its zero value plants nothing.
//
// Params act on the policy the server runs for a job (the client's policy
// is still shown), except the jitter range, which is a random source for
// the executor ([JitterSource]).
type Params struct {
	// TimeFactor, if not 0 or 1, runs every policy interval (the
	// policy's and its error rules') times TimeFactor: every delay is
	// TimeFactor times the spec's (the family time-factor(×k)).
	TimeFactor float64
	// ExponentOffset, if not 0, computes the exponential strategy's delay
	// after attempt n as initial_interval × coefficient^(n−1+ExponentOffset)
	// (capped as usual; the family exponent-offset(±k)).
	ExponentOffset int
	// ExhaustShift, if not 0, exhausts a job after max_attempts +
	// ExhaustShift attempts, at least 1 (the family exhaustion-offset(±k)).
	ExhaustShift int
	// StrategyAs, if StrategySet, computes the strategy StrategyFrom as
	// StrategyTo (the family strategy-as(from→to)); a policy without
	// backoff_strategy is exponential.
	StrategySet              bool
	StrategyFrom, StrategyTo backoff.Strategy
}

// planted maps a server value to its parameterised faults.
var plantedParams sync.Map

// PlantParams attaches the parameterised faults p to server, as [Plant]
// does for a fault set; the zero Params removes the entry.
func PlantParams(server any, p Params) {
	if p == (Params{}) {
		plantedParams.Delete(server)
		return
	}
	plantedParams.Store(server, p)
}

// ParamsOf returns the parameterised faults planted in server, the zero
// Params when none.
func ParamsOf(server any) Params {
	if v, ok := plantedParams.Load(server); ok {
		return v.(Params)
	}
	return Params{}
}

// Apply returns the retry spec a server with the faults p runs for the
// client's spec sp.
func (p Params) Apply(sp policy.Spec) policy.Spec {
	if p.StrategySet && sp.Strategy == p.StrategyFrom {
		sp.Strategy = p.StrategyTo
	}
	if k := p.ExponentOffset; k != 0 && sp.Strategy == backoff.Exponential {
		// initial × coef^(n−1+k) = (initial × coef^k) × coef^(n−1); an
		// initial past the cap gives the cap at every attempt either way
		sp.InitialInterval = min(scale(sp.InitialInterval, math.Pow(sp.BackoffCoefficient, float64(k))), max(sp.MaxInterval, sp.InitialInterval))
		sp.InitialInterval = max(sp.InitialInterval, 1)
	}
	if f := p.TimeFactor; f != 0 && f != 1 {
		sp.InitialInterval, sp.MaxInterval = max(scale(sp.InitialInterval, f), 1), max(scale(sp.MaxInterval, f), 1)
		rules := make([]policy.ErrorRule, len(sp.ErrorRules))
		for i, r := range sp.ErrorRules {
			r.InitialInterval, r.MaxInterval = scale(r.InitialInterval, f), scale(r.MaxInterval, f)
			rules[i] = r
		}
		if len(rules) > 0 {
			sp.ErrorRules = rules
		}
	}
	if k := p.ExhaustShift; k != 0 {
		shift := func(n int) int {
			if k > 0 && n > math.MaxInt-k {
				return n
			}
			return max(max(n, 1)+k, 1)
		}
		sp.MaxAttempts = shift(sp.MaxAttempts)
		// an error rule's attempt limit is counted the same way
		rules := make([]policy.ErrorRule, len(sp.ErrorRules))
		for i, r := range sp.ErrorRules {
			if r.MaxAttempts > 0 {
				r.MaxAttempts = shift(r.MaxAttempts)
			}
			rules[i] = r
		}
		if len(rules) > 0 {
			sp.ErrorRules = rules
		}
	}
	return sp
}

// String names the faults as the diagnosis names their families.
func (p Params) String() string {
	var out []string
	if p.StrategySet {
		out = append(out, fmt.Sprintf("strategy-as(%v→%v)", p.StrategyFrom, p.StrategyTo))
	}
	if p.ExponentOffset != 0 {
		out = append(out, fmt.Sprintf("exponent-offset(%+d)", p.ExponentOffset))
	}
	if p.TimeFactor != 0 && p.TimeFactor != 1 {
		out = append(out, fmt.Sprintf("time-factor(×%g)", p.TimeFactor))
	}
	if p.ExhaustShift != 0 {
		out = append(out, fmt.Sprintf("exhaustion-offset(%+d)", p.ExhaustShift))
	}
	return fmt.Sprint(out)
}

// scale multiplies d by f, saturating.
func scale(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= 0x1p63 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(x)
}

// JitterSource returns a random source for an executor
// (executor.WithRand) whose jitter multipliers 0.5 + r fall in [lo, hi)
// instead of [0.5, 1.5): each draw of src is mapped linearly. It needs
// 0.5 ≤ lo < hi ≤ 1.5 and is safe for concurrent use.
func JitterSource(lo, hi float64, src backoff.Source) (backoff.Source, error) {
	if !(0.5 <= lo && lo < hi && hi <= 1.5) {
		return nil, fmt.Errorf("ojsfault: jitter range [%g, %g): must lie in [0.5, 1.5) and not be empty", lo, hi)
	}
	return &jitterSource{lo: lo - 0.5, w: hi - lo, src: src}, nil
}

type jitterSource struct {
	mu    sync.Mutex
	lo, w float64
	src   backoff.Source
}

// Float64 returns the next draw, mapped into the range.
func (s *jitterSource) Float64() float64 {
	s.mu.Lock()
	r := s.src.Float64()
	s.mu.Unlock()
	return s.lo + r*s.w
}
