package backoff_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// The OJS default policy (PT1S, 2.0, PT5M) without jitter: the delay
// doubles until it reaches the 5 minute cap after attempt 10.
func Example() {
	b, err := backoff.New(backoff.Config{
		Strategy:    backoff.Exponential,
		Initial:     time.Second,
		Coefficient: 2,
		Max:         5 * time.Minute,
	})
	if err != nil {
		panic(err)
	}
	for n := 1; n <= 11; n++ {
		fmt.Println(n, b.Base(n))
	}
	// Output:
	// 1 1s
	// 2 2s
	// 3 4s
	// 4 8s
	// 5 16s
	// 6 32s
	// 7 1m4s
	// 8 2m8s
	// 9 4m16s
	// 10 5m0s
	// 11 5m0s
}

// Jitter made exact with a Fixed source: r = 0.75 gives the multiplier
// 0.5 + 0.75 = 1.25, and the cap applies again after jitter.
func ExampleFixed() {
	b, _ := backoff.New(backoff.Config{
		Initial:     10 * time.Second,
		Coefficient: 2,
		Max:         5 * time.Minute,
		Jitter:      true,
	})
	src := backoff.Fixed(0.75)
	for _, n := range []int{1, 2, 5, 6} {
		fmt.Printf("attempt %d: base %v, jittered %v\n", n, b.Base(n), b.Delay(n, src))
	}
	// Output:
	// attempt 1: base 10s, jittered 12.5s
	// attempt 2: base 20s, jittered 25s
	// attempt 5: base 2m40s, jittered 3m20s
	// attempt 6: base 5m0s, jittered 5m0s
}

// DelayAt is the pure form: the random draw is an argument.
func ExampleBackoff_DelayAt() {
	b, _ := backoff.New(backoff.Config{Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute, Jitter: true})
	fmt.Println(b.DelayAt(3, 0))
	fmt.Println(b.DelayAt(3, 0.5))
	fmt.Println(b.DelayAt(3, 0.9375))
	// Output:
	// 2s
	// 4s
	// 5.75s
}

// Bounds gives the range jitter can produce (spec §5.3: PT10S, 2.0); the
// spec's ranges are half-open, [5s, 15s), so the top is 1ns short.
func ExampleBackoff_Bounds() {
	b, _ := backoff.New(backoff.Config{Initial: 10 * time.Second, Coefficient: 2, Max: 5 * time.Minute, Jitter: true})
	for n := 1; n <= 6; n++ {
		lo, hi := b.Bounds(n)
		fmt.Printf("attempt %d: [%v, %v]\n", n, lo, hi)
	}
	// Output:
	// attempt 1: [5s, 14.999999999s]
	// attempt 2: [10s, 29.999999999s]
	// attempt 3: [20s, 59.999999999s]
	// attempt 4: [40s, 1m59.999999999s]
	// attempt 5: [1m20s, 3m59.999999999s]
	// attempt 6: [2m30s, 5m0s]
}

// Schedule iterates over attempts 1..k; breaking out stops it.
func ExampleBackoff_Schedule() {
	b, _ := backoff.New(backoff.Config{Strategy: backoff.Polynomial, Initial: 15 * time.Second, Coefficient: 4, Max: time.Hour})
	var total time.Duration
	for n, d := range b.Schedule(24, nil) {
		total += d
		fmt.Printf("after attempt %d: wait %v (total %v)\n", n, d, total)
		if d == time.Hour {
			break
		}
	}
	// Output:
	// after attempt 1: wait 15s (total 15s)
	// after attempt 2: wait 4m0s (total 4m15s)
	// after attempt 3: wait 20m15s (total 24m30s)
	// after attempt 4: wait 1h0m0s (total 1h24m30s)
}

// Each strategy with I = PT5S and coefficient 2.
func ExampleStrategy() {
	for _, s := range []backoff.Strategy{backoff.None, backoff.Linear, backoff.Exponential, backoff.Polynomial} {
		b, _ := backoff.New(backoff.Config{Strategy: s, Initial: 5 * time.Second, Coefficient: 2, Max: time.Hour})
		fmt.Printf("%-11s %v %v %v %v\n", s, b.Base(1), b.Base(2), b.Base(3), b.Base(4))
	}
	// Output:
	// none        5s 5s 5s 5s
	// linear      5s 10s 15s 20s
	// exponential 5s 10s 20s 40s
	// polynomial  5s 20s 45s 1m20s
}

func ExampleParseStrategy() {
	s, err := backoff.ParseStrategy("polynomial")
	fmt.Println(s, err)
	_, err = backoff.ParseStrategy("Polynomial")
	fmt.Println(err)
	// Output:
	// polynomial <nil>
	// backoff: Strategy (backoff_strategy): must be one of "none", "linear", "exponential", "polynomial", got "Polynomial"
}

// New reports every invalid field, naming both the Go and the JSON field.
func ExampleNew_invalid() {
	_, err := backoff.New(backoff.Config{Initial: 0, Coefficient: 0.5, Max: time.Minute})
	fmt.Println(err)
	// Output:
	// backoff: Initial (initial_interval): must be greater than zero, got 0s
	// backoff: Coefficient (backoff_coefficient): must be at least 1, got 0.5
}

// A seeded PCG source replays the same jittered schedule from two numbers.
func ExampleNewPCG() {
	b, _ := backoff.New(backoff.Config{Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute, Jitter: true})
	first, second := backoff.NewPCG(1, 2), backoff.NewPCG(1, 2)
	same := true
	for n := 1; n <= 10; n++ {
		d := b.Delay(n, first)
		lo, hi := b.Bounds(n)
		same = same && d == b.Delay(n, second) && lo <= d && d <= hi
	}
	fmt.Println("replayed exactly, within bounds:", same)
	// Output:
	// replayed exactly, within bounds: true
}

// Decorrelated jitter (docs/extensions.md §3.4) draws each delay from
// [Initial, 3 × the previous delay), capped at Max: with the draw fixed at
// 0.5 every delay is (1s + 3p)/2 from the previous p.
func ExampleBackoff_DelayAfter() {
	b, err := backoff.New(backoff.Config{
		Initial:     time.Second,
		Coefficient: 2,
		Max:         10 * time.Second,
		Jitter:      true,
		JitterMode:  backoff.Decorrelated,
	})
	if err != nil {
		panic(err)
	}
	var prev time.Duration
	for n := 1; n <= 5; n++ {
		prev = b.DelayAfter(n, prev, backoff.Fixed(0.5))
		fmt.Println(n, prev)
	}
	// Output:
	// 1 2s
	// 2 3.5s
	// 3 5.75s
	// 4 9.125s
	// 5 10s
}

// Full and equal jitter of the AWS note, for the same base delay of 4s
// (attempt 3 of PT1S × 2) and the draw 0.25.
func ExampleJitterMode() {
	for _, m := range []backoff.JitterMode{backoff.Proportional, backoff.Full, backoff.Equal} {
		b, err := backoff.New(backoff.Config{Initial: time.Second, Coefficient: 2, Max: time.Minute, Jitter: true, JitterMode: m})
		if err != nil {
			panic(err)
		}
		lo, hi := b.Bounds(3)
		fmt.Printf("%-12s %v in [%v, %v]\n", m, b.DelayAt(3, 0.25), lo, hi)
	}
	// Output:
	// proportional 3s in [2s, 5.999999999s]
	// full         1s in [0s, 3.999999999s]
	// equal        2.5s in [2s, 3.999999999s]
}
