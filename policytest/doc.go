// Package policytest provides rapid (pgregory.net/rapid) generators and
// properties for testing implementations of the OJS retry policy against
// retrykit, as net/http/httptest and testing/fstest do for their packages.
// It is meant for queue authors who implement the OJS rules themselves and
// want to test them from their own "go test".
//
// # Model
//
// An implementation under test is a [protocol.Implementation]: two methods
// that answer protocol requests (conformance/PROTOCOL.md) — the same
// interface "retrykit conformance" runs vectors against, without any
// adapter process. Three kinds of tools work on it:
//
//   - Generators of inputs biased toward the edges of the rules, not
//     uniform noise: [Duration] and [ValidDuration] (every component
//     combination, 0 to 12 fractional digits, overflow, case, white space,
//     non-ASCII digits), [Policy], [ValidPolicy] and [Spec] (each field
//     absent, at, inside and just outside its bounds, wrong JSON types,
//     unknown and duplicate keys), [Attempt] and [AttemptAround] (small,
//     around the cap crossing and max_attempts, up to 2^63 − 1),
//     [JitterDraw] (both ends of [0, 1)), [ErrorType], [ErrorTypeFor],
//     [Patterns] (0 to 4 dots, ".*" entries, prefixes with and without the
//     dot, case differences) and [Code]; [Request] combines them into
//     protocol requests for one op. Each shrinks toward the simplest
//     value: "PT0S", {}, attempt 1, rand 0.
//   - A differential property, [Differential]: every generated request goes
//     to the implementation and to retrykit's reference, and the answers are
//     judged as the conformance runner judges vectors ([Compare],
//     [conformance.Judge]). On a disagreement rapid shrinks the request and
//     the failure shows it side by side ([Disagreement]).
//   - Schedule properties that hold whatever the arithmetic: [WithinBounds],
//     [CapAfterJitter], [Monotone] and [Exhausts].
//
// # Entry points
//
//	func TestAgreesWithRetrykit(t *testing.T) {
//		rapid.Check(t, policytest.Differential(myImpl))
//	}
//
//	func TestScheduleProperties(t *testing.T) {
//		t.Run("bounds", rapid.MakeCheck(policytest.WithinBounds(myImpl)))
//		t.Run("cap", rapid.MakeCheck(policytest.CapAfterJitter(myImpl)))
//		t.Run("monotone", rapid.MakeCheck(policytest.Monotone(myImpl)))
//		t.Run("exhaustion", rapid.MakeCheck(policytest.Exhausts(myImpl)))
//	}
//
// The command "retrykit fuzz --impl CMD" runs the same generators and
// judgement against an adapter process in any language, and writes what it
// finds as conformance vectors.
//
// # Non-goals
//
// Expected answers are the reference's, so where the spec leaves an outcome
// open the differential property expects retrykit's choice
// (docs/decisions.md); an implementation that decided otherwise lists the
// matching flag in its hello's unclaimed_flags (see [Flags]), and requests
// carrying it are not sent. The package is for tests: generators favour
// coverage of edges over speed, and nothing here is safe to use on
// untrusted input paths.
package policytest
