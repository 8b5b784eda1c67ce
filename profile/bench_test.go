package profile_test

import (
	"testing"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/profile"
)

// BenchmarkDelayAt measures one delay per profile at a mid attempt.
func BenchmarkDelayAt(b *testing.B) {
	for _, p := range profile.All() {
		b.Run(p.Name(), func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for i := 0; b.Loop(); i++ {
				sink += int64(p.DelayAt(1+i%20, 0.37))
			}
			_ = sink
		})
	}
}

// BenchmarkDelay draws from a seeded source, as a scheduler would.
func BenchmarkDelay(b *testing.B) {
	for _, name := range []string{"sidekiq", "river", "decorrelated_jitter"} {
		p, _ := profile.Lookup(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			src := backoff.NewPCG(1, 2)
			var sink int64
			for i := 0; b.Loop(); i++ {
				sink += int64(p.Delay(1+i%20, src))
			}
			_ = sink
		})
	}
}
