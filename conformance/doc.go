// Package conformance runs the retrykit conformance vectors against an
// implementation of the OJS retry policy and reports, per vector, whether it
// passed, failed (wrong answer), errored (crash, timeout, protocol
// violation) or was skipped, plus what could not be run at all.
//
// # Model
//
// A [Suite] is a set of vector files loaded from an [io/fs.FS] with [Load]:
// retrykit embeds its own as [github.com/retrykit/retrykit.Vectors]. Each
// [Vector] has an immutable id, the requirement it tests (RET-nn from the
// spec, RK-nn from retrykit's decisions), the spec section, flags, an input
// and the expected output.
//
// An [Implementation] answers protocol [Request] values with [Response]
// values. Three kinds exist:
//
//   - [Reference]: retrykit itself (packages policy, backoff, errmatch);
//   - [External]: any program speaking the line protocol of PROTOCOL.md
//     (in this directory) on its standard streams, for implementations in
//     other languages; requests are pipelined over one long-lived process,
//     with a per-request timeout and one restart after a crash;
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
//	suite, err := conformance.Load(retrykit.Vectors)
//	rep := conformance.NewRunner(suite).Run(ctx, conformance.Reference())
//	rep.Write(os.Stdout, "text")
//
// The command "retrykit conformance" wraps exactly this, and "retrykit
// adapter" serves the reference over the protocol ([Serve]).
//
// # Non-goals
//
// The runner is a test tool: it favours clear reports over speed, although a
// full in-process run takes milliseconds.
//
// # Executor scenarios
//
// Executor behaviour (visibility timeouts, heartbeats, state transitions,
// dead letters) is judged by the scenario vectors of testdata/scenarios,
// added to a suite with [Suite.AddScenarios] and sent through the optional
// "scenario" op (PROTOCOL.md section 3.7). Each scenario is one vector of
// kind [KindScenario]; the adapter plays it on a fresh executor and answers
// one observation per step, which the runner judges with
// [github.com/retrykit/retrykit/executor/scenario.Check]. The [Reference]
// answers the op with retrykit's reference executor. An implementation
// without an executor leaves the op out of its hello, and the scenarios are
// reported under coverage.
//
//	suite.AddScenarios(retrykit.Scenarios)
package conformance
