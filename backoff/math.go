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
		return capFloat(float64(i)*math.Pow(float64(n), c.Coefficient), c.Max)
	default: // Exponential
		if b.intCoef != 0 {
			return capInt(sat.Mul(i, sat.Pow(b.intCoef, uint64(n-1))), c.Max)
		}
		return capFloat(float64(i)*math.Pow(c.Coefficient, float64(n-1)), c.Max)
	}
}
