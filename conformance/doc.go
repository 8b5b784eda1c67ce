// Package conformance runs the retrykit conformance vectors against an
// implementation of the OJS retry policy and reports, per vector, whether it
// passed, failed (wrong answer), errored (crash, timeout, protocol
// violation) or was skipped, plus what could not be run at all.
//
// # Model
//
// A [Suite] is loaded in one step with [Load] from two [io/fs.FS] values:
// the vector files and the executor scenario files (retrykit embeds its own
// as [github.com/retrykit/retrykit.Vectors] and
// [github.com/retrykit/retrykit.Scenarios]). Each [Vector] has an immutable
// id, the requirement it tests (RET-nn from the spec, RK-nn from retrykit's
// decisions), the spec section, flags, an input and the expected output.
//
// An implementation under test is a [protocol.Implementation]: it answers
// protocol requests (package [github.com/retrykit/retrykit/conformance/protocol],
// the wire format of PROTOCOL.md in this directory). Three kinds exist:
//
//   - [Reference]: retrykit itself (packages policy, backoff, errmatch and
//     the reference executor);
//   - a [protocol.Process] ([protocol.NewProcess]): any program speaking the
//     line protocol on its standard streams, for implementations in other
//     languages;
//   - any Go value with the two methods of the interface.
//
// A [Runner], configured with [Option] values (selection by id, requirement
// or flag, a [SkipList] of known failures, strict mode, parallelism), runs
// the suite against an implementation and returns a [Report]. Answers are
// compared within the resolution the implementation declares; for
// implementations whose jitter cannot be injected, bounds are checked
// instead, and a Kolmogorov–Smirnov test of the jitter multiplier (false
// alarm rate [JitterFalseAlarm]) is run for every implementation that
// answers delay requests.
//
// A Report keeps the four result classes apart and reports coverage (vectors
// not run because the implementation lacks an op or does not claim a flag)
// separately, so that "100% pass" cannot hide untested areas. It is written
// as text, JSON, JUnit XML or Markdown ([Report.Write]); [WriteSkipList]
// turns its failures into a known-failure list.
//
// # Entry points
//
//	suite, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
//	rep := conformance.NewRunner(suite).Run(ctx, conformance.Reference())
//	rep.Write(os.Stdout, "text")
//
// The command "retrykit conformance" wraps exactly this, and "retrykit
// adapter" serves the reference over the protocol ([protocol.Serve]).
//
// # Executor scenarios
//
// Executor behaviour (visibility timeouts, heartbeats, state transitions,
// dead letters) is judged by the scenario vectors, sent through the
// optional "scenario" op (PROTOCOL.md section 3.7). Each scenario is one
// vector of kind [KindScenario]; the adapter plays it on a fresh executor
// and answers one observation per step, which the runner judges with
// [github.com/retrykit/retrykit/conformance/scenario.Check]. An
// implementation without an executor leaves the op out of its hello, and
// the scenarios are reported under coverage.
//
// # Non-goals
//
// The runner is a test tool: it favours clear reports over speed, although a
// full in-process run takes milliseconds.
package conformance
