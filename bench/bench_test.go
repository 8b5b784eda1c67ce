package bench

import (
	"testing"
	"time"
)

// sink keeps the compiler from discarding the delays under measurement.
var sink time.Duration

type nexter interface{ next() time.Duration }

// runNext measures one delay per iteration. It is generic so that each
// driver's next method is called directly, not through an interface.
func runNext[D nexter](b *testing.B, d D) {
	b.ReportAllocs()
	var s time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s += d.next()
	}
	sink = s
}

// BenchmarkNextDelay measures the cost of one next delay on the shared
// schedule (1s * 2^(n-1) capped at 5m, n cycling 1..20) for each library,
// without and with jitter. See docs/benchmarks.md for how each is driven.
func BenchmarkNextDelay(b *testing.B) {
	for _, jitter := range []bool{false, true} {
		j := "jitter=off"
		if jitter {
			j = "jitter=on"
		}
		b.Run(j+"/impl=retrykit", func(b *testing.B) { runNext(b, newRetrykitPCG(b, jitter)) })
		b.Run(j+"/impl=retrykit-randpcg", func(b *testing.B) { runNext(b, newRetrykitRandPCG(b, jitter)) })
		b.Run(j+"/impl=retrykit-fixed", func(b *testing.B) { runNext(b, newRetrykitFixed(b, jitter)) })
		b.Run(j+"/impl=retrykit-defaultsrc", func(b *testing.B) { runNext(b, newRetrykitDefaultSource(b, jitter)) })
		b.Run(j+"/impl=retrykit-DelayAt", func(b *testing.B) { runNext(b, newRetrykitAt(b, jitter)) })
		b.Run(j+"/impl=cenkalti-v5", func(b *testing.B) { runNext(b, newCenkalti(jitter)) })
		b.Run(j+"/impl=go-retry", func(b *testing.B) { runNext(b, newGoRetry(jitter)) })
		b.Run(j+"/impl=retry-go-v5", func(b *testing.B) { runNext(b, newRetryGo(jitter)) })
		b.Run(j+"/impl=failsafe-go", func(b *testing.B) { benchFailsafe(b, jitter) })
	}
}

// benchFailsafe runs whole cycles of 20 delays, so b.N is rounded up to a
// multiple of 20 delays; the ns/op it reports is per delay.
func benchFailsafe(b *testing.B, jitter bool) {
	d := newFailsafe(jitter, nil)
	b.ReportAllocs()
	ok := true
	b.ResetTimer()
	for i := 0; i < b.N; i += cycle {
		ok = d.run() && ok
	}
	b.StopTimer()
	if !ok {
		b.Fatal("failsafe-go run did not end with its retries exceeded")
	}
}
