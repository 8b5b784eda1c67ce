package profile

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"

	"github.com/retrykit/retrykit/policy"
)

// Job queues whose delay is computed from the attempt (or retry) count.

// riverMaxSeconds is River's cap, time.Duration(1<<63 - 1).Seconds().
var riverMaxSeconds = time.Duration(math.MaxInt64).Seconds()

func riverModel() *model {
	return &model{
		name:    "river",
		system:  "River (Go, PostgreSQL), DefaultClientRetryPolicy",
		version: "river@fdf6cdf12567a5b70c003f5ff850273f09e7efcf (2026-08-07)",
		source:  "https://github.com/riverqueue/river/blob/fdf6cdf12567a5b70c003f5ff850273f09e7efcf/internal/retrypolicy/default.go",
		summary: "attempt^4 seconds ±10% (uniform); 25 attempts, then discarded",
		formula: "errors = attempt (len(job.Errors)+1, no snoozes); s = min(errors^4, maxDurationSeconds); " +
			"s += s * (r*0.2 - 0.1); delay = time.Duration(min(s, maxDurationSeconds) * 1e9)",
		draw:         "rand.Float64() = r",
		exhaustion:   "MaxAttempts 25 total attempts: after attempt 25 fails the job is discarded, not retried",
		terminal:     "discarded",
		maxAttempts:  25,
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
	}
}

// sidekiqFormula is the delay Sidekiq's original formula gives, which asynq
// and Faktory share: count^4 + 15 + rand(30)*(count+1) seconds, in
// saturating integer arithmetic.
func sidekiqFormula(count int64, r float64) time.Duration {
	s := sat.AddInt(sat.PowInt(count, 4), 15)
	s = sat.AddInt(s, sat.MulInt(randInt(r, 30), sat.AddInt(count, 1)))
	return satSeconds(s)
}

func asynqModel() *model {
	return &model{
		name:    "asynq",
		system:  "asynq (Go, Redis), DefaultRetryDelayFunc",
		version: "asynq@785bb7208cb0766877fcc20ac1dbebe857a43c9b (2026-05-14)",
		source:  "https://github.com/hibiken/asynq/blob/785bb7208cb0766877fcc20ac1dbebe857a43c9b/server.go (DefaultRetryDelayFunc); processor.go (retry, exhaustion)",
		summary: "n^4 + 15 + rand(30)*(n+1) seconds, n = attempt-1; 26 attempts (25 retries), then archived",
		formula: "n = msg.Retried = attempt - 1; s = int(math.Pow(n, 4)) + 15 + rand.IntN(30) * (n + 1); delay = s seconds",
		draw:    "rand.IntN(30) = floor(r * 30)",
		exhaustion: "MaxRetry 25: a task is retried while msg.Retried < 25, so after attempt 26 " +
			"(Retried = 25) it is archived",
		terminal:     "archived",
		maxAttempts:  26,
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return sidekiqFormula(int64(n-1), d.next())
		},
	}
}

func faktoryModel() *model {
	return &model{
		name:    "faktory",
		system:  "Faktory server (Go), manager.nextRetry",
		version: "faktory@cf9073fe168a8efdbd459c13921f93826e9be19a (2026-06-30)",
		source:  "https://github.com/contribsys/faktory/blob/cf9073fe168a8efdbd459c13921f93826e9be19a/manager/retry.go",
		summary: "n^4 + 15 + rand(30)*(n+1) seconds, n = attempt-1; 26 attempts (retry 25), then the morgue",
		formula: "count = job.Failure.RetryCount = attempt - 1; secs = count^4 + 15 + rand.Intn(30) * (count + 1); delay = secs seconds",
		draw:    "rand.Intn(30) = floor(r * 30)",
		exhaustion: "retry 25 (client.RetryPolicyDefault): retried while RetryCount < 25, so after attempt 26 " +
			"(RetryCount = 25) the job goes to the morgue",
		terminal:     "moved to the morgue (Dead set)",
		maxAttempts:  26,
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return sidekiqFormula(int64(n-1), d.next())
		},
	}
}

func obanModel() *model {
	return &model{
		name:    "oban",
		system:  "Oban (Elixir, PostgreSQL), Oban.Worker.backoff/1",
		version: "oban 2.23.0 (oban-bg/oban@2939e3134d0812195fbfcfe9a8e8d4bbd30bb23b, 2026-08-18)",
		source:  "https://github.com/oban-bg/oban/blob/2939e3134d0812195fbfcfe9a8e8d4bbd30bb23b/lib/oban/worker.ex (backoff/1); lib/oban/backoff.ex (exponential, jitter); lib/oban/queues/executor.ex (exhaustion)",
		summary: "t = 15 + 2^attempt s, plus up to 10% (trunc(r*0.1*t)); 20 attempts, then discarded",
		formula: "t = 15 + 2^min(attempt, 100) (Backoff.exponential, mult 1, min_pad 15, max_pow 100; attempt unclamped since max_attempts 20 <= 20); " +
			"delay = t + trunc(r * 0.1 * t) seconds (Backoff.jitter, mode :inc, mult 0.1)",
		draw:         ":rand.uniform() = r",
		exhaustion:   "max_attempts 20 total attempts: after attempt 20 fails the job is discarded",
		terminal:     "discarded",
		maxAttempts:  20,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			t := sat.AddInt(15, sat.PowInt(2, int64(min(n, 100))))
			diff := nanos(d.next() * 0.1 * float64(t)) // seconds, truncated
			return satSeconds(sat.AddInt(t, int64(diff)))
		},
	}
}

func temporalModel() *model {
	return &model{
		name:    "temporal",
		system:  "Temporal server, default activity retry policy",
		version: "temporal@6805caea59e35d0611ed96be69641b8d86bff11c (2026-08-21)",
		source:  "https://github.com/temporalio/temporal/blob/6805caea59e35d0611ed96be69641b8d86bff11c/common/backoff/retry.go (ExponentialBackoffAlgorithm); service/history/workflow/retry.go (nextBackoffInterval); common/retrypolicy/retry_policy.go (defaults)",
		summary: "min(1s*2^(attempt-1), 100s), no jitter; unlimited attempts",
		formula: "interval = trunc(float64(1s) * math.Pow(2.0, attempt-1)) (>= MaxInt64 saturates); delay = min(interval, MaximumInterval = 100 * 1s)",
		draw:    "",
		exhaustion: "MaximumAttempts 0 = unlimited: retries go on until a timeout (schedule-to-close, " +
			"workflow run) or a non-retryable error",
		terminal:     "none by attempts (with MaximumAttempts set: RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED, the activity fails)",
		onExhaustion: policy.Discard,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			d := nanos(float64(time.Second) * math.Pow(2, float64(n-1)))
			return min(d, 100*time.Second)
		},
	}
}
