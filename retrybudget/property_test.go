package retrybudget_test

import (
	"math/big"
	"testing"
	"time"

	"github.com/retrykit/retrykit/retrybudget"
	"pgregory.net/rapid"
)

// op is one event replayed on a budget: kind 0 a first attempt, 1 a
// success, 2 a retry asked; at is nanoseconds after t0 (may go back).
type op struct {
	kind int
	at   int64
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func drawOps(t *rapid.T, maxGap int64) []op {
	ops := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) op {
		gap := rapid.OneOf(rapid.Int64Range(0, 3), rapid.Int64Range(0, maxGap), rapid.Int64Range(-maxGap/4, 0),
			rapid.Int64Range(maxGap-maxGap/8, maxGap)).Draw(t, "gap")
		return op{kind: rapid.IntRange(0, 2).Draw(t, "kind"), at: gap}
	}), 1, 200).Draw(t, "ops")
	var now int64
	for i := range ops { // gaps to instants; a negative gap steps the clock back
		now += ops[i].at
		ops[i].at = now
	}
	return ops
}

// billionths draws a count in billionths between lo and hi, often a round
// number so that ties (a balance of exactly one token) happen.
func billionths(t *rapid.T, name string, lo, hi int64) float64 {
	if hi >= 1e9 && rapid.Bool().Draw(t, name+"_round") {
		return float64(rapid.Int64Range((lo+999_999_999)/1e9, hi/1e9).Draw(t, name)) // whole tokens
	}
	return float64(rapid.Int64Range(lo, hi).Draw(t, name)) / 1e9
}

// A bucket never holds fewer than 0 or more than Capacity tokens, and
// its balance and every decision equal those of an exact rational model
// of the documented rules: tokens += RefillPerSecond·elapsed (capped), a
// success adds CreditPerSuccess (capped), a retry is allowed when
// tokens ≥ 1 and takes one; the bucket
// reports the model's tokens truncated to a billionth.
func TestBucketMatchesExactModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		capacity := billionths(t, "capacity", 1e9, 100e9)
		s := retrybudget.TokenBucketSpec{
			Capacity:         capacity,
			CreditPerSuccess: billionths(t, "credit", 0, int64(capacity*1e9)),
		}
		if rapid.Bool().Draw(t, "refills") {
			s.RefillPerSecond = billionths(t, "refill", 1, 10e9)
		}
		b, err := retrybudget.NewTokenBucket(s)
		if err != nil {
			t.Fatal(err)
		}
		rat := func(v float64) *big.Rat { return new(big.Rat).SetFrac64(int64(v*1e9+0.5), 1e9) }
		capR, costR, creditR, rateR := rat(s.Capacity), big.NewRat(1, 1), rat(s.CreditPerSuccess), rat(s.RefillPerSecond)
		tokens := new(big.Rat).Set(capR)
		var last int64
		seen := false
		for i, o := range drawOps(t, int64(10*time.Second)) {
			now := o.at
			if seen && now < last {
				now = last
			}
			if seen && now > last {
				add := new(big.Rat).Mul(rateR, new(big.Rat).SetFrac64(now-last, 1e9))
				tokens.Add(tokens, add)
				if tokens.Cmp(capR) > 0 {
					tokens.Set(capR)
				}
			}
			last, seen = now, true
			at := t0.Add(time.Duration(o.at))
			switch o.kind {
			case 0:
				b.DepositAt(at)
			case 1:
				b.SuccessAt(at)
				tokens.Add(tokens, creditR)
				if tokens.Cmp(capR) > 0 {
					tokens.Set(capR)
				}
			case 2:
				want := tokens.Cmp(costR) >= 0
				if want {
					tokens.Sub(tokens, costR)
				}
				if got := b.AllowAt(at); got != want {
					t.Fatalf("op %d: AllowAt = %v, the model holds %s tokens for a cost of %s", i, got, tokens.FloatString(9), costR.FloatString(9))
				}
			}
			got := b.TokensAt(at)
			if got < 0 || got > s.Capacity {
				t.Fatalf("op %d: balance %v outside [0, %v]", i, got, s.Capacity)
			}
			floor := new(big.Rat).SetFrac(new(big.Int).Quo(new(big.Int).Mul(tokens.Num(), big.NewInt(1e9)), tokens.Denom()), big.NewInt(1e9))
			if f, _ := floor.Float64(); got != f {
				t.Fatalf("op %d: balance %v, the model %s", i, got, tokens.FloatString(12))
			}
		}
	})
}

// ratioModel recomputes a Ratio's rule from the whole event log: the slot
// of an instant is (t − origin) / (Window/10), and a retry is allowed
// when Ratio·F + MinPerSecond·Window − R ≥ 1 over the slot and the nine
// before it.
type ratioModel struct {
	ratio, floor *big.Rat
	slot         int64
	origin, last int64
	seen         bool
	firsts       map[int64]int64
	retries      map[int64]int64
}

func (m *ratioModel) slotOf(at int64) int64 {
	if !m.seen {
		m.seen, m.origin, m.last = true, at, at
	}
	m.last = max(m.last, at)
	return (m.last - m.origin) / m.slot
}

func (m *ratioModel) balance(k int64) *big.Rat {
	var f, r int64
	for s := k - 9; s <= k; s++ {
		f += m.firsts[s]
		r += m.retries[s]
	}
	b := new(big.Rat).Mul(m.ratio, big.NewRat(f, 1))
	b.Add(b, m.floor)
	return b.Sub(b, big.NewRat(r, 1))
}

// A Ratio's decisions equal the model's, its balance is never negative,
// and within every window the retries allowed never exceed Ratio times
// the first attempts plus the floor.
func TestRatioMatchesWindowModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := retrybudget.RatioSpec{
			Ratio:        billionths(t, "ratio", 0, 2e9),
			MinPerSecond: billionths(t, "min_per_second", 0, 5e9),
			Window:       time.Duration(rapid.Int64Range(int64(retrybudget.MinWindow), int64(time.Minute)).Draw(t, "window")),
		}
		r, err := retrybudget.NewRatio(s)
		if err != nil {
			t.Skip(err) // both zero
		}
		held := r.Spec()
		slot := int64(held.Window / retrybudget.Slots)
		m := &ratioModel{
			ratio:   new(big.Rat).SetFrac64(int64(held.Ratio*1e9+0.5), 1e9),
			slot:    slot,
			firsts:  map[int64]int64{},
			retries: map[int64]int64{},
		}
		// floor = MinPerSecond·Window, truncated to a billionth.
		fl := new(big.Int).Mul(big.NewInt(int64(held.MinPerSecond*1e9+0.5)), big.NewInt(int64(held.Window)))
		m.floor = new(big.Rat).SetFrac(fl.Quo(fl, big.NewInt(1e9)), big.NewInt(1e9))
		for i, o := range drawOps(t, 4*slot) {
			at := t0.Add(time.Duration(o.at))
			k := m.slotOf(o.at)
			switch o.kind {
			case 0:
				r.DepositAt(at)
				m.firsts[k]++
			case 1:
				r.SuccessAt(at)
			case 2:
				want := m.balance(k).Cmp(big.NewRat(1, 1)) >= 0
				if want {
					m.retries[k]++
				}
				if got := r.AllowAt(at); got != want {
					t.Fatalf("op %d: AllowAt = %v, the model's balance is %s", i, got, m.balance(k).FloatString(9))
				}
				if want && m.balance(k).Sign() < 0 {
					t.Fatalf("op %d: a retry allowed past Ratio·F + floor", i)
				}
			}
			got := r.TokensAt(at)
			wantB, _ := m.balance(k).Float64()
			if got < 0 || wantB >= 0 && (got-wantB > 1e-6 || wantB-got > 1e-6) || wantB < 0 && got != 0 {
				t.Fatalf("op %d: balance %v, the model %v", i, got, wantB)
			}
		}
	})
}

// replay builds a fresh budget and plays ops on it.
func replay(newB func() retrybudget.Budget, ops []op) retrybudget.Budget {
	b := newB()
	for _, o := range ops {
		at := t0.Add(time.Duration(o.at))
		switch o.kind {
		case 0:
			b.DepositAt(at)
		case 1:
			b.SuccessAt(at)
		case 2:
			b.AllowAt(at)
		}
	}
	return b
}

// NextAt names the first instant at which a retry is allowed: allowed
// there, refused a nanosecond before (unless that is before the query),
// and never earlier than the query.
func TestNextAtIsTheFirstAllowedInstant(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var newB func() retrybudget.Budget
		if rapid.Bool().Draw(t, "bucket") {
			s := retrybudget.TokenBucketSpec{Capacity: float64(rapid.IntRange(1, 20).Draw(t, "capacity")),
				CreditPerSuccess: billionths(t, "credit", 0, 1e9), RefillPerSecond: billionths(t, "refill", 0, 3e9)}
			newB = func() retrybudget.Budget { b, _ := retrybudget.NewTokenBucket(s); return b }
		} else {
			s := retrybudget.RatioSpec{Ratio: billionths(t, "ratio", 0, 1e9), MinPerSecond: billionths(t, "min", 1, 2e9), Window: time.Second}
			newB = func() retrybudget.Budget { b, _ := retrybudget.NewRatio(s); return b }
		}
		ops := drawOps(t, int64(300*time.Millisecond))
		q := t0.Add(time.Duration(ops[len(ops)-1].at + rapid.Int64Range(0, int64(time.Second)).Draw(t, "query")))
		next, ok := replay(newB, ops).NextAt(q)
		if !ok {
			if replay(newB, ops).AllowAt(q.Add(1000 * time.Hour)) {
				t.Fatalf("NextAt says never, but a retry is allowed 1000h later")
			}
			return
		}
		if next.Before(q) {
			t.Fatalf("NextAt %v before the query %v", next, q)
		}
		if !replay(newB, ops).AllowAt(next) {
			t.Fatalf("NextAt %v: refused there", next.Sub(t0))
		}
		if before := next.Add(-time.Nanosecond); !before.Before(q) && replay(newB, ops).AllowAt(before) {
			t.Fatalf("NextAt %v: already allowed a nanosecond before", next.Sub(t0))
		}
	})
}
