package backoff_test

import (
	"errors"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"pgregory.net/rapid"
)

// tenSecondCap is exponential PT1S × 2 capped at PT10S, jittered in mode m.
func tenSecondCap(t testing.TB, m backoff.JitterMode) *backoff.Backoff {
	t.Helper()
	b, err := backoff.New(backoff.Config{Initial: time.Second, Coefficient: 2, Max: 10 * time.Second, Jitter: true, JitterMode: m})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The values are the formulas of docs/extensions.md §3.4 worked by hand:
// b is 1s, 2s, 4s, 8s, 10s for attempts 1..5.
func TestJitterModesWorkedTable(t *testing.T) {
	cases := []struct {
		mode backoff.JitterMode
		n    int
		prev time.Duration
		r    float64
		want time.Duration
	}{
		{backoff.Full, 3, 0, 0.25, time.Second},                                   // 4s × 0.25
		{backoff.Full, 3, 0, 0, 0},                                                // 4s × 0
		{backoff.Full, 5, 0, 0.5, 5 * time.Second},                                // min(16s, 10s) × 0.5
		{backoff.Equal, 3, 0, 0.5, 3 * time.Second},                               // 2s + 2s × 0.5
		{backoff.Equal, 5, 0, 0.25, 6250 * time.Millisecond},                      // 5s + 5s × 0.25
		{backoff.Equal, 1, 0, 0, 500 * time.Millisecond},                          // 0.5s + 0
		{backoff.Decorrelated, 1, 0, 0.5, 2 * time.Second},                        // p = I = 1s: 1s + 0.5 × (3s − 1s)
		{backoff.Decorrelated, 2, 2 * time.Second, 0.25, 2250 * time.Millisecond}, // 1s + 0.25 × (6s − 1s)
		{backoff.Decorrelated, 3, 5 * time.Second, 0.75, 10 * time.Second},        // 1s + 0.75 × 14s = 11.5s, capped
		{backoff.Decorrelated, 9, 500 * time.Millisecond, 0, time.Second},         // p = max(0.5s, I) = 1s: the floor I
		{backoff.Decorrelated, 9, -time.Hour, 0.5, 2 * time.Second},               // a negative prev is 0
		{backoff.Proportional, 3, 7 * time.Second, 0.75, 5 * time.Second},         // OJS: 4s × 1.25; prev ignored
	}
	for _, c := range cases {
		b := tenSecondCap(t, c.mode)
		if got := b.DelayAfterAt(c.n, c.prev, c.r); got != c.want {
			t.Errorf("%v DelayAfterAt(%d, %v, %v) = %v, want %v", c.mode, c.n, c.prev, c.r, got, c.want)
		}
		if got := b.DelayAfter(c.n, c.prev, backoff.Fixed(c.r)); got != c.want {
			t.Errorf("%v DelayAfter(%d, %v, Fixed(%v)) = %v, want %v", c.mode, c.n, c.prev, c.r, got, c.want)
		}
	}
}

func TestDelayAtOfDecorrelatedStartsFromInitial(t *testing.T) {
	b := tenSecondCap(t, backoff.Decorrelated)
	// prev 0: p = 1s, 1s + 0.5 × 2s, whatever the attempt.
	for _, n := range []int{1, 4, math.MaxInt} {
		if got := b.DelayAt(n, 0.5); got != 2*time.Second {
			t.Errorf("DelayAt(%d, 0.5) = %v, want 2s", n, got)
		}
	}
}

func TestJitterModeBounds(t *testing.T) {
	cases := []struct {
		mode   backoff.JitterMode
		n      int
		lo, hi time.Duration
	}{
		{backoff.Full, 3, 0, 4*time.Second - 1},                            // trunc(4e9 × (1 − 2⁻⁵³))
		{backoff.Equal, 3, 2 * time.Second, 4*time.Second - 1},             // trunc(4e9 × (1 − 2⁻⁵⁴))
		{backoff.Decorrelated, 1, time.Second, 3*time.Second - 1},          // 1s + trunc(2e9 × (1 − 2⁻⁵³))
		{backoff.Decorrelated, 40, time.Second, 10 * time.Second},          // the chain reaches the cap
		{backoff.Decorrelated, math.MaxInt, time.Second, 10 * time.Second}, // and stops there
		{backoff.Proportional, 3, 2 * time.Second, 6*time.Second - 1},      // unchanged OJS bounds
	}
	for _, c := range cases {
		lo, hi := tenSecondCap(t, c.mode).Bounds(c.n)
		if lo != c.lo || hi != c.hi {
			t.Errorf("%v Bounds(%d) = [%v, %v], want [%v, %v]", c.mode, c.n, lo, hi, c.lo, c.hi)
		}
	}
	lo, hi := tenSecondCap(t, backoff.Decorrelated).BoundsAfter(2, 2*time.Second)
	if lo != time.Second || hi != 6*time.Second-1 {
		t.Errorf("BoundsAfter(2, 2s) = [%v, %v], want [1s, 6s-1ns]", lo, hi)
	}
}

func TestParseJitterMode(t *testing.T) {
	for _, name := range []string{"proportional", "full", "equal", "decorrelated"} {
		m, err := backoff.ParseJitterMode(name)
		if err != nil || m.String() != name {
			t.Errorf("ParseJitterMode(%q) = %v, %v", name, m, err)
		}
	}
	for _, name := range []string{"", "Full", "none", "decorrelated "} {
		_, err := backoff.ParseJitterMode(name)
		if !errors.Is(err, backoff.ErrUnknownJitterMode) || !errors.Is(err, backoff.ErrInvalidConfig) {
			t.Errorf("ParseJitterMode(%q) error %v, want ErrUnknownJitterMode", name, err)
		}
	}
	if s := backoff.JitterMode(9).String(); s != "JitterMode(9)" {
		t.Errorf("JitterMode(9).String() = %q", s)
	}
	_, err := backoff.New(backoff.Config{Initial: 1, Coefficient: 1, Max: 1, JitterMode: 4})
	var ce *backoff.ConfigError
	if !errors.As(err, &ce) || ce.Field != "JitterMode" || !errors.Is(err, backoff.ErrUnknownJitterMode) {
		t.Errorf("New with JitterMode 4: %v", err)
	}
}

// TestScheduleThreadsThePreviousDelay: with decorrelated jitter and the
// draw 0.5 each delay is I + (3p − I)/2 = (I + 3p)/2 from the previous p:
// 2s, 3.5s, 5.75s, 9.125s, then capped at 10s.
func TestScheduleThreadsThePreviousDelay(t *testing.T) {
	b := tenSecondCap(t, backoff.Decorrelated)
	want := []time.Duration{2 * time.Second, 3500 * time.Millisecond, 5750 * time.Millisecond, 9125 * time.Millisecond, 10 * time.Second, 10 * time.Second}
	var got []time.Duration
	for _, d := range b.Schedule(len(want), backoff.Fixed(0.5)) {
		got = append(got, d)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Schedule = %v, want %v", got, want)
		}
	}
}

// exactSpread is the formula of §3.4 in exact rational arithmetic, an
// independent oracle for the float64 code: floor of the real value, capped.
func exactSpread(m backoff.JitterMode, base, initial, maxD, prev time.Duration, r float64) *big.Int {
	rr := new(big.Rat).SetFloat64(r)
	b := new(big.Rat).SetInt64(int64(base))
	var x *big.Rat
	switch m {
	case backoff.Full:
		x = new(big.Rat).Mul(b, rr)
	case backoff.Equal:
		half := new(big.Rat).Mul(b, big.NewRat(1, 2))
		x = new(big.Rat).Add(half, new(big.Rat).Mul(half, rr))
	case backoff.Decorrelated:
		p := max(prev, initial)
		span := new(big.Rat).Sub(new(big.Rat).Mul(new(big.Rat).SetInt64(int64(p)), big.NewRat(3, 1)), new(big.Rat).SetInt64(int64(initial)))
		x = new(big.Rat).Add(new(big.Rat).SetInt64(int64(initial)), new(big.Rat).Mul(span, rr))
	}
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if c := big.NewInt(int64(maxD)); q.Cmp(c) > 0 {
		q = c
	}
	return q
}

// TestPropJitterModesWithinTheirBounds: every delay of every mode lies in
// the mode's range of §3.4 and never above Max, for any attempt, previous
// delay and draw; Bounds(n) holds every delay a chain of draws can give,
// and for intervals below 2^53 ns the float64 result is the exact formula,
// give or take the one nanosecond a rounded product can cost.
func TestPropJitterModesWithinTheirBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig().Draw(t, "config")
		c.Jitter = true
		c.JitterMode = backoff.JitterMode(rapid.IntRange(0, 3).Draw(t, "mode"))
		b, err := backoff.New(c)
		if err != nil {
			t.Fatal(err)
		}
		n := genAttempt().Draw(t, "n")
		prev := time.Duration(rapid.OneOf(rapid.Int64Range(math.MinInt64, math.MaxInt64), rapid.Int64Range(0, 1000), rapid.Just(int64(0))).Draw(t, "prev"))
		r := genR().Draw(t, "r")
		d := b.DelayAfterAt(n, prev, r)
		base := b.Base(n)
		var lo, hi time.Duration
		switch c.JitterMode {
		case backoff.Proportional:
			lo, hi = b.Bounds(n)
		case backoff.Full:
			lo, hi = 0, base
		case backoff.Equal:
			lo, hi = base/2, base
		case backoff.Decorrelated:
			p := max(prev, c.Initial)
			top := c.Max
			if p <= math.MaxInt64/3 {
				top = min(3*p, c.Max)
			}
			lo, hi = min(c.Initial, c.Max), top
		}
		if d < lo || d > hi || d > c.Max || d < 0 {
			t.Fatalf("%v: DelayAfterAt(%d, %v, %v) = %v, outside [%v, %v] (Max %v)", c.JitterMode, n, prev, r, d, lo, hi, c.Max)
		}
		if blo, bhi := b.Bounds(n); c.JitterMode != backoff.Decorrelated && (d < blo || d > bhi) {
			t.Fatalf("%v: delay %v outside Bounds(%d) = [%v, %v]", c.JitterMode, d, n, blo, bhi)
		}
		if c.JitterMode != backoff.Proportional && c.Max < 1<<53 && r >= 0 && r < 1 && prev < 1<<53 {
			want := exactSpread(c.JitterMode, base, c.Initial, c.Max, max(prev, 0), r)
			if diff := new(big.Int).Sub(want, big.NewInt(int64(d))); diff.CmpAbs(big.NewInt(1)) > 0 {
				t.Fatalf("%v: DelayAfterAt(%d, %v, %v) = %v, exact formula %v", c.JitterMode, n, prev, r, d, want)
			}
		}
	})
}

// TestPropDecorrelatedChainWithinBounds: a schedule's delays, each drawn
// from the previous one, stay within Bounds of their attempt.
func TestPropDecorrelatedChainWithinBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig().Draw(t, "config")
		c.Jitter, c.JitterMode = true, backoff.Decorrelated
		b, err := backoff.New(c)
		if err != nil {
			t.Fatal(err)
		}
		seed := rapid.Uint64().Draw(t, "seed")
		for n, d := range b.Schedule(rapid.IntRange(1, 80).Draw(t, "k"), backoff.NewPCG(seed, 1)) {
			lo, hi := b.Bounds(n)
			if d < lo || d > hi {
				t.Fatalf("attempt %d: %v outside Bounds [%v, %v]", n, d, lo, hi)
			}
		}
	})
}

func BenchmarkDelayAfter(b *testing.B) {
	for _, m := range []backoff.JitterMode{backoff.Proportional, backoff.Full, backoff.Equal, backoff.Decorrelated} {
		b.Run(m.String(), func(b *testing.B) {
			bo := tenSecondCap(b, m)
			src := backoff.NewPCG(1, 2)
			var s time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				s = bo.DelayAfter(i&15+1, s, src)
			}
			benchSink = s
		})
	}
}

var benchSink time.Duration
