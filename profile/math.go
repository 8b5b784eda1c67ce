package profile

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"

	"github.com/retrykit/retrykit/backoff"
)

// maxBelowOne is the largest float64 below 1, 1 - 2^-53: the top draw.
const maxBelowOne = 0x1.fffffffffffffp-1

// maxDuration is the largest time.Duration; every computation saturates
// there.
const maxDuration = time.Duration(math.MaxInt64)

// unit clamps a draw into [0, 1) as backoff.Fixed does: NaN and negative
// values give 0, values of 1 or more give the largest float64 below 1.
func unit(r float64) float64 {
	if !(r >= 0) {
		return 0
	}
	if r >= 1 {
		return maxBelowOne
	}
	return r
}

// draws is where a profile's delay function takes its random draws: a
// Source, or one fixed draw r (DelayAt) that every call returns. It is
// passed by value so that a fixed draw never goes through an interface
// (which would allocate); next has a pointer receiver only to read it.
type draws struct {
	src   backoff.Source // nil with fixed; else nil means backoff.Random()
	r     float64
	fixed bool
}

// fixedDraws returns draws that always give r, clamped into [0, 1).
func fixedDraws(r float64) draws { return draws{r: unit(r), fixed: true} }

// sourceDraws returns draws from src (nil means backoff.Random()).
func sourceDraws(src backoff.Source) draws { return draws{src: src} }

// next returns the next draw, in [0, 1).
func (d *draws) next() float64 {
	if d.fixed {
		return d.r
	}
	if d.src == nil {
		return unit(backoff.Random().Float64())
	}
	return unit(d.src.Float64())
}

// randInt maps a draw r in [0, 1) to an integer in [0, n-1], the way
// rand(n) / Intn(n) / Int63n(n) are read in this package: floor(r*n),
// held below n where float rounding would reach it. n < 1 gives 0.
func randInt(r float64, n int64) int64 {
	if n < 1 {
		return 0
	}
	v := int64(unit(r) * float64(n)) // < 2^63: r < 1 and n < 2^63
	if v >= n {
		v = n - 1
	}
	if v < 0 {
		v = 0
	}
	return v
}

// seconds converts a number of seconds x to a Duration as
// time.Duration(x * float64(time.Second)) does, truncating toward zero, but
// saturating: x*1e9 at or above 2^63 (or +Inf) gives the largest Duration,
// and a negative x or NaN gives 0.
func seconds(x float64) time.Duration {
	return nanos(x * float64(time.Second))
}

// nanos truncates a float number of nanoseconds toward zero, saturating as
// seconds does.
func nanos(y float64) time.Duration {
	if !(y > 0) {
		return 0
	}
	if !(y < 0x1p63) {
		return maxDuration
	}
	return time.Duration(y)
}

// satSeconds converts a whole number of seconds to a Duration, saturating.
func satSeconds(s int64) time.Duration {
	return time.Duration(sat.MulInt(s, int64(time.Second)))
}

// shifted returns d * 2^k for non-negative d and k, saturating at max (and
// never above it): the capped exponential most profiles start from.
func shifted(d time.Duration, k int, max time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if k >= 63 || d > max>>uint(k) {
		return max
	}
	return min(d<<uint(k), max)
}
