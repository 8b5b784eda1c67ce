package backoff_test

import (
	"math"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"pgregory.net/rapid"
)

// genConfig draws a valid Config, biased towards the extremes: tiny and
// huge intervals, coefficients of exactly 1, just above 1, integral,
// fractional and up to math.MaxFloat64.
func genConfig() *rapid.Generator[backoff.Config] {
	return rapid.Custom(func(t *rapid.T) backoff.Config {
		st := backoff.Strategy(rapid.IntRange(0, 3).Draw(t, "strategy"))
		initial := time.Duration(rapid.OneOf(
			rapid.Int64Range(1, 1000),
			rapid.Int64Range(1, math.MaxInt64),
			rapid.Just(int64(math.MaxInt64)),
			rapid.SampledFrom([]int64{int64(time.Millisecond), int64(time.Second), 15 * int64(time.Second)}),
		).Draw(t, "initial"))
		maxD := initial + time.Duration(rapid.OneOf(
			rapid.Int64Range(0, math.MaxInt64-int64(initial)),
			rapid.Int64Range(0, min(1000, math.MaxInt64-int64(initial))),
			rapid.Just(math.MaxInt64-int64(initial)),
		).Draw(t, "extra"))
		coef := rapid.OneOf(
			rapid.Float64Range(1, 10),
			rapid.Float64Range(1, math.MaxFloat64),
			rapid.Float64Range(1, 1+1e-9),
			rapid.SampledFrom([]float64{1, math.Nextafter(1, 2), 1.5, 2, 2.5, 3, 4, 63, 64, 0x1p63, 0x1p64, math.MaxFloat64}),
			rapid.Map(rapid.IntRange(1, 70), func(i int) float64 { return float64(i) }),
		).Draw(t, "coefficient")
		return backoff.Config{Strategy: st, Initial: initial, Coefficient: coef, Max: maxD, Jitter: rapid.Bool().Draw(t, "jitter")}
	})
}

// genAttempt draws an attempt number, often small, sometimes near the
// table's edge, sometimes huge.
func genAttempt() *rapid.Generator[int] {
	return rapid.OneOf(
		rapid.IntRange(1, 80),
		rapid.IntRange(1, math.MaxInt),
		rapid.IntRange(math.MaxInt-10, math.MaxInt),
		rapid.IntRange(math.MinInt, 0),
	)
}

// genR draws a jitter value, including the ends of [0, 1) and out-of-range values.
func genR() *rapid.Generator[float64] {
	return rapid.OneOf(
		rapid.Float64Range(0, 1),
		rapid.SampledFrom([]float64{0, 0.5, maxBelowOne, 1, -1, math.NaN(), math.Inf(1)}),
	)
}

func TestPropertyInRange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig().Draw(t, "config")
		b, err := backoff.New(c)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		n := genAttempt().Draw(t, "n")
		r := genR().Draw(t, "r")
		base := b.Base(n)
		if base < 0 || base > c.Max {
			t.Fatalf("Base(%d) = %d outside [0, %d]", n, base, c.Max)
		}
		if n <= 1 && base != c.Initial {
			t.Fatalf("Base(%d) = %d, want Initial %d", n, base, c.Initial)
		}
		d := b.DelayAt(n, r)
		if d < 0 || d > c.Max {
			t.Fatalf("DelayAt(%d, %v) = %d outside [0, %d]", n, r, d, c.Max)
		}
		lo, hi := b.Bounds(n)
		if d < lo || d > hi {
			t.Fatalf("DelayAt(%d, %v) = %d outside Bounds [%d, %d]", n, r, d, lo, hi)
		}
		if !c.Jitter {
			if d != base || lo != base || hi != base {
				t.Fatalf("without jitter: DelayAt %d, Bounds [%d, %d], Base %d", d, lo, hi, base)
			}
		} else {
			// lo is half the base, truncated (float64 rounding of huge values
			// aside: within one part in 2^52).
			if want := base / 2; lo > want+want>>51+1 || lo < want-want>>51-1 {
				t.Fatalf("Bounds(%d) lo = %d, want about %d", n, lo, want)
			}
			if hi < base && hi != c.Max {
				t.Fatalf("Bounds(%d) hi = %d below base %d and not Max", n, hi, base)
			}
		}
		if got := b.Delay(n, backoff.Fixed(r)); got != d {
			t.Fatalf("Delay(%d, Fixed(%v)) = %d, DelayAt = %d", n, r, got, d)
		}
	})
}

func TestPropertyMonotone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig().Draw(t, "config")
		b, err := backoff.New(c)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		n := rapid.OneOf(rapid.IntRange(1, 100), rapid.IntRange(1, math.MaxInt-1)).Draw(t, "n")
		step := min(rapid.OneOf(rapid.IntRange(1, 3), rapid.IntRange(1, math.MaxInt-n)).Draw(t, "step"), math.MaxInt-n)
		r := rapid.Float64Range(0, 1).Draw(t, "r")
		if b.Base(n) > b.Base(n+step) {
			t.Fatalf("Base(%d) = %d > Base(%d) = %d", n, b.Base(n), n+step, b.Base(n+step))
		}
		// With a fixed draw, jittered delays are monotone in n too.
		if b.DelayAt(n, r) > b.DelayAt(n+step, r) {
			t.Fatalf("DelayAt(%d, %v) > DelayAt(%d, %v)", n, r, n+step, r)
		}
	})
}

// Every attempt in the table region, consecutive: non-decreasing.
func TestPropertyMonotoneConsecutive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig().Draw(t, "config")
		b, err := backoff.New(c)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		start := rapid.OneOf(rapid.Just(1), rapid.IntRange(1, math.MaxInt-200)).Draw(t, "start")
		prev := b.Base(start)
		for n := start + 1; n < start+200; n++ {
			d := b.Base(n)
			if d < prev {
				t.Fatalf("Base(%d) = %d < Base(%d) = %d", n, d, n-1, prev)
			}
			prev = d
		}
	})
}

// Jitter is monotone in r, and Bounds are reached at r = 0 and r = 1-2^-53.
func TestPropertyJitterInR(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig().Draw(t, "config")
		c.Jitter = true
		b, err := backoff.New(c)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		n := genAttempt().Draw(t, "n")
		r1 := rapid.Float64Range(0, 1).Draw(t, "r1")
		r2 := rapid.Float64Range(r1, 1).Draw(t, "r2")
		if b.DelayAt(n, r1) > b.DelayAt(n, r2) {
			t.Fatalf("DelayAt(%d, %v) > DelayAt(%d, %v)", n, r1, n, r2)
		}
		lo, hi := b.Bounds(n)
		if lo != b.DelayAt(n, 0) || hi != b.DelayAt(n, maxBelowOne) {
			t.Fatalf("Bounds(%d) = [%d, %d] not reached at the ends", n, lo, hi)
		}
	})
}

// Integral cases are exact: compare with an independent big-number-free
// formula over small inputs where no saturation happens.
func TestPropertyExactIntegers(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := backoff.Strategy(rapid.IntRange(0, 3).Draw(t, "strategy"))
		initial := time.Duration(rapid.Int64Range(1, 1<<20).Draw(t, "initial"))
		coef := rapid.IntRange(1, 5).Draw(t, "coefficient")
		n := rapid.IntRange(1, 12).Draw(t, "n")
		b, err := backoff.New(backoff.Config{Strategy: st, Initial: initial, Coefficient: float64(coef), Max: math.MaxInt64})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		// want by the spec's formulas, by repeated multiplication.
		want := initial
		switch st {
		case backoff.Linear:
			want = initial * time.Duration(n)
		case backoff.Exponential:
			for i := 1; i < n; i++ {
				want *= time.Duration(coef)
			}
		case backoff.Polynomial:
			for i := 0; i < coef; i++ {
				want *= time.Duration(n)
			}
		}
		if got := b.Base(n); got != want {
			t.Fatalf("%v I=%d C=%d: Base(%d) = %d, want %d", st, initial, coef, n, got, want)
		}
	})
}
