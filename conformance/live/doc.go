// Package live checks the retry behaviour of a running OJS server over the
// OJS HTTP binding, in exact terms, and reports in the format of the
// library suite (package conformance).
//
// # Model
//
// In OJS the server retries: a worker reports a failure with FAIL
// (POST /ojs/v1/workers/nack) and the server answers with the new state,
// the attempt and next_attempt_at, and hands the job out again when that
// time comes. [Run] plays short scenarios (intervals of tens of
// milliseconds, each job on a queue unique to the run) as a worker would:
// PUSH jobs with chosen policies, FETCH them, FAIL them with error types
// and handler codes, let reservations expire, send heartbeats, retry dead
// letters; and judges what comes back ([Checks] lists the checks):
//
//   - the FAIL answer's state, attempt and max_attempts, exactly;
//   - next_attempt_at against the exact delay bounds of the policy
//     (package backoff), on the server's own clock: the offset between
//     the server's clock and the local one is narrowed from the server's
//     timestamps (enqueued_at, started_at) and the local send and receive
//     times, so a check is as tight as the round trip plus the binding's
//     millisecond resolution (docs/decisions.md RK-110); a delay check
//     must resolve half its delay, and one whose window was wider than
//     that passes only as inconclusive (RK-395): the report's figures
//     state the resolution measured (the windows, and how late this
//     host's timers fired);
//   - that no retry is handed out before next_attempt_at (by its
//     started_at), and that each is within the late bound after it; the
//     lateness itself is a figure (p50, p99, max), never a failure;
//   - exhaustion by on_exhaustion, non_retryable_errors matched against
//     the type alone and literally (exact and ".*"; "authx" against
//     "auth.*" and "auth*", "axb" against "a.b" and "a?b", a message equal
//     to an entry, upper case), handler codes, the error history, an
//     expired reservation as a failed attempt, heartbeats, dead letter
//     retry, the default policy and partial policies with each field
//     left out in turn;
//   - attempts 1-based everywhere: FETCH, INFO, the FAIL answer and the
//     error history (docs/decisions.md RK-200);
//   - the Content-Type of every answer (binding §4.1).
//
// The dead-letter list is read page by page and searched for the run's own
// job ids, so a server that ignores the queue filter is judged right; at
// the end the run cancels what it left pending, deletes its dead letters
// and says what it left behind ([WithCleanup]). Before the checks a
// dialect probe says which interval form and error type field the server
// reads ([WithDialectProbe]).
//
// # Diagnosis
//
// Each check keeps what it saw; package
// [github.com/retrykit/retrykit/conformance/live/servermodel] attributes
// the failures to server bug models that reproduce the answers exactly,
// held against the passes, and the report's causes list them first
// ("bug:no-merge-max-attempts: explains 1 failure, contradicted by 0
// passes"), the dialect flag that explains a pattern named; what no model
// reproduces keeps its failure class, apart. A server that answers 5xx to
// everything is one cause, "server-failing".
//
// Where the HTTP binding contradicts the retry spec (docs/decisions.md
// RK-100 … RK-103 and RK-111 … RK-115), [WithErrorTypeField],
// [WithIntervalForm] and [WithStrategyField] choose the dialect the checker
// speaks, and [WithNonRetryableDiscards] accepts the binding's reading of
// L1-RET-003; the checks of the readings are at level RK, apart from the
// spec's MUST score, and the report says which reading a server follows.
//
// # Fuzzing
//
// [FuzzServer] (retrykit fuzz --server) plays generated jobs against the
// server and, side by side, against the reference executor (package
// executor) run in process on a manual clock, and compares every answer:
// PUSH, FETCH attempt, the FAIL answer with its delay against the
// executor's range for the attempt, dead letter and error history. The
// first disagreement (with [WithFuzzAll], one of each kind) is shrunk to
// a small [FuzzCase]; [ReplayCase] plays one again.
//
// # Safety
//
// Every request has a timeout, every answer is read up to [MaxAnswerSize],
// redirects are not followed, a retry announced beyond the late bound
// after the longest awaited delay is reported at once instead of awaited,
// and the whole run is bounded by [WithBudget]: a hostile or broken server
// yields errors in the report, never a hang or unbounded memory.
//
// # Non-goals
//
// Load and throughput (cmd/ojsload, bench/ojs-servers.sh), the parts of OJS outside the retry
// lifecycle (cron, workflows, schemas), and servers that only speak gRPC.
package live
