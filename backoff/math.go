package backoff

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
)

// capInt returns min(v, max) as a Duration.
func capInt(v uint64, max time.Duration) time.Duration {
	if v >= uint64(max) {
		return max
	}
	return time.Duration(v)
}

// capFloat returns x truncated toward zero to whole nanoseconds, or max
// when x is not below float64(max) (which includes +Inf and NaN). x must
// not be negative. Because float64(max) is the float nearest to max, any x
// below it truncates to at most max.
func capFloat(x float64, max time.Duration) time.Duration {
	if !(x < float64(max)) {
		return max
	}
	return time.Duration(x)
}

// intCoefficient returns the coefficient as an integer when it is integral:
// c itself below 2^64, math.MaxUint64 (which saturates every power it takes
// part in) above; 0 when c has a fractional part.
func intCoefficient(c float64) uint64 {
	if c != math.Trunc(c) {
		return 0
	}
	if c >= 0x1p64 {
		return math.MaxUint64
	}
	return uint64(c)
}

// compute returns the capped, truncated delay before jitter for attempt
// n >= 1: min(raw(n), Max). It is the one definition of the formulas; the
// table and the slow path both use it.
func (b *Backoff) compute(n int) time.Duration {
	c := &b.cfg
	i := uint64(c.Initial)
	if n <= 1 {
		// C^0 = 1^C = 1 for every strategy: exactly Initial, even when
		// Initial has more than 53 significant bits.
		return min(c.Initial, c.Max)
	}
	switch c.Strategy {
	case None:
		return min(c.Initial, c.Max)
	case Linear:
		return capInt(sat.Mul(i, uint64(n)), c.Max)
	case Polynomial:
		if b.intCoef != 0 {
			return capInt(sat.Mul(i, sat.Pow(uint64(n), b.intCoef)), c.Max)
		}
		return capFloat(polyFloat(i, uint64(n), c.Coefficient), c.Max)
	default: // Exponential
		if b.intCoef != 0 {
			return capInt(sat.Mul(i, sat.Pow(b.intCoef, uint64(n-1))), c.Max)
		}
		return capFloat(float64(i)*powFloat(c.Coefficient, n-1), c.Max)
	}
}

// powFloat returns c^e for a finite c >= 1 and e >= 1. For e up to 64 it is
// math.Pow, exact where the power is (1.5^2). Beyond, math.Pow squares
// and multiplies, and its relative error grows with e (3e-10 for
// 1.0000001^57037827, 90ns on a 300s delay); exp(e·ln c) stays within a few
// units of 1e-15 for every power below 2^63, so it is used instead. Found
// by "retrykit fuzz"; docs/decisions.md RK-23, vectors delay-0194, delay-0195.
func powFloat(c float64, e int) float64 {
	if e <= 64 {
		return math.Pow(c, float64(e))
	}
	return math.Exp(float64(e) * math.Log1p(c-1))
}

// polyFloat returns i·n^c for n >= 2 and a fractional c >= 1: i·n^⌊c⌋ in
// saturating integers, times n^(c−⌊c⌋) in float64 (math.Sqrt for a half),
// so that a power that is an integer comes out exact: math.Pow(64, 1.5) is
// 511.99999999999994, one ulp short of 512, which truncation turns into a
// nanosecond lost, two after jitter. Found by "retrykit fuzz";
// docs/decisions.md RK-23.
func polyFloat(i, n uint64, c float64) float64 {
	k := math.Floor(c)
	if k >= 64 {
		return math.Inf(1) // n^64 >= 2^64: past every cap
	}
	ik := sat.Mul(i, sat.Pow(n, uint64(k)))
	if ik == math.MaxUint64 {
		return math.Inf(1)
	}
	f := c - k
	pf := math.Sqrt(float64(n))
	if f != 0.5 {
		pf = math.Pow(float64(n), f)
	}
	return float64(ik) * pf
}
