package policy_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// Parse a policy and decide what happens after each failure. DecideAt takes
// the jitter draw r explicitly, so the delays are exact: r = 0.5 gives the
// multiplier 1.0.
func ExampleParse() {
	p, err := policy.Parse([]byte(`{
		"max_attempts": 4,
		"initial_interval": "PT1S",
		"non_retryable_errors": ["validation.*"],
		"on_exhaustion": "dead_letter"
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range []policy.Failure{
		{Attempt: 1, ErrorType: "external.timeout"},
		{Attempt: 2, ErrorType: "external.timeout"},
		{Attempt: 3, ErrorType: "external.timeout", Code: errmatch.CodeRetry},
		{Attempt: 4, ErrorType: "external.timeout"},
		{Attempt: 1, ErrorType: "validation.payload_invalid"},
		{Attempt: 1, ErrorType: "payment.card_declined", Code: errmatch.CodeDiscard},
	} {
		d, err := p.DecideAt(f, 0.5)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("attempt %d %-28s %-11s %-13s %v\n", f.Attempt, f.ErrorType, d.Action, d.Reason, d.Delay)
	}
	// Output:
	// attempt 1 external.timeout             retry       retry         1s
	// attempt 2 external.timeout             retry       retry         2s
	// attempt 3 external.timeout             retry       retry         4s
	// attempt 4 external.timeout             dead_letter exhausted     0s
	// attempt 1 validation.payload_invalid   dead_letter non_retryable 0s
	// attempt 1 payment.card_declined        discard     handler_code  0s
}

// A partial policy is merged over the defaults (OJS retry spec §8.1);
// MarshalJSON writes the effective policy in canonical form.
func ExampleParse_partialOverride() {
	p, err := policy.Parse([]byte(`{"max_attempts": 10, "on_exhaustion": "dead_letter"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := p.MarshalJSON()
	fmt.Println(string(b))
	// Output:
	// {"max_attempts":10,"initial_interval":"PT1S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"dead_letter","backoff_strategy":"exponential"}
}

// Every problem is reported at once, each naming its field.
func ExampleValidationError() {
	_, err := policy.Parse([]byte(`{
		"max_attempts": -1,
		"initial_interval": "PT",
		"jitter": "yes",
		"non_retryable_errors": ["auth.*", ""],
		"max_retries": 5
	}`))
	var ve *policy.ValidationError
	if errors.As(err, &ve) {
		fmt.Println(ve.Type(), errors.Is(err, policy.ErrInvalidPolicy))
		for _, fe := range ve.Errors {
			fmt.Printf("%s: %s\n", fe.Field, fe.Reason)
		}
	}
	// Output:
	// validation.retry_policy_invalid true
	// max_attempts: must be a non-negative integer, got -1
	// initial_interval: invalid ISO 8601 duration "PT": "T" must be followed by at least one time component
	// jitter: must be a boolean, got "yes"
	// non_retryable_errors[1]: must not be empty, got ""
	// max_retries: unknown field
}

// Durations follow the OJS schema grammar exactly, to the nanosecond.
func ExampleParseDuration() {
	for _, s := range []string{"PT1M30.5S", "P1D", "PT0.0000000005S", "P1W", "PT"} {
		d, err := policy.ParseDuration(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s, "=", d, "=", policy.FormatDuration(d))
	}
	// Output:
	// PT1M30.5S = 1m30.5s = PT1M30.5S
	// P1D = 24h0m0s = PT24H
	// PT0.0000000005S = 1ns = PT0.000000001S
	// policy: invalid ISO 8601 duration "P1W": weeks ("W") are not supported
	// policy: invalid ISO 8601 duration "PT": "T" must be followed by at least one time component
}

// New validates a Spec built in Go.
func ExampleNew() {
	s := policy.DefaultSpec()
	s.MaxAttempts = 5
	s.NonRetryableErrors = []string{"auth.*"}
	p, err := policy.New(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := p.DecideAt(policy.Failure{Attempt: 1, ErrorType: "auth.token_expired"}, 0)
	fmt.Println(d.Action, d.Reason)

	s.InitialInterval = 0
	_, err = policy.New(s)
	fmt.Println(err)
	// Output:
	// discard non_retryable
	// policy: initial_interval: must be greater than zero, got "PT0S"
}

// The whole flow a queue follows: parse the job's retry object once, then
// on each failure ask the policy what to do. Decide draws the jitter from
// an injected source; backoff.Fixed makes it exact (r = 0.25 is the
// multiplier 0.75).
func Example() {
	p, err := policy.Parse([]byte(`{"max_attempts": 3, "initial_interval": "PT2S"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	src := backoff.Fixed(0.25)
	for attempt := 1; ; attempt++ {
		d, err := p.Decide(policy.Failure{Attempt: attempt, ErrorType: "external.timeout"}, src)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("attempt %d failed: %s %v\n", attempt, d.Action, d.Delay)
		if d.Action != policy.Retry {
			return
		}
	}
	// Output:
	// attempt 1 failed: retry 1.5s
	// attempt 2 failed: retry 3s
	// attempt 3 failed: discard 0s
}

// Handler codes come before the policy (spec §7.2); an unknown code is an
// error, never a silent retry.
func ExamplePolicy_DecideAt() {
	p := policy.Default()
	for _, code := range []errmatch.Code{"", errmatch.CodeRetry, errmatch.CodeDeadLetter, errmatch.CodeFail, "RETRY_LATER"} {
		d, err := p.DecideAt(policy.Failure{Attempt: 1, ErrorType: "x.y", Code: code}, 0.5)
		if err != nil {
			fmt.Printf("%-12q error: %v\n", code, err)
			continue
		}
		fmt.Printf("%-12q %s (%s) %v\n", code, d.Action, d.Reason, d.Delay)
	}
	// Output:
	// ""           retry (retry) 1s
	// "RETRY"      retry (retry) 1s
	// "DEAD_LETTER" dead_letter (handler_code) 0s
	// "FAIL"       discard (handler_code) 0s
	// "RETRY_LATER" error: policy: failure code: unknown handler code "RETRY_LATER" (want RETRY, DISCARD, DEAD_LETTER or FAIL)
}

// FormatDuration writes the canonical form ParseDuration reads back exactly:
// hours at most, never days, weeks or months.
func ExampleFormatDuration() {
	for _, d := range []time.Duration{0, 500 * time.Millisecond, 90 * time.Second, 36 * time.Hour, time.Nanosecond} {
		s := policy.FormatDuration(d)
		back, err := policy.ParseDuration(s)
		fmt.Println(s, back == d, err)
	}
	// Output:
	// PT0S true <nil>
	// PT0.5S true <nil>
	// PT1M30S true <nil>
	// PT36H true <nil>
	// PT0.000000001S true <nil>
}

// Schedule lists the delay after each attempt that is retried; the next
// failure after the last one ends the job.
func ExamplePolicy_Schedule() {
	p, err := policy.Parse([]byte(`{"max_attempts": 4, "initial_interval": "PT10S", "jitter": false}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for attempt, delay := range p.Schedule(nil) {
		fmt.Printf("after attempt %d: retry in %v\n", attempt, delay)
	}
	// Output:
	// after attempt 1: retry in 10s
	// after attempt 2: retry in 20s
	// after attempt 3: retry in 40s
}

// A policy of the retry extensions (docs/extensions.md): rate limits wait
// a fixed minute for up to 10 attempts, other errors back off with
// decorrelated jitter, a handler's Retry-After is honoured up to 10
// minutes, and a job may snooze twice without spending an attempt.
func ExamplePolicy_DecideAt_extensions() {
	p, err := policy.Parse([]byte(`{
		"max_attempts": 5,
		"jitter_mode": "decorrelated",
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 10,
		                 "initial_interval": "PT1M", "backoff_strategy": "none", "jitter": false}],
		"max_retry_after": "PT10M",
		"max_snoozes": 2
	}`))
	if err != nil {
		panic(err)
	}
	for _, f := range []policy.Failure{
		{Attempt: 7, ErrorType: "rate_limit.exceeded"},
		{Attempt: 2, ErrorType: "db.deadlock", PrevDelay: 2 * time.Second},
		{Attempt: 1, ErrorType: "http.503", Request: errmatch.Request{Kind: errmatch.RetryAfter, Delay: time.Hour}},
		{Attempt: 3, Request: errmatch.Request{Kind: errmatch.Snooze, Delay: 30 * time.Second}, Snoozes: 1},
		{Attempt: 3, Request: errmatch.Request{Kind: errmatch.Snooze, Delay: 30 * time.Second}, Snoozes: 2},
	} {
		d, _ := p.DecideAt(f, 0.5)
		fmt.Println(d.Action, d.Delay, d.Reason)
	}
	// Output:
	// retry 1m0s retry
	// retry 3.5s retry
	// retry 10m0s retry_after
	// retry 30s snoozed
	// retry 30s retry_after
}

// Spec.Rule starts an error rule from the policy's own values; change
// what the errors it matches need.
func ExampleSpec_Rule() {
	s := policy.DefaultSpec()
	r := s.Rule("rate_limit.*")
	r.MaxAttempts, r.InitialInterval, r.Strategy, r.Jitter = 10, time.Minute, backoff.None, false
	s.ErrorRules = []policy.ErrorRule{r}
	p, err := policy.New(s)
	if err != nil {
		panic(err)
	}
	d, _ := p.DecideAt(policy.Failure{Attempt: 5, ErrorType: "rate_limit.exceeded"}, 0.5)
	fmt.Println(p.RuleFor("rate_limit.exceeded"), d.Action, d.Delay)
	d, _ = p.DecideAt(policy.Failure{Attempt: 5, ErrorType: "db.down"}, 0.5)
	fmt.Println(p.RuleFor("db.down"), d.Action, d.Reason)
	// Output:
	// 1 retry 1m0s
	// 0 discard exhausted
}
