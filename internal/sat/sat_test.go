package sat

import (
	"math"
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// clampBig returns v clamped to [lo, hi] as a big.Int.
func clampBig(v, lo, hi *big.Int) *big.Int {
	if v.Cmp(hi) > 0 {
		return hi
	}
	if v.Cmp(lo) < 0 {
		return lo
	}
	return v
}

var (
	zero    = big.NewInt(0)
	maxU64  = new(big.Int).SetUint64(math.MaxUint64)
	minI64  = big.NewInt(math.MinInt64)
	maxI64  = big.NewInt(math.MaxInt64)
	edgeU64 = []uint64{0, 1, 2, 3, 10, 1 << 32, 1<<32 - 1, 1 << 63, math.MaxInt64, math.MaxUint64 - 1, math.MaxUint64}
)

func u64() *rapid.Generator[uint64] {
	return rapid.OneOf(rapid.Uint64(), rapid.Uint64Range(0, 1<<33), rapid.SampledFrom(edgeU64))
}

// Each operation equals the exact big.Int result clamped to the range.
func TestPropExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := u64().Draw(t, "a"), u64().Draw(t, "b")
		ba, bb := new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)
		if got, want := Add(a, b), clampBig(new(big.Int).Add(ba, bb), zero, maxU64); got != want.Uint64() {
			t.Fatalf("Add(%d, %d) = %d, want %v", a, b, got, want)
		}
		if got, want := Mul(a, b), clampBig(new(big.Int).Mul(ba, bb), zero, maxU64); got != want.Uint64() {
			t.Fatalf("Mul(%d, %d) = %d, want %v", a, b, got, want)
		}
		e := rapid.Uint64Range(0, 130).Draw(t, "e")
		want := new(big.Int).Exp(ba, big.NewInt(int64(e)), nil)
		if got := Pow(a, e); got != clampBig(want, zero, maxU64).Uint64() {
			t.Fatalf("Pow(%d, %d) = %d, want %v", a, e, got, want)
		}
		na, nb := int64(min(a, math.MaxInt64)), int64(min(b, math.MaxInt64))
		wantM := clampBig(new(big.Int).Mul(big.NewInt(na), big.NewInt(nb)), zero, maxI64)
		if got := MulInt(na, nb); got != wantM.Int64() {
			t.Fatalf("MulInt(%d, %d) = %d, want %v", na, nb, got, wantM)
		}
		wantP := clampBig(new(big.Int).Exp(big.NewInt(na), big.NewInt(int64(e)), nil), zero, maxI64)
		if got := PowInt(na, int64(e)); got != wantP.Int64() {
			t.Fatalf("PowInt(%d, %d) = %d, want %v", na, e, got, wantP)
		}
		x, y := rapid.Int64().Draw(t, "x"), rapid.Int64().Draw(t, "y")
		wantI := clampBig(new(big.Int).Add(big.NewInt(x), big.NewInt(y)), minI64, maxI64)
		if got := AddInt(time.Duration(x), time.Duration(y)); int64(got) != wantI.Int64() {
			t.Fatalf("AddInt(%d, %d) = %d, want %v", x, y, got, wantI)
		}
	})
}

func TestEdges(t *testing.T) {
	if got := AddInt[int64](math.MaxInt64, 1); got != math.MaxInt64 {
		t.Errorf("AddInt(MaxInt64, 1) = %d", got)
	}
	if got := AddInt[int64](math.MinInt64, -1); got != math.MinInt64 {
		t.Errorf("AddInt(MinInt64, -1) = %d", got)
	}
	if got := Pow(math.MaxUint64, 1<<63); got != math.MaxUint64 {
		t.Errorf("Pow(max, 2^63) = %d", got)
	}
	if got := MulInt[int64](-3, 5); got != 0 {
		t.Errorf("MulInt(-3, 5) = %d, want 0", got)
	}
	if got := PowInt[int64](2, 63); got != math.MaxInt64 {
		t.Errorf("PowInt(2, 63) = %d, want MaxInt64", got)
	}
	if got := Pow(0, 0); got != 1 {
		t.Errorf("Pow(0, 0) = %d, want 1", got)
	}
}
