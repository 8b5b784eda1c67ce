package retrybudget_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/retrybudget"
)

// A gRPC-style bucket of 10 tokens, one per retry, half a token back per
// success: an outage spends it in ten retries, and two successes pay for
// one more.
func Example() {
	b, err := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 10, CreditPerSuccess: 0.5})
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	allowed := 0
	for i := 0; i < 12; i++ {
		if b.AllowAt(t0) {
			allowed++
		}
	}
	fmt.Println("during the outage:", allowed, "of 12 retries, balance", b.TokensAt(t0))
	b.SuccessAt(t0.Add(time.Minute))
	b.SuccessAt(t0.Add(time.Minute))
	fmt.Println("after two successes:", b.AllowAt(t0.Add(time.Minute)), b.AllowAt(t0.Add(time.Minute)))
	// Output:
	// during the outage: 10 of 12 retries, balance 0
	// after two successes: true false
}

// The classic rate-limiting bucket: 5 tokens, refilled at one token every 2
// seconds. NextAt says when the next retry is paid for.
func ExampleTokenBucket_NextAt() {
	b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 5, RefillPerSecond: 0.5})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.AllowAt(t0) {
	}
	next, ok := b.NextAt(t0.Add(500 * time.Millisecond))
	fmt.Println(next.Sub(t0), ok, b.AllowAt(next.Add(-time.Nanosecond)), b.AllowAt(next))
	// Output:
	// 2s true false true
}

// Finagle's default budget shape: retries may add a tenth to the traffic,
// and 0.5 per second whatever the traffic, over a 10 s window (the table on
// Ratio).
func ExampleRatio() {
	r, err := retrybudget.NewRatio(retrybudget.RatioSpec{Ratio: 0.1, MinPerSecond: 0.5, Window: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 100; i++ {
		r.DepositAt(t0)
	}
	allowed := 0
	for i := 0; i < 16; i++ {
		if r.AllowAt(t0.Add(time.Second)) {
			allowed++
		}
	}
	fmt.Println("at 1s:", allowed, "of 16")
	for _, s := range []time.Duration{9900 * time.Millisecond, 10 * time.Second, 11 * time.Second} {
		fmt.Println("at", s, r.TokensAt(t0.Add(s)))
	}
	next, _ := r.NextAt(t0.Add(10 * time.Second))
	fmt.Println("next retry at", next.Sub(t0))
	// Output:
	// at 1s: 15 of 16
	// at 9.9s 0
	// at 10s 0
	// at 11s 5
	// next retry at 11s
}
