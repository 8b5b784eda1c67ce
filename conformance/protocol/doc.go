// Package protocol is the wire protocol between the retrykit conformance
// runner and an implementation under test (conformance/PROTOCOL.md, version
// [Version]): newline-delimited JSON requests on the adapter's standard
// input, one answer line per request on its standard output.
//
// # Model
//
// An [Implementation] answers [Request] values with [Response] values after
// describing itself once in a [Hello]. The two sides of the wire are:
//
//   - [Serve], the adapter side: it reads request lines and answers them for
//     any Go Implementation ("retrykit adapter" serves retrykit's own this
//     way);
//   - [Process], the runner side: an Implementation backed by an adapter
//     subprocess ([NewProcess]), with pipelined requests, a per-request
//     timeout and restarts after a crash. Faults of the process, not of its
//     answers, are [*AdapterError] values matching [ErrAdapter]. The
//     adapter runs in a process group of its own, which is ended on a
//     timeout, on its death and at Close; answer lines are read up to
//     [MaxLineBytes] and decoded in time linear in their length, so no
//     adapter can hang the runner or make it allocate without bound.
//
// The op names (OpDelay, ...) and the error types of rejections
// (ErrorPolicyInvalid, ...) are the strings of the protocol.
//
// # Non-goals
//
// The package moves requests and answers; judging them against the vectors
// is the job of package conformance.
package protocol
