package profile_test

import (
	"errors"
	"fmt"
	"time"

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

// An unknown name is an error that matches ErrUnknown; the message lists
// the known names.
func ExampleLookup() {
	_, err := profile.Lookup("Sidekiq") // names are lowercase
	fmt.Println(errors.Is(err, profile.ErrUnknown))
	// Output:
	// true
}

// A Run follows one job: BullMQ's documented example (attempts 3, delay
// 1000 ms doubling) retries after 1s and 2s, and its third failure is the
// last.
func ExampleProfile_Run() {
	p, _ := profile.Lookup("bullmq:type=exponential,delay=1000,attempts=3")
	run := p.Run()
	for range p.MaxAttempts() {
		d := run.Next(nil) // no jitter: nothing is drawn
		fmt.Println(run.Attempt(), d.Reason, d.Delay)
	}
	// Output:
	// 1 retry 1s
	// 2 retry 2s
	// 3 exhausted 0s
}

// A configured profile takes the system's own settings: BullMQ's
// {type: 'exponential', delay: 3000} with 5 attempts.
func ExampleParse() {
	p, err := profile.Parse("bullmq:type=exponential,delay=3000,attempts=5")
	if err != nil {
		panic(err)
	}
	for n := 1; n <= p.MaxAttempts(); n++ {
		d := p.DecideAt(n, 0)
		fmt.Println(n, d.Action, d.Delay)
	}
	_, err = profile.Parse("bullmq:tpye=fixed")
	fmt.Println(err)
	// Output:
	// 1 retry 3s
	// 2 retry 6s
	// 3 retry 12s
	// 4 retry 24s
	// 5 discard 0s
	// profile: bullmq: unknown setting "tpye" (did you mean "type"? settings: type, delay, attempts, jitter)
}

// The AWS SDK for Go backs off from 1s after a throttling error, from 50ms
// after any other.
func ExampleProfile_WithClass() {
	p, _ := profile.Lookup("aws_go")
	t, _ := p.WithClass(profile.ClassThrottling)
	for _, q := range []profile.Profile{p, t} {
		lo, hi := q.Bounds(1)
		fmt.Printf("%s: [%v, %v]\n", q.Class(), lo, hi)
	}
	// Output:
	// ordinary: [0s, 49.999999ms]
	// throttling: [0s, 999.999999ms]
}

// With configures a profile from Go, in the system's own setting names.
func ExampleProfile_With() {
	p, _ := profile.Lookup("temporal")
	p, err := p.With("initial_interval=2s", "backoff_coefficient=3", "maximum_interval=1m")
	if err != nil {
		panic(err)
	}
	var ds []time.Duration
	for n := 1; n <= 5; n++ {
		ds = append(ds, p.DelayAt(n, 0))
	}
	fmt.Println(ds)
	fmt.Println(p.Name())
	// Output:
	// [2s 6s 18s 54s 1m0s]
	// temporal:initial_interval=2s,backoff_coefficient=3,maximum_interval=1m
}
