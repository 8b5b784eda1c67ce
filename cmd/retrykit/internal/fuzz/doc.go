// Package fuzz drives differential fuzzing of an OJS retry implementation
// against retrykit's reference outside "go test": the engine of "retrykit
// fuzz". Per op it runs [rapid.Check] with the request generators of
// package policytest, sends each check's batch of requests concurrently
// (pipelined over an adapter process), judges the answers with
// [conformance.Judge], lets rapid shrink the first disagreement to a minimal
// request (with batches, a second one-request search from the same seed
// does the shrinking; see [Config.Parallel]), simplifies it further at the
// level of the request (policy keys and steps dropped, the attempt lowered
// to the first that disagrees), and can write it as a conformance vector
// ([WriteVector]) or, for the scenario op, as an executor scenario
// ([WriteScenario]).
//
// rapid reads its settings from command-line flags; [Run] sets them for the
// duration of each check (seed, check count, no fail files, shrink time)
// and restores them, under a lock. Runs in one process are serialised.
//
// [Config.Time] bounds a run: each op gets an equal share of the time left
// when it starts and sends no new request after it (a check that would
// start later fails at once, before drawing, so rapid stops with nothing to
// shrink), shrinking fits in the time left, and [OpResult.OutOfTime] marks
// the ops cut short. [Config.Progress] receives a line every few seconds.
//
// # Entry points
//
// [Run] fuzzes an implementation and returns a [Result] per op: the cases
// sent, and the minimal [policytest.Disagreement] or the adapter failure it
// found. [WriteVector] turns a disagreement into a vector file that
// "retrykit conformance --vectors DIR" runs, [WriteScenario] a scenario
// disagreement into a scenario file that "retrykit conformance
// --scenarios-dir DIR" runs. The command "retrykit fuzz" is a thin layer
// over them.
package fuzz
