package profile_test

import (
	"strings"
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

// BenchmarkParse measures Parse: a plain name (a map lookup), a configured
// profile (parsing the settings and building the model), and the largest
// text Parse reads, refused.
func BenchmarkParse(b *testing.B) {
	long := strings.Repeat("x", profile.MaxSpec)
	for _, c := range []struct{ name, spec string }{
		{"plain", "sidekiq"},
		{"version", "aws_go@1.47"},
		{"configured", "bullmq:type=exponential,delay=3000,attempts=5"},
		{"temporal", "temporal:initial_interval=2s,backoff_coefficient=3,maximum_interval=1m"},
		{"unknown_4KiB", long},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = profile.Parse(c.spec)
			}
		})
	}
}
