package profile

import (
	"math"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// Client libraries of cloud APIs and RPC frameworks.

// gaxEnvelope returns gax's retry envelope cur before the n-th Pause: it
// starts at Initial (1s) and after each Pause becomes
// min(time.Duration(float64(cur) * Multiplier), Max), Multiplier 2, Max 30s.
// The envelope does not depend on the draws, so it is found from n alone;
// it reaches Max after 6 steps.
func gaxEnvelope(n int) time.Duration {
	cur := time.Second
	for i := 1; i < n && cur < 30*time.Second; i++ {
		cur = min(nanos(float64(cur)*2), 30*time.Second)
	}
	return cur
}

func gaxModel() *model {
	return &model{
		name:    "gax",
		system:  "Google API Go client support (gax-go v2), Backoff.Pause",
		version: "gax-go@5a1e0eb0fefc8d0add8726a7e71b8786369acc79 (2026-07-21)",
		source:  "https://github.com/googleapis/gax-go/blob/5a1e0eb0fefc8d0add8726a7e71b8786369acc79/v2/call_option.go (Backoff.Pause)",
		summary: "1ns + uniform in [0, cur), cur = min(1s*2^(attempt-1), 30s) (the Backoff's state); unbounded attempts",
		formula: "cur starts at Initial = 1s; each Pause returns 1 + rand.Int63n(cur) ns, then cur = min(time.Duration(float64(cur) * 2), Max = 30s); " +
			"so the delay after attempt n is 1ns + rand.Int63n(min(1s * 2^(n-1), 30s))",
		draw:         "rand.Int63n(cur) = floor(r * cur), held below cur",
		exhaustion:   "none in Backoff: a call retries until its context or deadline ends",
		terminal:     "none by attempts (the caller gets the last error when its deadline passes)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			cur := gaxEnvelope(n)
			return 1 + time.Duration(randInt(d.next(), int64(cur)))
		},
	}
}

func awsModel() *model {
	return &model{
		name:    "aws",
		system:  "AWS SDK for Python (botocore), standard retry mode",
		version: "botocore@0e6e2404b85dc336dd2889814e089bde7d1a4c55 (2026-08-07)",
		source:  "https://github.com/boto/botocore/blob/0e6e2404b85dc336dd2889814e089bde7d1a4c55/botocore/retries/standard.py (ExponentialBackoff.delay_amount, MaxAttemptsChecker)",
		summary: "r * min(2^(attempt-1), 20) seconds; 3 attempts, then the error is raised",
		formula: "t = random() * min(2 ** (attempt_number - 1), 20) seconds, attempt_number = attempt " +
			"(the path without the opt-in NEW_RETRIES_ENABLED, which is off by default)",
		draw:         "random.random() = r",
		exhaustion:   "DEFAULT_MAX_ATTEMPTS 3 total attempts: retried while attempt_number < 3",
		terminal:     "the last error is raised to the caller",
		maxAttempts:  3,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			r := d.next()
			e := 20.0
			if n-1 < 5 { // 2^4 = 16 < 20 <= 2^5
				e = float64(int64(1) << uint(n-1))
			}
			return seconds(r * e)
		},
	}
}

// awsGoMaxBackoffAttempts is int(math.Log2(20)) = 4, the last attempt for
// which the Go SDK still draws.
const awsGoMaxBackoffAttempts = 4

func awsGoModel() *model {
	return &model{
		name:    "aws_go",
		system:  "AWS SDK for Go v2, standard retryer (ExponentialJitterBackoff)",
		version: "github.com/aws/aws-sdk-go-v2 v1.47.7",
		source:  "https://github.com/aws/aws-sdk-go-v2/blob/v1.47.7/aws/retry/jitter_backoff.go (backoffDelayLegacy); aws/retry/middleware.go (RetryDelay(attemptNum)); aws/retry/standard.go (defaults)",
		summary: "r * 2^attempt seconds while attempt <= 4, else 20s flat; 3 attempts, then MaxAttemptsError",
		formula: "attempt = attemptNum (1-based); if attempt > int(log2(MaxBackoff/1s)) = 4: delay = MaxBackoff = 20s; " +
			"else delay = time.Duration(r * float64(1 << attempt) * 1e9) (the path without the opt-in AWS_NEW_RETRIES_2026)",
		draw:         "rand.CryptoRandFloat64() = r (53-bit, [0,1))",
		exhaustion:   "DefaultMaxAttempts 3 total attempts: after attempt 3 fails no retry is made",
		terminal:     "the operation returns a *retry.MaxAttemptsError wrapping the last error",
		maxAttempts:  3,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			if n > awsGoMaxBackoffAttempts {
				return 20 * time.Second
			}
			return seconds(d.next() * float64(int64(1)<<uint(n)))
		},
	}
}

// grpcConnectBackoff is grpc-go's internal/backoff Exponential.Backoff with
// the connection-backoff defaults (base 1s, multiplier 1.6, jitter 0.2, max
// 120s), for retries = attempt - 1 and the draw r.
func grpcConnectBackoff(retries int, r float64) time.Duration {
	if retries == 0 {
		return time.Second
	}
	b, mx := float64(time.Second), float64(120*time.Second)
	for b < mx && retries > 0 {
		b *= 1.6
		retries--
	}
	if b > mx {
		b = mx
	}
	b *= 1 + 0.2*(r*2-1)
	return nanos(b)
}

func grpcConnectModel() *model {
	return &model{
		name:    "grpc_connect",
		system:  "gRPC connection backoff (grpc-go internal/backoff, connection-backoff.md)",
		version: "grpc-go@4793ad0474669eafbd5346c8a3d098fdfa542498 (2026-08-21)",
		source:  "https://github.com/grpc/grpc-go/blob/4793ad0474669eafbd5346c8a3d098fdfa542498/internal/backoff/backoff.go (Exponential.Backoff); backoff/backoff.go (DefaultConfig); clientconn.go (backoffIdx)",
		summary: "1s after the first failure, then min(1s*1.6^(attempt-1), 120s) * (1 ± 0.2); reconnects forever",
		formula: "retries = attempt - 1 (ac.backoffIdx); retries 0: 1s exactly; else b = 1s, multiplied by 1.6 while b < 120s and retries remain, " +
			"b = min(b, 120s); b *= 1 + 0.2 * (r*2 - 1); delay = time.Duration(b). grpc-go starts the wait when the attempt has failed (resetTransportAndUnlock)",
		draw:         "rand.Float64() = r; multiplier 1 + 0.2*(2r - 1) in [0.8, 1.2)",
		exhaustion:   "none: a channel keeps reconnecting",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return grpcConnectBackoff(n-1, d.next())
		},
	}
}

func grpcRetryModel() *model {
	return &model{
		name:    "grpc_retry",
		system:  "gRPC client retries (gRFC A6, grpc-go), A6's example retryPolicy",
		version: "grpc-go@4793ad0474669eafbd5346c8a3d098fdfa542498; proposal@1fd061ad8e7c46422b326e5a60cf68d042476205",
		source:  "https://github.com/grpc/grpc-go/blob/4793ad0474669eafbd5346c8a3d098fdfa542498/stream.go (clientStream.shouldRetry); https://github.com/grpc/proposal/blob/1fd061ad8e7c46422b326e5a60cf68d042476205/A6-client-retries.md",
		summary: "min(0.1s*2^(attempt-1), 1s) * U[0.8, 1.2); maxAttempts 4, then the RPC fails",
		formula: "n = attempt - 1 (numRetriesSincePushback, no pushback); cur = min(float64(initialBackoff) * math.Pow(backoffMultiplier, n), float64(maxBackoff)); " +
			"cur *= 0.8 + 0.4*r; delay = time.Duration(int64(cur)); initialBackoff 0.1s, maxBackoff 1s, backoffMultiplier 2, maxAttempts 4 (A6's example; A6 has no defaults)",
		draw:         "rand.Float64() = r; multiplier 0.8 + 0.4r in [0.8, 1.2)",
		exhaustion:   "maxAttempts 4 total attempts (values above 5 are treated as 5)",
		terminal:     "the RPC fails with the last attempt's status",
		maxAttempts:  4,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			cur := min(float64(100*time.Millisecond)*math.Pow(2, float64(n-1)), float64(time.Second))
			cur *= 0.8 + 0.4*d.next()
			return nanos(cur)
		},
	}
}
