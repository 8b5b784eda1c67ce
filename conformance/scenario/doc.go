// Package scenario reads, plays and checks retrykit's scenario vectors: timed
// sequences of job operations (enqueue, fetch, ack, fail, heartbeat, cancel,
// activate, pause, resume, manual retry, delete) with the expected state of every
// job after each step. The vector files live in testdata/scenarios (see its
// README.md and scenario.schema.json).
//
// # Model
//
// A [Scenario] has a [Config] (injected jitter draw, error history size,
// retention, default visibility timeout) and [Step]s. An ack, fail or
// heartbeat step may name the fetch it answers ([Step.Delivery]); one that
// names an earlier fetch of a job fetched again since is rejected as
// [ClassStaleDelivery]. Each step runs one
// operation at an absolute time, at_ms milliseconds after [Epoch] (2026-01-01T00:00:00Z); times in
// steps never decrease. [Play] runs a scenario against retrykit's reference
// executor and returns one [Observation] per step: the operation's outcome
// (an error class, the fetched job) and every job's state, attempt,
// next_retry_at, reservation deadline, dead-letter flag and error history.
// [Check] compares observations from any implementation — the reference, or
// an adapter speaking the protocol's optional "scenario" op — with a
// scenario's expectations, which may leave fields out.
//
// # Entry points
//
// [Decode] and [Load] read vector files, [Play] runs the reference, [Check]
// compares.
//
// # Values
//
// Every type here is plain data, decoded from or encoded to the JSON of the
// vector files and of the protocol's scenario op. The zero value of an
// expectation field means "not checked"; a decoded File may be read from
// several goroutines, and Play and Check do not modify their arguments.
//
// # Non-goals
//
// The package does not talk to external processes; the conformance runner
// does that and can hand what it receives to [Check].
package scenario
