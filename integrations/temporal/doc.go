// Package temporalretry runs Temporal activities (go.temporal.io/sdk) under
// OJS retry policies: OJS backoff with jitter, non_retryable_errors with
// ".*" prefixes, handler codes, max_attempts and on_exhaustion.
//
// # Model
//
// An [Interceptor] is a worker interceptor with a default OJS policy
// ([policy.Policy]), per activity type policies ([WithActivityPolicy]) and
// per call policies ([WithPolicy]). It has two sides:
//
//   - Activity side: each error an activity returns goes through
//     [Interceptor.Handle], which decides it with the policy for the
//     attempt Temporal reports (activity.Info.Attempt, from 1) and returns a
//     temporal.ApplicationError: retryable with NextRetryDelay set to the
//     OJS delay, or non-retryable when the policy ends the activity.
//     Activities keep returning ordinary Go errors (typed with errmatch.Wrap
//     when they want a type or a code).
//   - Workflow side: each activity a workflow schedules gets the policy's
//     [RetryPolicy] (MaximumAttempts from max_attempts by [MaximumAttempts],
//     intervals for timeouts, where no error is returned) and, for a call
//     policy, the policy's JSON in the header [HeaderKey].
//
// Temporal's server then does the waiting:
//
//	decision     the activity returns                    Temporal
//	retry        ApplicationError, NextRetryDelay = delay  retries after delay
//	discard      non-retryable ApplicationError            activity failed
//	dead_letter  non-retryable ApplicationError, after     activity failed
//	             the WithDeadLetter hook
//
// Temporal has no dead-letter state (docs/decisions.md RK-140): both ending
// decisions fail the activity, its error kept in the workflow history with
// the message "temporalretry: ACTION (REASON): ...", the failure's type and
// an [Outcome] detail that the workflow reads with [OutcomeOf]; dead_letter
// first calls the [DeadLetterFunc], if any, to publish the job elsewhere.
//
// # Retry extensions
//
// The policy may use the retry extensions (docs/extensions.md). A
// requested delay, given with errmatch.WithRetryAfter or as Temporal's own
// ApplicationError NextRetryDelay, is sent as NextRetryDelay bounded by
// max_retry_after; an error rule's backoff is the NextRetryDelay of its
// type and its max_attempts the limit ([RetryPolicy] allows the most of the
// policy and its rules). Temporal counts every failed attempt, so a snooze
// (errmatch.Snoozed) waits min(snooze, max_snooze) but spends the attempt;
// decorrelated jitter has no previous delay to read; a retry budget is not
// carried.
//
// # Sub-second delays
//
// The history service rounds short timers up: a timer due before the timer
// queue's read level, which runs up to history.timerProcessorMaxTimeShift
// (1s by default) ahead of now, is moved to just after it. So with the
// default setting, NextRetryDelay below 1s gives retries up to 1s apart
// (RK-141). Set that dynamic config key on the server to at most the
// smallest delay that must be honoured, e.g. 10ms; the tests of this
// package run a real server with it and check the delays from history.
//
// # Time budgets
//
// The activity's ScheduleToCloseTimeout is the OJS total timeout, counted
// from its first ScheduledTime, and StartToCloseTimeout its timeout;
// [WithBudget] sets both from a budget.Budget on the workflow side. For an
// activity with a schedule-to-close timeout, [Interceptor.Handle] decides
// with budget.Budget.Decide (same jitter draw as the NextRetryDelay it
// returns): past the deadline on_exhaustion (total_timeout), and no retry
// that could not finish before it (no_time_left, ojs-timeouts §9.1).
// Timeouts are rounded to whole seconds, the timeout up and the total
// down (docs/decisions.md RK-234). Failures that never reach the activity's
// code (timeouts, lost workers) follow Temporal's own, weaker rule.
//
// # Adoption
//
//	rk, err := temporalretry.Parse(policyJSON) // or temporalretry.New(p, opts...)
//	if err != nil { ... }
//	w := worker.New(c, "queue", worker.Options{
//		Interceptors: []interceptor.WorkerInterceptor{rk},
//	})
//
// # Non-goals
//
// The package does not re-implement Temporal's scheduling: the server
// waits, counts attempts and stores failures. Local activities are not
// decided (their retries run inside the workflow worker); the interceptor
// passes their errors through unchanged. Timeouts and lost workers never
// reach the activity side, so they follow the RetryPolicy without jitter.
// Temporal's own limits still apply: a retry whose delay would pass the
// activity's ScheduleToCloseTimeout ends it with a timeout, and a workflow
// RetryPolicy's NonRetryableErrorTypes still match the error's type.
package temporalretry
