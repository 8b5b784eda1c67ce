// Package executor is retrykit's reference in-memory job executor: the OJS
// job lifecycle (ojs-core §6) with the OJS retry rules (ojs-retry §7–§10)
// and dead-letter retention (ojs-dead-letter §5–§8) applied over a job's
// whole life, deterministically and fast.
//
// It is what the scenario vectors in testdata/scenarios are checked against,
// what queue authors can read to see the rules applied, and a broker
// stand-in for tests.
//
// # Model
//
// An [Executor] holds jobs in memory. Each job is in exactly one of the
// eight OJS states ([State]) and moves only along the transition table of
// ojs-core §6.3; an operation that would need another transition returns a
// [*TransitionError] naming both states (errors.Is [ErrInvalidTransition]).
// Dead letter is a flag on discarded jobs ([Job.DeadLetter]), set by
// on_exhaustion "dead_letter" or the handler code DEAD_LETTER, and cleared
// by a manual [Executor.Retry].
//
// Time comes from an injectable [Clock] ([RealClock] or [FakeClock]) and
// jitter from an injectable backoff.Source ([WithRand]). Nothing runs in the
// background: every operation first reads the clock once and applies, in
// due-time order, everything that became due up to that instant:
//
//  1. a scheduled job whose scheduled_at ≤ now becomes available, with
//     enqueued_at = scheduled_at;
//  2. a retryable job whose next_retry_at ≤ now becomes available, with
//     enqueued_at = next_retry_at — never before (RET-11);
//  3. an active job whose reservation deadline ≤ now has failed its attempt
//     at the deadline (RET-12, see below);
//  4. finished jobs beyond the retention limits are pruned.
//
// A reservation is therefore valid while now < deadline: an Ack, Fail or
// Heartbeat at or after the deadline finds the job no longer active.
//
// # Deliveries
//
// Every Fetch is a new delivery of the job, numbered by the executor and
// never handed out again, not even after a manual [Executor.Retry]
// ([Job.Delivery]). Ack, Fail and Heartbeat take the delivery they answer
// for; one naming an earlier delivery of a job that was fetched again (its
// reservation expired and another consumer, or a retried run, holds it
// now) returns an error wrapping [ErrStaleDelivery] and changes nothing —
// the receipt-handle rule of queues such as SQS. The checks come in this
// order: unknown id ([ErrNotFound]), stale delivery, job no longer active
// (*TransitionError).
//
// # Operations
//
// [Executor.Enqueue] (PUSH; validates the retry policy now, RET-16),
// [Executor.Fetch] (claims the oldest available job of the first listed
// unpaused queue that has one, or of [DefaultQueue] when none is listed:
// attempt+1, a new delivery, reservation until now + visibility timeout),
// [Executor.Ack], [Executor.Fail], [Executor.Heartbeat] (reservation := now
// + visibility timeout, RET-13), [Executor.Cancel], [Executor.Activate],
// [Executor.PauseQueue] / [Executor.ResumeQueue], [Executor.Retry] (manual
// retry from discarded), [Executor.Delete] (a finished job), [Executor.Get],
// [Executor.List] and [Executor.Count]; [Executor.Tick] and
// [Executor.NextDue] drive a fake clock. Operations return [Job]
// snapshots.
//
// # Failures and decisions
//
// Fail records an [ErrorEntry] (attempt, type, message, code — "RETRY" when
// none was given —, time, details) and asks the job's policy.Policy what to
// do (policy.Policy.Decide): DISCARD and FAIL discard, DEAD_LETTER
// dead-letters, a non_retryable_errors match or attempt ≥ max(max_attempts,
// 1) applies on_exhaustion, and otherwise the job is retryable until
// next_retry_at = now + the backoff delay of that attempt. A job keeps its
// most recent [WithErrorHistory] entries (default 20, at least 10, RET-15).
//
// # Decisions where the specs leave room
//
//   - Visibility timeout. ojs-core §6.3 lists "active → available" on
//     timeout, while ojs-retry §9.2 (RET-12) says a timeout is a failed
//     attempt that follows the retry policy. The executor follows RET-12:
//     the expired attempt (already counted when it was fetched) fails at the
//     deadline with an entry of type [TimeoutErrorType] and code RETRY, and
//     goes through the table's FAIL transitions: retryable until deadline +
//     backoff delay, or discarded / dead-lettered when exhausted. The
//     timeout is never matched against non_retryable_errors. The table's
//     "active → available" pair is allowed by [Allowed] but never taken.
//   - Cancel of a terminal job is a no-op without error (ojs-core §7.6
//     idempotence), not a *TransitionError.
//   - Manual retry keeps the error history (ojs-dead-letter §6.1) although
//     ojs-core §6.3 says "clear errors"; attempt is reset to 0 and the job
//     leaves the dead letter set. Any discarded job can be retried, not only
//     dead-lettered ones. An optional policy override replaces the policy.
//   - Retention: a dead-lettered job is pruned once it has been
//     dead-lettered for strictly longer than max age (default P180D), and
//     the oldest go first while the executor holds more than max count
//     (default 10000) over all queues ([WithRetention]). Completed,
//     cancelled and plainly discarded jobs have their own limits, 24 hours
//     and 10000 per queue and state by default ([WithFinishedRetention]), so
//     an executor that runs forever holds a bounded number of jobs. Pruned
//     jobs are deleted (Get returns [ErrNotFound]); the observer sees
//     Pruned.
//   - A reservation whose deadline would pass the last representable
//     instant (2262) ends there and never expires: a lease never ends at
//     its start.
//   - Error history: every job keeps its most recent [WithErrorHistory]
//     entries, dead-lettered or not, although ojs-dead-letter §4.1 asks
//     for the full history of a dead letter: memory per job stays bounded.
//   - A job may not be both pending and scheduled; Activate makes a pending
//     job available at once.
//   - Observer callbacks run synchronously under the executor's lock.
//   - Caller data is bounded (RK-46): job id, type and queue at most 255
//     bytes of valid UTF-8 ([MaxIDLen], [MaxTypeLen], [MaxQueueLen]), args
//     at most [MaxArgsSize] bytes of valid JSON, a failure's type at most
//     [MaxFailureTypeLen] bytes and its details at most [MaxDetailsSize]
//     bytes of valid JSON. Anything else is refused with [ErrInvalidJob],
//     naming the field and the limit, before the executor's lock is taken.
//     A failure's message is never refused: it is cut to [MaxMessageLen]
//     bytes. In worker mode an over-long or invalid error type from a
//     handler is recorded as [HandlerErrorType].
//
// # Worker mode
//
// [NewWorker] runs Go [Handler] functions, registered by job type, on the
// real clock with per-queue concurrency ([WithConcurrency]; an invalid value
// makes [Worker.Start] fail with [ErrInvalidWorkerConfig]); see [Worker] for how handler
// errors are classified (errmatch.Classify), how panics are recorded and how
// Stop drains in-flight jobs. Handlers answer with their delivery, so a
// late result never reaches a later run; an idle goroutine is woken only
// by a job it can take (one per job); a cancelled job's handler sees its
// context cancelled at once; heartbeats stop when the run ends — however it
// ends — and when Stop's deadline passes, so the job of a handler that
// ignores its context is retried after its reservation expires.
//
// # Performance
//
// Jobs are compact records (times as int64 nanoseconds; interned type and
// queue; shared *policy.Policy — the default policy and identical policy
// texts are parsed once), about 300 bytes per idle job. Each queue has a
// FIFO of available jobs and a list of its jobs per state, so List and
// Count visit only what they select. Scheduled jobs and backoffs wait in
// one timer heap; reservations of active jobs in a second one, with an
// index of the active jobs by id. So Fetch costs O(1) plus O(log n) per job
// that became due, and Fetch, Ack, Fail and Heartbeat touch only the
// in-flight jobs: their cost does not grow with the number of scheduled,
// retryable or finished jobs. Error histories are shared with snapshots
// without copying. docs/benchmarks.md ("Executor under load") has the
// numbers.
//
// # Clocks
//
// [RealClock] is the wall-clock time of program start plus the time
// elapsed on the monotonic clock, so stepping the system clock moves no
// reservation and no backoff. [FakeClock] moves only when told to.
//
// # Non-goals
//
// Persistence, priorities, unique jobs, workflows, per-queue retention
// settings and automatic dead-letter replay are out of scope.
package executor
