package human

import (
	"math"
	"regexp"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestExact(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "0s",
		500 * time.Millisecond:         "500ms",
		1500 * time.Nanosecond:         "1.5µs",
		14999999999:                    "14.999999999s",
		90 * time.Second:               "1m30s",
		2 * time.Minute:                "2m",
		time.Hour + 5*time.Second:      "1h0m5s",
		490*time.Hour + 17*time.Minute: "20d10h17m",
		Day:                            "1d",
		Day + 5*time.Minute:            "1d0h5m",
		80*time.Hour + 31*time.Minute + 52499999994: "3d8h31m52.499999994s",
		-90 * time.Second: "-1m30s",
		math.MaxInt64:     "106751d23h47m16.854775807s",
		math.MinInt64:     "-106751d23h47m16.854775808s",
	} {
		if got := Exact(d); got != want {
			t.Errorf("Exact(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

func TestRounding(t *testing.T) {
	long := 80*time.Hour + 31*time.Minute + 52499999994 // 3d8h31m52.499999994s
	for _, tc := range []struct {
		d                  time.Duration
		floor, round, ceil string
	}{
		{14999999999, "14.999999999s", "14.999999999s", "14.999999999s"}, // under a minute: exact
		{long, "3d8h31m", "3d8h32m", "3d8h32m"},
		{490*time.Hour + 17*time.Minute, "20d10h17m", "20d10h17m", "20d10h17m"},
		{time.Hour + 1500*time.Millisecond, "1h0m1s", "1h0m2s", "1h0m2s"},
		{time.Minute + 499*time.Millisecond, "1m", "1m", "1m1s"},
		{Day - 1, "23h59m59s", "1d", "1d"},
		{-(time.Hour + 1500*time.Millisecond), "-1h0m2s", "-1h0m2s", "-1h0m1s"},
		{math.MaxInt64, "106751d23h47m", "106751d23h47m", "106751d23h47m16.854775807s"}, // ceil would overflow: exact
		{math.MinInt64, "-106751d23h47m16.854775808s", "-106751d23h47m", "-106751d23h47m"},
	} {
		if got := Floor(tc.d); got != tc.floor {
			t.Errorf("Floor(%v) = %q, want %q", tc.d, got, tc.floor)
		}
		if got := Round(tc.d); got != tc.round {
			t.Errorf("Round(%v) = %q, want %q", tc.d, got, tc.round)
		}
		if got := Ceil(tc.d); got != tc.ceil {
			t.Errorf("Ceil(%v) = %q, want %q", tc.d, got, tc.ceil)
		}
	}
	if got := Range(5*time.Second, 14999999999); got != "[5s, 14.999999999s]" {
		t.Errorf("Range = %q", got)
	}
	if got := Range(long, long+time.Hour); got != "[3d8h31m, 3d9h32m]" {
		t.Errorf("Range = %q", got)
	}
	if got := Range(long, long); got != "3d8h32m" {
		t.Errorf("Range of one value = %q", got)
	}
}

// parse reads this package's form back, independently of the writer: the
// optional sign, then number-unit pairs (d, h, m, s with a fraction, or ms,
// µs, ns from time.Duration's form), summed in big-enough integers.
var partRE = regexp.MustCompile(`^(\d+)(?:\.(\d{1,9}))?(d|h|ms|m|µs|ns|s)`)

func parse(t *rapid.T, s string) *bigDur {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	total := &bigDur{}
	for s != "" {
		m := partRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("cannot read %q", s)
		}
		s = s[len(m[0]):]
		n, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		scale := map[string]uint64{"d": 86400e9, "h": 3600e9, "m": 60e9, "s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1}[m[3]]
		total.add(n, scale)
		if m[2] != "" {
			frac := m[2] + "000000000"[len(m[2]):]
			f, _ := strconv.ParseUint(frac, 10, 64)
			total.add(f*scale/1e9, 1) // fractions only on s, ms, µs: no overflow
		}
	}
	total.neg = neg
	return total
}

// bigDur is a signed nanosecond count in a float-free 128-bit form, enough
// for any written value.
type bigDur struct {
	hi, lo uint64
	neg    bool
}

func (b *bigDur) add(n, scale uint64) {
	h, l := mul64(n, scale)
	lo := b.lo + l
	if lo < b.lo {
		h++
	}
	b.lo, b.hi = lo, b.hi+h
}

func mul64(a, b uint64) (hi, lo uint64) {
	const mask = 1<<32 - 1
	a0, a1, b0, b1 := a&mask, a>>32, b&mask, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1, w2 := t&mask, t>>32
	w1 += a0 * b1
	return a1*b1 + w2 + w1>>32, a * b
}

// cmp compares the written value with d: -1, 0, +1.
func (b *bigDur) cmp(d time.Duration) int {
	if b.hi == 0 && b.lo == 0 {
		b.neg = false
	}
	dneg := d < 0
	mag := uint64(d)
	if dneg {
		mag = -mag
	}
	if b.neg != dneg {
		if b.neg {
			return -1
		}
		return 1
	}
	c := 0
	switch {
	case b.hi > 0 || b.lo > mag:
		c = 1
	case b.lo < mag:
		c = -1
	}
	if b.neg {
		c = -c
	}
	return c
}

// For every duration: Exact reads back as d, Floor(d) ≤ d ≤ Ceil(d),
// Round is within half a unit, and the rounded forms are short.
func TestRoundingProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.OneOf(
			rapid.Int64(),
			rapid.Int64Range(-2*int64(Day), 2*int64(Day)),
			rapid.Int64Range(-int64(time.Minute)-5, int64(time.Minute)+5),
			rapid.SampledFrom([]int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 0}),
		).Draw(t, "d"))
		if c := parse(t, Exact(d)).cmp(d); c != 0 {
			t.Fatalf("Exact(%d) = %q does not read back", int64(d), Exact(d))
		}
		if c := parse(t, Floor(d)).cmp(d); c > 0 {
			t.Fatalf("Floor(%d) = %q is above it", int64(d), Floor(d))
		}
		if c := parse(t, Ceil(d)).cmp(d); c < 0 {
			t.Fatalf("Ceil(%d) = %q is below it", int64(d), Ceil(d))
		}
		// Round lies between Floor and Ceil, on one of them.
		if r := Round(d); r != Floor(d) && r != Ceil(d) {
			t.Fatalf("Round(%d) = %q, neither Floor %q nor Ceil %q", int64(d), r, Floor(d), Ceil(d))
		}
		a := d
		if a < 0 && a != math.MinInt64 {
			a = -a
		}
		if a >= time.Minute && a != math.MinInt64 && a < math.MaxInt64-time.Minute { // else rounding may overflow: exact
			for _, s := range []string{Floor(d), Round(d)} {
				if len(s) > len("-106751d23h47m") {
					t.Fatalf("%q for %d is long", s, int64(d))
				}
			}
		}
		lo := time.Duration(rapid.Int64().Draw(t, "lo"))
		hi := max(lo, d)
		r := Range(lo, hi)
		if lo != hi && r != "["+Floor(lo)+", "+Ceil(hi)+"]" {
			t.Fatalf("Range(%d, %d) = %q", lo, hi, r)
		}
	})
}
