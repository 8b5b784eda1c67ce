package backoff

import "math/rand/v2"

// Source is the randomness jitter draws from. Float64 must return a value
// in [0, 1); values outside are clamped as [Fixed] clamps them.
//
// *math/rand/v2.Rand satisfies Source. Whether a Source is safe for
// concurrent use is up to its implementation: *rand.Rand is not, [Fixed]
// and [Random] are. A nil Source (the zero value of the interface) given to
// [Backoff.Delay] or [Backoff.Schedule] means [Random].
type Source interface {
	Float64() float64
}

// maxBelowOne is the largest float64 below 1, 1 - 2^-53.
const maxBelowOne = 0x1.fffffffffffffp-1

// maxMultiplier is the largest float64 below 1.5, 1.5 - 2^-52: the top of
// the jitter multiplier's half-open range [0.5, 1.5).
const maxMultiplier = 0x1.7ffffffffffffp+0

// Fixed is a Source that always returns the same draw, which makes jittered
// delays exact in tests and examples. Fixed(r).Float64() returns r clamped
// into [0, 1): NaN and negative values give 0, values of 1 or more give the
// largest float64 below 1. The zero value returns 0 (the lowest jitter).
// Fixed is safe for concurrent use.
type Fixed float64

// Float64 returns f clamped into [0, 1).
func (f Fixed) Float64() float64 { return clampUnit(float64(f)) }

// clampUnit clamps r into [0, 1); NaN becomes 0.
func clampUnit(r float64) float64 {
	if !(r >= 0) {
		return 0
	}
	if r >= 1 {
		return maxBelowOne
	}
	return r
}

// Random returns the randomly seeded, goroutine-safe Source: it draws from
// the runtime generator behind math/rand/v2's top-level functions, so its
// draws cannot be replayed (use [PCG] or [Fixed] for that). It is what
// [Backoff.Delay] uses when given a nil Source. Returning it does not
// allocate.
func Random() Source { return runtimeSource{} }

// runtimeSource draws from math/rand/v2's global, goroutine-safe generator.
type runtimeSource struct{}

// Float64 returns a value in [0, 1) with 53 random bits, computed as
// rand.Float64 computes it but from rand.Uint64, which reads the runtime's
// generator directly instead of through rand's global Rand and its Source
// interface.
func (runtimeSource) Float64() float64 { return unitFloat(rand.Uint64()) }

// unitFloat maps 64 random bits to [0, 1) as math/rand/v2's Rand.Float64
// does: the low 53 bits scaled by 2^-53.
func unitFloat(u uint64) float64 { return float64(u<<11>>11) * 0x1p-53 }

// PCG is a seeded Source for reproducible jitter: the same seeds give the
// same draws, so a schedule can be replayed exactly (property tests, fuzzing,
// simulations). It wraps math/rand/v2's PCG generator and is read by
// [Backoff.Delay] without an interface call, which makes it the fastest
// Source here. The zero value is a valid generator seeded with (0, 0). A
// PCG is not safe for concurrent use: give each goroutine its own.
type PCG struct {
	pcg rand.PCG
}

// NewPCG returns a PCG source seeded with seed1 and seed2.
func NewPCG(seed1, seed2 uint64) *PCG {
	p := &PCG{}
	p.pcg.Seed(seed1, seed2)
	return p
}

// Float64 returns the next draw, a value in [0, 1) with 53 random bits, as
// math/rand/v2's Rand.Float64 computes it.
func (p *PCG) Float64() float64 {
	return unitFloat(p.pcg.Uint64())
}

var (
	_ Source = (*PCG)(nil)
	_ Source = Fixed(0)
	_ Source = runtimeSource{}
	_ Source = (*rand.Rand)(nil)
)
