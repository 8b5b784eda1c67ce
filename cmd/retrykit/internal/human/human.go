package human

import (
	"math"
	"strconv"
	"time"
)

// Day is 24 hours, the largest unit written.
const Day = 24 * time.Hour

// unit is the rounding step for d: 0 (exact) under a minute, a second under
// a day, a minute from a day on.
func unit(d time.Duration) time.Duration {
	a := d
	if a < 0 {
		if a == math.MinInt64 {
			return time.Minute
		}
		a = -a
	}
	switch {
	case a < time.Minute:
		return 0
	case a < Day:
		return time.Second
	}
	return time.Minute
}

// Exact writes d with days, exactly: "20d10h17m", "3d8h31m52.499999994s",
// "-1m30s", "0s".
func Exact(d time.Duration) string {
	var buf [40]byte
	return string(appendExact(buf[:0], d))
}

// Floor writes the largest value not above d at d's precision (see the
// package rules): a lower bound.
func Floor(d time.Duration) string { return rounded(d, -1) }

// Ceil writes the smallest value not below d at d's precision: an upper
// bound.
func Ceil(d time.Duration) string { return rounded(d, 1) }

// Round writes d at its precision, halves away from zero: a single value.
func Round(d time.Duration) string { return rounded(d, 0) }

// Range writes the inclusive range [lo, hi] as "[Floor(lo), Ceil(hi)]", or
// Round(lo) alone when lo == hi.
func Range(lo, hi time.Duration) string {
	if lo == hi {
		return Round(lo)
	}
	return "[" + Floor(lo) + ", " + Ceil(hi) + "]"
}

// rounded writes d rounded down (dir < 0), up (dir > 0) or to the nearest
// (dir == 0) multiple of unit(d).
func rounded(d time.Duration, dir int) string {
	u := unit(d)
	if u == 0 {
		return Exact(d)
	}
	r, ok := roundTo(d, u, dir)
	if !ok {
		return Exact(d)
	}
	return Exact(r)
}

// roundTo rounds d to a multiple of u in direction dir; ok is false when
// the result would not fit in a time.Duration.
func roundTo(d, u time.Duration, dir int) (time.Duration, bool) {
	q, m := d/u, d%u // m has d's sign
	if m == 0 {
		return d, true
	}
	switch {
	case dir < 0 && m < 0, dir > 0 && m > 0:
		q += time.Duration(sign(m))
	case dir == 0 && (m >= u-m && m > 0 || -m >= u+m && m < 0):
		q += time.Duration(sign(m))
	}
	if q > math.MaxInt64/u || q < math.MinInt64/u {
		return 0, false
	}
	return q * u, true
}

func sign(d time.Duration) int {
	if d < 0 {
		return -1
	}
	return 1
}

// appendExact appends d as [-]NdNhNmN[.frac]s with the trailing zero units
// left out.
func appendExact(b []byte, d time.Duration) []byte {
	if d == 0 {
		return append(b, "0s"...)
	}
	// Work on the magnitude as uint64: -MinInt64 does not fit an int64.
	u := uint64(d)
	if d < 0 {
		b = append(b, '-')
		u = -u
	}
	if u < uint64(time.Second) {
		// Under a second: time.Duration's own form (ns, µs, ms).
		return append(b, time.Duration(u).String()...)
	}
	ns := u % uint64(time.Second)
	s := u / uint64(time.Second)
	// days, hours, minutes, seconds (the fraction goes with the seconds).
	parts := [4]uint64{s / 86400, s % 86400 / 3600, s % 3600 / 60, s % 60}
	first, last := -1, -1
	for i, v := range parts {
		if v != 0 || i == 3 && ns != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for i := first; i <= last; i++ {
		b = strconv.AppendUint(b, parts[i], 10)
		if i == 3 && ns != 0 {
			frac := strconv.AppendUint(nil, ns+uint64(time.Second), 10)[1:] // 9 digits, zero-padded
			for frac[len(frac)-1] == '0' {
				frac = frac[:len(frac)-1]
			}
			b = append(b, '.')
			b = append(b, frac...)
		}
		b = append(b, "dhms"[i])
	}
	return b
}
