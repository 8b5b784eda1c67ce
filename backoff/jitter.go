package backoff

import (
	"strconv"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
)

// JitterMode selects how [Config.Jitter] spreads a delay (docs/extensions.md
// §3.4, after the AWS Architecture Blog note "Exponential Backoff And
// Jitter"). With b the capped delay before jitter ([Backoff.Base]), I the
// Initial and M the Max interval, r the draw in [0, 1), p = max(prev, I)
// and every result truncated toward zero to whole nanoseconds:
//
//	mode          delay                     range
//	Proportional  min(b·(0.5+r), M)         [b/2, min(1.5·b, M)]  (OJS §5)
//	Full          b·r                       [0, b)
//	Equal         b/2 + (b/2)·r             [b/2, b)
//	Decorrelated  min(M, I + r·(3p − I))    [I, min(3p, M)]
//
// prev is the delay the job waited before the attempt that just failed (0
// before the first retry); only Decorrelated reads it, and it ignores the
// Strategy and Coefficient, its growth being the ×3 of the note.
//
// The zero value is Proportional, the OJS multiplier. A JitterMode is a
// plain value, safe to copy and share.
type JitterMode uint8

const (
	// Proportional multiplies the delay by 0.5 + r, the OJS jitter (§5).
	Proportional JitterMode = iota
	// Full draws the delay from [0, b): "full jitter".
	Full
	// Equal keeps half the delay and draws the other half: [b/2, b).
	Equal
	// Decorrelated draws from [I, 3·prev), capped at Max: each delay grows
	// from the previous one rather than from the attempt number.
	Decorrelated
)

// String returns the JSON name of m: "proportional", "full", "equal" or
// "decorrelated"; any other value prints as "JitterMode(N)".
func (m JitterMode) String() string {
	switch m {
	case Proportional:
		return "proportional"
	case Full:
		return "full"
	case Equal:
		return "equal"
	case Decorrelated:
		return "decorrelated"
	}
	return "JitterMode(" + strconv.Itoa(int(m)) + ")"
}

// valid reports whether m is one of the four modes.
func (m JitterMode) valid() bool { return m <= Decorrelated }

// ParseJitterMode returns the JitterMode named name: exactly
// "proportional", "full", "equal" or "decorrelated" (case-sensitive).
// Anything else is a [*ConfigError] for the field JitterMode that matches
// [ErrInvalidConfig] and [ErrUnknownJitterMode].
func ParseJitterMode(name string) (JitterMode, error) {
	for m := Proportional; m <= Decorrelated; m++ {
		if name == m.String() {
			return m, nil
		}
	}
	return 0, &ConfigError{Field: "JitterMode", Value: name, Reason: `must be one of "proportional", "full", "equal", "decorrelated"`}
}

// DelayAfterAt returns the delay after attempt n when the job waited prev
// before that attempt, for the jitter draw r (clamped into [0, 1) as
// [Fixed] clamps it). For every mode but Decorrelated it equals
// DelayAt(n, r) and prev is ignored; without jitter it is Base(n). A
// negative prev counts as 0. It is a pure function of (b, n, prev, r) and
// never allocates. The result is in [0, Max].
func (b *Backoff) DelayAfterAt(n int, prev time.Duration, r float64) time.Duration {
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
	if b.cfg.JitterMode == Proportional {
		return b.jitter(d, r)
	}
	return b.spread(d, prev, r)
}

// DelayAfter is shorthand for DelayAfterAt(n, prev, src.Float64()): src is
// consulted once, only when jitter is on; a nil src means [Random](). It
// never allocates with the package's sources or a *rand.Rand.
func (b *Backoff) DelayAfter(n int, prev time.Duration, src Source) time.Duration {
	if b == nil {
		return 0
	}
	if !b.cfg.Jitter {
		return b.Base(n)
	}
	return b.DelayAfterAt(n, prev, draw(src))
}

// draw reads one number from src, the package's own sources without an
// interface call.
func draw(src Source) float64 {
	switch s := src.(type) {
	case Fixed:
		return s.Float64()
	case *PCG:
		return s.Float64()
	case nil, runtimeSource:
		return runtimeSource{}.Float64()
	}
	return src.Float64()
}

// spread applies the jitter of the modes other than Proportional to a base
// delay d.
func (b *Backoff) spread(d, prev time.Duration, r float64) time.Duration {
	r = clampUnit(r)
	switch b.cfg.JitterMode {
	case Full:
		return capFloat(float64(d)*r, d)
	case Equal:
		// floor((b + b·r)/2) = floor((b + floor(b·r))/2), in integers so that
		// the lower end is exactly floor(b/2) whatever float64(b) rounds to.
		y := capFloat(float64(d)*r, d)
		return d/2 + y/2 + d&y&1
	case Decorrelated:
		i := b.cfg.Initial
		p := max(prev, i)
		span := uint64(sat.MulInt(p, 3) - i) // 3p − I >= 2I > 0
		return min(sat.AddInt(i, capFloat(float64(span)*r, time.Duration(span))), b.cfg.Max)
	}
	return b.jitter(d, r)
}

// BoundsAfter returns the smallest and largest DelayAfterAt(n, prev, r)
// over r in [0, 1), both reached (r = 0 and the largest draw below 1).
func (b *Backoff) BoundsAfter(n int, prev time.Duration) (lo, hi time.Duration) {
	return b.DelayAfterAt(n, prev, 0), b.DelayAfterAt(n, prev, maxBelowOne)
}

// decorrelatedTop returns the largest delay Decorrelated can give after
// attempt n over every chain of earlier draws: the top draw taken at each
// attempt from the first (prev 0) on, since a delay grows with prev. The
// chain about triples each step until it reaches Max or stops growing (a
// product that rounds below the saturated 3p), so it ends within 64 steps.
func (b *Backoff) decorrelatedTop(n int) time.Duration {
	var prev time.Duration
	for k := 1; k <= max(n, 1); k++ {
		next := b.spread(0, prev, maxBelowOne)
		if next <= prev {
			break
		}
		prev = next
		if prev == b.cfg.Max {
			break
		}
	}
	return prev
}
