// Package retrykit is the root of retrykit, an exact implementation of the
// OJS (Open Job Spec) retry policy and a language-agnostic conformance suite
// for it.
//
// The library lives in sub-packages:
//
//   - [github.com/retrykit/retrykit/policy]: the RetryPolicy data model —
//     strict parsing, merge with defaults, validation, durations, decisions;
//   - [github.com/retrykit/retrykit/backoff]: pure delay math (strategies,
//     cap, jitter) with injectable randomness;
//   - [github.com/retrykit/retrykit/errmatch]: non-retryable error matching
//     and classification of Go errors;
//   - [github.com/retrykit/retrykit/executor]: the reference in-memory job
//     executor, applying the retry rules over a job's whole lifecycle;
//   - [github.com/retrykit/retrykit/conformance]: the runner that checks any
//     implementation, in any language, against the conformance vectors and
//     scenarios, and its reports;
//   - [github.com/retrykit/retrykit/conformance/protocol]: the wire protocol
//     between the runner and an implementation's adapter;
//   - [github.com/retrykit/retrykit/conformance/scenario]: reads, plays and
//     checks the executor scenario vectors;
//   - [github.com/retrykit/retrykit/profile]: other systems' retry
//     behaviour (Sidekiq, Celery, River, AWS, gRPC, ...) reproduced exactly,
//     to compare with and migrate to an OJS policy;
//   - [github.com/retrykit/retrykit/conformance/live]: the checker of a
//     running OJS server over HTTP ("retrykit conformance --server");
//   - [github.com/retrykit/retrykit/ojshttp]: the reference OJS HTTP
//     server over the executor ("retrykit serve");
//   - [github.com/retrykit/retrykit/policytest]: rapid generators and
//     properties that test any implementation of the retry policy against
//     this one, from a Go test.
//
// Every import runs downward through three layers. At the bottom,
// internal/ holds the shared low layer (sat, bounded, suggest, ojsfault,
// readmecheck), standard library alone. The library packages above import
// it; the commands on top live under cmd/: cmd/retrykit keeps the packages
// only it uses (fuzz, chart, human) in cmd/retrykit/internal, and
// cmd/ojsload is the load generator of the server benchmarks.
//
// Nested modules, each with its own go.mod so that their dependencies stay
// out of this one: integrations/river (package riverretry),
// integrations/asynq (asynqretry), integrations/temporal (temporalretry)
// and integrations/jetstream (jetstreamretry) drive River's, asynq's, Temporal's and NATS
// JetStream's retries with an OJS policy, examples/ shows them at work,
// verify/ runs the profiles against the other systems' real code, and
// bench/ measures retrykit against its peers.
//
// This package itself carries no code of its own, only the test suites,
// embedded in the module so that Go users need nothing else on disk:
// [Vectors], the policy conformance vectors, [Scenarios], the executor
// scenario vectors, and [Profiles], the profile vectors. The command
// "retrykit conformance export DIR" writes the first two out (the scenarios
// to DIR/scenarios) for runners in other languages.
package retrykit
