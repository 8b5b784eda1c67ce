// Package executor is an in-memory job executor that applies the OJS job
// lifecycle and retry rules over a job's whole life, deterministically: a
// broker stand-in for tests, a small job runner, and the reference the
// scenario vectors in testdata/scenarios are checked against.
//
// # Model
//
// An [Executor] holds jobs in named queues. A job is enqueued, fetched
// (claimed for one attempt, under a reservation that expires), and then
// acknowledged, failed or cancelled. A failure asks the job's retry policy
// (package policy) what to do: retry after a backoff delay, discard, or
// dead-letter. Each job is in one of eight states ([State]): scheduled,
// pending, available, active, retryable, and the terminal completed,
// cancelled and discarded; a dead letter is a discarded job with
// [Job.DeadLetter] set. Operations return [Job] snapshots.
//
// Nothing runs in the background. Every operation reads the injected
// [Clock] once and first applies what became due by then: scheduled jobs
// and ended backoffs become available, expired reservations fail their
// attempt, retention deletes old finished jobs. A [FakeClock] therefore
// makes every test exact; [RealClock] is for production.
//
// # Entry points
//
// Driving the executor by hand (tests, a broker stand-in; see Example):
//
//   - [New] with options ([WithClock], [WithRand], [WithRetention], ...);
//   - [Executor.Enqueue] a [JobSpec]; [Executor.Fetch] the available job
//     of highest [JobSpec.Priority] (the first to become available among
//     equals) of the first listed queue; answer with [Executor.Ack],
//     [Executor.Fail] (a [Failure]) or [Executor.Heartbeat], giving the
//     fetch's [Job.Delivery];
//   - [Executor.Cancel], [Executor.Retry] and [Executor.RetryWith] (a
//     discarded job, optionally moved or changed),
//     [Executor.Delete], [Executor.PauseQueue], [Executor.Get],
//     [Executor.List] and [Executor.Count].
//
// Worker mode (Go handlers on the real clock; see ExampleWorker and the
// executor quick start of docs/queue-authors.md):
//
//   - [NewWorker] with [WithConcurrency] per queue ("default" is always
//     served unless set to 0), [Worker.Handle] per job type, [Worker.Start];
//   - [Worker.WaitIdle] waits until every job of the served queues has
//     finished, retries included; [Worker.Stop] drains in-flight handlers.
//
// A handler returns nil (ack) or an error (fail; attach an OJS error type
// and code with errmatch.Wrap). Panics are recovered and recorded.
//
// # Rules
//
// Fetch claims a job: attempt+1, a new delivery number that is never handed
// out again, and a reservation until now + the visibility timeout. Ack,
// Fail and Heartbeat name the delivery they answer for: one naming an
// earlier delivery returns an error wrapping [ErrStaleDelivery] and changes
// nothing (the receipt-handle rule of queues such as SQS). The checks come
// in this order: unknown id ([ErrNotFound]), stale delivery, job no longer
// active ([*TransitionError], errors.Is [ErrInvalidTransition]).
//
// Fail records an [ErrorEntry] and applies the policy
// (policy.Policy.Decide): a handler code DISCARD or FAIL discards and
// DEAD_LETTER dead-letters; a non_retryable_errors match or attempt ≥
// max(max_attempts, 1) applies on_exhaustion; otherwise the job is
// retryable until now + the backoff delay. A job keeps its most recent
// [WithErrorHistory] entries (default 20).
//
// What became due is applied in due-time order, with these times:
//
//  1. a scheduled job becomes available at its scheduled_at;
//  2. a retryable job becomes available at its next_retry_at, never before;
//  3. an active job whose reservation deadline ≤ now failed its attempt at
//     the deadline, so a reservation is valid while now < deadline;
//  4. finished jobs beyond the retention limits are deleted (the
//     [Observer] sees Pruned).
//
// # Time budgets and replay rules
//
// A job enqueued with JobSpec.Budget (package budget, ojs-timeouts) also ends
// its attempt when it runs past timeout + grace_period (error type "timeout"),
// misses its heartbeats for longer than heartbeat_timeout ("stalled") or
// passes created_at + total_timeout ("total_timeout", ending the job whatever
// attempts remain); each is a failed attempt whose error Details hold the §8
// object, and every decision of such a job goes through budget.Budget.Decide
// (no retry that cannot finish before the total timeout). A job waiting when
// its total timeout passes is discarded when a fetch reaches it (available →
// discarded, the one transition beyond ojs-core's table). WithReplayRules and
// WithQueueReplayRules (package replay, ojs-dead-letter §7) re-enqueue dead
// letters delay after they were dead-lettered, at most max_replays times,
// recorded in Job.Replay; Executor.ReplayAt shows the planned replay, and a
// ReplayObserver hears each one.
//
// # Retry extensions
//
// The retry extensions of docs/extensions.md play here on the executor's
// clock: a job's policy may hold per-error-type rules and a jitter mode;
// [Failure.Request] carries a delay the handler asked for or a snooze (a
// [Worker] handler returns errmatch.WithRetryAfter or errmatch.Snoozed).
// A snooze the policy allows leaves the job retryable with its attempt
// given back and no error entry ([Job.Snoozes], [Job.Snoozed]); the delay
// a job waited is kept for decorrelated jitter. [WithRetryBudget] and
// [WithQueueRetryBudget] (package retrybudget) refuse retries once a
// budget is spent: the job then takes its on_exhaustion action.
//
// # Rate limits
//
// A job enqueued with JobSpec.RateLimit (ojs-rate-limiting) shares its
// key's counters with every job of the key: a concurrency limit, a
// sliding window of starts and a throttle (see [RateLimit] for the rules
// and a worked example). [Executor.SetQueueRateLimit] limits a whole
// queue. Fetch skips a job its limits hold back for the next eligible one
// in FETCH order, checking and counting in the same locked step; the
// held-back job is never claimed, so its attempt does not change, and its
// [OnLimit] keeps it available, reschedules it or drops it.
// [Executor.RateLimitKey] shows a key's counts. A JobSpec with
// RefusePaused is refused while its queue is paused ([ErrQueuePaused]).
//
// # Limits
//
// Every input and every structure is bounded, so that hostile callers
// cost bounded time and memory:
//
//   - job id, type and queue at most 255 bytes of valid UTF-8
//     ([MaxIDLen], [MaxTypeLen], [MaxQueueLen]), args at most
//     [MaxArgsSize] bytes of JSON, a failure's type at most
//     [MaxFailureTypeLen] bytes and details at most [MaxDetailsSize];
//     anything else is refused with [ErrInvalidJob] naming the field
//     (RK-46). A failure's message is never refused: it is cut to
//     [MaxMessageLen] bytes of valid UTF-8.
//   - Finished jobs: 24 hours and 10000 per queue and state
//     ([WithFinishedRetention]), and 100000 over all queues
//     ([WithFinishedRetentionTotal], RK-86); dead letters: P180D and 10000
//     ([WithRetention]).
//   - A queue's record, and an interned job type, exist only while a job
//     (or a parked worker goroutine) needs them; at most
//     [MaxPausedQueues] queues are paused at once (RK-85).
//   - Rate limits: at most [MaxRateLimitKeys] keys in use, a window or
//     throttle of at most [MaxWindowLimit] starts, a key of at most
//     [MaxRateLimitKeyLen] bytes ([ErrTooManyRateLimitKeys] beyond).
//
// # Decisions where the specs leave room
//
// The lifecycle is ojs-core §6 (transition table §6.3), the retry rules
// ojs-retry §7–§10, retention ojs-dead-letter §5–§8. Where they disagree
// or are silent:
//
//   - Visibility timeout: ojs-core §6.3 lists "active → available", ojs-retry
//     §9.2 (RET-12) a failed attempt under the retry policy. The executor
//     follows RET-12: the attempt fails at the deadline with an entry of
//     type [TimeoutErrorType], code RETRY, never matched against
//     non_retryable_errors. The table's "active → available" row is
//     accepted by the transition check but never taken.
//   - Cancel of a terminal job is a no-op without error (ojs-core §7.6
//     idempotence).
//   - A manual retry keeps the error history (ojs-dead-letter §6.1) although
//     ojs-core §6.3 says "clear errors"; attempt is reset to 0. Any
//     discarded job can be retried, with an optional policy override.
//   - Error history is bounded for dead letters too, although
//     ojs-dead-letter §4.1 asks for the full history.
//   - A reservation whose deadline would pass the year 2262 ends there and
//     never expires.
//   - A job may not be both pending and scheduled.
//   - Observer callbacks run synchronously under the executor's lock; a
//     panic in one is recovered.
//
// # Performance
//
// Jobs are compact records (about 300 bytes when idle) sharing interned
// types and parsed policies. Each queue keeps its jobs in one list per
// state (the available list in FETCH order: priority, then FIFO, with an
// O(log p) insert for p distinct priorities waiting), timers and
// reservations wait in two heaps, so Fetch, Ack, Fail and Heartbeat cost
// O(1) plus O(log n) per job that became due, whatever the number of scheduled or finished jobs.
// docs/benchmarks.md ("Executor under load") has the numbers.
//
// # Non-goals
//
// Persistence (every job lives in memory), workflows, cron jobs, deciding
// unique-job conflicts, and retention settings that differ by queue.
//
// Unique jobs are decided by the OJS server (package ojshttp), which uses
// [Executor.EnqueueReplacing] for the atomic step of on_conflict "replace".
// Priorities ([JobSpec.Priority]) and automatic dead-letter replay
// ([WithReplayRules]) are the executor's own, described above.
package executor
