// Package conformance runs the retrykit conformance suite against an
// implementation of the OJS retry policy and reports what passed, failed,
// errored, was skipped or could not be run.
//
// A [Suite] of vectors and executor scenarios is read with [Load]; each
// [Vector] tests one requirement (RET-nn of the spec, RK-nn of retrykit's
// decisions). The implementation is a [protocol.Implementation]: retrykit
// itself ([Reference]), an adapter program in any language
// ([protocol.NewProcess], PROTOCOL.md in this directory) or a Go value. A
// [Runner], configured with [Option] values, sends every vector and judges
// the answers within the resolution the implementation declares; the
// [Report] opens with scores per level (MUST, SHOULD, retrykit decisions),
// groups failures by [Cause] (first the bug models of package
// [github.com/retrykit/retrykit/conformance/diagnose], catalogue or fitted
// family, that reproduce them exactly and contradict no pass, then the
// rest grouped by the deviation observed, each with its smallest
// reproduction), and keeps coverage apart from the verdicts.
//
//	suite, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
//	rep := conformance.NewRunner(suite).Run(ctx, conformance.Reference())
//	rep.Write(os.Stdout, "text")
//
// The command "retrykit conformance" wraps exactly this. The wire protocol
// is package [github.com/retrykit/retrykit/conformance/protocol]; the
// scenario format and player are package
// [github.com/retrykit/retrykit/conformance/scenario].
//
// Non-goal: speed. The runner is a test tool that favours clear reports,
// although a full in-process run takes milliseconds.
package conformance
