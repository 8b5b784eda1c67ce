package profile

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Client libraries of cloud APIs and RPC frameworks.

// gaxEnvelope returns gax's retry envelope cur before the n-th Pause: it
// starts at Initial and after each Pause becomes
// min(time.Duration(float64(cur) * Multiplier), Max). The envelope does not
// depend on the draws, so it is found from n alone; the loop stops as soon
// as cur stops changing (it reaches Max, or the product truncates back to
// cur), which Parse's bounds on Multiplier keep to a few thousand steps.
func gaxEnvelope(n int, ini, mx time.Duration, mult float64) time.Duration {
	cur := ini
	for i := 1; i < min(n, maxEnvelopeSteps); i++ {
		next := min(nanos(float64(cur)*mult), mx)
		if next == cur {
			break
		}
		cur = next
	}
	return cur
}

var gaxSettings = []setting{
	{key: "Initial", kind: kDuration, def: "1s", lo: 1, hi: math.MaxInt64, help: "Backoff.Initial, the first envelope"},
	{key: "Max", kind: kDuration, def: "30s", lo: 1, hi: math.MaxInt64, help: "Backoff.Max, the envelope's cap"},
	{key: "Multiplier", kind: kFloat, def: "2", lo: -1e6, hi: 1e6, help: "Backoff.Multiplier; gax reads a value below 1 as 2"},
}

func gaxModel(c conf) (*model, error) {
	ini, mx, mult := c.dur("Initial"), c.dur("Max"), c.float("Multiplier")
	if mult < 1 {
		mult = 2 // call_option.go Pause: if bo.Multiplier < 1 { bo.Multiplier = 2 }
	}
	return &model{
		name:         "gax",
		release:      "2.27.0",
		system:       "Google API Go client support (gax-go v2), Backoff.Pause",
		version:      "gax-go v2.27.0 (5a1e0eb0fefc8d0add8726a7e71b8786369acc79, 2026-07-21)",
		source:       "https://github.com/googleapis/gax-go/blob/5a1e0eb0fefc8d0add8726a7e71b8786369acc79/v2/call_option.go (Backoff.Pause)",
		summary:      fmt.Sprintf("1ns + uniform in [0, cur), cur = min(%v*%s^(attempt-1), %v) (the Backoff's state); unbounded attempts", ini, fmtNum(mult), mx),
		formula:      fmt.Sprintf("cur starts at Initial = %v; each Pause returns 1 + rand.Int63n(cur) ns, then cur = min(time.Duration(float64(cur) * %s), Max = %v)", ini, fmtNum(mult), mx),
		draw:         "rand.Int63n(cur) = floor(r * cur), held below cur",
		exhaustion:   "none in Backoff: a call retries until its context or deadline ends",
		terminal:     "none by attempts (the caller gets the last error when its deadline passes)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			cur := gaxEnvelope(n, ini, mx, mult)
			return 1 + time.Duration(randInt(d.next(), int64(cur)))
		},
	}, nil
}

var awsSettings = []setting{
	{key: "mode", kind: kEnum, def: "legacy", enum: []string{"legacy", "standard"}, help: "Config(retries={'mode': ...}) (AWS_RETRY_MODE): legacy, botocore's default, or standard"},
	{key: "total_max_attempts", kind: kInt, def: "5", lo: 1, hi: math.MaxInt32, help: "Config(retries={'total_max_attempts': N}): total attempts (default 5 in legacy mode, 3 in standard); wins over max_attempts"},
	{key: "max_attempts", kind: kInt, def: "4", lo: 0, hi: math.MaxInt32 - 1, help: "Config(retries={'max_attempts': N}): retries after the first attempt (default 4 in legacy mode, 2 in standard)"},
}

// awsRef is the botocore release the aws profile reads.
const awsRef = "https://github.com/boto/botocore/blob/1.43.67/botocore/"

func awsModel(c conf) (*model, error) {
	legacy := c.str("mode") == "legacy"
	total := int64(3)
	if legacy {
		total = 5 // botocore/data/_retry.json "max_attempts": 5
	}
	switch {
	case c.user("total_max_attempts"):
		total = c.int("total_max_attempts")
	case c.user("max_attempts"):
		total = c.int("max_attempts") + 1
	}
	m := &model{
		name:         "aws",
		release:      "1.43.67",
		terminal:     "the last error is raised to the caller",
		maxAttempts:  int(total),
		onExhaustion: policy.Discard,
		jitter:       true,
		draw:         "random.random() = r",
	}
	if legacy {
		m.system = "AWS SDK for Python (botocore), legacy retry mode (the default)"
		m.version = "botocore 1.43.67"
		m.source = awsRef + "retryhandler.py (delay_exponential, MaxAttemptsDecorator); " + awsRef + "data/_retry.json (base rand, growth_factor 2, max_attempts 5)"
		m.summary = fmt.Sprintf("r * 2^(attempt-1) seconds, no cap; %d attempts, then the error is raised", total)
		m.formula = "attempts = attempt; base = random.random(); delay_s = base * 2 ** (attempts - 1) (delay_exponential with base 'rand', growth_factor 2)"
		m.exhaustion = fmt.Sprintf("%d total attempts (legacy max_attempts 5 in _retry.json): MaxAttemptsDecorator stops when attempt_number >= %[1]d", total)
		m.delay = func(n int, _ time.Duration, d draws) time.Duration {
			return seconds(d.next() * math.Pow(2, float64(n-1)))
		}
		return m, nil
	}
	m.system = "AWS SDK for Python (botocore), standard retry mode"
	m.version = "botocore 1.43.67"
	m.source = awsRef + "retries/standard.py (ExponentialBackoff.delay_amount, MaxAttemptsChecker)"
	m.summary = fmt.Sprintf("r * min(2^(attempt-1), 20) seconds; %d attempts, then the error is raised", total)
	m.formula = "t = random() * min(2 ** (attempt_number - 1), 20) seconds, attempt_number = attempt " +
		"(the path without the opt-in NEW_RETRIES_ENABLED, which is off by default)"
	m.exhaustion = fmt.Sprintf("%d total attempts (DEFAULT_MAX_ATTEMPTS 3): retried while attempt_number < %[1]d", total)
	m.delay = func(n int, _ time.Duration, d draws) time.Duration {
		r := d.next()
		e := 20.0
		if n-1 < 5 { // 2^4 = 16 < 20 <= 2^5
			e = float64(int64(1) << uint(n-1))
		}
		return seconds(r * e)
	}
	return m, nil
}

// The error classes of the AWS SDK for Go's standard retryer since retry
// behavior 2.1: a throttling error (an error code in
// DefaultThrottleErrorCodes, or an unmodelled HTTP 429) backs off from 1s,
// every other retryable error from BaseDelay.
const (
	ClassOrdinary   = "ordinary"
	ClassThrottling = "throttling"
)

var awsGoSettings = []setting{
	{key: "MaxAttempts", kind: kInt, def: "3", lo: 1, hi: math.MaxInt32, help: "StandardOptions.MaxAttempts (aws.Config.RetryMaxAttempts): total attempts"},
	{key: "MaxBackoff", kind: kDuration, def: "20s", lo: 1, hi: math.MaxInt64, help: "StandardOptions.MaxBackoff: the cap, applied before the jitter"},
	{key: "BaseDelay", kind: kDuration, def: "0s", lo: 0, hi: math.MaxInt64, help: "StandardOptions.BaseDelay for non-throttling errors; 0 means 50ms (25ms for DynamoDB)"},
	{key: "service", kind: kEnum, def: "default", enum: []string{"default", "dynamodb", "dynamodbstreams"}, help: "a service client whose defaults differ: DynamoDB and DynamoDB Streams use 4 attempts and a 25ms base"},
}

// awsGoRef is where retry behavior 2.1 is read: aws-sdk-go-v2 v1.48.0.
const awsGoRef = "https://github.com/aws/aws-sdk-go-v2/blob/v1.48.0/"

func awsGoModel(c conf) (*model, error) {
	ma, mb, base := c.int("MaxAttempts"), c.dur("MaxBackoff"), c.dur("BaseDelay")
	if svc := c.str("service"); svc != "default" {
		if !c.user("MaxAttempts") {
			ma = 4
		}
		if base == 0 {
			base = 25 * time.Millisecond
		}
	}
	if base == 0 {
		base = 50 * time.Millisecond
	}
	x := base
	if c.class == ClassThrottling {
		x = time.Second
	}
	mbs := float64(mb) / float64(time.Second)
	ra, hasRA := c.retryAfter, c.hasRetryAfter
	raText := ""
	if hasRA {
		raText = fmt.Sprintf("; x-amz-retry-after %v: delay = min(max(%v, t), t + 5s)", ra, ra)
	}
	return &model{
		name:    "aws_go",
		release: "1.48.0",
		system:  "AWS SDK for Go v2, standard retryer, retry behavior 2.1",
		version: "github.com/aws/aws-sdk-go-v2 v1.48.0 (2026-11-10)",
		source: awsGoRef + "aws/retry/jitter_backoff.go#L107-L131 (backoffDelay2026); " + awsGoRef + "aws/retry/standard.go#L211-L240 (NewStandard, BaseDelay 50ms); " +
			awsGoRef + "aws/retry/middleware.go#L281 (exhaustion), #L312-L316 (RetryDelay(attemptNum), adjustForRetryAfterHeader), #L518-L548 (the header's clamp)",
		summary: fmt.Sprintf("r * min(%v * 2^(attempt-1), %v) for %s error; %d attempts, then MaxAttemptsError", x, mb, withArticle(classText(c.class)), ma),
		formula: fmt.Sprintf("i = attempt - 1; x = %v (BaseDelay; 1s for a throttling error); t = time.Duration(r * min(x/1s * 2^i, MaxBackoff/1s %s) * 1e9)%s",
			x, fmtNum(mbs), raText),
		draw:         "rand.CryptoRandFloat64() = r (53-bit, [0,1))",
		exhaustion:   fmt.Sprintf("MaxAttempts %d total attempts: after attempt %[1]d fails no retry is made", ma),
		terminal:     "the operation returns a *retry.MaxAttemptsError wrapping the last error",
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			ds := float64(x) / float64(time.Second) * math.Pow(2, float64(n-1))
			if ds > mbs {
				ds = mbs
			}
			t := seconds(d.next() * ds)
			if hasRA {
				t = min(max(ra, t), time.Duration(sat.AddInt(int64(t), int64(5*time.Second))))
			}
			return t
		},
	}, nil
}

// withArticle puts "a" or "an" before a word ("an ordinary").
func withArticle(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}

func classText(c string) string {
	if c == "" {
		return ClassOrdinary
	}
	return c
}

// awsGoMaxBackoffAttempts is int(math.Log2(MaxBackoff / 1s)), the last
// attempt for which the legacy backoff still draws.
func awsGoMaxBackoffAttempts(mb time.Duration) int {
	return int(math.Log2(float64(mb) / float64(time.Second)))
}

var awsGo147Settings = []setting{
	{key: "MaxAttempts", kind: kInt, def: "3", lo: 1, hi: math.MaxInt32, help: "StandardOptions.MaxAttempts (aws.Config.RetryMaxAttempts): total attempts"},
	{key: "MaxBackoff", kind: kDuration, def: "20s", lo: 1, hi: math.MaxInt64, help: "StandardOptions.MaxBackoff: after attempt int(log2(MaxBackoff/1s)) the delay is MaxBackoff, no jitter"},
}

// awsGo147Ref is where the legacy backoff is read: aws-sdk-go-v2 v1.47.7.
const awsGo147Ref = "https://github.com/aws/aws-sdk-go-v2/blob/v1.47.7/"

func awsGo147Model(c conf) (*model, error) {
	ma, mb := c.int("MaxAttempts"), c.dur("MaxBackoff")
	k := awsGoMaxBackoffAttempts(mb)
	return &model{
		name:    "aws_go@1.47",
		release: "1.47.7",
		system:  "AWS SDK for Go v2, standard retryer (legacy ExponentialJitterBackoff, before retry behavior 2.1)",
		version: "github.com/aws/aws-sdk-go-v2 v1.47.7",
		source: awsGo147Ref + "aws/retry/jitter_backoff.go#L86-L101 (backoffDelayLegacy); " + awsGo147Ref + "aws/retry/middleware.go#L314 (RetryDelay(attemptNum)); " +
			awsGo147Ref + "aws/retry/standard.go#L224 (NewExponentialJitterBackoff, AWS_NEW_RETRIES_2026 unset)",
		summary: fmt.Sprintf("r * 2^attempt seconds while attempt <= %d, else %v flat; %d attempts, then MaxAttemptsError; error class and x-amz-retry-after ignored", k, mb, ma),
		formula: fmt.Sprintf("attempt = attemptNum (1-based); if attempt > int(log2(MaxBackoff/1s)) = %d: delay = MaxBackoff = %v; "+
			"else delay = time.Duration(r * float64(1 << attempt) * 1e9) (the path without the opt-in AWS_NEW_RETRIES_2026)", k, mb),
		draw:         "rand.CryptoRandFloat64() = r (53-bit, [0,1))",
		exhaustion:   fmt.Sprintf("MaxAttempts %d total attempts: after attempt %[1]d fails no retry is made", ma),
		terminal:     "the operation returns a *retry.MaxAttemptsError wrapping the last error",
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			if n > k {
				return mb
			}
			return seconds(d.next() * float64(int64(1)<<uint(n)))
		},
	}, nil
}

// maxEnvelopeSteps bounds the steps an envelope that grows by a factor
// each attempt is followed (gax, grpc_connect, cenkalti, failsafe): a
// multiplier just above 1 needs up to ln(Max/Initial)/ln(Multiplier) steps
// to settle, so past this many attempts the envelope stays where it is
// (RK-235).
const maxEnvelopeSteps = 1 << 20

// grpcConnectBackoff is grpc-go's internal/backoff Exponential.Backoff for
// retries = attempt - 1 and the draw r, with the backoff.Config's
// BaseDelay, Multiplier, Jitter and MaxDelay (defaults 1s, 1.6, 0.2, 120s).
func grpcConnectBackoff(retries int, r float64, base, mxd time.Duration, mult, jit float64) time.Duration {
	if retries == 0 {
		return base
	}
	b, mx := float64(base), float64(mxd)
	for steps := 0; b < mx && retries > 0 && steps < maxEnvelopeSteps; steps++ {
		nb := b * mult
		retries--
		if nb == b {
			break // settled (0, or a multiplier of 1)
		}
		b = nb
	}
	if b > mx {
		b = mx
	}
	b *= 1 + jit*(r*2-1)
	return nanos(b)
}

// grpcGoRef is the grpc-go commit the gRPC profiles were read at; its
// internal/backoff, backoff, stream.go and service_config.go are those of
// v1.84.0, which verify/ runs.
const grpcGoRef = "https://github.com/grpc/grpc-go/blob/4793ad0474669eafbd5346c8a3d098fdfa542498/"

var grpcConnectSettings = []setting{
	{key: "BaseDelay", kind: kDuration, def: "1s", lo: 1, hi: math.MaxInt64, help: "backoff.Config.BaseDelay, the first wait"},
	{key: "Multiplier", kind: kFloat, def: "1.6", lo: -1e6, hi: 1e6, help: "backoff.Config.Multiplier (below 1 the wait shrinks; a negative wait fires at once)"},
	{key: "Jitter", kind: kFloat, def: "0.2", lo: 0, hi: 1e6, help: "backoff.Config.Jitter: the wait is multiplied by 1 ± Jitter (above 1 a negative wait fires at once)"},
	{key: "MaxDelay", kind: kDuration, def: "120s", lo: 1, hi: math.MaxInt64, help: "backoff.Config.MaxDelay, the cap before the jitter"},
}

func grpcConnectModel(c conf) (*model, error) {
	base, mult, jit, mxd := c.dur("BaseDelay"), c.float("Multiplier"), c.float("Jitter"), c.dur("MaxDelay")
	return &model{
		name:    "grpc_connect",
		release: "1.84.0",
		system:  "gRPC connection backoff (grpc-go internal/backoff, connection-backoff.md)",
		version: "grpc-go@4793ad0474669eafbd5346c8a3d098fdfa542498 (2026-08-21)",
		source:  grpcGoRef + "internal/backoff/backoff.go#L56-L75 (Exponential.Backoff); " + grpcGoRef + "backoff/backoff.go#L47-L52 (DefaultConfig); " + grpcGoRef + "clientconn.go#L1333 (Backoff(ac.backoffIdx)), #L1382-L1386 (the timer after the failure, backoffIdx++)",
		summary: fmt.Sprintf("%v after the first failure, then min(%v*%s^(attempt-1), %v) * (1 ± %s); reconnects forever", base, base, fmtNum(mult), mxd, fmtNum(jit)),
		formula: fmt.Sprintf("retries = attempt - 1 (ac.backoffIdx); retries 0: BaseDelay %v exactly; else b = BaseDelay, multiplied by %s while b < MaxDelay %v and retries remain, "+
			"b = min(b, MaxDelay); b *= 1 + %s * (r*2 - 1); delay = time.Duration(b), 0 if b < 0. grpc-go starts the wait when the attempt has failed (resetTransportAndUnlock)", base, fmtNum(mult), mxd, fmtNum(jit)),
		draw:         fmt.Sprintf("rand.Float64() = r; multiplier 1 + %s*(2r - 1)", fmtNum(jit)),
		exhaustion:   "none: a channel keeps reconnecting",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       jit > 0,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return grpcConnectBackoff(n-1, d.next(), base, mxd, mult, jit)
		},
	}, nil
}

var grpcRetrySettings = []setting{
	{key: "maxAttempts", kind: kInt, def: "4", lo: 2, hi: math.MaxInt32, help: "retryPolicy.maxAttempts: total attempts, more than 1; values above maxCallAttempts (5 by default) are treated as it"},
	{key: "initialBackoff", kind: kDuration, def: "0.1s", lo: 1, hi: math.MaxInt64, help: "retryPolicy.initialBackoff"},
	{key: "maxBackoff", kind: kDuration, def: "1s", lo: 1, hi: math.MaxInt64, help: "retryPolicy.maxBackoff, the cap before the jitter"},
	{key: "backoffMultiplier", kind: kFloat, def: "2", lo: math.SmallestNonzeroFloat64, hi: 1e6, help: "retryPolicy.backoffMultiplier, above 0"},
	{key: "maxCallAttempts", kind: kInt, def: "5", lo: math.MinInt32, hi: math.MaxInt32, help: "grpc.WithMaxCallAttempts(n) on the channel: maxAttempts above it are treated as it; below 2 (or unset) it is 5"},
}

func grpcRetryModel(c conf) (*model, error) {
	// grpc-go caps maxAttempts at the channel's maxCallAttempts when it
	// parses the service config (service_config.go convertRetryPolicy);
	// WithMaxCallAttempts reads n < 2 as the default 5 (dialoptions.go).
	capAt := c.int("maxCallAttempts")
	if capAt < 2 {
		capAt = 5
	}
	ma, ib, mb, mult := min(c.int("maxAttempts"), capAt), c.dur("initialBackoff"), c.dur("maxBackoff"), c.float("backoffMultiplier")
	return &model{
		name:    "grpc_retry",
		release: "1.84.0",
		system:  "gRPC client retries (gRFC A6, grpc-go), A6's example retryPolicy",
		version: "grpc-go@4793ad0474669eafbd5346c8a3d098fdfa542498; proposal@1fd061ad8e7c46422b326e5a60cf68d042476205",
		source: grpcGoRef + "stream.go#L857 (exhaustion), #L866-L870 (csAttempt.shouldRetry: backoff and jitter); " + grpcGoRef + "service_config.go#L271-L292 (policy validation, maxAttempts cap); " +
			grpcGoRef + "dialoptions.go#L43 (defaultMaxCallAttempts 5), #L809-L816 (WithMaxCallAttempts); https://github.com/grpc/proposal/blob/1fd061ad8e7c46422b326e5a60cf68d042476205/A6-client-retries.md",
		summary: fmt.Sprintf("min(%v*%s^(attempt-1), %v) * U[0.8, 1.2); maxAttempts %d, then the RPC fails", ib, fmtNum(mult), mb, ma),
		formula: fmt.Sprintf("n = attempt - 1 (numRetriesSincePushback, no pushback); cur = min(float64(initialBackoff %v) * math.Pow(backoffMultiplier %s, n), float64(maxBackoff %v)); "+
			"cur *= 0.8 + 0.4*r; delay = time.Duration(int64(cur)); A6 has no defaults: the profile's are A6's example (0.1s, 1s, 2, 4 attempts)", ib, fmtNum(mult), mb),
		draw:         "rand.Float64() = r; multiplier 0.8 + 0.4r in [0.8, 1.2)",
		exhaustion:   fmt.Sprintf("maxAttempts %d total attempts (values above the channel's maxCallAttempts, %d, are treated as it)", ma, capAt),
		terminal:     "the RPC fails with the last attempt's status, wrapped as \"max retries exhausted: failed after N attempts: …\" (when the server answered before the request was sent, the wrapped error is io.EOF and the code Unknown)",
		maxAttempts:  int(ma),
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			cur := min(float64(ib)*math.Pow(mult, float64(n-1)), float64(mb))
			cur *= 0.8 + 0.4*d.next()
			return nanos(cur)
		},
	}, nil
}
