// Package asynqretry drives the retries of asynq (github.com/hibiken/asynq,
// Redis) with an OJS retry policy.
//
// # Model
//
// A [Plugin] holds a default OJS policy ([policy.Policy]) and plays two
// roles in an asynq server:
//
//   - The server's RetryDelayFunc: [Plugin.RetryDelay] returns the policy's
//     backoff delay. [Plugin.Install] sets it in an asynq.Config.
//   - A handler middleware: [Plugin.Handler] classifies the error a handler
//     returned (type and handler code attached with errmatch.Wrap) and ends
//     the task early when the policy says so.
//
// Handlers keep returning ordinary Go errors. asynq counts retries, not
// attempts: its retry count n (asynq.GetRetryCount, the n of RetryDelayFunc)
// is the number of retries done before the attempt that just failed, so that
// attempt is n+1, and OJS max_attempts m is asynq's MaxRetry m-1
// (docs/decisions.md RK-80). Each failure is decided by
// [policy.Policy.DecideAt] for attempt n+1:
//
//	decision     how asynq ends the task        asynq state
//	retry        RetryDelayFunc returns delay    retry, then pending
//	discard      error matching asynq.SkipRetry  archived (error kept)
//	dead_letter  error matching asynq.SkipRetry  archived (error kept)
//
// asynq keeps one state for failed tasks, archived; discard and dead_letter
// both end there, and the archived task's last error, an [*EndError],
// starts with the decision: "asynqretry: discard (handler_code): ..."
// (RK-81). asynq.RevokeTask, which would drop the task and its error
// altogether, is not used. Errors a handler returns that already match
// asynq.SkipRetry or asynq.RevokeTask pass through untouched.
//
// asynq stores the time of a retry in whole Unix seconds, and its forwarder
// moves due retries every DelayedTaskCheckInterval (5s by default), where an
// idle worker finds them within TaskCheckInterval (1s): a retry runs between
// 1s before and those intervals after now plus the delay. Lower both for
// sub-second policies.
//
// # Retry extensions
//
// The policy may use the retry extensions (docs/extensions.md). A snooze
// the policy grants (errmatch.Snoozed) is returned by the middleware as a
// [*SnoozeError], for which [Plugin.IsFailure] (asynq's Config.IsFailure,
// set by [Plugin.Install]) is false: asynq retries the task without
// counting the retry. [Plugin.RetryDelay] receives the handler's error, so
// a snooze's wait, a requested delay (errmatch.WithRetryAfter, bounded by
// max_retry_after) and an error rule's backoff are decided with it. asynq
// keeps no snooze count, so max_snoozes only turns snoozing on or off;
// decorrelated jitter has no previous delay to read; a retry budget is not
// carried.
//
// # Per-task policies
//
// [NewTask] builds a task that carries its own policy, as canonical JSON in
// the task header [HeaderKey], and whose MaxRetry is the policy's
// max_attempts-1. A task without the header uses its type's policy
// ([WithTypePolicy], a per-handler default) or else the plugin's default;
// give such tasks [MaxRetry] of that policy when its max_attempts is above
// 26, asynq's default MaxRetry being 25.
//
// # Time budgets
//
// A task can also carry an OJS time budget (package budget, the
// ojs-timeouts extension) and its creation time, in the headers
// [BudgetHeaderKey] and [CreatedAtHeaderKey] ([NewTaskWithBudget],
// [BudgetHeaders]; asynq keeps no creation time a handler can read). After
// a failure of such a task the decision is budget.Budget.DecideAt's: past
// created_at + total_timeout the task is archived as on_exhaustion says,
// whatever retries remain ([EndError.Budget] total_timeout), and a retry
// that could not finish before that deadline is not scheduled
// (no_time_left, ojs-timeouts §9.1). The middleware ends each attempt's
// context at the budget's timeout (or the total deadline if sooner); the
// task's asynq.Timeout, timeout + grace_period, is the forceful cut. asynq
// draws the retry delay in RetryDelayFunc, after the decision, so §9.1 is
// judged with the longest delay jitter can give (docs/decisions.md
// RK-233). Failures asynq detects itself (its own timeout, a lost lease)
// bypass the middleware and are retried without the budget's decision;
// enqueue_ttl and heartbeat_timeout are carried, not enforced.
//
// # Adoption
//
//	rk, err := asynqretry.Parse(policyJSON) // or asynqretry.New(p)
//	if err != nil { ... }
//	cfg := asynq.Config{Concurrency: 10}
//	rk.Install(&cfg)
//	srv := asynq.NewServer(redisOpt, cfg)
//	err = srv.Run(rk.Handler(mux))
//
// # Non-goals
//
// The plugin does not change how asynq stores, schedules or forwards tasks,
// and it does not read a task's MaxRetry for decisions: the OJS policy
// decides, within the MaxRetry asynq enforces.
package asynqretry
