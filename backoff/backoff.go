package backoff

import (
	"math"
	"time"
)

// tableSize bounds the precomputed table: delays for attempts 1..tableSize
// are looked up, later ones computed (or known to equal Max).
const tableSize = 64

// Backoff computes the delay after a failed attempt for one validated
// [Config]. Build it with [New].
//
// The delay after attempt n (the 1-based number of the attempt that just
// failed; n < 1 is treated as 1) is computed by these rules, in order:
//
//  1. Raw delay, with I = Initial, C = Coefficient:
//     None: I; Linear: I*n; Exponential: I*C^(n-1); Polynomial: I*n^C.
//     With an integral C (and always for None and Linear) the product is
//     computed exactly in saturating 64-bit integer arithmetic; otherwise
//     in float64 with [math.Pow] (for Exponential past n = 65, as
//     exp((n-1)·ln C), which stays accurate where repeated squaring does not;
//     for Polynomial as I·n^⌊C⌋ in integers times n^(C−⌊C⌋), a square root
//     for a half, so that 64^1.5 is exactly 512).
//  2. Cap: base = min(raw, Max), truncated toward zero to whole
//     nanoseconds. This is [Backoff.Base].
//  3. Jitter, only if Config.Jitter: m = 0.5 + r in float64, r in [0, 1)
//     (clamped like [Fixed]); d = float64(base) * m.
//  4. Cap again: if d >= float64(Max) the delay is Max, else d truncated
//     toward zero. This is [Backoff.DelayAt].
//
// The result is always in [0, Max]: an overflowing raw delay, an infinite
// float power or an attempt number up to math.MaxInt simply reaches the cap.
// For non-integral coefficients the float path is used and the table below
// is made non-decreasing (a later attempt never gets a shorter base delay
// than an earlier one, even where math.Pow rounds).
//
// Worked example, the OJS default (Exponential, PT1S, 2.0, PT5M), with r
// the jitter draw:
//
//	n    raw      base   r=0     r=0.5   r→1 (largest draw)
//	1    1s       1s     500ms   1s      1.499999999s
//	2    2s       2s     1s      2s      2.999999999s
//	3    4s       4s     2s      4s      5.999999999s
//	9    256s     256s   128s    256s    300s (capped after jitter)
//	10   512s     300s   150s    300s    300s
//	50   2^49 s   300s   150s    300s    300s
//
// r→1 is the largest draw below 1 (1 − 2⁻⁵³): the multiplier stays under
// 1.5, so the top of the range is 1 ns under 1.5 times the base, and r=0
// and r→1 are the inclusive bounds [Backoff.Bounds] returns.
//
// At New the base delays of the first attempts are precomputed into a
// small table (at most 64 entries, ending at the first attempt whose base
// delay reaches Max), so Base and DelayAt usually cost a bounds check and a
// load, plus one float multiply with jitter.
//
// A Backoff is immutable and safe for concurrent use. The zero value, and a
// nil *Backoff, return a delay of 0 for every attempt and a zero Config.
type Backoff struct {
	table   []time.Duration // table[i] is Base(i+1); non-decreasing, never empty after New
	last    uint            // len(table) - 1
	fast    uint            // Base(n) = table[min(n-1, last)] for n-1 < fast
	intCoef uint64          // integral Coefficient (saturated at 2^64-1), or 0
	maxBits uint64          // math.Float64bits(float64(cfg.Max))
	cfg     Config
}

// New validates c and returns a Backoff for it. Each invalid field gives a
// [*ConfigError] naming it; several are combined with [errors.Join]. Every
// error matches [ErrInvalidConfig]. New rejects:
//   - a Strategy other than the four constants;
//   - Initial <= 0;
//   - a Coefficient below 1, NaN or infinite (for every strategy, even the
//     ones that ignore it);
//   - Max < Initial.
func New(c Config) (*Backoff, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	b := &Backoff{cfg: c, intCoef: intCoefficient(c.Coefficient), maxBits: math.Float64bits(float64(c.Max))}
	constant := c.Strategy == None || (c.Strategy == Exponential && c.Coefficient == 1)
	var buf [tableSize]time.Duration
	k, prev := 0, time.Duration(0)
	for k < tableSize {
		d := max(b.compute(k+1), prev) // keep float results non-decreasing
		buf[k], prev = d, d
		k++
		if d == c.Max || constant {
			break
		}
	}
	b.table = append([]time.Duration(nil), buf[:k]...)
	b.last = uint(k - 1)
	b.fast = uint(k)
	if prev == c.Max || constant {
		// Every later attempt has the last entry's delay: lookup clamps the
		// index to the last entry for all n >= 1.
		b.fast = math.MaxInt
	}
	return b, nil
}

// Config returns the configuration b was built from; the zero Config for
// the zero value or a nil *Backoff.
func (b *Backoff) Config() Config {
	if b == nil {
		return Config{}
	}
	return b.cfg
}

// Base returns the delay after attempt n before jitter: the raw delay capped
// at Max and truncated toward zero to whole nanoseconds (rules 1 and 2 of
// [Backoff]). n < 1 is treated as 1. It never allocates.
func (b *Backoff) Base(n int) time.Duration {
	if b == nil {
		return 0
	}
	d, ok := b.lookup(n)
	if !ok {
		d = b.slowBase(n)
	}
	return d
}

// lookup returns Base(n) from the table, or false when n is outside it
// (n < 1, the zero value, or an attempt past a table that did not reach
// Max). b must not be nil. It is small enough to inline into every caller.
func (b *Backoff) lookup(n int) (time.Duration, bool) {
	if i := uint(n - 1); i < b.fast {
		return b.table[min(i, b.last)], true
	}
	return 0, false
}

// slowBase is Base for attempts outside the table.
func (b *Backoff) slowBase(n int) time.Duration {
	if len(b.table) == 0 {
		return 0 // zero value
	}
	if n < 1 {
		return b.table[0]
	}
	// Beyond the table; compute directly and never go below the last entry.
	return max(b.compute(n), b.table[len(b.table)-1])
}

// DelayAt returns the delay after attempt n for the jitter draw r: Base(n)
// without jitter (r is then ignored), else min(trunc(Base(n)*(0.5+r)), Max)
// computed as rules 3 and 4 of [Backoff] say. r is clamped into [0, 1) as
// [Fixed] clamps it. DelayAt is a pure function of (b, n, r); it never
// allocates. With a [Config.JitterMode] other than Proportional the jitter
// is that mode's, and it is DelayAfterAt(n, 0, r): Decorrelated then takes
// the job's first delay as its previous one.
func (b *Backoff) DelayAt(n int, r float64) time.Duration {
	return b.DelayAfterAt(n, 0, r)
}

// jitter applies rules 3 and 4 to a base delay d.
func (b *Backoff) jitter(d time.Duration, r float64) time.Duration {
	if !(r >= 0) {
		r = 0
	} else if r >= 1 {
		r = maxBelowOne
	}
	// The spec's multiplier is in [0.5, 1.5); for r within 2^-53 of 1 the
	// float64 sum 0.5 + r rounds up to 1.5, so it is held just below.
	m := 0.5 + r
	if m > maxMultiplier {
		m = maxMultiplier
	}
	x := float64(d) * m
	// x >= float64(Max), compared as bits: for non-negative floats the bit
	// patterns order like the values, and an integer comparison lets the
	// compiler select with a conditional move instead of a branch that,
	// depending on r, would mispredict. When the cap applies the
	// conversion may be out of range (an unspecified value, not a panic)
	// and is discarded.
	// Max is loaded before the test so that the select needs no load.
	v, limit := time.Duration(x), b.cfg.Max
	if math.Float64bits(x) >= b.maxBits {
		v = limit
	}
	return v
}

// Delay is shorthand for DelayAt(n, src.Float64()). src is consulted only
// when jitter is on; a nil src means [Random]().
func (b *Backoff) Delay(n int, src Source) time.Duration {
	if b == nil {
		return 0
	}
	d, ok := b.lookup(n)
	if !ok {
		d = b.slowBase(n)
	}
	if !b.cfg.Jitter {
		return d
	}
	if b.cfg.JitterMode != Proportional {
		return b.spread(d, 0, draw(src))
	}
	// The package's own sources are read without the interface call (jitter
	// clamps r as Fixed.Float64 would).
	switch s := src.(type) {
	case Fixed:
		return b.jitter(d, float64(s))
	case *PCG:
		return b.jitter(d, s.Float64())
	case nil, runtimeSource:
		return b.jitter(d, runtimeSource{}.Float64())
	}
	return b.jitter(d, src.Float64())
}

// Bounds returns the smallest and largest delay after attempt n: every
// DelayAt(n, r) for r in [0, 1) lies in [lo, hi], and both ends are reached.
// Without jitter lo == hi == Base(n). With jitter lo = DelayAt(n, 0), about
// half of Base(n), and hi = DelayAt(n, largest float64 below 1): the
// multiplier is then the largest float64 below 1.5, so hi is just under
// 1.5*Base(n) (15s-1ns for a 10s base, as the spec's half-open [5s, 15s)
// asks), capped at Max. Both bounds are inclusive.
//
// With a [Config.JitterMode] other than Proportional the bounds are that
// mode's: [0, Base(n)] for Full and [Base(n)/2, Base(n)] for Equal (the top
// below Base(n) except where float64 rounding reaches it), and for
// Decorrelated, whose delay depends on the earlier draws, the range over
// every chain of them: [Initial, the top draw taken at every attempt up to
// n], at most Max. [Backoff.BoundsAfter] gives the range for a known
// previous delay.
func (b *Backoff) Bounds(n int) (lo, hi time.Duration) {
	d := b.Base(n)
	if b == nil || !b.cfg.Jitter {
		return d, d
	}
	switch b.cfg.JitterMode {
	case Proportional:
		return b.jitter(d, 0), b.jitter(d, maxBelowOne)
	case Decorrelated:
		return b.spread(d, 0, 0), b.decorrelatedTop(n)
	}
	return b.spread(d, 0, 0), b.spread(d, 0, maxBelowOne)
}
