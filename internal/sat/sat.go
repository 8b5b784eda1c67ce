package sat

import (
	"math"
	"math/bits"
)

// Add returns a+b, or math.MaxUint64 when the sum does not fit.
func Add(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// Mul returns a*b, or math.MaxUint64 when the product does not fit.
func Mul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// Pow returns x^e, or math.MaxUint64 when the power does not fit. It
// squares and multiplies, so it takes at most 64 rounds.
func Pow(x, e uint64) uint64 {
	r := uint64(1)
	for e > 0 {
		if e&1 == 1 {
			if r = Mul(r, x); r == math.MaxUint64 {
				return r
			}
		}
		e >>= 1
		if e > 0 {
			x = Mul(x, x)
		}
	}
	return r
}

// AddInt returns a+b for signed 64-bit values such as time.Duration,
// clamped to [math.MinInt64, math.MaxInt64].
func AddInt[T ~int64](a, b T) T {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// MulInt returns a*b for non-negative a and b, or math.MaxInt64 when the
// product does not fit. A negative operand is treated as 0.
func MulInt[T ~int64](a, b T) T {
	p := Mul(uint64(max(a, 0)), uint64(max(b, 0)))
	return T(min(p, math.MaxInt64))
}

// PowInt returns x^e for non-negative x and e, or math.MaxInt64 when the
// power does not fit. A negative operand is treated as 0.
func PowInt[T ~int64](x, e T) T {
	p := Pow(uint64(max(x, 0)), uint64(max(e, 0)))
	return T(min(p, math.MaxInt64))
}
