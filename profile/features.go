package profile

// The five retry features of the retry extensions (docs/extensions.md):
// which of them each modelled system has, and through what. Read from the
// systems' own source or documentation at the releases the profiles name.

// Feature is one of the five retry features of docs/extensions.md, named
// by its JSON member.
type Feature string

// The five features, in the order of docs/extensions.md.
const (
	FeatureErrorRules  Feature = "error_rules"  // per-error-type backoff and attempt limits
	FeatureRetryAfter  Feature = "retry_after"  // a delay requested by the handler
	FeatureSnooze      Feature = "snooze"       // waiting without spending an attempt
	FeatureJitterMode  Feature = "jitter_mode"  // full, equal or decorrelated jitter
	FeatureRetryBudget Feature = "retry_budget" // a token bucket or a ratio with a floor
)

// Features returns the five features in the order of docs/extensions.md.
// The caller owns the slice.
func Features() []Feature {
	return []Feature{FeatureErrorRules, FeatureRetryAfter, FeatureSnooze, FeatureJitterMode, FeatureRetryBudget}
}

// Level says how much of a feature a system has.
type Level string

const (
	// Native: the system has the feature as a mechanism of its own.
	Native Level = "yes"
	// Partial: the system has part of it, or a hook through which a user
	// builds it; Support.How says which part.
	Partial Level = "partial"
	// Absent: the system has nothing for it.
	Absent Level = "no"
)

// Support is what one system has of one feature.
//
// The zero value says nothing is known (Level ""). A Support is a plain
// value, safe to copy.
type Support struct {
	Feature Feature
	Level   Level
	// How names the system's mechanism in its own terms, and what of the
	// feature it lacks; for Absent, what stands nearest, if anything.
	How string
	// Source is where it was read: a file at the release the profile
	// names, or the documentation.
	Source string
}

// Supports returns what the profile's system has of each of the five
// features, in the order of Features(). A configured profile or an older
// release answers as its system (its plain name).
func (p Profile) Supports() []Support {
	m := p.get()
	row, ok := supports[m.base]
	if !ok {
		row = supports[m.name]
	}
	fs := Features()
	out := make([]Support, len(fs))
	for i, f := range fs {
		out[i] = Support{Feature: f, Level: Absent}
		if s, ok := row[f]; ok {
			s.Feature = f
			out[i] = s
		}
	}
	return out
}

// Support returns what the profile's system has of feature f: a Support
// whose Level is Absent when the table says nothing of it.
func (p Profile) Support(f Feature) Support {
	for _, s := range p.Supports() {
		if s.Feature == f {
			return s
		}
	}
	return Support{Feature: f, Level: Absent}
}

type row = map[Feature]Support

func yes(how, src string) Support     { return Support{Level: Native, How: how, Source: src} }
func partly(how, src string) Support  { return Support{Level: Partial, How: how, Source: src} }
func nearest(how, src string) Support { return Support{Level: Absent, How: how, Source: src} }

// Source prefixes of the systems whose features are read beyond the
// files their delay is read from.
const (
	riverSrc    = "riverqueue/river v0.51.1 "
	asynqSrc    = "hibiken/asynq v0.26.0 "
	temporalSrc = "go.temporal.io/sdk v1.50.0 "
	sidekiqSrc  = "sidekiq/sidekiq lib/sidekiq/job_retry.rb (delay_for, process_retry)"
	bullmqSrc   = "taskforcesh/bullmq 352d3c72bf2b "
	celerySrc   = "celery/celery 5.6 celery/app/task.py (Task.retry, autoretry_for, retry_backoff, retry_jitter) and celery/app/autoretry.py"
	blogSrc2    = "AWS Architecture Blog, Exponential Backoff And Jitter (2015-03-04)"
)

// supports is the table behind Supports, by plain profile name. A feature
// absent from a row is Absent with nothing nearer.
var supports = map[string]row{
	"activejob": {
		FeatureErrorRules: yes("retry_on ErrorClass, wait:, attempts:, jitter: per exception class, each with its own wait and attempt limit; discard_on ends a class at once", "rails/rails v8.1.3.1 activejob/lib/active_job/exceptions.rb (retry_on, discard_on)"),
		FeatureRetryAfter: partly("retry_job(wait: d) re-enqueues with a delay the job chooses, and wait: may be a proc; no bound is applied", "activejob/lib/active_job/exceptions.rb (retry_job)"),
		FeatureJitterMode: partly("jitter: (default 0.15) adds up to jitter × delay; no full, equal or decorrelated jitter", "activejob/lib/active_job/exceptions.rb (determine_jitter_for_delay)"),
	},
	"asynq": {
		FeatureErrorRules: partly("Config.RetryDelayFunc(n, err, task) chooses the delay per error; the attempt limit is the task's MaxRetry for every error, and SkipRetry archives at once", asynqSrc+"server.go (RetryDelayFunc), processor.go (handleFailedMessage)"),
		FeatureRetryAfter: partly("RetryDelayFunc can return a delay the handler put in its error; asynq applies no bound", asynqSrc+"processor.go (retry)"),
		FeatureSnooze:     yes("Config.IsFailure(err) false: the task is retried after RetryDelayFunc's delay and its Retried count is not incremented", asynqSrc+"processor.go (retry), internal/rdb/rdb.go (RDB.Retry: Retried++ only when isFailure)"),
	},
	"aws": {
		FeatureErrorRules:  partly("which errors retry is per error code (legacy _retry.json policies; standard mode's transient and throttling classes); one backoff for all", "boto/botocore 1.43.67 botocore/data/_retry.json, botocore/retries/standard.py"),
		FeatureJitterMode:  partly("full jitter only: rand × base × 2^(attempt−1) (legacy 'rand' base; standard mode ExponentialBackoff)", "botocore/retryhandler.py (delay_exponential), botocore/retries/standard.py"),
		FeatureRetryBudget: yes("standard retry mode's retry quota: a 500-token bucket, 5 per retry (10 after a timeout), refunded on success; legacy mode (the default) has none", "botocore/retries/quota.py, botocore/retries/standard.py (RetryQuotaChecker)"),
	},
	"aws_go": {
		FeatureErrorRules:  partly("errors are classed (throttling codes, timeouts, retryable codes and statuses): the throttling class backs off from a different base; one attempt limit", awsGoRef+"aws/retry/standard.go (DefaultThrottleErrorCodes, DefaultRetryables)"),
		FeatureRetryAfter:  yes("the x-amz-retry-after header sets the next delay", awsGoRef+"aws/retry/jitter_backoff.go"),
		FeatureJitterMode:  partly("full jitter only: rand × min(base × 2^attempt, 20s) (ExponentialJitterBackoff)", awsGoRef+"aws/retry/jitter_backoff.go"),
		FeatureRetryBudget: yes("StandardOptions.RateLimiter, a retry quota: ratelimit.NewTokenRateLimit(500), RetryCost 5, RetryTimeoutCost 10, NoRetryIncrement 1 per successful attempt", awsGoRef+"aws/retry/standard.go (StandardOptions, DefaultRetryRateTokens), aws/ratelimit/token_rate_limit.go"),
	},
	"backoff": {
		FeatureErrorRules: yes("one @backoff.on_exception(wait_gen, ExceptionType, max_tries=…) decorator per exception type, stacked", pyBackoffRef+"_decorator.py (on_exception)"),
		FeatureRetryAfter: yes("backoff.runtime(value=…): the wait is read from the exception or the result (a Retry-After header)", pyBackoffRef+"_wait_gen.py (runtime)"),
		FeatureJitterMode: partly("jitter=backoff.full_jitter (the default) or backoff.random_jitter (adds up to 1 s); no equal or decorrelated jitter", pyBackoffRef+"_jitter.py"),
	},
	"bee_queue": {
		FeatureErrorRules: nearest("custom strategies (queue.backoffStrategies.set(name, fn)) get the job, not the error", "bee-queue/bee-queue v2.0.0 lib/backoff.js, lib/job.js (computeDelay)"),
	},
	"bullmq": {
		FeatureErrorRules: partly("a custom backoff strategy (settings.backoffStrategy(attemptsMade, type, err, job)) gets the error and returns its delay, -1 to stop; the attempt limit is the job's attempts for every error; UnrecoverableError fails at once", bullmqSrc+"src/classes/backoffs.ts (calculate), src/classes/worker.ts"),
		FeatureRetryAfter: partly("the strategy can return a delay the processor put in its error; no bound", bullmqSrc+"src/classes/backoffs.ts"),
		FeatureSnooze:     yes("job.moveToDelayed(timestamp, token) then throw DelayedError, or worker.rateLimit(ms) then throw Worker.RateLimitError(): the job waits and runs again without an attempt made", bullmqSrc+"src/classes/errors/delayed-error.ts, src/classes/errors/rate-limit-error.ts, src/classes/job.ts (moveToDelayed)"),
		FeatureJitterMode: partly("backoff.jitter j draws the delay from [d·(1−j), d): j = 1 is full jitter, j = 0.5 equal jitter; no decorrelated jitter", bullmqRef+" (builtinStrategies, jitter)"),
	},
	"celery": {
		FeatureErrorRules: partly("autoretry_for=(ExceptionTypes…) with one retry_backoff and max_retries per task; per-exception delays by calling self.retry(exc=…, countdown=…) in the task", celerySrc),
		FeatureRetryAfter: yes("self.retry(countdown=seconds) or self.retry(eta=datetime) from the task: the task chooses its next delay; no bound", celerySrc),
		FeatureJitterMode: partly("retry_jitter=True (the default with retry_backoff): full jitter only, random.randrange(countdown + 1)", "celery/utils/time.py (get_exponential_backoff_interval)"),
	},
	"cenkalti": {
		FeatureRetryAfter: yes("return backoff.RetryAfter(seconds) from the operation: the next wait is that many seconds", cenkaltiRef+"error.go (RetryAfterError), retry.go"),
		FeatureErrorRules: nearest("backoff.Permanent(err) stops; one BackOff for every error", cenkaltiRef+"error.go (PermanentError)"),
		FeatureJitterMode: nearest("RandomizationFactor spreads proportionally (± factor); no full, equal or decorrelated jitter", cenkaltiRef+"exponential.go"),
	},
	"chasquimq": {
		FeatureJitterMode: nearest("jitter_ms adds a uniform [0, jitter_ms) to the capped delay", "jotarios/chasquimq cd30b0889437 chasquimq/src/consumer/retry.rs (backoff_ms)"),
	},
	"decorrelated_jitter": {
		FeatureJitterMode: partly("decorrelated jitter, one of the three modes: sleep = min(cap, random_between(base, sleep × 3))", blogSrc2),
	},
	"delayed_job": {
		FeatureErrorRules: nearest("a job may define reschedule_at(time, attempts) and max_attempts, which do not see the error", "collectiveidea/delayed_job v4.1.9 lib/delayed/backend/base.rb (reschedule_at)"),
	},
	"equal_jitter": {
		FeatureJitterMode: partly("equal jitter, one of the three modes: e/2 + random_between(0, e/2)", blogSrc2),
	},
	"exponential_backoff": {
		FeatureErrorRules: nearest("retry(e, attemptNumber) decides whether to go on, per error; the delays are the same for every error", "coveooss/exponential-backoff v3.1.3 src/options.ts (retry)"),
		FeatureJitterMode: partly("jitter: 'full' (or 'none'); no equal or decorrelated jitter", "coveooss/exponential-backoff v3.1.3 src/jitter/full/full.jitter.ts"),
	},
	"failsafe": {
		FeatureErrorRules:  partly("WithDelayFunc(func(exec) time.Duration) computes the delay from the last error or result; HandleErrors/AbortOnErrors choose which errors retry; one MaxRetries", failsafeRef+"retrypolicy/retry.go (WithDelayFunc, HandleErrors, AbortOnErrors)"),
		FeatureRetryAfter:  partly("a DelayFunc can return the delay an error carries (a Retry-After); bounded only by WithMaxDuration", failsafeRef+"retrypolicy/retryexecutor.go (getDelay)"),
		FeatureJitterMode:  nearest("WithJitter(d) / WithJitterFactor(f) spread ± around the delay; WithRandomDelay(min, max); no full, equal or decorrelated jitter", failsafeRef+"retrypolicy/retry.go"),
		FeatureRetryBudget: yes("package budget: retries in flight at most maxRate of all executions in flight (default 0.2), with a minConcurrency floor (default 3), refused with budget.ErrExceeded", failsafeRef+"budget/budget.go"),
	},
	"faktory": {
		FeatureErrorRules: nearest("the server owns the retry schedule: a job's retry count only", "contribsys/faktory cf9073fe168a manager/retry.go"),
	},
	"flare": {
		FeatureErrorRules: nearest("the documentation describes one retry strategy for every error", "Zeridion Flare documentation (no public source)"),
	},
	"full_jitter": {
		FeatureJitterMode: partly("full jitter, one of the three modes: random_between(0, min(cap, base × 2^attempt))", blogSrc2),
	},
	"gax": {
		FeatureErrorRules: partly("OnCodes(codes, Backoff) / OnErrorFunc choose which errors retry; a custom Retryer can pick a delay per error", "googleapis/gax-go v2.27.0 v2/call_option.go (OnCodes, OnErrorFunc, Retryer)"),
		FeatureJitterMode: partly("full jitter only: 1ns + rand in [0, cur) (Backoff.Pause)", "googleapis/gax-go v2.27.0 v2/call_option.go (Backoff.Pause)"),
	},
	"go_retry": {
		FeatureErrorRules: nearest("only errors wrapped in RetryableError retry; one Backoff for all", goRetryRef+"retry.go (RetryableError)"),
		FeatureJitterMode: nearest("WithJitter(d) and WithJitterPercent(p) spread ± around the delay; no full, equal or decorrelated jitter", goRetryRef+"backoff.go (WithJitter, WithJitterPercent)"),
	},
	"graphile_worker": {
		FeatureErrorRules: nearest("failJob's exp(least(attempts, 10)) s is SQL with no hook: every error waits the same", "graphile-worker 0.18.0 dist/sql/failJobs.js"),
	},
	"grpc_connect": {
		FeatureJitterMode: nearest("a ±20% proportional jitter on reconnection backoff", grpcGoRef+"internal/backoff/backoff.go"),
	},
	"grpc_retry": {
		FeatureErrorRules:  partly("retryableStatusCodes choose which status codes retry, per method; one backoff", grpcGoRef+"service_config.go (retryPolicy)"),
		FeatureRetryAfter:  yes("server pushback: the grpc-retry-pushback-ms trailer sets the next delay (a negative value stops retrying)", grpcGoRef+"stream.go (csAttempt.shouldRetry, pushback)"),
		FeatureJitterMode:  nearest("the delay is drawn in [0.8, 1.2) × the backoff (proportional); the A6 proposal's random(0, backoff) is full jitter", grpcGoRef+"stream.go (csAttempt.shouldRetry)"),
		FeatureRetryBudget: yes("retryThrottling {maxTokens, tokenRatio}: every failure takes 1 token, every success gives tokenRatio, retries stop while tokens ≤ maxTokens/2", grpcGoRef+"clientconn.go (retryThrottler), service_config.go (retryThrottlingPolicy)"),
	},
	"oban": {
		FeatureErrorRules: partly("a worker's backoff(%Job{attempt: a, unsaved_error: e}) callback chooses the delay per error; max_attempts is per worker or job", "oban-bg/oban 2939e3134d08 lib/oban/worker.ex (backoff/1)"),
		FeatureRetryAfter: partly("backoff/1 can return a delay the error carries; no bound", "lib/oban/worker.ex (backoff/1)"),
		FeatureSnooze:     yes("perform returns {:snooze, seconds}: the job is rescheduled and max_attempts is raised by one, so the snooze spends no attempt of its budget", "lib/oban/queues/executor.ex (snooze)"),
		FeatureJitterMode: nearest("Backoff.jitter adds up to 10% (mode :inc); no full, equal or decorrelated jitter", "lib/oban/backoff.ex (jitter)"),
	},
	"ojs": {
		FeatureJitterMode: nearest("OJS 1.0 has the proportional multiplier 0.5 + r only; the retry extensions (docs/extensions.md) add every feature here", "openjobspec/spec spec/ojs-retry.md"),
	},
	"p_retry": {
		FeatureErrorRules: nearest("shouldRetry(error) and AbortError decide whether to go on; the delays are the same for every error", "sindresorhus/p-retry v9.0.0 index.js"),
		FeatureJitterMode: nearest("randomize: true multiplies by a random factor in [1, 2); no full, equal or decorrelated jitter", "sindresorhus/p-retry v9.0.0 index.js (calculateDelay)"),
	},
	"pg_boss": {
		FeatureErrorRules: nearest("retryLimit, retryDelay and retryBackoff are per queue or job, the same for every error", "pg-boss 12.38.0 dist/plans.js (failJobsBody)"),
	},
	"resque_retry": {
		FeatureErrorRules: yes("@retry_exceptions = { NetworkError => 30, SystemCallError => [120, 240] }: a delay or delay table per exception class; @fatal_exceptions end at once", "lantins/resque-retry f75421a98b91 lib/resque/plugins/retry.rb (retry_exceptions, retry_delay)"),
		FeatureJitterMode: nearest("retry_delay_multiplicand_min/max scale each delay by a random factor", "lib/resque/plugins/exponential_backoff.rb"),
	},
	"retry_go": {
		FeatureErrorRules: partly("DelayType(func(n, err, config) time.Duration) gets the error and chooses the delay; RetryIf picks which errors retry; one Attempts", retryGoRef+"options.go (DelayType, RetryIf)"),
		FeatureRetryAfter: partly("a DelayType can return the delay an error carries; MaxDelay bounds it", retryGoRef+"options.go (DelayType, MaxDelay)"),
		FeatureJitterMode: partly("FullJitterBackoffDelay is full jitter; RandomDelay adds up to MaxJitter; no equal or decorrelated jitter", retryGoRef+"options.go (FullJitterBackoffDelay, RandomDelay)"),
	},
	"retryablehttp": {
		FeatureErrorRules: partly("CheckRetry(ctx, resp, err) decides per response or error; Backoff(min, max, attempt, resp) sees the response", retryablehttpRef+" (CheckRetry, Backoff)"),
		FeatureRetryAfter: yes("DefaultBackoff honours Retry-After on 429 and 503 responses", retryablehttpRef+" (DefaultBackoff, parseRetryAfterHeader)"),
		FeatureJitterMode: nearest("LinearJitterBackoff draws in [min·n, max·n]; no full, equal or decorrelated jitter", retryablehttpRef+" (LinearJitterBackoff)"),
	},
	"river": {
		FeatureErrorRules: partly("a worker's NextRetry(job) (or Config.RetryPolicy) chooses the next time and can read job.Errors; MaxAttempts is per job for every error; JobCancel ends at once", riverSrc+"worker.go (NextRetry), retry_policy.go (ClientRetryPolicy), error.go (JobCancel)"),
		FeatureRetryAfter: partly("NextRetry can return a time the last error carries; no bound", riverSrc+"worker.go (NextRetry)"),
		FeatureSnooze:     yes("return river.JobSnooze(d): the job runs again after d and its Attempt is not incremented (the snoozes count is kept in metadata)", riverSrc+"error.go (JobSnooze), internal/jobexecutor/job_executor.go (snoozes, attempt − 1)"),
		FeatureJitterMode: nearest("the default policy adds ±10% proportional jitter", "riverqueue/river internal/retrypolicy/default.go"),
	},
	"rq": {
		FeatureErrorRules: nearest("Retry(max, interval=[…]) is per job, the same for every error", rqRef+"job.py (Retry)"),
	},
	"sidekiq": {
		FeatureErrorRules: partly("sidekiq_retry_in { |count, exception, jobhash| … } returns the delay per exception, or :discard / :kill; the retry count is per job for every error", sidekiqSrc),
		FeatureRetryAfter: partly("the sidekiq_retry_in block can return a delay the exception carries; Sidekiq still adds its jitter, and applies no bound", sidekiqSrc),
		FeatureJitterMode: nearest("adds rand(10 × (count + 1)) s; no full, equal or decorrelated jitter", sidekiqSrc),
	},
	"sidekiq6": {
		FeatureErrorRules: partly("sidekiq_retry_in { |count, exception| … } returns the delay per exception, or :discard / :kill; the retry count is per job for every error", sidekiqSrc),
		FeatureRetryAfter: partly("the sidekiq_retry_in block can return a delay the exception carries; Sidekiq still adds its jitter, and applies no bound", sidekiqSrc),
		FeatureJitterMode: nearest("adds rand(10) × (count + 1) s; no full, equal or decorrelated jitter", sidekiqSrc),
	},
	"temporal": {
		FeatureErrorRules: partly("RetryPolicy.NonRetryableErrorTypes ends types at once; the activity can set NextRetryDelay per error type; one RetryPolicy per activity, no per-type attempt limit", temporalSrc+"internal/error.go (ApplicationErrorOptions)"),
		FeatureRetryAfter: yes("temporal.NewApplicationErrorWithOptions(msg, type, ApplicationErrorOptions{NextRetryDelay: d}) overrides the policy's interval for the next attempt (server ≥ 1.24.2)", temporalSrc+"internal/error.go (ApplicationErrorOptions.NextRetryDelay)"),
		FeatureSnooze:     nearest("none: every activity failure counts an attempt; a workflow can workflow.Sleep and run the activity again", temporalSrc+"internal/error.go"),
	},
	"tenacity": {
		FeatureErrorRules: partly("retry=retry_if_exception_type(...) chooses what retries, and a wait callable can read retry_state.outcome.exception() to pick a delay per error", tenacityRef+"wait.py, retry.py"),
		FeatureRetryAfter: partly("a wait callable can return the delay an exception carries", tenacityRef+"wait.py (wait_base)"),
		FeatureJitterMode: partly("wait_random_exponential is full jitter; wait_exponential_jitter adds up to jitter s; no equal or decorrelated jitter", tenacityRef+"wait.py (wait_random_exponential, wait_exponential_jitter)"),
	},
	"zzz_jobs": {
		FeatureJitterMode: nearest("adds [0, c/4 − 1] s to the exponential delay", "seemsindie/pidgn_jobs c85a4c4e9c87 src/retry.zig"),
	},
}
