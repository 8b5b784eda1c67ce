package profile

import (
	"fmt"
	"math"
	"strings"
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
		configured(sidekiqSettings, sidekiqModel), configured(activeJobSettings, activeJobModel),
		configured(celerySettings, celeryModel), configured(bullmqSettings, bullmqModel),
		configured(resqueRetrySettings, resqueRetryModel), configured(zzzJobsSettings, zzzJobsModel),
		configured(chasquiMQSettings, chasquiMQModel), configured(flareSettings, flareModel),
	}
}

var sidekiqSettings = []setting{
	{key: "retry", kind: kIntBool, def: "true", lo: 0, hi: math.MaxInt32 - 1, ifTrue: 25, ifFalse: -1, clamp: true, help: "sidekiq_options retry: retries (true is 25); 0 (or below): straight to the Dead set; false: no retry, not kept"},
}

// sidekiqExhaustion is Sidekiq's attempt limit and terminal outcome for the
// job's retry option (-1 for false).
func sidekiqExhaustion(rt int64) (int, string, string, policy.Action) {
	if rt < 0 {
		return 1, "retry false: no retry, and the job is not sent to the Dead set", "discarded (retry: false)", policy.Discard
	}
	return int(rt + 1), fmt.Sprintf("max_retries %d: retried while count < %[1]d, so after attempt %d the retries are exhausted", rt, rt+1),
		"moved to the Dead set (morgue) after the sidekiq_retries_exhausted block", policy.DeadLetter
}

func sidekiqModel(c conf) (*model, error) {
	rt := c.int("retry")
	ma, exh, term, act := sidekiqExhaustion(rt)
	return &model{
		release:      "8.1.7",
		name:         "sidekiq",
		system:       "Sidekiq (Ruby), JobRetry",
		version:      "8.1.7 (1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b)",
		source:       "https://github.com/sidekiq/sidekiq/blob/1bb4aa06e5aa178a114a5e855f9f3d5c24f6c61b/lib/sidekiq/job_retry.rb",
		summary:      fmt.Sprintf("n^4 + 15 + rand(10*(n+1)) seconds, n = attempt-1; %d attempts, then %s", ma, term),
		formula:      "count = retry_count = attempt - 1; delay_s = count**4 + 15 + rand(10 * (count + 1))",
		draw:         "rand(10 * (count + 1)) = floor(r * 10 * (count + 1))",
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  ma,
		onExhaustion: act,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := int64(n - 1)
			s := sat.AddInt(sat.PowInt(c, 4), 15)
			return satSeconds(sat.AddInt(s, randInt(d.next(), sat.MulInt(10, sat.AddInt(c, 1)))))
		},
	}, nil
}

func sidekiq6Model(c conf) (*model, error) {
	rt := c.int("retry")
	ma, exh, term, act := sidekiqExhaustion(rt)
	return &model{
		release:      "6.4.1",
		name:         "sidekiq6",
		system:       "Sidekiq 6 (Ruby), JobRetry (Debian's ruby-sidekiq)",
		version:      "6.4.1 (00ae6a74234a9b626a593ae6c5620416349f8eaf)",
		source:       "https://github.com/sidekiq/sidekiq/blob/00ae6a74234a9b626a593ae6c5620416349f8eaf/lib/sidekiq/job_retry.rb",
		summary:      fmt.Sprintf("n^4 + 15 + rand(10)*(n+1) seconds, n = attempt-1; %d attempts, then %s", ma, term),
		formula:      "count = retry_count = attempt - 1; delay_s = count**4 + 15 + rand(10) * (count + 1)",
		draw:         "rand(10) = floor(r * 10)",
		exhaustion:   exh,
		terminal:     term,
		maxAttempts:  ma,
		onExhaustion: act,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := int64(n - 1)
			s := sat.AddInt(sat.PowInt(c, 4), 15)
			return satSeconds(sat.AddInt(s, sat.MulInt(randInt(d.next(), 10), sat.AddInt(c, 1))))
		},
	}, nil
}

var activeJobSettings = []setting{
	{key: "attempts", kind: kIntNone, def: "5", lo: 1, hi: math.MaxInt32, clamp: true, help: "retry_on attempts: total executions, or unlimited; below 1 is 1 (executions < attempts)"},
	{key: "wait", kind: kWait, def: "3", lo: 0, hi: 1e9, help: "retry_on wait: seconds (3.seconds by default; read as a Duration, so truncated to whole seconds with .to_i), or polynomially_longer"},
	{key: "jitter", kind: kFloat, def: "0", lo: 0, hi: 1000, help: "retry_on jitter; unset: the class's retry_jitter, 0.0 unless load_defaults is 6.1 or later (then 0.15)"},
	{key: "load_defaults", kind: kEnum, def: "none", enum: []string{"none", "5.0", "5.1", "5.2", "6.0", "6.1", "7.0", "7.1", "7.2", "8.0", "8.1"},
		help: "config.load_defaults of the Rails app: 6.1 and later set config.active_job.retry_jitter = 0.15; none (a bare ActiveJob::Base) keeps 0.0"},
}

// activeJobJitter is the retry_on jitter: the setting when given, else the
// class attribute retry_jitter that load_defaults sets (0.15 from 6.1 on,
// 0.0 before and without it).
func activeJobJitter(c conf) float64 {
	if c.user("jitter") {
		return c.float("jitter")
	}
	switch c.str("load_defaults") {
	case "none", "5.0", "5.1", "5.2", "6.0":
		return 0
	}
	return 0.15
}

func activeJobModel(c conf) (*model, error) {
	att, jit, wait := c.int("attempts"), activeJobJitter(c), c.v("wait")
	poly := wait.s == "polynomially_longer"
	ma, exh := int(att), fmt.Sprintf("attempts %d total: retried while executions < %[1]d", att)
	if att < 0 {
		ma, exh = 0, "attempts :unlimited: retried until it succeeds"
	}
	// 8.1.3.1 exceptions.rb 180-188: a Duration or Integer wait is
	// delay = wait.to_i (whole seconds), delay + Kernel.rand * delay * jitter;
	// a plain Float raises, so a fractional wait is a Duration truncated.
	secs := math.Trunc(wait.f)
	summary := fmt.Sprintf("e^4 + rand*e^4*%s + 2 seconds, e = attempt", fmtNum(jit))
	formula := fmt.Sprintf("executions = attempt; delay = executions**4; delay_s = delay + Kernel.rand * delay * %s + 2 "+
		"(float64, left to right); delay_ns = trunc(delay_s * 1e9)", fmtNum(jit))
	system := "Rails Active Job, retry_on wait: :polynomially_longer"
	if !poly {
		summary = fmt.Sprintf("%s s + rand*%[1]s*%s seconds", fmtNum(secs), fmtNum(jit))
		if jit == 0 {
			summary = fmt.Sprintf("%s s flat", fmtNum(secs))
		}
		formula = fmt.Sprintf("delay = wait.to_i = %s (wait %s.seconds; a plain Float raises in 8.1.3.1); delay_s = delay + Kernel.rand * delay * %s; delay_ns = trunc(delay_s * 1e9)",
			fmtNum(secs), fmtNum(wait.f), fmtNum(jit))
		system = fmt.Sprintf("Rails Active Job, retry_on wait: %s.seconds", fmtNum(wait.f))
	}
	return &model{
		release:      "8.1.3.1",
		name:         "activejob",
		system:       system,
		version:      "8.1.3.1",
		source:       "https://github.com/rails/rails/blob/v8.1.3.1/activejob/lib/active_job/exceptions.rb (retry_on: wait 3.seconds, attempts 5, line 64; determine_delay, lines 180-188)",
		summary:      fmt.Sprintf("%s; %s, then the error is re-raised", summary, attemptsText(ma)),
		formula:      formula,
		draw:         map[bool]string{true: "Kernel.rand = r", false: ""}[jit > 0],
		exhaustion:   exh,
		terminal:     "the error is re-raised to the queue adapter (after_discard procs run)",
		maxAttempts:  ma,
		onExhaustion: policy.Discard,
		jitter:       jit > 0,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			r := 0.0
			if jit > 0 {
				r = d.next() // ActiveJob draws nothing without jitter
			}
			if !poly {
				return seconds(secs + r*secs*jit)
			}
			e := float64(sat.PowInt(int64(n), 4))
			return seconds(e + r*e*jit + 2)
		},
	}, nil
}

var celerySettings = []setting{
	{key: "retry_backoff", kind: kFloatBool, def: "false", lo: 0, hi: 1 << 40, help: "exponential backoff: factor int(max(1.0, retry_backoff)) seconds (True is 1); False (Celery's default) or 0: every retry waits default_retry_delay"},
	{key: "retry_backoff_max", kind: kSeconds, def: "600", lo: 0, hi: 1 << 40, help: "cap of the backoff, whole seconds"},
	{key: "retry_jitter", kind: kBool, def: "true", help: "full jitter: random.randrange(countdown + 1)"},
	{key: "max_retries", kind: kIntNone, def: "3", lo: 0, hi: math.MaxInt32 - 1, clamp: true, help: "retries after the first run; None is unlimited; below 0 retries nothing (retries > max_retries)"},
	{key: "default_retry_delay", kind: kSeconds, def: "180", lo: 0, hi: 1 << 40, help: "the countdown when retry_backoff is off, whole seconds"},
}

func celeryModel(c conf) (*model, error) {
	// celery/app/autoretry.py: retry_backoff = float(...); if retry_backoff:
	// factor = int(max(1.0, retry_backoff)).
	var factor int64
	if rb := c.float("retry_backoff"); rb != 0 {
		factor = int64(max(1.0, rb))
	}
	bmax, jit, mr, drd := c.int("retry_backoff_max"), c.bool("retry_jitter"), c.int("max_retries"), c.int("default_retry_delay")
	ma, exh := int(mr+1), fmt.Sprintf("max_retries %d: Task.retry gives up when retries + 1 > %[1]d, so a task runs at most %d times", mr, mr+1)
	if mr < 0 {
		ma, exh = 0, "max_retries None: unlimited retries"
	}
	formula := fmt.Sprintf("retry_backoff False: no backoff, countdown = default_retry_delay = %d s (celery/app/autoretry.py: retry_backoff defaults to False)", drd)
	summary := fmt.Sprintf("%d s flat (default_retry_delay)", drd)
	system := "Celery (Python), autoretry_for, retry_backoff False: default_retry_delay"
	if factor > 0 {
		formula = fmt.Sprintf("retries = attempt - 1; countdown = min(%d, %d * 2**retries)", bmax, factor)
		summary = fmt.Sprintf("min(%d, %d*2^(attempt-1)) s", bmax, factor)
		if jit {
			formula += "; countdown = random.randrange(countdown + 1)"
			summary = "randrange(" + summary + " + 1) (full jitter)"
		}
		formula += "; delay_s = max(0, countdown)"
		system = "Celery (Python), autoretry_for with retry_backoff"
	}
	return &model{
		release:      "5.6.3",
		name:         "celery",
		system:       system,
		version:      "5.6.3 (3f4d8d795ad128bd7430cc5dc174a802cded425c)",
		source:       "https://github.com/celery/celery/blob/3f4d8d795ad128bd7430cc5dc174a802cded425c/celery/utils/time.py (get_exponential_backoff_interval)",
		summary:      summary + "; " + attemptsText(ma) + ", then FAILURE",
		formula:      formula,
		draw:         map[bool]string{true: "random.randrange(c + 1) = floor(r * (c + 1))", false: ""}[factor > 0 && jit],
		exhaustion:   exh,
		terminal:     "the original exception is re-raised; the task ends in state FAILURE",
		maxAttempts:  ma,
		onExhaustion: policy.Discard,
		jitter:       factor > 0 && jit,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			if factor == 0 {
				return satSeconds(drd)
			}
			c := bmax
			if n-1 < 62 {
				c = min(bmax, sat.MulInt(factor, int64(1)<<uint(n-1)))
			}
			if !jit {
				return satSeconds(c)
			}
			return satSeconds(randInt(d.next(), c+1))
		},
	}, nil
}

var bullmqSettings = []setting{
	{key: "type", kind: kEnum, def: "none", enum: []string{"none", "fixed", "exponential"}, help: "backoff.type; none (BullMQ's default: no backoff option) retries at once, 0 ms"},
	{key: "delay", kind: kMillis, def: "0", lo: 0, hi: 1 << 50, help: "backoff.delay, whole milliseconds (left out, BullMQ's strategy gives undefined or NaN and the job is retried at once: 0)"},
	{key: "attempts", kind: kInt, def: "1", lo: math.MinInt32, hi: math.MaxInt32, help: "job option attempts: total attempts (BullMQ's default 1: no retry; 0 or less also runs once)"},
	{key: "jitter", kind: kFloat, def: "0", lo: 0, hi: 1, help: "backoff.jitter: the delay is drawn from [(1 - jitter) * d, d)"},
}

// bullmqRef is BullMQ's backoff strategies in the published 6.7.0 package.
const bullmqRef = "https://github.com/taskforcesh/bullmq/blob/352d3c72bf2bc5ec851630a4cdcba7d44c313ed0/src/classes/backoffs.ts"

// v8MaxRandom is the largest value V8's Math.random() returns, 1 - 2^-52
// (it builds the double from 52 random bits), below package profile's top
// draw 1 - 2^-53: BullMQ's jitter never reaches what a 53-bit draw would.
const v8MaxRandom = 1 - 0x1p-52

func bullmqModel(c conf) (*model, error) {
	typ, ms, att, jit := c.str("type"), float64(c.int("delay")), c.int("attempts"), c.float("jitter")
	ma := int(max(att, 1))
	formula := fmt.Sprintf("attemptsMade + 1 = attempt; d = Math.round(2**(attempt - 1) * %s) ms", fmtNum(ms))
	summary := fmt.Sprintf("2^(attempt-1) * %s ms, no cap", fmtNum(ms))
	switch typ {
	case "fixed":
		formula, summary = fmt.Sprintf("d = delay = %s ms", fmtNum(ms)), fmt.Sprintf("%s ms flat", fmtNum(ms))
	case "none":
		formula, summary = "no backoff option: Job#shouldRetryJob retries at once, delay 0 ms (dist/cjs/classes/job.js 493; delay and jitter have no effect without a type)", "0 ms (no backoff)"
		jit = 0
	}
	if jit > 0 {
		formula += fmt.Sprintf("; delay_ms = Math.floor(Math.random() * d * %s + d * (1 - %[1]s)), Math.random() at most 1 - 2**-52 in V8", fmtNum(jit))
		summary += fmt.Sprintf(", jitter %s", fmtNum(jit))
	} else if typ != "none" {
		formula += "; delay_ms = d"
	}
	system := "BullMQ (Node.js), backoff type " + typ
	if typ == "none" {
		system = "BullMQ (Node.js), no backoff option"
	}
	return &model{
		name:         "bullmq",
		release:      "6.7.0",
		system:       system,
		version:      "6.7.0 (source 352d3c72bf2bc5ec851630a4cdcba7d44c313ed0)",
		source:       bullmqRef + " (builtinStrategies); src/classes/job.ts (shouldRetryJob)",
		summary:      fmt.Sprintf("%s; %s, then failed", summary, attemptsText(ma)),
		formula:      formula,
		draw:         map[bool]string{true: "Math.random() = r, held at most 1 - 2**-52 (V8's largest)", false: ""}[jit > 0],
		exhaustion:   fmt.Sprintf("attempts %d: retried while attemptsMade + 1 < attempts, so a job runs at most %d times", att, ma),
		terminal:     "moved to the failed set",
		maxAttempts:  ma,
		onExhaustion: policy.Discard,
		jitter:       jit > 0,
		delay: func(n int, _ time.Duration, dr draws) time.Duration {
			if typ == "none" {
				return 0
			}
			d := ms
			if typ == "exponential" {
				d = math.Round(math.Pow(2, float64(n-1)) * ms)
			}
			if jit > 0 {
				d = math.Floor(min(dr.next(), v8MaxRandom)*d*jit + d*(1-jit))
			}
			return nanos(d * float64(time.Millisecond))
		},
	}, nil
}

// resqueStrategy is resque-retry's default ExponentialBackoff
// @backoff_strategy, in seconds (exponential_backoff.rb 129).
var resqueStrategy = []int64{0, 60, 600, 3600, 10800, 21600}

var resqueRetrySettings = []setting{
	{key: "retry_limit", kind: kInt, def: "6", lo: math.MinInt32, hi: math.MaxInt32, help: "@retry_limit: retries (ExponentialBackoff defaults it to backoff_strategy's length, 6); 0 never retries; -1 or below retries forever"},
	{key: "backoff_strategy", kind: kIntList, def: "0/60/600/3600/10800/21600", lo: 0, hi: 1 << 40, help: "@backoff_strategy: whole seconds by retry, written 0/60/600; past its end the last repeats"},
	{key: "retry_delay_multiplicand_min", kind: kFloat, def: "1.0", lo: 0, hi: 1e6, help: "@retry_delay_multiplicand_min: each delay is multiplied by rand(min..max)"},
	{key: "retry_delay_multiplicand_max", kind: kFloat, def: "1.0", lo: 0, hi: 1e6, help: "@retry_delay_multiplicand_max: at least the min, or the job class raises on extend"},
}

func resqueRetryModel(c conf) (*model, error) {
	table := c.list("backoff_strategy")
	if len(table) == 0 {
		table = resqueStrategy
	}
	lo, hi := c.float("retry_delay_multiplicand_min"), c.float("retry_delay_multiplicand_max")
	if lo > hi {
		// exponential_backoff.rb 65-68: InvalidRetryDelayMultiplicandConfigurationException on extend.
		return nil, badValue("resque_retry", "retry_delay_multiplicand_min", c, "must be at most retry_delay_multiplicand_max (resque-retry raises InvalidRetryDelayMultiplicandConfigurationException)")
	}
	// retry_limit ||= backoff_strategy.length (exponential_backoff.rb 78).
	ma := int64(len(table))
	if c.user("retry_limit") {
		ma = c.int("retry_limit")
	}
	total, exh, ltext := int(ma+1), fmt.Sprintf("retry_limit %d: retried while retry_attempt < %[1]d", ma), fmt.Sprintf("%d attempts (%d retries)", ma+1, ma)
	if ma < 0 {
		total, exh, ltext = 0, fmt.Sprintf("retry_limit %d: retry_limit_reached? is false for any limit below 0, retried until it succeeds", ma), fmt.Sprintf("unlimited attempts (retry_limit %d)", ma)
	}
	strategy := make([]string, len(table))
	for i, v := range table {
		strategy[i] = fmt.Sprint(v)
	}
	list := strings.Join(strategy, ", ")
	mult, draw, summary := fmt.Sprintf("multiplicand %v", lo), "", "table "+list+" s by retry, no jitter"
	if lo != hi {
		mult = fmt.Sprintf("multiplicand = rand(%v..%v), a float in [%[1]v, %[2]v] both ends included", lo, hi)
		draw = fmt.Sprintf("rand(%v..%v) = min + r' * (max - min) with r' = r / (1 - 2^-53), so the top draw reaches max (Ruby's inclusive float range)", lo, hi)
		summary = fmt.Sprintf("table %s s by retry, times rand(%v..%v), truncated", list, lo, hi)
	}
	return &model{
		name:         "resque_retry",
		release:      "1.8.1",
		system:       "resque-retry (Ruby), Resque::Plugins::ExponentialBackoff",
		version:      "1.8.1 (f75421a98b91dcbe873dab4bfad4ead99e597009)",
		source:       "https://github.com/lantins/resque-retry/blob/f75421a98b91dcbe873dab4bfad4ead99e597009/lib/resque/plugins/exponential_backoff.rb",
		summary:      fmt.Sprintf("%s; %s, then give up", summary, ltext),
		formula:      fmt.Sprintf("i = retry_attempt = attempt - 1; delay_s = trunc((backoff_strategy[i] || backoff_strategy.last) * multiplicand), backoff_strategy [%s], %s", list, mult),
		draw:         draw,
		exhaustion:   exh,
		terminal:     "give up: the failure stays in Resque's failed queue",
		maxAttempts:  total,
		onExhaustion: policy.DeadLetter,
		jitter:       lo != hi,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			base := float64(table[min(n-1, len(table)-1)])
			m := lo
			if lo != hi {
				m = lo + min(1, d.next()/maxBelowOne)*(hi-lo)
			}
			return seconds(math.Trunc(base * m))
		},
	}, nil
}

var zzzJobsSettings = []setting{
	{key: "max_attempts", kind: kInt, def: "20", lo: 1, hi: math.MaxInt32, help: "Job max_attempts: total attempts"},
}

func zzzJobsModel(c conf) (*model, error) {
	ma := c.int("max_attempts")
	return &model{
		name:    "zzz_jobs",
		release: "0.3.1-beta.1",
		system:  "zzz_jobs (Zig; published as pidgn_jobs), RetryStrategy .exponential",
		version: "pidgn_jobs 0.3.1-beta.1 (c85a4c4e9c87045639babb1a519fd8f37cf0b841)",
		source:  "https://github.com/seemsindie/pidgn_jobs/blob/c85a4c4e9c87045639babb1a519fd8f37cf0b841/src/retry.zig",
		summary: fmt.Sprintf("c = min(15*2^attempt, 3600) s plus [0, c/4 - 1] s; %d attempts, then discarded", ma),
		formula: "n = attempt; capped = min(15 * 2**min(n, 30), 3600); J = max(capped / 4, 1) (integer division); delay_s = capped + jitter, jitter in [0, J - 1]",
		draw: "jitter = (n*7 + now) mod J with now the Unix time in seconds; read as floor(r * J), " +
			"treating now as uniform",
		exhaustion:   fmt.Sprintf("max_attempts %d total: discarded when attempt >= %[1]d", ma),
		terminal:     "discarded (kept in the store in state discarded)",
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			c := min(sat.MulInt(15, sat.PowInt(2, int64(min(n, 30)))), 3600)
			j := max(c/4, 1)
			return satSeconds(c + randInt(d.next(), j))
		},
	}, nil
}

var chasquiMQSettings = []setting{
	{key: "max_attempts", kind: kInt, def: "3", lo: 1, hi: math.MaxInt32, help: "ConsumerConfig max_attempts: total attempts"},
}

func chasquiMQModel(c conf) (*model, error) {
	ma := c.int("max_attempts")
	return &model{
		name:    "chasquimq",
		release: "0.1.0",
		system:  "ChasquiMQ (Rust, Redis Streams), ConsumerConfig max_attempts",
		version: "0.1.0 (cd30b0889437005a26c482826ecf3435f0960cdf)",
		source:  "https://github.com/jotarios/chasquimq/blob/cd30b0889437005a26c482826ecf3435f0960cdf/chasquimq/src/consumer/retry.rs",
		summary: fmt.Sprintf("min(100ms*2^(attempt-1), 30s) plus [0, 99] ms; %d attempts, then the dead-letter stream", ma),
		formula: "n = attempt; capped_ms = trunc(min(100 * 2.0**(n - 1), 30000)); delay_ms = capped_ms + jitter, jitter in [0, 99] (after the cap)",
		draw:    "fastrand_jitter(100) = xorshift state % 100, read as floor(r * 100)",
		exhaustion: fmt.Sprintf("max_attempts %d total: dead-lettered when the next attempt would be >= %[1]d ", ma) +
			"(attempts 1 and 2 are retried)",
		terminal:     "dead-letter stream (DlqReason::RetriesExhausted)",
		maxAttempts:  int(ma),
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			ms := int64(min(100*math.Pow(2, float64(n-1)), 30000))
			return time.Duration(ms+randInt(d.next(), 100)) * time.Millisecond
		},
	}, nil
}

var flareSettings = []setting{
	{key: "MaxAttempts", kind: kInt, def: "3", lo: math.MinInt32, hi: math.MaxInt32, help: "MaxAttempts: total attempts, 1 to 100; Flare resets a value outside 1-100 to 3"},
}

func flareModel(c conf) (*model, error) {
	ma := c.int("MaxAttempts")
	if ma < 1 || ma > 100 {
		ma = 3 // the Retry Strategies documentation: outside 1-100 the default 3 applies
	}
	return &model{
		name:    "flare",
		release: "docs",
		system:  "Zeridion Flare (.NET), documented retry strategy",
		version: "documentation (no public source)",
		source:  "no public source: the Retry Strategies documentation (shared/seeds/003_30ca8832de0257f2.txt)",
		summary: fmt.Sprintf("15s*2^(attempt-1) plus [0, 3000] ms, no cap; %d attempts, then DeadLetter (from the docs)", ma),
		formula: "n = attempt; delay_ms = 15000 * 2**(n - 1) + jitter, jitter in [0, 3000] ms; no cap documented",
		draw:    "random(0-3000ms) read as floor(r * 3001) whole milliseconds",
		exhaustion: fmt.Sprintf("MaxAttempts %d total: dead-lettered when AttemptNumber >= MaxAttempts after a ", ma) +
			"failure",
		terminal:     "DeadLetter state",
		maxAttempts:  int(ma),
		onExhaustion: policy.DeadLetter,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			base := shifted(15*time.Second, n-1, maxDuration)
			j := time.Duration(randInt(d.next(), 3001)) * time.Millisecond
			return time.Duration(sat.AddInt(int64(base), int64(j)))
		},
	}, nil
}
