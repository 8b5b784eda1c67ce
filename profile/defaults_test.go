package profile_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// A bare profile name is the system's own defaults, read from its source at
// the release the profile pins, even where that means no retry.
func TestBareNameIsTheSystemsOwnDefaults(t *testing.T) {
	const s = time.Second
	for _, c := range []struct {
		spec    string
		attempt int
		r       float64
		delay   time.Duration
		max     int
		why     string
	}{
		// celery/app/autoretry.py 23: retry_backoff = False; Task.default_retry_delay = 180.
		{"celery", 2, 0.5, 180 * s, 4, "retry_backoff False: every retry waits default_retry_delay 180 s"},
		// bullmq job.js 493: no backoff option, the job is retried at once; attempts defaults to 1.
		{"bullmq", 1, 0.5, 0, 1, "no backoff: 0 ms; attempts 1"},
		{"bullmq:attempts=3", 2, 0.5, 0, 3, "attempts 3 without backoff: retried at once"},
		// activejob exceptions.rb 64: retry_on wait: 3.seconds, attempts: 5; retry_jitter 0.0 without load_defaults 6.1.
		{"activejob", 2, 0.5, 3 * s, 5, "wait 3.seconds, jitter 0.0"},
		{"activejob:load_defaults=8.1", 2, 0.5, 3225 * time.Millisecond, 5, "3 + 0.5 * 3 * 0.15 = 3.225 s"},
		{"activejob:load_defaults=6.0", 2, 0.5, 3 * s, 5, "retry_jitter 0.15 starts with load_defaults 6.1"},
		// 8.1.3.1 determine_delay: wait.to_i, so 2.5.seconds is 2 s: 2 + 0.5 * 2 * 0.15 = 2.15 s.
		{"activejob:wait=2.5,load_defaults=8.1", 1, 0.5, 2150 * time.Millisecond, 5, "wait truncated with .to_i"},
		// botocore's default retry mode is legacy: r * 2^(attempt-1) s, no cap, 5 attempts (_retry.json).
		{"aws", 6, 0.5, 16 * s, 5, "legacy mode: no cap of 20 s"},
		{"aws:mode=standard", 6, 0.5, 10 * s, 3, "standard: r * min(2^5, 20)"},
		// pg-boss 12.38.0 dist/plans.js 85-94: retry_limit 2, retry_delay 0, retry_backoff false.
		{"pg_boss", 2, 0.5, 0, 3, "retryLimit 2, retryDelay 0: retried at once, 3 attempts"},
		{"pg_boss:retryBackoff=true", 1, 0.5, 1500 * time.Millisecond, 3, "GREATEST(0, 1) * (1 + 1 * 0.5) = 1.5 s"},
		// graphile-worker 0.18.0 generated/sql.js 2522: coalesce(spec.max_attempts, 25); failJobs.js 49: exp(least(attempts, 10)) s.
		{"graphile_worker", 12, 0.5, 22026465795 * time.Microsecond, 25, "exp(least(12, 10)) = exp(10) s = 22026465795 us; 25 attempts"},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if got := p.DelayAt(c.attempt, c.r); got != c.delay {
			t.Errorf("%s: DelayAt(%d, %v) = %v, want %v (%s)", c.spec, c.attempt, c.r, got, c.delay, c.why)
		}
		if p.MaxAttempts() != c.max {
			t.Errorf("%s: MaxAttempts() = %d, want %d (%s)", c.spec, p.MaxAttempts(), c.max, c.why)
		}
	}
}

// Faktory's manager/retry.go drops a job whose retry is 0 (lines 133-135)
// and sends one whose retry is negative to the morgue without a retry
// (137-140).
func TestFaktoryRetryZeroDropsAndNegativeGoesToTheMorgue(t *testing.T) {
	for _, c := range []struct {
		spec string
		want policy.Action
	}{
		{"faktory:retry=0", policy.Discard},
		{"faktory:retry=-1", policy.DeadLetter},
		{"faktory:retry=-7", policy.DeadLetter},
		{"faktory:retry=2", policy.DeadLetter},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if p.OnExhaustion() != c.want {
			t.Errorf("%s: OnExhaustion() = %v, want %v (terminal %q)", c.spec, p.OnExhaustion(), c.want, p.Terminal())
		}
		if c.spec != "faktory:retry=2" && p.MaxAttempts() != 1 {
			t.Errorf("%s: MaxAttempts() = %d, want 1 (no retry)", c.spec, p.MaxAttempts())
		}
	}
}

// Values the systems accept that retrykit once refused: each is modelled.
func TestValuesTheSystemsAccept(t *testing.T) {
	const s = time.Second
	// Flare resets MaxAttempts outside 1-100 to 3.
	for _, spec := range []string{"flare:MaxAttempts=150", "flare:MaxAttempts=0", "flare:MaxAttempts=-5"} {
		if p, err := profile.Parse(spec); err != nil || p.MaxAttempts() != 3 {
			t.Errorf("%s: MaxAttempts() = %d, %v; want 3 (Flare resets values outside 1-100)", spec, p.MaxAttempts(), err)
		}
	}
	if p, _ := profile.Parse("flare:MaxAttempts=100"); p.MaxAttempts() != 100 {
		t.Errorf("flare:MaxAttempts=100: MaxAttempts() = %d, want 100", p.MaxAttempts())
	}
	// resque-retry retry_limit -1, or any limit below 0, retries forever
	// (retry_limit_reached? answers false unless retry_limit >= 0, retry.rb 338-346).
	for _, spec := range []string{"resque_retry:retry_limit=-1", "resque_retry:retry_limit=-40"} {
		p, err := profile.Parse(spec)
		if err != nil || p.MaxAttempts() != 0 || p.DelayAt(1000, 0) != 6*time.Hour {
			t.Errorf("%s: %v, MaxAttempts %d, delay %v; want unlimited, 6h", spec, err, p.MaxAttempts(), p.DelayAt(1000, 0))
		}
	}
	// Values below a setting's least that the system itself takes, and reads
	// as that least (each system's line in its help): the same attempts.
	for spec, want := range map[string]int{
		"asynq:MaxRetry=-1":          1, // MaxRetry(n) sets n = 0 when n < 0
		"celery:max_retries=-2":      1, // retries > max_retries on the first failure
		"activejob:attempts=0":       1, // executions < attempts is false at once
		"activejob:attempts=-4":      1,
		"delayed_job:max_attempts=0": 1, // (attempts += 1) < max_attempts
		"retryablehttp:RetryMax=-1":  1, // remain = RetryMax - i <= 0
		"sidekiq:retry=-1":           1, // count 0 >= max_retry_attempts -1: exhausted
		"sidekiq6:retry=-3":          1,
		"river:MaxAttempts=0":        25, // cmp.Or: 0 is unset, River's default 25
	} {
		p, err := profile.Parse(spec)
		if err != nil || p.MaxAttempts() != want {
			t.Errorf("%s: %v, MaxAttempts %d; want %d", spec, err, p.MaxAttempts(), want)
		}
	}
	// A negative Sidekiq retry is an integer, so the job goes to the Dead set
	// as with retry 0; only retry false discards it.
	if p, _ := profile.Parse("sidekiq:retry=-1"); p.OnExhaustion() != policy.DeadLetter {
		t.Errorf("sidekiq:retry=-1: %v after the first failure, want dead_letter (as retry 0)", p.OnExhaustion())
	}
	if _, err := profile.Parse("asynq:MaxRetry=-2147483649"); !errors.Is(err, profile.ErrBadValue) {
		t.Errorf("asynq:MaxRetry below the int32 range: %v, want ErrBadValue", err)
	}
	// p-retry's retries: Infinity is written as JavaScript writes it, and is
	// the same unlimited profile as None.
	for _, spec := range []string{"p_retry:retries=Infinity", "p_retry:retries=None"} {
		if p, err := profile.Parse(spec); err != nil || p.MaxAttempts() != 0 {
			t.Errorf("%s: %v, MaxAttempts %d; want unlimited", spec, err, p.MaxAttempts())
		}
	}
	// The multiplicand range 0.5..1.5 includes both ends: the top draw gives
	// trunc(600 * 1.5) = 900 s at the third attempt, r = 0 trunc(600 * 0.5) = 300 s.
	p, err := profile.Parse("resque_retry:retry_delay_multiplicand_min=0.5,retry_delay_multiplicand_max=1.5")
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := p.Bounds(3); lo != 300*time.Second || hi != 900*time.Second {
		t.Errorf("resque_retry multiplicands 0.5..1.5: bounds at attempt 3 [%v, %v], want [5m, 15m]", lo, hi)
	}
	// A min above the max raises on extend: refused, naming the setting.
	_, err = profile.Parse("resque_retry:retry_delay_multiplicand_min=2,retry_delay_multiplicand_max=1")
	var se *profile.SettingError
	if !errors.As(err, &se) || se.Key != "retry_delay_multiplicand_min" || !errors.Is(err, profile.ErrBadValue) {
		t.Errorf("multiplicand min 2 > max 1: %v, want a SettingError for retry_delay_multiplicand_min", err)
	}
	// gax Multiplier 1.005: cur = time.Duration(float64(cur) * 1.005): 1e9 * 1.005 is
	// 1004999999.9999999 in float64, so 1004999999; then 1010024998.995 -> 1010024998;
	// the top draw gives 1 + (cur - 1) = cur.
	p, err = profile.Parse("gax:Initial=1s,Max=30s,Multiplier=1.005")
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := p.Bounds(3); lo != 1 || hi != 1010024998 {
		t.Errorf("gax Multiplier 1.005: Bounds(3) = [%d, %d], want [1, 1010024998]", lo, hi)
	}
	// Attempts far past the envelope's settling finish quickly.
	if hi := p.DelayAt(math.MaxInt, maxDraw); hi != 30*s {
		t.Errorf("gax Multiplier 1.005: DelayAt(MaxInt) = %v, want 30s", hi)
	}
	// grpc_connect Multiplier 1.005 (1e9 * 1.005 = 1004999999.9999999 in float64,
	// truncated) and 0.5 (the wait shrinks: 1s * 0.5 * 0.5).
	p, err = profile.Parse("grpc_connect:Multiplier=1.005,Jitter=0")
	if err != nil || p.DelayAt(2, 0) != 1004999999 {
		t.Errorf("grpc_connect:Multiplier=1.005: %v, DelayAt(2) = %v, want 1.004999999s", err, p.DelayAt(2, 0))
	}
	p, err = profile.Parse("grpc_connect:Multiplier=0.5,Jitter=0")
	if err != nil || p.DelayAt(3, 0) != 250*time.Millisecond {
		t.Errorf("grpc_connect:Multiplier=0.5: %v, DelayAt(3) = %v, want 250ms", err, p.DelayAt(3, 0))
	}
}

// TestGRPCValuesGRPCAccepts: settings grpc-go v1.84.0 accepts are accepted,
// with grpc-go's result. Jitter above 1 (internal/backoff/backoff.go
// L66-L72: b *= 1 + Jitter*(2r - 1), then 0 if b < 0); any backoffMultiplier
// above 0 (service_config.go L271-L277 checks only > 0); and the channel's
// grpc.WithMaxCallAttempts (dialoptions.go L809-L816: n < 2 means 5), to
// which maxAttempts is capped (service_config.go L288-L290).
func TestGRPCValuesGRPCAccepts(t *testing.T) {
	p, err := profile.Parse("grpc_connect:Jitter=2")
	if err != nil {
		t.Fatal(err)
	}
	// Attempt 2: b = 1.6s; r = 0: 1.6s * (1 - 2) < 0, so 0; r = 0.75: 1.6s * (1 + 2*0.5) = 3.2s.
	if lo, mid := p.DelayAt(2, 0), p.DelayAt(2, 0.75); lo != 0 || mid != 3200*time.Millisecond {
		t.Errorf("grpc_connect:Jitter=2: DelayAt(2, 0) = %v, DelayAt(2, 0.75) = %v, want 0 and 3.2s", lo, mid)
	}
	if _, err := profile.Parse("grpc_connect:Jitter=-0.2"); err == nil {
		t.Error("grpc_connect:Jitter=-0.2 accepted; a negative jitter is refused (RK-248)")
	}
	p, err = profile.Parse("grpc_retry:backoffMultiplier=1e-300")
	if err != nil {
		t.Fatal(err)
	}
	// Attempt 1: 0.1s * 1e-300^0 * 1.0 = 100ms; attempt 2: 1e8 * 1e-300 ns * 1.2 < 1 ns, so 0.
	if a, b := p.DelayAt(1, 0.5), p.DelayAt(2, maxDraw); a != 100*time.Millisecond || b != 0 {
		t.Errorf("grpc_retry:backoffMultiplier=1e-300: DelayAt(1) = %v, DelayAt(2) = %v, want 100ms and 0", a, b)
	}
	for _, c := range []struct {
		spec string
		want int
	}{
		{"grpc_retry:maxAttempts=9", 5},
		{"grpc_retry:maxAttempts=9,maxCallAttempts=7", 7},
		{"grpc_retry:maxAttempts=3,maxCallAttempts=100", 3},
		{"grpc_retry:maxAttempts=9,maxCallAttempts=1", 5},
		{"grpc_retry:maxAttempts=9,maxCallAttempts=-2147483648", 5},
		{"grpc_retry:maxAttempts=2147483647,maxCallAttempts=2147483647", 2147483647},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil || p.MaxAttempts() != c.want {
			t.Errorf("%s: %v, MaxAttempts() = %d, want %d", c.spec, err, p.MaxAttempts(), c.want)
		}
	}
}

// maxDraw is the largest draw below 1.
const maxDraw = 0x1.fffffffffffffp-1

// V8's Math.random() is at most 1 - 2^-52, so BullMQ's jitter never gives
// the delay itself: for 1000 ms and jitter 0.5 the top is 999 ms.
func TestBullMQJitterTopIsV8sLargestRandom(t *testing.T) {
	p, err := profile.Parse("bullmq:type=fixed,delay=1000,jitter=0.5")
	if err != nil {
		t.Fatal(err)
	}
	// floor((1 - 2^-52) * 1000 * 0.5 + 500) = floor(999.9999999999999) = 999.
	if _, hi := p.Bounds(1); hi != 999*time.Millisecond {
		t.Errorf("Bounds(1) top = %v, want 999ms", hi)
	}
}

// pg-boss's backoff with the largest retryDelay reaches 2^31 * 2^15 * [1, 2)
// seconds from attempt 16, more microseconds than PostgreSQL's interval
// holds (it refuses the fail there): the profile saturates at the largest
// Duration. Attempt 1 at r = 0 is 2147483647 s, which a Duration holds;
// retryDelay 1 stays at 2^15 s from attempt 16 on (LEAST(16, ...)).
func TestPgBossBackoffSaturates(t *testing.T) {
	for _, c := range []struct {
		spec    string
		attempt int
		want    time.Duration
	}{
		{"pg_boss:retryBackoff=true,retryDelay=2147483647,retryLimit=30", 16, math.MaxInt64},
		{"pg_boss:retryBackoff=true,retryDelay=2147483647,retryLimit=30", 1, 2147483647 * time.Second},
		{"pg_boss:retryBackoff=true,retryDelay=1,retryLimit=30", 16, 32768 * time.Second},
		{"pg_boss:retryBackoff=true,retryDelay=1,retryLimit=30", 1000, 32768 * time.Second},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.DelayAt(c.attempt, 0); got != c.want {
			t.Errorf("%s: DelayAt(%d, 0) = %v, want %v", c.spec, c.attempt, got, c.want)
		}
	}
}
