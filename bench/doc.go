// Package bench compares the cost of computing the next retry delay in
// retrykit with other Go retry libraries on one shared schedule.
//
// # Model
//
// Every implementation is driven through its own public API on the same
// exponential schedule: an initial interval of 1s, a multiplier of 2 and a
// cap of 5m, so the delays after attempts 1, 2, 3, … are 1s, 2s, 4s, …, 256s,
// and 300s from attempt 10 on. The attempt number cycles through 1..20; a
// library that keeps its own position in the schedule is reset (or rebuilt,
// when it has no reset) every 20 calls, and that cost is part of its number.
// Each library is measured once without jitter and once with the jitter
// model closest to retrykit's multiplier 0.5 + r.
//
// retrykit itself is measured through a parsed policy: [policy.Parse] of the
// equivalent OJS JSON, then Backoff().Delay with an injected source
// ([backoff.NewPCG], *math/rand/v2.Rand backed by PCG, [backoff.Fixed] or
// [backoff.Random]) and Backoff().DelayAt with an explicit draw.
//
// # Entry points
//
// There is no library code here: run
//
//	go test -run '^$' -bench . -benchmem -count 10 ./...
//
// from this directory, and `go test ./...` for the check that every library
// produces the same schedule without jitter. docs/benchmarks.md in the main
// module records the results and how each library is driven.
//
// # Non-goals
//
// This is a separate module so that the compared libraries never become
// dependencies of retrykit itself. It measures delay computation only, not
// sleeping, retry loops or error handling, except where a library offers no
// other way to obtain a delay (failsafe-go; see docs/benchmarks.md).
package bench
