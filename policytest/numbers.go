package policytest

import (
	"math"
	"sort"
	"sync"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"pgregory.net/rapid"
)

var attempt = rapid.Custom(drawAttempt)

func drawAttempt(t *rapid.T) int64 {
	switch intRange(0, 4).Draw(t, "attempt_kind") {
	case 0, 1:
		return rapid.Int64Range(1, 12).Draw(t, "attempt")
	case 2: // around a power of two
		k := intRange(1, 62).Draw(t, "attempt_log2")
		return int64(1)<<k + rapid.Int64Range(-1, 1).Draw(t, "attempt_offset")
	case 3:
		return numbersPick1.Draw(t, "attempt")
	default:
		return rapid.Int64Range(1, math.MaxInt64).Draw(t, "attempt")
	}
}

// Attempt generates attempt numbers (the 1-based number of the attempt that
// just failed) from 1 to 2^63 − 1: mostly small ones, the values around
// every power of two, the 32-bit and float64-exact limits and the largest
// int64. Shrinks toward 1.
func Attempt() *rapid.Generator[int64] { return attempt }

// AttemptAround generates attempt numbers for the policy s: those of
// [Attempt], and as often the ones where its schedule changes: around the
// cap crossing (the first attempt whose delay before jitter reaches
// max_interval) and around max_attempts, where decisions turn from retry to
// exhaustion. An invalid s gives [Attempt].
func AttemptAround(s policy.Spec) *rapid.Generator[int64] {
	edges := attemptEdges(s)
	if len(edges) == 0 {
		return attempt
	}
	return rapid.Custom(func(t *rapid.T) int64 { return attemptAt(t, edges) })
}

// attemptAt draws one of edges or an [Attempt], evenly.
func attemptAt(t *rapid.T, edges []int64) int64 {
	if len(edges) > 0 && rapid.Bool().Draw(t, "at_edge") {
		return edges[intRange(0, len(edges)-1).Draw(t, "edge")]
	}
	return drawAttempt(t)
}

// attemptEdges returns the attempts around the cap crossing and around
// max_attempts of s, sorted, each at least 1.
func attemptEdges(s policy.Spec) []int64 {
	b, err := backoff.New(backoff.Config{Strategy: s.Strategy, Initial: s.InitialInterval,
		Coefficient: s.BackoffCoefficient, Max: s.MaxInterval, Jitter: s.Jitter})
	if err != nil || s.MaxAttempts < 0 {
		return nil
	}
	c := int64(capCrossing(b))
	m := int64(s.MaxAttempts)
	var edges []int64
	for _, e := range []int64{c - 1, c, c + 1, m - 1, m, m + 1} {
		if e >= 1 {
			edges = append(edges, e)
		}
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i] < edges[j] })
	return edges
}

// capCrossing returns the first attempt whose base delay (before jitter)
// reaches max_interval, or math.MaxInt when none does. Base delays never
// decrease with the attempt, so a binary search finds it.
func capCrossing(b *backoff.Backoff) int {
	max := b.Config().Max
	if b.Base(math.MaxInt) < max {
		return math.MaxInt
	}
	lo, hi := 1, math.MaxInt
	for lo < hi {
		mid := lo + (hi-lo)/2
		if b.Base(mid) >= max {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

var draws = []float64{0, 0.5, 0.25, 0.75, math.Nextafter(1, 0), 0x1p-53, 5e-324, 0.1, 0.9, 0.999999, 0.3333333333333333, 1 - 0x1p-52}

var jitterDraw = rapid.Custom(drawJitter)

func drawJitter(t *rapid.T) float64 {
	switch intRange(0, 3).Draw(t, "rand_kind") {
	case 0:
		return pick(t, draws, "rand")
	case 1: // a short binary fraction k/2^m: exact products
		m := intRange(1, 16).Draw(t, "rand_bits")
		return float64(intRange(0, 1<<m-1).Draw(t, "rand_k")) / float64(int(1)<<m)
	case 2: // a short decimal, as people write them
		return float64(intRange(0, 999).Draw(t, "rand_milli")) / 1000
	default:
		r := rapid.Float64Range(0, 1).Draw(t, "rand")
		if r >= 1 {
			r = math.Nextafter(1, 0)
		}
		return r
	}
}

// JitterDraw generates jitter draws r in [0, 1), the "rand" of the
// conformance protocol: both ends (0 and the largest float64 below 1), the
// smallest positive values, short binary and decimal fractions, and
// arbitrary float64 values. Shrinks toward 0.
func JitterDraw() *rapid.Generator[float64] { return jitterDraw }

// intGens caches the IntRange generators the draw functions use, so that a
// draw does not build a generator.
var intGens sync.Map // [2]int -> *rapid.Generator[int]

func intRange(lo, hi int) *rapid.Generator[int] {
	k := [2]int{lo, hi}
	if g, ok := intGens.Load(k); ok {
		return g.(*rapid.Generator[int])
	}
	g, _ := intGens.LoadOrStore(k, rapid.IntRange(lo, hi))
	return g.(*rapid.Generator[int])
}

// Generators of fixed choices, built once.
var numbersPick1 = rapid.SampledFrom([]int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt32, math.MaxInt32 + 1,
	1 << 53, 1<<53 + 1, 63, 64, 65, 1000, 1 << 62})

// pick draws one of xs, shrinking toward the first.
func pick[T any](t *rapid.T, xs []T, label string) T {
	return xs[intRange(0, len(xs)-1).Draw(t, label)]
}
