// Package riverretry drives the retries of River
// (github.com/riverqueue/river, PostgreSQL) with an OJS retry policy.
//
// # Model
//
// A [Plugin] holds a default OJS policy ([policy.Policy]) and plays three
// roles in a River client, all installed by [Plugin.Install]:
//
//   - River's ClientRetryPolicy: [Plugin.NextRetry] schedules the next
//     attempt after the policy's backoff delay.
//   - A worker middleware: [Plugin.Work] classifies the error a worker
//     returned (type and handler code attached with errmatch.Wrap) and ends
//     the job early when the policy says so.
//   - An insert hook: [Plugin.InsertBegin] stores a per-job policy in the
//     job's metadata and sets River's max_attempts from the policy.
//
// Workers keep returning ordinary Go errors. The outcome of each failure is
// [policy.Policy.DecideAt] for attempt = job.Attempt, which in River is
// already the 1-based number of the attempt that just failed (River
// increments it when it fetches the job and gives it back on a snooze):
//
//	decision     how River ends the job            River state
//	retry        NextRetry returns now + delay     retryable / available
//	discard      river.JobCancel(err)              cancelled (error kept)
//	dead_letter  discarded now, attempts or not    discarded (error kept)
//
// Discard covers a DISCARD or FAIL code, a non_retryable_errors match and
// exhaustion when on_exhaustion is "discard"; dead_letter covers a
// DEAD_LETTER code and the same two cases when on_exhaustion is
// "dead_letter" (docs/decisions.md RK-80 … RK-84). The error recorded in
// the job's errors column is an [*EndError] whose message starts with the
// decision, e.g. "riverretry: dead_letter (handler_code): payment.declined:
// card declined" (River puts "JobCancelError: " before a cancelled job's).
// Errors River itself defines (JobCancel, JobSnooze) pass through
// untouched.
//
// # Retry extensions
//
// The policy may use the retry extensions (docs/extensions.md). A snooze
// (errmatch.Snoozed) becomes river.JobSnooze while River's snooze count in
// the job's metadata is below max_snoozes: River runs the job again with
// its attempt unchanged. A requested delay (errmatch.WithRetryAfter), an
// error rule's backoff and decorrelated jitter reach [Plugin.NextRetry]
// through the plugin, which holds the failure for the job's id between the
// middleware and River's call; an error rule allowing more attempts than
// the row raises River's in-memory max_attempts for that failure. A retry
// budget is not carried (River has no queue-wide hook before a retry).
//
// # Per-job policies
//
// A job carries its own policy when its args implement [ArgsWithPolicy]:
// at insert, the policy is written as canonical JSON under [MetadataKey] in
// the job's metadata and max_attempts is set from it. An args type that
// returns one fixed policy sets the default of its kind (its worker); a
// field of the args sets it per job. [Metadata] puts a policy directly into
// river.InsertOpts.Metadata. A job without one uses the plugin's default
// policy. Policies read back from metadata are parsed once and cached: at
// most 256 policies, and only texts of at most 4 KiB (a longer one is parsed
// on every use), so a cache never holds more than 1 MiB of text (RK-150).
// Writing a policy into a job's metadata keeps the user's other members byte
// for byte (order, escapes and duplicates included).
//
// # Time budgets
//
// A job can also carry an OJS time budget (package budget, the
// ojs-timeouts extension) under [BudgetKey], written by [WithBudget] and
// checked at insert. After a failure of such a job the decision is
// budget.Budget.DecideAt's, with River's created_at as the job's creation
// time: past created_at + total_timeout the job ends as on_exhaustion
// says, whatever attempts remain ([EndError.Budget] total_timeout), and a
// retry that could not finish before that deadline is not scheduled
// (no_time_left, ojs-timeouts §9.1). The budget's timeout bounds each
// attempt's context. River draws the retry delay in NextRetry, after the
// decision, so §9.1 is judged with the longest delay jitter can give
// (docs/decisions.md RK-233). River cannot stop a job whose deadline passes
// while it waits or runs, and has no fetch deadline, soft stop or
// heartbeat: enqueue_ttl, grace_period and heartbeat_timeout are carried,
// not enforced.
//
// # Adoption
//
//	rk, err := riverretry.Parse(policyJSON) // or riverretry.New(p)
//	if err != nil { ... }
//	config := &river.Config{Queues: queues, Workers: workers}
//	rk.Install(config)
//	client, err := river.NewClient(riverpgxv5.New(pool), config)
//
// # Non-goals
//
// The plugin does not replace River's scheduler, snoozes or job
// cancellation, and it does not read River's own max_attempts for
// decisions: the OJS policy decides. River stores attempts in a smallint,
// so max_attempts above 32767 is clamped there.
package riverretry
