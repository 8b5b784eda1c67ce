package backoff_test

import (
	"math/rand/v2"
	"testing"

	"github.com/retrykit/retrykit/backoff"
)

// A seeded PCG source draws exactly what math/rand/v2's Rand over a PCG with
// the same seeds draws, so schedules can be replayed from two numbers.
func TestPCGMatchesMathRand(t *testing.T) {
	for _, seeds := range [][2]uint64{{0, 0}, {1, 2}, {^uint64(0), 42}} {
		p := backoff.NewPCG(seeds[0], seeds[1])
		r := rand.New(rand.NewPCG(seeds[0], seeds[1]))
		for i := 0; i < 1000; i++ {
			got, want := p.Float64(), r.Float64()
			if got != want {
				t.Fatalf("seeds %v draw %d: got %v, want %v", seeds, i, got, want)
			}
			if got < 0 || got >= 1 {
				t.Fatalf("draw %v outside [0, 1)", got)
			}
		}
	}
}

// The zero PCG is usable and equals NewPCG(0, 0).
func TestPCGZeroValue(t *testing.T) {
	var z backoff.PCG
	p := backoff.NewPCG(0, 0)
	for i := 0; i < 10; i++ {
		if a, b := z.Float64(), p.Float64(); a != b {
			t.Fatalf("draw %d: zero value %v, NewPCG(0,0) %v", i, a, b)
		}
	}
}

// Delay reads a *PCG directly; it must give what DelayAt gives for the same
// draws.
func TestDelayWithPCGMatchesDelayAt(t *testing.T) {
	b, err := backoff.New(backoff.Config{Initial: 1e9, Coefficient: 2, Max: 300e9, Jitter: true})
	if err != nil {
		t.Fatal(err)
	}
	src, draws := backoff.NewPCG(7, 9), backoff.NewPCG(7, 9)
	for n := 1; n <= 40; n++ {
		if got, want := b.Delay(n, src), b.DelayAt(n, draws.Float64()); got != want {
			t.Fatalf("attempt %d: Delay %v, DelayAt %v", n, got, want)
		}
	}
}
