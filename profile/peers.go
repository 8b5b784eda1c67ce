package profile

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"

	"github.com/retrykit/retrykit/policy"
)

// Job queues of other languages (Ruby, Python, Node, Zig, Rust, .NET),
// researched for their vector files in testdata/profiles and their pages
// in docs/profiles.

// peerModels returns their profiles.
func peerModels() []*model {
	return []*model{
		sidekiqModel(), sidekiq6Model(), activeJobModel(), celeryModel(), bullmqModel(),
		resqueRetryModel(), zzzJobsModel(), chasquiMQModel(), flareModel(),
	}
}

func sidekiqModel() *model {
	return &model{
		name:    "sidekiq",
		system:  "Sidekiq (Ruby), JobRetry",
		version: "8.1.7 (1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b)",
		source:  "https://github.com/sidekiq/sidekiq/blob/1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b/lib/sidekiq/job_retry.rb",
		summary: "n^4 + 15 + rand(10*(n+1)) seconds, n = attempt-1; 26 attempts (25 retries), then the Dead set",
		formula: "count = retry_count = attempt - 1; delay_s = count**4 + 15 + rand(10 * (count + 1))",
		draw:    "rand(10 * (count + 1)) = floor(r * 10 * (count + 1))",
		exhaustion: "max_retries 25: retried while count < 25, so after attempt 26 the retries are " +
			"exhausted",
		terminal:     "moved to the Dead set (morgue) after the sidekiq_retries_exhausted block",
		maxAttempts:  26,
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := int64(n - 1)
			s := sat.AddInt(sat.PowInt(c, 4), 15)
			return satSeconds(sat.AddInt(s, randInt(d.next(), sat.MulInt(10, sat.AddInt(c, 1)))))
		},
	}
}

func sidekiq6Model() *model {
	return &model{
		name:    "sidekiq6",
		system:  "Sidekiq 6 (Ruby), JobRetry (Debian's ruby-sidekiq)",
		version: "6.4.1 (00ae6a74234a9b626a593ae6c5620416349f8eaf)",
		source:  "https://github.com/sidekiq/sidekiq/blob/00ae6a74234a9b626a593ae6c5620416349f8eaf/lib/sidekiq/job_retry.rb",
		summary: "n^4 + 15 + rand(10)*(n+1) seconds, n = attempt-1; 26 attempts (25 retries), then the Dead set",
		formula: "count = retry_count = attempt - 1; delay_s = count**4 + 15 + rand(10) * (count + 1)",
		draw:    "rand(10) = floor(r * 10)",
		exhaustion: "max_retries 25: retried while count < 25, so after attempt 26 the retries are " +
			"exhausted",
		terminal:     "moved to the Dead set (morgue) after the sidekiq_retries_exhausted block",
		maxAttempts:  26,
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := int64(n - 1)
			s := sat.AddInt(sat.PowInt(c, 4), 15)
			return satSeconds(sat.AddInt(s, sat.MulInt(randInt(d.next(), 10), sat.AddInt(c, 1))))
		},
	}
}

func activeJobModel() *model {
	return &model{
		name:    "activejob",
		system:  "Rails Active Job, retry_on wait: :polynomially_longer",
		version: "8.2.0.alpha (2a2db1e8d6d104ee0611efcae7eb023af65cff34)",
		source:  "https://github.com/rails/rails/blob/2a2db1e8d6d104ee0611efcae7eb023af65cff34/activejob/lib/active_job/exceptions.rb",
		summary: "e^4 + rand*e^4*0.15 + 2 seconds, e = attempt; 5 attempts, then the error is re-raised",
		formula: "executions = attempt; delay = executions**4; delay_s = delay + Kernel.rand * delay * 0.15 + 2 " +
			"(float64, left to right; retry_jitter 0.15 from load_defaults >= 6.1); delay_ns = trunc(delay_s * 1e9)",
		draw:         "Kernel.rand = r",
		exhaustion:   "attempts 5 total: retried while executions < 5",
		terminal:     "the error is re-raised to the queue adapter (after_discard procs run)",
		maxAttempts:  5,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			e := float64(sat.PowInt(int64(n), 4))
			return seconds(e + d.next()*e*0.15 + 2)
		},
	}
}

func celeryModel() *model {
	return &model{
		name:    "celery",
		system:  "Celery (Python), autoretry_for with retry_backoff=True",
		version: "5.6.2 (5dc781f0bd5f36186bfcc74e0a4f9f654452c69b)",
		source:  "https://github.com/celery/celery/blob/5dc781f0bd5f36186bfcc74e0a4f9f654452c69b/celery/utils/time.py (get_exponential_backoff_interval)",
		summary: "randrange(min(600, 2^(attempt-1)) + 1) seconds (full jitter); 4 attempts (3 retries), then FAILURE",
		formula: "retries = attempt - 1; countdown = min(600, 1 * 2**retries); countdown = random.randrange(countdown + 1); delay_s = max(0, countdown)",
		draw:    "random.randrange(c + 1) = floor(r * (c + 1))",
		exhaustion: "max_retries 3: Task.retry gives up when retries + 1 > 3, so a task runs at most " +
			"4 times",
		terminal:     "the original exception is re-raised; the task ends in state FAILURE",
		maxAttempts:  4,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := int64(600)
			if n-1 < 10 { // 2^9 = 512 < 600 <= 2^10
				c = int64(1) << uint(n-1)
			}
			return satSeconds(randInt(d.next(), c+1))
		},
	}
}

func bullmqModel() *model {
	return &model{
		name:         "bullmq",
		system:       "BullMQ (Node.js), backoff type exponential",
		version:      "6.7.0 (source 352d3c72bf2bc5ec851630a4cdcba7d44c313ed0)",
		source:       "https://github.com/taskforcesh/bullmq/blob/352d3c72bf2bc5ec851630a4cdcba7d44c313ed0/src/classes/backoffs.ts",
		summary:      "2^(attempt-1) * 1000 ms, no jitter, no cap; 3 attempts, then failed",
		formula:      "attemptsMade + 1 = attempt; delay_ms = Math.round(2**(attempt - 1) * 1000) (delay 1000, jitter 0; attempts 3 as in BullMQ's documented example)",
		draw:         "",
		exhaustion:   "attempts 3 total: retried while attemptsMade + 1 < 3",
		terminal:     "moved to the failed set",
		maxAttempts:  3,
		onExhaustion: policy.Discard,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			return shifted(time.Second, n-1, maxDuration)
		},
	}
}

// resqueStrategy is resque-retry's default ExponentialBackoff
// @backoff_strategy, in seconds.
var resqueStrategy = [...]int64{0, 60, 600, 3600, 10800, 21600}

func resqueRetryModel() *model {
	return &model{
		name:         "resque_retry",
		system:       "resque-retry (Ruby), Resque::Plugins::ExponentialBackoff",
		version:      "1.8.1 (f75421a98b91dcbe873dab4bfad4ead99e597009)",
		source:       "https://github.com/lantins/resque-retry/blob/f75421a98b91dcbe873dab4bfad4ead99e597009/lib/resque/plugins/exponential_backoff.rb",
		summary:      "table 0, 1m, 10m, 1h, 3h, 6h by retry, no jitter; 7 attempts (6 retries), then give up",
		formula:      "i = retry_attempt = attempt - 1; delay_s = trunc((backoff_strategy[i] || backoff_strategy.last) * 1.0), backoff_strategy [0, 60, 600, 3600, 10800, 21600]",
		draw:         "",
		exhaustion:   "retry_limit 6 (the strategy's length): retried while retry_attempt < 6",
		terminal:     "give up: the failure stays in Resque's failed queue",
		maxAttempts:  7,
		onExhaustion: policy.DeadLetter,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			return satSeconds(resqueStrategy[min(n-1, len(resqueStrategy)-1)])
		},
	}
}

func zzzJobsModel() *model {
	return &model{
		name:    "zzz_jobs",
		system:  "zzz_jobs (Zig; published as pidgn_jobs), RetryStrategy .exponential",
		version: "pidgn_jobs 0.3.1-beta.1 (c85a4c4e9c87045639babb1a519fd8f37cf0b841)",
		source:  "https://github.com/seemsindie/pidgn_jobs/blob/c85a4c4e9c87045639babb1a519fd8f37cf0b841/src/retry.zig",
		summary: "c = min(15*2^attempt, 3600) s plus [0, c/4 - 1] s; 20 attempts, then discarded",
		formula: "n = attempt; capped = min(15 * 2**min(n, 30), 3600); J = max(capped / 4, 1) (integer division); delay_s = capped + jitter, jitter in [0, J - 1]",
		draw: "jitter = (n*7 + now) mod J with now the Unix time in seconds; read as floor(r * J), " +
			"treating now as uniform",
		exhaustion:   "max_attempts 20 total: discarded when attempt >= 20",
		terminal:     "discarded (kept in the store in state discarded)",
		maxAttempts:  20,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := min(sat.MulInt(15, sat.PowInt(2, int64(min(n, 30)))), 3600)
			j := max(c/4, 1)
			return satSeconds(c + randInt(d.next(), j))
		},
	}
}

func chasquiMQModel() *model {
	return &model{
		name:    "chasquimq",
		system:  "ChasquiMQ (Rust, Redis Streams), RetryConfig",
		version: "0.1.0 (cd30b0889437005a26c482826ecf3435f0960cdf)",
		source:  "https://github.com/jotarios/chasquimq/blob/cd30b0889437005a26c482826ecf3435f0960cdf/chasquimq/src/consumer/retry.rs",
		summary: "min(100ms*2^(attempt-1), 30s) plus [0, 99] ms; 3 attempts, then the dead-letter stream",
		formula: "n = attempt; capped_ms = trunc(min(100 * 2.0**(n - 1), 30000)); delay_ms = capped_ms + jitter, jitter in [0, 99] (after the cap)",
		draw:    "fastrand_jitter(100) = xorshift state % 100, read as floor(r * 100)",
		exhaustion: "max_attempts 3 total: dead-lettered when the next attempt would be >= 3 " +
			"(attempts 1 and 2 are retried)",
		terminal:     "dead-letter stream (DlqReason::RetriesExhausted)",
		maxAttempts:  3,
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			ms := int64(min(100*math.Pow(2, float64(n-1)), 30000))
			return time.Duration(ms+randInt(d.next(), 100)) * time.Millisecond
		},
	}
}

func flareModel() *model {
	return &model{
		name:    "flare",
		system:  "Zeridion Flare (.NET), documented retry strategy",
		version: "documentation (no public source)",
		source:  "no public source: the Retry Strategies documentation (shared/seeds/003_30ca8832de0257f2.txt)",
		summary: "15s*2^(attempt-1) plus [0, 3000] ms, no cap; 3 attempts, then DeadLetter (from the docs)",
		formula: "n = attempt; delay_ms = 15000 * 2**(n - 1) + jitter, jitter in [0, 3000] ms; no cap documented",
		draw:    "random(0-3000ms) read as floor(r * 3001) whole milliseconds",
		exhaustion: "MaxAttempts 3 total: dead-lettered when AttemptNumber >= MaxAttempts after a " +
			"failure",
		terminal:     "DeadLetter state",
		maxAttempts:  3,
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			base := shifted(15*time.Second, n-1, maxDuration)
			j := time.Duration(randInt(d.next(), 3001)) * time.Millisecond
			return time.Duration(sat.AddInt(int64(base), int64(j)))
		},
	}
}
