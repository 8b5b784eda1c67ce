package retrybudget_test

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/retrybudget"
)

// One retry decision, as an executor asks it after each failure: 0 allocs.
func BenchmarkBucketAllowAt(b *testing.B) {
	bk, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 100, CreditPerSuccess: 0.1, RefillPerSecond: 5})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		bk.AllowAt(at)
		bk.SuccessAt(at)
	}
}

func BenchmarkRatioAllowAt(b *testing.B) {
	r, _ := retrybudget.NewRatio(retrybudget.RatioSpec{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		r.DepositAt(at)
		r.AllowAt(at)
	}
}
