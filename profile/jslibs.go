package profile

import (
	"fmt"
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Node retry libraries and job queues from npm, and Ruby's Delayed::Job from
// Debian, each verified by verify/ against the release its profile pins.

// jsModels returns their profiles.
func jsModels() []*model {
	return []*model{
		configured(pRetrySettings, pRetryModel), configured(beeQueueSettings, beeQueueModel),
		configured(delayedJobSettings, delayedJobModel), configured(expBackoffSettings, expBackoffModel),
		configured(graphileSettings, graphileModel),
		configured(pgBossSettings, pgBossModel),
	}
}

// pRetryMaxDelay is p-retry's maximumDelay, 2^31 - 1 ms: the longest wait
// setTimeout holds.
const pRetryMaxDelay = 1<<31 - 1

var pRetrySettings = []setting{
	{key: "retries", kind: kIntNone, def: "10", lo: 0, hi: math.MaxInt32, help: "retries after the first attempt; Infinity retries forever"},
	{key: "factor", kind: kFloat, def: "2", lo: 0, hi: 1e6, help: "the exponential factor"},
	{key: "minTimeout", kind: kFloat, def: "1000", lo: 0, hi: 1e15, help: "the first wait, milliseconds"},
	{key: "maxTimeout", kind: kFloat, def: "1e300", lo: 0, hi: 1e300, help: "the cap, milliseconds (Infinity by default; rounded up)"},
	{key: "randomize", kind: kBool, def: "false", help: "multiply the wait by Math.random() + 1"},
}

func pRetryModel(c conf) (*model, error) {
	rt, fac, minT, maxT, rnd := c.int("retries"), c.float("factor"), c.float("minTimeout"), c.float("maxTimeout"), c.bool("randomize")
	capMS := min(math.Ceil(maxT), pRetryMaxDelay)
	ma, exh := int(rt+1), fmt.Sprintf("retries %d: retried while retriesLeft = retries - retriesConsumed > 0 (index.js 176-183), so %d attempts", rt, rt+1)
	if rt < 0 {
		ma, exh = 0, "retries Infinity: retried until it succeeds"
	}
	summary := fmt.Sprintf("min(round(%s * %s^(attempt-1)), %s) ms", fmtNum(minT), fmtNum(fac), fmtNum(capMS))
	if rnd {
		summary = fmt.Sprintf("min(round([1, 2) * %s * %s^(attempt-1)), %s) ms", fmtNum(minT), fmtNum(fac), fmtNum(capMS))
	}
	return &model{
		name:    "p_retry",
		release: "9.0.0",
		system:  "p-retry (Node.js)",
		version: "p-retry 9.0.0 (npm)",
		source:  "https://github.com/sindresorhus/p-retry/blob/v9.0.0/index.js (maximumDelay 86, calculateDelay 88-102, onAttemptFailure 158-200, defaults 257-264)",
		summary: fmt.Sprintf("%s; %s, then the last error", summary, attemptsText(ma)),
		formula: fmt.Sprintf("attempt = retriesConsumed + 1; random = randomize ? Math.random() + 1 : 1; timeout = Math.round(random * minTimeout %s * factor %s ** (attempt - 1)); "+
			"delay_ms = min(timeout, Math.ceil(maxTimeout), 2**31 - 1); minTimeout 0 gives 0", fmtNum(minT), fmtNum(fac)),
		draw:         map[bool]string{true: "Math.random() = r, held at most 1 - 2**-52 (V8's largest)", false: ""}[rnd],
		exhaustion:   exh,
		terminal:     "pRetry rejects with the last error",
		maxAttempts:  ma,
		onExhaustion: policy.Discard,
		jitter:       rnd && minT > 0,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			if minT == 0 {
				return 0
			}
			random := 1.0
			if rnd {
				random = min(d.next(), v8MaxRandom) + 1
			}
			t := math.Round(random * minT * math.Pow(fac, float64(n-1)))
			return nanos(min(t, capMS) * float64(time.Millisecond))
		},
	}, nil
}

var beeQueueSettings = []setting{
	{key: "retries", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "job.retries(n): retries after the first run (0 by default: no retry)"},
	{key: "strategy", kind: kEnum, def: "immediate", enum: []string{"immediate", "fixed", "exponential"}, help: "job.backoff(strategy, delay); immediate (the default without backoff) retries at once"},
	{key: "delay", kind: kInt, def: "1", lo: 1, hi: 1 << 53, help: "job.backoff delay, whole milliseconds (a positive safe integer)"},
}

func beeQueueModel(c conf) (*model, error) {
	rt, st, dl := c.int("retries"), c.str("strategy"), c.int("delay")
	summary := map[string]string{"immediate": "0 ms", "fixed": fmt.Sprintf("%d ms flat", dl), "exponential": fmt.Sprintf("%d ms * 2^(attempt-1)", dl)}[st]
	formula := map[string]string{
		"immediate":   "strategy immediate: 0 ms (backoff.js 5)",
		"fixed":       fmt.Sprintf("strategy fixed: job.options.backoff.delay = %d ms (backoff.js 7)", dl),
		"exponential": fmt.Sprintf("strategy exponential: returns backoff.delay, then doubles it in the job's options (backoff.js 9-14): %d * 2**(attempt - 1) ms", dl),
	}[st]
	exh := fmt.Sprintf("retries %d: computeDelay gives -1 once options.retries is 0 (job.js 232-240), each retry decrements it (queue.js 622-623), so %d runs", rt, rt+1)
	return &model{
		name:         "bee_queue",
		release:      "2.0.0",
		system:       "Bee-Queue (Node.js, Redis), job.backoff " + st,
		version:      "bee-queue 2.0.0 (npm)",
		source:       "https://github.com/bee-queue/bee-queue/blob/v2.0.0/lib/backoff.js (strategies); lib/job.js (retries 116-122, backoff 148-161, computeDelay 232-240); lib/queue.js (_finishJob 593-623)",
		summary:      fmt.Sprintf("%s, no jitter; %s, then failed", summary, attemptsText(int(rt+1))),
		formula:      formula,
		draw:         "",
		exhaustion:   exh,
		terminal:     "the job's status becomes failed (kept unless removeOnFailure)",
		maxAttempts:  int(rt + 1),
		onExhaustion: policy.DeadLetter,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			switch st {
			case "fixed":
				return time.Duration(sat.MulInt(dl, int64(time.Millisecond)))
			case "exponential":
				// JavaScript doubles a float: exact up to 2^1023, then Infinity.
				ms := float64(dl) * math.Pow(2, float64(n-1))
				return nanos(ms * float64(time.Millisecond))
			}
			return 0
		},
	}, nil
}

var delayedJobSettings = []setting{
	{key: "max_attempts", kind: kInt, def: "25", lo: 1, hi: math.MaxInt32, clamp: true, help: "Delayed::Worker.max_attempts (or the job's max_attempts): total attempts; below 1 is 1 (attempts += 1 < max_attempts)"},
	{key: "destroy_failed_jobs", kind: kBool, def: "true", help: "Delayed::Worker.destroy_failed_jobs: true deletes a job that used up its attempts; false keeps it with failed_at set"},
}

func delayedJobModel(c conf) (*model, error) {
	ma, destroy := c.int("max_attempts"), c.bool("destroy_failed_jobs")
	term, act := "the job is destroyed (destroy_failed_jobs true)", policy.Discard
	if !destroy {
		term, act = "the job is kept with failed_at set (destroy_failed_jobs false)", policy.DeadLetter
	}
	return &model{
		name:         "delayed_job",
		release:      "4.1.9",
		system:       "Delayed::Job (Ruby), Worker#reschedule",
		version:      "delayed_job 4.1.9 (Debian ruby-delayed-job 4.1.9-1.1)",
		source:       "https://github.com/collectiveidea/delayed_job/blob/v4.1.9/lib/delayed/backend/base.rb (reschedule_at 106-112); lib/delayed/worker.rb (DEFAULT_MAX_ATTEMPTS 14, destroy_failed_jobs 53, reschedule 247-257, failed 259-270)",
		summary:      fmt.Sprintf("attempt^4 + 5 seconds, no jitter; %d attempts, then %s", ma, term),
		formula:      "attempts = attempt (job.attempts += 1 before reschedule_at); run_at = db_time_now + attempts**4 + 5 seconds",
		draw:         "",
		exhaustion:   fmt.Sprintf("max_attempts %d: rescheduled while (job.attempts += 1) < %[1]d (worker.rb 248), so %[1]d attempts", ma),
		terminal:     term,
		maxAttempts:  int(ma),
		onExhaustion: act,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			return satSeconds(sat.AddInt(sat.PowInt(int64(n), 4), 5))
		},
	}, nil
}

var expBackoffSettings = []setting{
	{key: "numOfAttempts", kind: kInt, def: "10", lo: math.MinInt32, hi: math.MaxInt32, help: "total attempts (below 1 is 1)"},
	{key: "startingDelay", kind: kFloat, def: "100", lo: 0, hi: 1e15, help: "the first delay, milliseconds"},
	{key: "timeMultiple", kind: kFloat, def: "2", lo: 0, hi: 1e6, help: "the factor per retry"},
	{key: "maxDelay", kind: kFloat, def: "1e300", lo: 0, hi: 1e300, help: "the cap, milliseconds (Infinity by default)"},
	{key: "jitter", kind: kEnum, def: "none", enum: []string{"none", "full"}, help: "none, or full: Math.round(Math.random() * delay)"},
	{key: "delayFirstAttempt", kind: kBool, def: "false", help: "true also waits before the first attempt, so the delay after attempt n uses the power n"},
}

func expBackoffModel(c conf) (*model, error) {
	na, start, mult, mx, jit, first := max(c.int("numOfAttempts"), 1), c.float("startingDelay"), c.float("timeMultiple"), c.float("maxDelay"), c.str("jitter"), c.bool("delayFirstAttempt")
	power := "attempt - 1 (SkipFirstDelay: numOfDelayedAttempts = attempt - 1)"
	if first {
		power = "attempt (AlwaysDelay: numOfDelayedAttempts = attempt)"
	}
	formula := fmt.Sprintf("delay = min(startingDelay %s * Math.pow(timeMultiple %s, %s), maxDelay %s) ms (delay.base.js)", fmtNum(start), fmtNum(mult), power, fmtNum(mx))
	summary := fmt.Sprintf("min(%s * %s^(attempt-1), %s) ms", fmtNum(start), fmtNum(mult), fmtNum(mx))
	if jit == "full" {
		formula += "; full jitter: Math.round(Math.random() * delay) (full.jitter.js)"
		summary = "round(uniform(0, " + summary + "))"
	}
	return &model{
		name:         "exponential_backoff",
		release:      "3.1.3",
		system:       "exponential-backoff (Node.js), backOff",
		version:      "exponential-backoff 3.1.3 (npm)",
		source:       "https://github.com/coveooss/exponential-backoff/blob/v3.1.3/src/ (options.ts defaults; delay/delay.base.ts delay; delay/skip-first/skip-first.delay.ts; jitter/full/full.jitter.ts; backoff.ts attemptLimitReached)",
		summary:      fmt.Sprintf("%s; %d attempts, then the last error", summary, na),
		formula:      formula,
		draw:         map[bool]string{true: "Math.random() = r, held at most 1 - 2**-52 (V8's largest)", false: ""}[jit == "full"],
		exhaustion:   fmt.Sprintf("numOfAttempts %d: stops when attemptNumber >= %[1]d (backoff.js attemptLimitReached)", na),
		terminal:     "backOff rejects with the last error",
		maxAttempts:  int(na),
		onExhaustion: policy.Discard,
		jitter:       jit == "full",
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			p := n - 1
			if first {
				p = n
			}
			v := min(start*math.Pow(mult, float64(p)), mx)
			if jit == "full" {
				v = math.Round(min(d.next(), v8MaxRandom) * v)
			}
			return nanos(v * float64(time.Millisecond))
		},
	}, nil
}

// graphileMaxAttempts is the largest max_attempts graphile-worker stores: its
// jobs table keeps a smallint (add_job casts max_attempts::smallint).
const graphileMaxAttempts = math.MaxInt16

var graphileSettings = []setting{
	{key: "maxAttempts", kind: kInt, def: "25", lo: 1, hi: graphileMaxAttempts, help: "the job's maxAttempts (addJob spec, add_job max_attempts): total attempts, at least 1; stored as a smallint"},
}

func graphileModel(c conf) (*model, error) {
	ma := c.int("maxAttempts")
	return &model{
		name:    "graphile_worker",
		release: "0.18.0",
		system:  "Graphile Worker (Node.js, PostgreSQL), failJob",
		version: "graphile-worker 0.18.0 (npm)",
		source: "graphile-worker@0.18.0 (npm) dist/sql/failJobs.js:20,49,75 (run_at on failure); dist/sql/getJobs.js:186 (attempts + 1 when a job is taken); " +
			"dist/generated/sql.js:1181-1182,1191 (attempts, max_attempts smallint default 25, is_available = locked_at is null and attempts < max_attempts)",
		summary: fmt.Sprintf("exp(min(attempt, 10)) seconds (2.718s, 7.389s, ... 22026.466s), to the microsecond, no jitter; %s, then kept as permanently failed", attemptsText(int(ma))),
		formula: "attempts = attempt (getJobs sets attempts = attempts + 1 when the run starts); " +
			"run_at = greatest(now(), run_at) + (exp(least(attempts, 10)) * interval '1 second') (failJobs.js:49), " +
			"run_at <= now() for a job that ran, so delay = exp(min(attempt, 10)) s, rounded to the microsecond by PostgreSQL's interval multiplication",
		draw:         "",
		exhaustion:   fmt.Sprintf("maxAttempts %d: a job is taken only while attempts < max_attempts (is_available), so after attempt %[1]d it is not run again", ma),
		terminal:     "the job stays in the jobs table with attempts = max_attempts and its last_error (permanently failed), never taken again",
		maxAttempts:  int(ma),
		onExhaustion: policy.DeadLetter,
		delay: func(n int, _ time.Duration, _ draws) time.Duration {
			us := math.RoundToEven(math.Exp(float64(min(n, 10))) * 1e6)
			return time.Duration(us) * time.Microsecond
		},
	}, nil
}
