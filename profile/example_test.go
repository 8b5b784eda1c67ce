package profile_test

import (
	"fmt"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/profile"
)

func Example() {
	p, err := profile.Lookup("asynq")
	if err != nil {
		panic(err)
	}
	for n := 1; n <= 3; n++ {
		lo, hi := p.Bounds(n)
		fmt.Printf("after attempt %d: %v (r=0.5), range [%v, %v]\n", n, p.DelayAt(n, 0.5), lo, hi)
	}
	d := p.Decide(p.MaxAttempts(), backoff.Fixed(0.5))
	fmt.Printf("after attempt %d: %v (%s)\n", p.MaxAttempts(), d.Action, p.Terminal())
	// Output:
	// after attempt 1: 30s (r=0.5), range [15s, 44s]
	// after attempt 2: 46s (r=0.5), range [16s, 1m14s]
	// after attempt 3: 1m16s (r=0.5), range [31s, 1m58s]
	// after attempt 26: dead_letter (archived)
}

func ExampleProfile_Schedule() {
	p, _ := profile.Lookup("decorrelated_jitter")
	// Each delay is drawn between 1s and three times the one before.
	for n, d := range p.Schedule(4, backoff.Fixed(0.5)) {
		fmt.Println(n, d)
	}
	// Output:
	// 1 2s
	// 2 3.5s
	// 3 5.75s
	// 4 9.125s
}
