package profile

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"

	"github.com/retrykit/retrykit/policy"
)

// Job queues whose delay is computed from the attempt (or retry) count.

// riverMaxSeconds is River's cap, time.Duration(1<<63 - 1).Seconds().
var riverMaxSeconds = time.Duration(math.MaxInt64).Seconds()

var riverSettings = []setting{
	{key: "MaxAttempts", kind: kInt, def: "25", lo: 0, hi: math.MaxInt16, help: "total attempts (InsertOpts.MaxAttempts, Config.MaxAttempts); River stores a smallint; 0 is unset: the default 25 (client.go cmp.Or)"},
}

func riverModel(c conf) (*model, error) {
	ma := c.int("MaxAttempts")
	// client.go 1811: cmp.Or(insertOpts.MaxAttempts, jobInsertOpts.MaxAttempts,
	// config.MaxAttempts), and config's is cmp.Or(c.MaxAttempts, 25) (559).
	ma = cmp.Or(ma, 25)
	return &model{
		name:    "river",
		release: "0.51.2",
		system:  "River (Go, PostgreSQL), DefaultClientRetryPolicy",
		version: "river v0.51.2 (internal/retrypolicy/default.go unchanged since fdf6cdf12567)",
		source:  "https://github.com/riverqueue/river/blob/fdf6cdf12567a5b70c003f5ff850273f09e7efcf/internal/retrypolicy/default.go",
		summary: fmt.Sprintf("attempt^4 seconds ±10%% (uniform); %d attempts, then discarded", ma),
		formula: "errors = attempt (len(job.Errors)+1, no snoozes); s = min(errors^4, maxDurationSeconds); " +
			"s += s * (r*0.2 - 0.1); delay = time.Duration(min(s, maxDurationSeconds) * 1e9)",
		draw:         "rand.Float64() = r",
		exhaustion:   fmt.Sprintf("MaxAttempts %d total attempts: after attempt %[1]d fails the job is discarded, not retried", ma),
		terminal:     "discarded",
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			s := min(math.Pow(float64(n), 4), riverMaxSeconds)
			if s == riverMaxSeconds {
				return maxDuration
			}
			s += s * (d.next()*0.2 - 0.1)
			return seconds(min(s, riverMaxSeconds))
		},
	}, nil
}

// sidekiqFormula is the delay Sidekiq's original formula gives, which asynq
// and Faktory share: count^4 + 15 + rand(30)*(count+1) seconds, in
// saturating integer arithmetic.
func sidekiqFormula(count int64, r float64) time.Duration {
	s := sat.AddInt(sat.PowInt(count, 4), 15)
	s = sat.AddInt(s, sat.MulInt(randInt(r, 30), sat.AddInt(count, 1)))
	return satSeconds(s)
}

var asynqSettings = []setting{
	{key: "MaxRetry", kind: kInt, def: "25", lo: 0, hi: math.MaxInt32, clamp: true, help: "retries after the first run (asynq.MaxRetry option); asynq stores an int32; below 0 is 0 (client.go 95-99)"},
}

func asynqModel(c conf) (*model, error) {
	mr := c.int("MaxRetry")
	return &model{
		name:    "asynq",
		release: "0.26.0",
		system:  "asynq (Go, Redis), DefaultRetryDelayFunc",
		version: "asynq@785bb7208cb0766877fcc20ac1dbebe857a43c9b (2026-05-14)",
		source:  "https://github.com/hibiken/asynq/blob/785bb7208cb0766877fcc20ac1dbebe857a43c9b/server.go (DefaultRetryDelayFunc); processor.go (retry, exhaustion)",
		summary: fmt.Sprintf("n^4 + 15 + rand(30)*(n+1) seconds, n = attempt-1; %d attempts (%d retries), then archived", mr+1, mr),
		formula: "n = msg.Retried = attempt - 1; s = int(math.Pow(n, 4)) + 15 + rand.IntN(30) * (n + 1); delay = s seconds",
		draw:    "rand.IntN(30) = floor(r * 30)",
		exhaustion: fmt.Sprintf("MaxRetry %d: a task is retried while msg.Retried < %[1]d, so after attempt %d "+
			"(Retried = %[1]d) it is archived", mr, mr+1),
		terminal:     "archived",
		maxAttempts:  int(mr + 1),
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return sidekiqFormula(int64(n-1), d.next())
		},
	}, nil
}

var faktorySettings = []setting{
	{key: "retry", kind: kInt, def: "25", lo: math.MinInt32, hi: math.MaxInt32, help: "retries (job retry field); 0: no retry and the failed job is dropped; -1 (any negative): no retry, straight to the morgue"},
}

// faktoryExhaustion is Faktory's attempt limit and terminal outcome for the
// job's retry field, as manager/retry.go reads it: retry 0 drops the job
// (lines 133-135), a negative retry sends it to the morgue without a retry
// (137-140; client/job.go 14-15 documents -1), and a positive retry is the
// number of retries before the morgue.
func faktoryExhaustion(rt int64) (int, string, string, policy.Action) {
	switch {
	case rt == 0:
		return 1, "retry 0: no retry, and the failed job is dropped (not kept in the morgue)", "dropped (retry 0 discards a failed job)", policy.Discard
	case rt < 0:
		return 1, fmt.Sprintf("retry %d: no retry; the failed job goes straight to the morgue", rt), "moved to the morgue (Dead set) without a retry", policy.DeadLetter
	}
	return int(rt + 1), fmt.Sprintf("retry %d: retried while RetryCount < %[1]d, so after attempt %d (RetryCount = %[1]d) the job goes to the morgue", rt, rt+1),
		"moved to the morgue (Dead set)", policy.DeadLetter
}

func faktoryModel(c conf) (*model, error) {
	rt := c.int("retry")
	ma, exh, term, act := faktoryExhaustion(rt)
	return &model{
		name:         "faktory",
		release:      "1.9.3",
		system:       "Faktory server (Go), manager.nextRetry",
		version:      "faktory@cf9073fe168a8efdbd459c13921f93826e9be19a (2026-06-30)",
		source:       "https://github.com/contribsys/faktory/blob/cf9073fe168a8efdbd459c13921f93826e9be19a/manager/retry.go",
		summary:      fmt.Sprintf("n^4 + 15 + rand(30)*(n+1) seconds, n = attempt-1; %d attempts (retry %d), then %s", ma, rt, term),
		formula:      "count = job.Failure.RetryCount = attempt - 1; secs = count^4 + 15 + rand.Intn(30) * (count + 1); delay = secs seconds",
		draw:         "rand.Intn(30) = floor(r * 30)",
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  ma,
		onExhaustion: act,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return sidekiqFormula(int64(n-1), d.next())
		},
	}, nil
}

var obanSettings = []setting{
	{key: "max_attempts", kind: kInt, def: "20", lo: 1, hi: math.MaxInt32, help: "total attempts (use Oban.Worker, max_attempts: N); above 20 the backoff's attempt is scaled to round(attempt / max_attempts * 20)"},
}

func obanModel(c conf) (*model, error) {
	ma := c.int("max_attempts")
	return &model{
		name:    "oban",
		release: "2.23.0",
		system:  "Oban (Elixir, PostgreSQL), Oban.Worker.backoff/1",
		version: "oban 2.23.0 (oban-bg/oban@2939e3134d0812195fbfcfe9a8e8d4bbd30bb23b, 2026-08-18)",
		source:  "https://github.com/oban-bg/oban/blob/2939e3134d0812195fbfcfe9a8e8d4bbd30bb23b/lib/oban/worker.ex (backoff/1); lib/oban/backoff.ex (exponential, jitter); lib/oban/queues/executor.ex (exhaustion)",
		summary: fmt.Sprintf("t = 15 + 2^attempt s, plus up to 10%% (trunc(r*0.1*t)); %d attempts, then discarded", ma),
		formula: "t = 15 + 2^min(attempt, 100) (Backoff.exponential, mult 1, min_pad 15, max_pow 100; attempt unclamped since max_attempts 20 <= 20); " +
			"delay = t + trunc(r * 0.1 * t) seconds (Backoff.jitter, mode :inc, mult 0.1)",
		draw:         ":rand.uniform() = r",
		exhaustion:   fmt.Sprintf("max_attempts %d total attempts: after attempt %[1]d fails the job is discarded", ma),
		terminal:     "discarded",
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			a := int64(n)
			if ma > 20 { // Worker.backoff: round(attempt / max_attempts * 20)
				a = int64(math.Round(float64(n) / float64(ma) * 20))
			}
			t := sat.AddInt(15, sat.PowInt(2, min(a, 100)))
			diff := nanos(d.next() * 0.1 * float64(t)) // seconds, truncated
			return satSeconds(sat.AddInt(t, int64(diff)))
		},
	}, nil
}

var temporalSettings = []setting{
	{key: "initial_interval", kind: kDuration, def: "1s", lo: 1, hi: math.MaxInt64, help: "RetryPolicy.InitialInterval, the first delay"},
	{key: "backoff_coefficient", kind: kFloat, def: "2", lo: 1, hi: 1e6, help: "RetryPolicy.BackoffCoefficient, at least 1"},
	{key: "maximum_interval", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64, help: "RetryPolicy.MaximumInterval, the cap; 0 means 100 x initial_interval"},
	{key: "maximum_attempts", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "RetryPolicy.MaximumAttempts, total attempts; 0 means unlimited"},
}

func temporalModel(c conf) (*model, error) {
	ini, coef, mx, ma := c.dur("initial_interval"), c.float("backoff_coefficient"), c.dur("maximum_interval"), c.int("maximum_attempts")
	if mx == 0 {
		mx = time.Duration(sat.MulInt(int64(ini), 100))
	}
	if mx < ini {
		return nil, badValue("temporal", "maximum_interval", c, "must not be less than initial_interval (Temporal rejects the RetryPolicy)")
	}
	exh, term := "MaximumAttempts 0 = unlimited: retries go on until a timeout (schedule-to-close, "+
		"workflow run) or a non-retryable error", "none by attempts (with MaximumAttempts set: RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED, the activity fails)"
	if ma > 0 {
		exh, term = fmt.Sprintf("MaximumAttempts %d total attempts: after attempt %[1]d fails no retry is scheduled", ma), "RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED: the activity fails"
	}
	return &model{
		name:         "temporal",
		release:      "1.32.2",
		system:       "Temporal server, default activity retry policy",
		version:      "temporal@6805caea59e35d0611ed96be69641b8d86bff11c (2026-08-21)",
		source:       "https://github.com/temporalio/temporal/blob/6805caea59e35d0611ed96be69641b8d86bff11c/common/backoff/retry.go (ExponentialBackoffAlgorithm); service/history/workflow/retry.go (nextBackoffInterval); common/retrypolicy/retry_policy.go (defaults)",
		summary:      fmt.Sprintf("min(%v*%s^(attempt-1), %v), no jitter; %s", ini, fmtNum(coef), mx, attemptsText(int(ma))),
		formula:      fmt.Sprintf("interval = trunc(float64(InitialInterval %v) * math.Pow(BackoffCoefficient %s, attempt-1)) (>= MaxInt64 saturates); delay = min(interval, MaximumInterval = %v)", ini, fmtNum(coef), mx),
		draw:         "",
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			d := nanos(float64(ini) * math.Pow(coef, float64(n-1)))
			return min(d, mx)
		},
	}, nil
}

// attemptsText says how many attempts a profile makes: "N attempts" or
// "unlimited attempts" for 0.
func attemptsText(n int) string {
	if n == 0 {
		return "unlimited attempts"
	}
	return fmt.Sprintf("%d attempts", n)
}
