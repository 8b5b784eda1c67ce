package verify_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	smithymiddle "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/retrykit/retrykit/profile"
)

// throttleError is an API error whose code is in the SDK's
// DefaultThrottleErrorCodes, so that its retryer classes it as throttling.
type throttleError struct{}

func (throttleError) Error() string     { return "ThrottlingException: rate exceeded" }
func (throttleError) ErrorCode() string { return "ThrottlingException" }

// awsSample returns a sampler of std.RetryDelay for the error err, with the
// attempt number the retry middleware passes (attemptNum, 1 after the first
// failure).
func awsSample(std *retry.Standard, err error) sampler {
	return func(n int) (time.Duration, time.Duration) {
		d, derr := std.RetryDelay(n, err)
		if derr != nil {
			panic(derr)
		}
		return d, d
	}
}

// TestAWSGoReal samples the AWS SDK for Go v2's standard retryer under its
// defaults (retry behavior 2.1 since v1.48.0) for an ordinary error, then for
// a throttling error and under a configuration, each against the profile.
func TestAWSGoReal(t *testing.T) {
	t.Logf("real implementation: github.com/aws/aws-sdk-go-v2 %s", moduleVersion(t, "github.com/aws/aws-sdk-go-v2"))
	std := retry.NewStandard()
	sampledSystem{
		profile: "aws_go",
		upTo:    12,
		sample:  awsSample(std, errors.New("retrykit verify")),
		retry:   func(n int) bool { return n < std.MaxAttempts() },
	}.check(t)

	t.Run("throttling", func(t *testing.T) {
		p, err := profile.Lookup("aws_go")
		if err != nil {
			t.Fatal(err)
		}
		if p, err = p.WithClass(profile.ClassThrottling); err != nil {
			t.Fatal(err)
		}
		if !std.IsErrorRetryable(throttleError{}) {
			t.Fatal("the SDK does not retry a ThrottlingException")
		}
		for n := 1; n <= 12; n++ {
			lo, hi := p.Bounds(n)
			checkSampled(t, "throttling", n, lo, hi, awsSample(std, throttleError{}))
		}
	})

	t.Run("configured", func(t *testing.T) {
		p, err := profile.Parse("aws_go:MaxAttempts=5,MaxBackoff=300ms,BaseDelay=20ms")
		if err != nil {
			t.Fatal(err)
		}
		cfg := retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts, o.MaxBackoff, o.BaseDelay = 5, 300*time.Millisecond, 20*time.Millisecond
		})
		for n := 1; n <= 10; n++ {
			lo, hi := p.Bounds(n)
			checkSampled(t, p.Name(), n, lo, hi, awsSample(cfg, errors.New("retrykit verify")))
		}
		if cfg.MaxAttempts() != p.MaxAttempts() {
			t.Errorf("MaxAttempts: SDK %d, profile %d", cfg.MaxAttempts(), p.MaxAttempts())
		}
	})

	t.Run("exhaustion", func(t *testing.T) {
		for _, spec := range []string{"aws_go", "aws_go:MaxAttempts=2", "aws_go:MaxAttempts=4"} {
			p, err := profile.Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			calls, err := awsAttempts(t, retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = p.MaxAttempts() }), "")
			var maxErr *retry.MaxAttemptsError
			if !errors.As(err, &maxErr) {
				t.Fatalf("%s: the retry middleware ended with %v, want a MaxAttemptsError", spec, err)
			}
			if calls != p.MaxAttempts() {
				t.Errorf("%s: the SDK's retry middleware made %d attempts, the profile says %d", spec, calls, p.MaxAttempts())
			}
		}
	})

	t.Run("retry_after", func(t *testing.T) {
		// x-amz-retry-after 400ms: the delay is min(max(400ms, t), t + 5s)
		// with t < 50ms, so 400ms exactly; without the header it would be
		// below 50ms. Only the lower end is asserted (a loaded machine
		// sleeps longer, never shorter).
		p, _ := profile.Lookup("aws_go")
		p, err := p.WithRetryAfter(400 * time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := p.Bounds(1)
		start := time.Now()
		calls, _ := awsAttempts(t, retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 2 }), "400")
		if el := time.Since(start); calls != 2 || el < lo {
			t.Errorf("with x-amz-retry-after 400: %d attempts in %v; the profile's delay is %v", calls, el, lo)
		}
	})
}

// awsAttempts runs the SDK's own retry middleware (retry.Attempt, the one
// every service client installs) around a handler that always fails with an
// HTTP 500, and returns how many attempts it made and its final error.
// retryAfter, when not empty, is sent as the x-amz-retry-after header.
func awsAttempts(t *testing.T, std *retry.Standard, retryAfter string) (int, error) {
	t.Helper()
	mw := retry.NewAttemptMiddleware(std, smithyhttp.RequestCloner)
	calls := 0
	next := smithymiddle.FinalizeHandlerFunc(func(ctx context.Context, in smithymiddle.FinalizeInput) (smithymiddle.FinalizeOutput, smithymiddle.Metadata, error) {
		calls++
		h := http.Header{}
		if retryAfter != "" {
			h.Set("X-Amz-Retry-After", retryAfter)
		}
		resp := &smithyhttp.Response{Response: &http.Response{StatusCode: 500, Header: h}}
		return smithymiddle.FinalizeOutput{}, smithymiddle.Metadata{}, &smithyhttp.ResponseError{Response: resp, Err: errors.New("HTTP " + strconv.Itoa(500))}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err := mw.HandleFinalize(ctx, smithymiddle.FinalizeInput{Request: smithyhttp.NewStackRequest()}, next)
	return calls, err
}
