// Package backoff computes OJS retry delays: exact, saturating, allocation
// free, with injectable jitter.
//
// # Model
//
// A retry delay is a pure function of three things: a validated [Config]
// (strategy, initial interval I, coefficient C, maximum interval Max,
// jitter on or off), the attempt number n, and — only with jitter — one
// random draw r in [0, 1). Here n is the 1-based number of the attempt that
// just failed: the delay after attempt 1 uses n = 1 (the OJS spec's "retry
// number 1"), so the first delay is I for every strategy. Attempt numbers
// below 1 are treated as 1. This package is lenient there on purpose;
// [github.com/retrykit/retrykit/policy.Policy.DecideAt] is stricter and
// rejects an attempt below 1 with an error, since it is not a failed
// attempt (docs/decisions.md RK-16).
//
// The raw delay per [Strategy]:
//
//	None         I
//	Linear       I * n
//	Exponential  I * C^(n-1)      (the default)
//	Polynomial   I * n^C
//
// The delay is then computed in this order: cap, jitter, cap.
//
//  1. base = min(raw, Max), truncated toward zero to whole nanoseconds.
//  2. With jitter: d = base * m, in float64, where m = 0.5 + r is held
//     below 1.5 (the float64 sum rounds up to 1.5 for r within 2^-53 of 1).
//  3. delay = min(d, Max), truncated toward zero to whole nanoseconds.
//
// So a jittered delay lies between half the capped delay and Max, never
// reaches 1.5 times the capped delay, and never exceeds Max.
//
// That multiplier is the OJS jitter, [Proportional]. The extension of
// docs/extensions.md adds [Config.JitterMode] with the three modes of the
// AWS note "Exponential Backoff And Jitter": [Full] (b·r), [Equal]
// (b/2 + b/2·r) and [Decorrelated] (I + r·(3·prev − I), capped), which
// grows from the previous delay: [Backoff.DelayAfterAt] takes it
// explicitly, [Backoff.DelayAfter] draws r from a Source, and
// [Backoff.Schedule] threads it from one attempt to the next. See
// [JitterMode] for the formulas and ranges.
//
// # Exactness and saturation
//
// None, Linear, and Exponential and Polynomial with an integral coefficient
// (2.0, 4.0, ...) are computed exactly in 64-bit integer arithmetic that
// saturates instead of overflowing. A non-integral coefficient (1.5, 2.5)
// is computed in float64 with [math.Pow] (with exp((n-1)·ln C) for
// Exponential past n = 65, within about 1e-15 relative where math.Pow's
// repeated squaring drifts; Polynomial takes the integral part of the
// exponent in integers and a half as a square root, so that 1ns * 65536^1.5
// is exactly 2^24 ns) and truncated toward zero, so a power that is not an
// integer can land a nanosecond below the real-number value (docs/decisions.md
// RK-23); the results are kept non-decreasing in n. In
// every case, for any n from 1 to math.MaxInt, any finite coefficient up to
// math.MaxFloat64 and intervals up to the largest [time.Duration], the
// result is between 0 and Max: an overflow or an infinite power simply hits
// the cap. Nothing here panics or returns a negative delay.
//
// # The OJS default
//
// The OJS default policy is Exponential with I = PT1S, C = 2.0, Max = PT5M
// and jitter on. Its base delays (before jitter) are
//
//	n      1   2   3   4   5    6    7    8     9     10    11 ...
//	delay  1s  2s  4s  8s  16s  32s  64s  128s  256s  300s  300s
//
// the raw 512s after attempt 10 being capped at 300s. With jitter the delay
// after attempt 1 lies in the half-open range [500ms, 1.5s): its largest
// value is 1.5s-1ns, since the multiplier stays below 1.5 (see
// [Backoff.Bounds] and docs/decisions.md RK-05). After attempt 10 it lies in
// [150s, 300s], both ends reached, the top one through the cap.
//
// # Entry points
//
// [New] validates a Config and returns an immutable [*Backoff] that
// precomputes a small table, so a lookup costs a few nanoseconds.
// [Backoff.DelayAt] is the pure form taking the draw r explicitly;
// [Backoff.Delay] draws r from a [Source]: [Random] in production
// (goroutine-safe, seeded by the runtime), [NewPCG] for a seeded,
// reproducible sequence (tests, examples, replaying a run; one goroutine at
// a time), [Fixed] for one fixed draw, or any *math/rand/v2.Rand;
// [Backoff.Base] is the capped delay before jitter; [Backoff.Bounds] gives
// the exact range jitter can produce; [Backoff.Schedule] iterates over the
// delays of attempts 1..k.
//
// # Non-goals
//
// This package does no JSON or ISO 8601 parsing (see package policy), does
// not count attempts, decide whether to retry, sleep, or read the clock. It
// keeps no global state and never draws randomness except from the Source
// it is given (or [Random] when given nil).
package backoff
