package profile

import (
	"fmt"
	"math"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// pg-boss (Node.js, PostgreSQL): the delay is computed in SQL, by the
// statement that fails a job, from the job's retry columns.

// pgMaxRandom is the largest value PostgreSQL 15's random() returns:
// pg_prng_double gives a multiple of 2^-52 in [0, 1).
const pgMaxRandom = 1 - 0x1p-52

// pgBossMaxExp is the exponent's cap in failJobsBody: 2 ^ LEAST(16,
// retry_count + 1).
const pgBossMaxExp = 16

var pgBossSettings = []setting{
	{key: "retryLimit", kind: kInt, def: "2", lo: 0, hi: math.MaxInt32, help: "retries after the first attempt (an integer column; 2 by default)"},
	{key: "retryDelay", kind: kInt, def: "0", lo: 0, hi: math.MaxInt32, help: "whole seconds: the wait without backoff, the base with it (below 1 counts as 1 with backoff)"},
	{key: "retryBackoff", kind: kBool, def: "false", help: "true: exponential backoff with jitter, retryDelay * 2^(attempt-1) * (1 + random())"},
	{key: "retryDelayMax", kind: kIntNone, def: "None", lo: 0, hi: math.MaxInt32, help: "the backoff's cap, whole seconds (None: no cap); pg-boss accepts it only with retryBackoff true"},
}

func pgBossModel(c conf) (*model, error) {
	lim, dl, bo, mx := c.int("retryLimit"), c.int("retryDelay"), c.bool("retryBackoff"), c.int("retryDelayMax")
	if mx >= 0 && !bo {
		return nil, badValue("pg_boss", "retryDelayMax", c, "can only be set if retryBackoff is true (pg-boss rejects it: attorney.js validateRetryConfig)")
	}
	base := max(dl, 1)
	capText := ""
	if mx >= 0 {
		capText = fmt.Sprintf("min(%d, ", mx)
	}
	closeCap := map[bool]string{true: ")", false: ""}[mx >= 0]
	summary := fmt.Sprintf("%d s flat, no jitter", dl)
	formula := fmt.Sprintf("retryBackoff false: start_after = job_now() + retry_delay %d * interval '1' (%d s) (dist/plans.js 3087)", dl, dl)
	jitter := false
	if bo {
		summary = fmt.Sprintf("%s%d * 2^(min(attempt,16)-1) * (1 + random())%s s", capText, base, closeCap)
		formula = fmt.Sprintf("retry_count = attempt - 1 (the first claim leaves it 0, each later claim adds 1: dist/plans.js 2560); "+
			"h = 2 ^ LEAST(16, retry_count + 1) / 2; s = LEAST(retry_delay_max %s, GREATEST(retry_delay %d, 1) * (h + h * random())) (NULL: no cap); "+
			"start_after = job_now() + s * interval '1s', rounded half-even to the microsecond (interval_mul) (dist/plans.js 3086-3095)",
			map[bool]string{true: fmt.Sprint(mx), false: "NULL"}[mx >= 0], dl)
		jitter = mx != 0
	}
	ma := int(lim + 1)
	return &model{
		name:    "pg_boss",
		release: "12.38.0",
		system:  "pg-boss (Node.js, PostgreSQL), failJobs",
		version: "pg-boss 12.38.0 (npm)",
		source: "pg-boss 12.38.0 from npm, dist/plans.js (QUEUE_DEFAULTS 85-94; fetchNextJob retry_count 2560; failJobsBody 3021-3095: " +
			"state 3024-3027, start_after 3086-3095); dist/attorney.js 623-628 (validateRetryConfig)",
		summary:      fmt.Sprintf("%s; %s, then failed", summary, attemptsText(ma)),
		formula:      formula,
		draw:         map[bool]string{true: "PostgreSQL random() = r (PostgreSQL 15: a multiple of 2**-52, held at most 1 - 2**-52)", false: ""}[jitter],
		exhaustion:   fmt.Sprintf("retryLimit %d: state retry while retry_count < retry_limit (dist/plans.js 3025), retry_count = attempt - 1, so %d attempts", lim, ma),
		terminal:     "the job's state becomes failed (kept in the job table, and copied to the dead letter queue when one is set)",
		maxAttempts:  ma,
		onExhaustion: policy.DeadLetter,
		jitter:       jitter,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			if !bo {
				return time.Duration(dl) * time.Second
			}
			h := math.Ldexp(1, min(n, pgBossMaxExp)-1)
			r := min(d.next(), pgMaxRandom)
			s := float64(base) * (h + float64(h*r))
			if mx >= 0 {
				s = min(float64(mx), s)
			}
			return pgMicros(s)
		},
	}, nil
}

// pgMicros is s * interval '1s' as PostgreSQL computes it: rint(1e6 * s)
// microseconds (round half to even), saturating at the largest Duration
// where PostgreSQL itself would report the interval or timestamp out of
// range.
func pgMicros(s float64) time.Duration {
	us := math.RoundToEven(1e6 * s)
	if !(us > 0) {
		return 0
	}
	if us >= float64(math.MaxInt64/int64(time.Microsecond)) {
		return maxDuration
	}
	return time.Duration(us) * time.Microsecond
}
