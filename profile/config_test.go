package profile_test

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

const top = 0x1.fffffffffffffp-1

// schedule returns the delays (draw r) a profile retries after, until its
// exhaustion or k retries.
func schedule(t *testing.T, p profile.Profile, k int, r float64) ([]time.Duration, bool) {
	t.Helper()
	var out []time.Duration
	for n := 1; n <= k; n++ {
		d := p.DecideAt(n, r)
		if d.Action != policy.Retry {
			return out, true
		}
		out = append(out, d.Delay)
	}
	return out, false
}

func mustParse(t *testing.T, s string) profile.Profile {
	t.Helper()
	p, err := profile.Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return p
}

// TestConfigured pins each configured schedule to the value the system's
// own formula gives, worked out in the comment beside it.
func TestConfigured(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	for _, c := range []struct {
		spec      string
		r         float64
		want      []time.Duration
		exhausted bool
	}{
		// BullMQ exponential: Math.round(2^(attempt-1) * 3000) ms; attempts 5.
		{"bullmq:type=exponential,delay=3000,attempts=5", 0.5, []time.Duration{3 * s, 6 * s, 12 * s, 24 * s}, true},
		// BullMQ fixed: delay every time.
		{"bullmq:type=fixed,delay=1500,attempts=3", 0.5, []time.Duration{1500 * ms, 1500 * ms}, true},
		// BullMQ jitter 0.5: floor(r * d * 0.5 + d * 0.5); r = 0.5: 0.75 d.
		{"bullmq:type=exponential,delay=1000,jitter=0.5,attempts=3", 0.5, []time.Duration{750 * ms, 1500 * ms}, true},
		// Temporal: 2s * 3^(attempt-1), capped at 60s, unlimited.
		{"temporal:initial_interval=2s,backoff_coefficient=3,maximum_interval=1m", 0, []time.Duration{2 * s, 6 * s, 18 * s, 54 * s, 60 * s}, false},
		// Temporal maximum_attempts 3: two retries.
		{"temporal:maximum_attempts=3", 0, []time.Duration{s, 2 * s}, true},
		// Celery retry_backoff=5, retry_backoff_max=300, no jitter: min(300, 5 * 2^retries).
		{"celery:retry_backoff=5,retry_backoff_max=300,retry_jitter=false,max_retries=7", 0, []time.Duration{5 * s, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 300 * s}, true},
		// Celery 5.6 reads retry_backoff as a float: factor int(max(1.0, 0.5)) = 1, int(2.7) = 2.
		{"celery:retry_backoff=0.5,retry_jitter=false,max_retries=2", 0, []time.Duration{s, 2 * s}, true},
		{"celery:retry_backoff=2.7,retry_jitter=false,max_retries=2", 0, []time.Duration{2 * s, 4 * s}, true},
		// Celery without backoff: default_retry_delay 180s each time.
		{"celery:retry_backoff=false", 0, []time.Duration{180 * s, 180 * s, 180 * s}, true},
		// Sidekiq retry 2: count^4 + 15 + rand(10 (count + 1)) s, r = 0: 15s, 16s.
		{"sidekiq:retry=2", 0, []time.Duration{15 * s, 16 * s}, true},
		{"sidekiq:retry=false", 0, nil, true},
		// River MaxAttempts 3: attempt^4 s * (1 + (0.5*0.2 - 0.1)) = attempt^4 s.
		{"river:MaxAttempts=3", 0.5, []time.Duration{s, 16 * s}, true},
		{"river:max_attempts=2", 0.5, []time.Duration{s}, true},
		// graphile-worker maxAttempts 3: exp(1) s, exp(2) s, rounded to the microsecond.
		{"graphile_worker:maxAttempts=3", 0.5, []time.Duration{2718282 * time.Microsecond, 7389056 * time.Microsecond}, true},
		{"graphile_worker:maxAttempts=1", 0.5, nil, true},
		// asynq MaxRetry 1: n^4 + 15 + rand(30)(n+1), n = 0, r = 0: 15s.
		{"asynq:MaxRetry=1", 0, []time.Duration{15 * s}, true},
		// Faktory retry 0: no retry (the job is dropped).
		{"faktory:retry=0", 0, nil, true},
		// Oban max_attempts 40, r = 0: attempt 1 scales to round(1/40*20) = round(0.5) = 1: 15 + 2 = 17s;
		// attempt 2: round(1.0) = 1: 17s; attempt 3: round(1.5) = 2: 19s.
		{"oban:max_attempts=40", 0, []time.Duration{17 * s, 17 * s, 19 * s}, false},
		// gax Initial 100ms, Max 1s, Multiplier 3: 1ns + floor(r * cur), r = 0: 1ns each.
		{"gax:Initial=100ms,Max=1s,Multiplier=3", top, []time.Duration{100 * ms, 300 * ms, 900 * ms, s, s}, false},
		// gRPC A6: min(0.5s * 2^(n), 2s) * (0.8 + 0.4 * 0.5) = the envelope.
		{"grpc_retry:maxAttempts=5,initialBackoff=0.5s,maxBackoff=2s,backoffMultiplier=2", 0.5, []time.Duration{500 * ms, s, 2 * s, 2 * s}, true},
		// maxAttempts above 5 is treated as 5.
		{"grpc_retry:maxAttempts=9", 0.5, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}, true},
		// botocore max_attempts 4 retries: 5 total; r * 2^(attempt-1) s at r = 0.5.
		{"aws:max_attempts=4", 0.5, []time.Duration{500 * ms, s, 2 * s, 4 * s}, true},
		// aws-sdk-go-v2 MaxAttempts 5, MaxBackoff 300ms: r * min(0.05 * 2^(n-1), 0.3) s.
		{"aws_go:MaxAttempts=5,MaxBackoff=300ms", 0.5, []time.Duration{25 * ms, 50 * ms, 100 * ms, 150 * ms}, true},
		// DynamoDB: 25ms base, 4 attempts.
		{"aws_go:service=dynamodb", 0.5, []time.Duration{12500 * time.Microsecond, 25 * ms, 50 * ms}, true},
		// Active Job attempts 2, jitter 0: 1 + 2 = 3s.
		{"activejob:attempts=2,jitter=0", 0.5, []time.Duration{3 * s}, true},
		// Full jitter base 100ms, cap 1s, r = 0.5: half of min(1s, 100ms * 2^attempt).
		{"full_jitter:base=100ms,cap=1s", 0.5, []time.Duration{100 * ms, 200 * ms, 400 * ms, 500 * ms}, false},
		// resque-retry retry_limit 2: the table's 0 and 1m, then give up.
		{"resque_retry:retry_limit=2", 0, []time.Duration{0, 60 * s}, true},
		// backoff_strategy 5/30: retry_limit ||= its length, 2 (exponential_backoff.rb 78).
		{"resque_retry:backoff_strategy=5/30", 0, []time.Duration{5 * s, 30 * s}, true},
		// Past the table the last entry repeats (backoff_strategy[i] || backoff_strategy.last).
		{"resque_retry:backoff_strategy=10/20,retry_limit=4", 0, []time.Duration{10 * s, 20 * s, 20 * s, 20 * s}, true},
		// Multiplicands 0.5..1.5 at r = 0.5: trunc(60 * 1.0) at the second retry; 2.5..2.5 draws nothing: trunc(3 * 2.5) = 7.
		{"resque_retry:retry_delay_multiplicand_min=0.5,retry_delay_multiplicand_max=1.5,retry_limit=2", 0.5, []time.Duration{0, 60 * s}, true},
		{"resque_retry:retry_delay_multiplicand_min=2.5,retry_delay_multiplicand_max=2.5,backoff_strategy=3/7", 0.5, []time.Duration{7 * s, 17 * s}, true},
		// zzz_jobs max_attempts 2, r = 0: min(15 * 2^1, 3600) = 30s.
		{"zzz_jobs:max_attempts=2", 0, []time.Duration{30 * s}, true},
		{"flare:MaxAttempts=2", 0, []time.Duration{15 * s}, true},
		{"chasquimq:max_attempts=2", 0, []time.Duration{100 * ms}, true},
		// Active Job wait: 3 (seconds), jitter 0.15, r = 0.5: 3 + 0.5 * 3 * 0.15 = 3.225s.
		{"activejob:wait=3,attempts=3,load_defaults=7.1", 0.5, []time.Duration{3225 * ms, 3225 * ms}, true},
		{"activejob:attempts=unlimited,jitter=0,wait=polynomially_longer", 0, []time.Duration{3 * s, 18 * s, 83 * s}, false},
		// grpc_connect BaseDelay 2s, no jitter: 2s, then 2s * 1.6.
		{"grpc_connect:BaseDelay=2s,Jitter=0", 0.5, []time.Duration{2 * s, 3200 * ms, 5120 * ms}, false},
	} {
		p := mustParse(t, c.spec)
		got, ex := schedule(t, p, len(c.want)+1, c.r)
		if !c.exhausted {
			got = got[:min(len(got), len(c.want))]
		}
		if len(got) != len(c.want) || ex != c.exhausted {
			t.Errorf("%s: delays %v (exhausted %t), want %v (exhausted %t)", c.spec, got, ex, c.want, c.exhausted)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: attempt %d: %v, want %v", c.spec, i+1, got[i], c.want[i])
			}
		}
		// The name round-trips through Parse.
		if q := mustParse(t, p.Name()); q.Name() != p.Name() || q.DelayAt(2, c.r) != p.DelayAt(2, c.r) {
			t.Errorf("%s: Name %q does not round-trip (%q)", c.spec, p.Name(), q.Name())
		}
	}
}

// TestAWSGoReleases pins both releases of the AWS SDK for Go's standard
// retryer, and the error classes and x-amz-retry-after of 2.1.
func TestAWSGoReleases(t *testing.T) {
	cur := mustParse(t, "aws_go")
	if lo, hi := cur.Bounds(1); lo != 0 || hi != 49999999 {
		t.Errorf("aws_go attempt 1: [%v, %v], want [0, 49.999999ms] ((1-2^-53) * 0.05s truncated)", lo, hi)
	}
	for _, v := range []string{"aws_go@1.47", "aws_go@v1.47.7", "aws_go@1.47.7"} {
		old := mustParse(t, v)
		if old.Name() != "aws_go@1.47" || old.Release() != "1.47.7" {
			t.Errorf("%s: name %q release %q", v, old.Name(), old.Release())
		}
		// v1.47.7 backoffDelayLegacy: r * 2^attempt s while attempt <= 4, then 20s.
		for _, c := range []struct {
			n    int
			r    float64
			want time.Duration
		}{{1, 0.9999999999, 1999999999}, {2, 0.5, 2 * time.Second}, {4, 0.9999999999, 15999999998}, {5, 0, 20 * time.Second}} {
			if got := old.DelayAt(c.n, c.r); got != c.want {
				t.Errorf("%s: DelayAt(%d, %v) = %v, want %v", v, c.n, c.r, got, c.want)
			}
		}
		if _, err := old.WithClass(profile.ClassThrottling); !errors.Is(err, profile.ErrBadValue) {
			t.Errorf("%s: WithClass(throttling) = %v; v1.47.7 has no error classes", v, err)
		}
	}
	if p := mustParse(t, "aws_go@1.48"); p.Name() != "aws_go" {
		t.Errorf("aws_go@1.48 is %q, want the current aws_go", p.Name())
	}
	thr, err := cur.WithClass(profile.ClassThrottling)
	if err != nil {
		t.Fatal(err)
	}
	// Throttling: x = 1s; attempt 3: r * min(1 * 2^2, 20) s.
	if lo, hi := thr.Bounds(3); lo != 0 || hi != 3999999999 {
		t.Errorf("throttling attempt 3: [%v, %v], want [0, 3.999999999s]", lo, hi)
	}
	if thr.Class() != profile.ClassThrottling || cur.Class() != profile.ClassOrdinary {
		t.Errorf("classes %q %q", thr.Class(), cur.Class())
	}
	// x-amz-retry-after 2s with t in [0, 50ms): max(2s, t) = 2s, within t + 5s.
	ra, err := cur.WithRetryAfter(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := ra.Bounds(1); lo != 2*time.Second || hi != 2*time.Second {
		t.Errorf("retry-after 2s: [%v, %v], want 2s", lo, hi)
	}
	// 10s is above t + 5s: the delay is t + 5s, in [5s, 5.049999999s].
	ra, _ = cur.WithRetryAfter(10 * time.Second)
	if lo, hi := ra.Bounds(1); lo != 5*time.Second || hi != 5*time.Second+49999999 {
		t.Errorf("retry-after 10s: [%v, %v], want [5s, 5.049999999s]", lo, hi)
	}
	if _, err := mustParse(t, "river").WithRetryAfter(time.Second); !errors.Is(err, profile.ErrBadValue) {
		t.Errorf("river WithRetryAfter: %v", err)
	}
	if _, err := cur.WithRetryAfter(-1); !errors.Is(err, profile.ErrBadValue) {
		t.Errorf("negative retry-after: %v", err)
	}
	if p := mustParse(t, "sidekiq@6"); p.Name() != "sidekiq6" {
		t.Errorf("sidekiq@6 is %q", p.Name())
	}
}

// TestParseErrors: each malformed text is a named error, cut to a bounded
// size, with a suggestion where one is close.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		spec string
		is   error
		has  string
	}{
		{"sidkiq", profile.ErrUnknown, `did you mean "sidekiq"?`},
		{"bullmq:tpye=fixed", profile.ErrUnknownSetting, `did you mean "type"?`},
		{"bullmq:type=linear", profile.ErrBadValue, "must be one of none, fixed, exponential"},
		{"bullmq:delay=-1", profile.ErrBadValue, "must be between 0"},
		{"bullmq:delay=1.5", profile.ErrBadValue, "not an integer"},
		{"bullmq:jitter=2", profile.ErrBadValue, "must be between 0 and 1"},
		{"bullmq:jitter=NaN", profile.ErrBadValue, "not a finite number"},
		{"bullmq:attempts=3,attempts=4", profile.ErrBadValue, "given twice"},
		{"bullmq:attempts", profile.ErrSyntax, "not key=value"},
		{"bullmq:", profile.ErrSyntax, "not key=value"},
		{"temporal:initial_interval=2x", profile.ErrBadValue, "not a duration"},
		{"temporal:initial_interval=10s,maximum_interval=1s", profile.ErrBadValue, "must not be less than initial_interval"},
		{"temporal:backoff_coefficient=0.5", profile.ErrBadValue, "must be between 1"},
		{"pg_boss:retryDelayMax=60", profile.ErrBadValue, "can only be set if retryBackoff is true"},
		{"pg_boss:retryDelay=1.5", profile.ErrBadValue, "not an integer"},
		{"graphile_worker:maxAttempts=0", profile.ErrBadValue, "must be between 1 and 32767"},
		{"graphile_worker:maxAttempts=32768", profile.ErrBadValue, "must be between 1 and 32767"},
		{"celery:max_retries=many", profile.ErrBadValue, "or None"},
		{"celery:retry_backoff=fast", profile.ErrBadValue, "not a number, true or false"},
		{"activejob:wait=exponentially_longer", profile.ErrBadValue, "polynomially_longer or a number"},
		{"sidekiq:retry=maybe", profile.ErrBadValue, "true or false"},
		{"ojs:max_attempts=3", profile.ErrUnknownSetting, "has no settings"},
		{"full_jitter:base=2s,cap=1s", profile.ErrBadValue, "must not be less than base"},
		{"aws_go@1.46", profile.ErrUnknownVersion, "1.48.0, 1.47.7"},
		{"aws_go@", profile.ErrUnknownVersion, ""},
		{strings.Repeat("a", 1<<20), profile.ErrSyntax, "longer than"},
		{strings.Repeat("b", 3000), profile.ErrUnknown, "(3000 bytes)"},
		{"bullmq:" + strings.Repeat("k=1,", 40), profile.ErrSyntax, "more than 32 settings"},
	} {
		_, err := profile.Parse(c.spec)
		if !errors.Is(err, c.is) {
			t.Errorf("Parse(%.40q) = %v, want %v", c.spec, err, c.is)
			continue
		}
		if !strings.Contains(err.Error(), c.has) {
			t.Errorf("Parse(%.40q) = %q, lacks %q", c.spec, err, c.has)
		}
		if len(err.Error()) > 1024 {
			t.Errorf("Parse(%.40q): error of %d bytes", c.spec, len(err.Error()))
		}
	}
	var se *profile.SettingError
	if _, err := profile.Parse("celery:retry_backoff_max=x"); !errors.As(err, &se) || se.Key != "retry_backoff_max" || se.Profile != "celery" {
		t.Errorf("SettingError %+v from %v", se, err)
	}
}

// TestSettingsListed: every profile's settings parse at their defaults to
// the same schedule as the plain profile.
func TestSettingsListed(t *testing.T) {
	for _, p := range profile.All() {
		var parts []string
		for _, s := range p.Settings() {
			if s.Key == "" || s.Help == "" || s.Value != s.Default {
				t.Errorf("%s: setting %+v", p.Name(), s)
			}
			parts = append(parts, s.Key+"="+s.Default)
		}
		if len(parts) == 0 {
			continue
		}
		q := mustParse(t, p.Name()+":"+strings.Join(parts, ","))
		for n := 1; n <= 30; n++ {
			if q.DelayAt(n, 0.3) != p.DelayAt(n, 0.3) || q.MaxAttempts() != p.MaxAttempts() {
				t.Fatalf("%s with its defaults spelled out differs at attempt %d", p.Name(), n)
			}
		}
	}
}

// configuredSpecs are configured profiles the properties draw from.
var configuredSpecs = []string{
	"bullmq:type=exponential,delay=3000,attempts=5", "bullmq:jitter=0.9,delay=1", "bullmq:type=fixed,jitter=1,delay=5",
	"temporal:initial_interval=1ns,backoff_coefficient=1000000", "temporal:initial_interval=2562047h,backoff_coefficient=1",
	"celery:retry_backoff=1099511627776,retry_backoff_max=1099511627776", "celery:max_retries=None",
	"sidekiq:retry=2147483646", "river:MaxAttempts=32767", "asynq:MaxRetry=2147483647", "oban:max_attempts=2147483647",
	"gax:Multiplier=1,Initial=1ns,Max=1ns", "gax:Multiplier=1.01,Max=2562047h", "aws_go:MaxBackoff=2562047h",
	"aws_go@1.47:MaxBackoff=2562047h", "grpc_retry:backoffMultiplier=1000000", "grpc_connect:Multiplier=1.01,MaxDelay=2562047h",
	"activejob:jitter=1000", "aws:total_max_attempts=2147483647", "faktory:retry=-1",
	"decorrelated_jitter:base=1ns,cap=2562047h", "equal_jitter:base=2562047h,cap=2562047h", "resque_retry:retry_limit=0",
	"resque_retry:retry_limit=-1", "resque_retry:retry_limit=-2147483648,backoff_strategy=1099511627776,retry_delay_multiplicand_min=0,retry_delay_multiplicand_max=1000000", "flare:MaxAttempts=-2147483648", "gax:Multiplier=1.0000001,Initial=1ns,Max=2562047h",
	"grpc_connect:Multiplier=-1000000,Jitter=1", "grpc_connect:Multiplier=0.5", "aws:mode=standard", "activejob:load_defaults=8.1,wait=0.5",
	"cenkalti:RandomizationFactor=1000000,Multiplier=-3", "cenkalti:Multiplier=1.0000001,MaxInterval=2562047h,InitialInterval=1ns",
	"retryablehttp:RetryWaitMin=1ns,RetryWaitMax=2562047h", "failsafe:Delay=2562047h,MaxDelay=2562047h,DelayFactor=1000000,JitterFactor=1000000",
	"failsafe:Delay=1ns,MaxDelay=1s,Jitter=4611686018427387903ns", "retry_go:DelayType=full_jitter,Delay=2562047h", "retry_go:Delay=1ns,MaxJitter=2562047h",
	"go_retry:backoff=fibonacci,base=1ns,jitter=4611686018427387903ns,jitter_percent=2147483647,full_jitter=true",
	"tenacity:wait=wait_exponential_jitter,exp_base=1000000,jitter=1000000000000", "tenacity:wait=wait_random_exponential,multiplier=1000000000000",
	"backoff:wait_gen=fibo,max_value=1000000000000", "backoff:base=1000000,jitter=random_jitter", "rq:max=2147483647,interval=1099511627776/0/5",
	"p_retry:randomize=true,factor=1000000,minTimeout=1000000000000000", "bee_queue:retries=2147483647,strategy=exponential,delay=9007199254740992",
	"delayed_job:max_attempts=2147483647", "grpc_connect:Jitter=1000000,Multiplier=0.5", "grpc_connect:Jitter=1000000,MaxDelay=2562047h",
	"grpc_retry:backoffMultiplier=5e-324,maxAttempts=2147483647,maxCallAttempts=2147483647",
	"pg_boss:retryBackoff=true,retryDelay=2147483647,retryLimit=2147483647", "pg_boss:retryBackoff=true,retryDelayMax=0",
	"pg_boss:retryBackoff=true,retryDelayMax=2147483647", "pg_boss:retryDelay=2147483647,retryLimit=0",
	"graphile_worker:maxAttempts=32767", "graphile_worker:maxAttempts=1",
}

// TestPropertyConfigured: configured profiles keep the invariants of
// TestPropertyBounds for any attempt and draw.
func TestPropertyConfigured(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := rapid.SampledFrom(configuredSpecs).Draw(t, "spec")
		p, err := profile.Parse(spec)
		if err != nil {
			t.Fatalf("Parse(%q): %v", spec, err)
		}
		n := drawAttempt(t, "n")
		r := drawR(t, "r")
		lo, hi := p.Bounds(n)
		d := p.DelayAt(n, r)
		if lo < 0 || hi < lo || d < lo || d > hi {
			t.Fatalf("%s: attempt %d draw %v: %v outside [%v, %v]", spec, n, r, d, lo, hi)
		}
		if p.MaxAttempts() < 0 || p.MaxAttempts() > math.MaxInt32+1 {
			t.Fatalf("%s: MaxAttempts %d", spec, p.MaxAttempts())
		}
	})
}

// FuzzParse: Parse never panics, answers a profile whose name parses back
// to itself, or a named error of bounded size.
func FuzzParse(f *testing.F) {
	for _, s := range configuredSpecs {
		f.Add(s)
	}
	for _, s := range []string{"aws_go@1.47", "sidekiq@6", "x@y:z", ":", "@", "bullmq:=", "celery:max_retries=None,,", "temporal:maximum_interval=-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := profile.Parse(s)
		if err != nil {
			if len(err.Error()) > 2048 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			for _, e := range []error{profile.ErrUnknown, profile.ErrUnknownVersion, profile.ErrSyntax, profile.ErrUnknownSetting, profile.ErrBadValue} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("unnamed error %v", err)
		}
		q, err := profile.Parse(p.Name())
		if err != nil || q.Name() != p.Name() {
			t.Fatalf("name %q does not parse back: %v", p.Name(), err)
		}
		lo, hi := p.Bounds(3)
		if lo < 0 || hi < lo {
			t.Fatalf("bounds [%v, %v]", lo, hi)
		}
	})
}

// TestDocsListSettings: docs/profiles/README.md names every profile and
// every one of its settings, so that the page stays the reference.
func TestDocsListSettings(t *testing.T) {
	data, err := os.ReadFile("../docs/profiles/README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, p := range profile.All() {
		if !strings.Contains(doc, "`"+p.Name()+"`") {
			t.Errorf("docs/profiles/README.md does not name %s", p.Name())
		}
		for _, s := range p.Settings() {
			if !strings.Contains(doc, "`"+s.Key+"`") {
				t.Errorf("docs/profiles/README.md does not list %s's setting %s", p.Name(), s.Key)
			}
		}
	}
	for _, v := range profile.Versions() {
		name, _, _ := strings.Cut(v, "@")
		if p, err := profile.Parse(v); err != nil || !strings.Contains(doc, "`"+p.Name()+"`") {
			t.Errorf("docs/profiles/README.md does not name %s (%s): %v", v, name, err)
		}
	}
}

// TestWith: With is Parse's settings from Go, and overrides p's own.
func TestWith(t *testing.T) {
	b := mustParse(t, "bullmq")
	p, err := b.With("type=exponential", "delay=3000", "attempts=5")
	if err != nil {
		t.Fatal(err)
	}
	q := mustParse(t, "bullmq:type=exponential,delay=3000,attempts=5")
	if p.Name() != q.Name() || p.DelayAt(4, 0) != 24*time.Second || p.MaxAttempts() != 5 {
		t.Errorf("With: %s %v %d", p.Name(), p.DelayAt(4, 0), p.MaxAttempts())
	}
	r, err := p.With("delay=1000")
	if err != nil || r.Name() != "bullmq:type=exponential,delay=1000,attempts=5" || r.DelayAt(2, 0) != 2*time.Second {
		t.Errorf("With override: %q %v %v", r.Name(), r.DelayAt(2, 0), err)
	}
	// A configured profile keeps its settings through WithClass.
	thr, err := mustParse(t, "aws_go:MaxAttempts=5").WithClass(profile.ClassThrottling)
	if lo, hi := thr.Bounds(1); err != nil || thr.Name() != "aws_go:MaxAttempts=5" || thr.MaxAttempts() != 5 || lo != 0 || hi != 999999999 {
		t.Errorf("WithClass on a configured profile: %q %d [%v, %v] %v", thr.Name(), thr.MaxAttempts(), lo, hi, err)
	}
	if same, err := p.With(); err != nil || same.Name() != p.Name() {
		t.Errorf("With(): %q %v", same.Name(), err)
	}
	for _, c := range []struct {
		p  profile.Profile
		kv []string
		is error
	}{
		{b, []string{"tpye=fixed"}, profile.ErrUnknownSetting},
		{b, []string{"delay"}, profile.ErrSyntax},
		{b, []string{"delay=1", "delay=2"}, profile.ErrBadValue},
		{mustParse(t, "ojs"), []string{"max_attempts=3"}, profile.ErrUnknownSetting},
		{profile.Profile{}, []string{"x=1"}, profile.ErrUnknownSetting},
		{b, make([]string, 33), profile.ErrSyntax},
		{b, []string{strings.Repeat("d", profile.MaxSpec+1)}, profile.ErrSyntax},
	} {
		if _, err := c.p.With(c.kv...); !errors.Is(err, c.is) {
			t.Errorf("%s.With(%.30q) = %v, want %v", c.p.Name(), c.kv, err, c.is)
		}
	}
}
