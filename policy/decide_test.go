package policy

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
)

// executions counts how many times a job with policy p runs when every
// attempt fails with a retryable error: attempts continue while Decide says
// Retry.
func executions(t *testing.T, p *Policy) int {
	t.Helper()
	for n := 1; n < 1000; n++ {
		d, err := p.DecideAt(Failure{Attempt: n, ErrorType: "external.timeout"}, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if d.Action != Retry {
			if d.Reason != ReasonExhausted || d.Action != p.Spec().OnExhaustion {
				t.Fatalf("attempt %d: %+v", n, d)
			}
			return n
		}
	}
	t.Fatal("never exhausted")
	return 0
}

// Spec §2.2 max_attempts table; RK-04 for 0.
func TestMaxAttemptsTable(t *testing.T) {
	for _, tt := range []struct{ max, runs int }{{0, 1}, {1, 1}, {3, 3}, {25, 25}} {
		s := DefaultSpec()
		s.MaxAttempts = tt.max
		p, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := executions(t, p); got != tt.runs {
			t.Errorf("max_attempts %d: %d executions, want %d", tt.max, got, tt.runs)
		}
	}
}

// Spec §12.2: default policy, retry delays before jitter 1s, 2s; the third
// failure discards. With r = 0.5 the jitter multiplier is exactly 1.
func TestDefaultPolicyDecisions(t *testing.T) {
	p := Default()
	want := []Decision{
		{Retry, time.Second, ReasonRetry},
		{Retry, 2 * time.Second, ReasonRetry},
		{Discard, 0, ReasonExhausted},
		{Discard, 0, ReasonExhausted},
	}
	for i, w := range want {
		got, err := p.DecideAt(Failure{Attempt: i + 1, ErrorType: "external.server_error"}, 0.5)
		if err != nil || got != w {
			t.Errorf("attempt %d: got %+v, %v; want %+v", i+1, got, err, w)
		}
	}
	// jitter bounds (§5): r=0 gives half, r→1 gives just under 1.5×.
	d, _ := p.DecideAt(Failure{Attempt: 2}, 0)
	if d.Delay != time.Second {
		t.Errorf("r=0: %v, want 1s (2s * 0.5)", d.Delay)
	}
	d, _ = p.DecideAt(Failure{Attempt: 1}, 0.25)
	if d.Delay != 750*time.Millisecond {
		t.Errorf("r=0.25: %v, want 750ms (1s * 0.75)", d.Delay)
	}
}

// Spec §12.3 with the strategy made explicit (RK-01): 15s * n^4 capped at 1h,
// no jitter so the table is exact.
func TestAggressivePolicySchedule(t *testing.T) {
	p := mustParse(t, `{"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0,
		"max_interval": "PT1H", "jitter": false, "backoff_strategy": "polynomial",
		"non_retryable_errors": ["payment.card_stolen", "payment.card_expired", "validation.*"],
		"on_exhaustion": "dead_letter"}`)
	for _, tt := range []struct {
		attempt int // the attempt that failed = retry number n
		delay   time.Duration
	}{
		{1, 15 * time.Second},   // 15s * 1^4
		{2, 240 * time.Second},  // 15s * 2^4
		{3, 1215 * time.Second}, // 15s * 3^4
		{4, time.Hour},          // 15s * 4^4 = 3840s, capped
		{5, time.Hour},          // 15s * 5^4 = 9375s, capped
		{24, time.Hour},
	} {
		d, err := p.DecideAt(Failure{Attempt: tt.attempt, ErrorType: "payment.gateway_timeout"}, 0.9)
		if err != nil || d != (Decision{Retry, tt.delay, ReasonRetry}) {
			t.Errorf("attempt %d: %+v, %v; want retry after %v", tt.attempt, d, err, tt.delay)
		}
	}
	for _, tt := range []struct {
		errType string
		want    Decision
	}{
		{"payment.card_stolen", Decision{DeadLetter, 0, ReasonNonRetryable}},
		{"payment.card_expired", Decision{DeadLetter, 0, ReasonNonRetryable}},
		{"validation.amount", Decision{DeadLetter, 0, ReasonNonRetryable}},
		{"validation.a.b", Decision{DeadLetter, 0, ReasonNonRetryable}},
		{"validation", Decision{Retry, 15 * time.Second, ReasonRetry}},
		{"payment.card_declined", Decision{Retry, 15 * time.Second, ReasonRetry}},
	} {
		d, err := p.DecideAt(Failure{Attempt: 1, ErrorType: tt.errType}, 0)
		if err != nil || d != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.errType, d, err, tt.want)
		}
	}
	d, _ := p.DecideAt(Failure{Attempt: 25, ErrorType: "payment.gateway_timeout"}, 0)
	if d != (Decision{DeadLetter, 0, ReasonExhausted}) {
		t.Errorf("attempt 25: %+v, want dead letter", d)
	}
}

// Spec §6.2 matching table, through Decide.
func TestMatchingTableViaDecide(t *testing.T) {
	p := mustParse(t, `{"non_retryable_errors": ["validation.payload_invalid", "auth.*"]}`)
	for _, tt := range []struct {
		errType string
		match   bool
	}{
		{"validation.payload_invalid", true},
		{"validation.schema_error", false},
		{"auth.token_expired", true},
		{"auth.forbidden", true},
		{"auth", false},
		{"external.auth.failure", false},
		// RK-15
		{"authx", false},
		{"auth.", true},
		{"AUTH.x", false},
		{"", false},
	} {
		d, err := p.DecideAt(Failure{Attempt: 1, ErrorType: tt.errType}, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		want := Decision{Retry, time.Second, ReasonRetry}
		if tt.match {
			want = Decision{Discard, 0, ReasonNonRetryable}
		}
		if d != want {
			t.Errorf("%q: %+v, want %+v", tt.errType, d, want)
		}
	}
}

// Spec §7.2 precedence and RK-13.
func TestHandlerCodePrecedence(t *testing.T) {
	// A policy where everything else points elsewhere: dead_letter on
	// exhaustion, a matching non-retryable entry, attempts left.
	dl := mustParse(t, `{"max_attempts": 5, "non_retryable_errors": ["x.*"], "on_exhaustion": "dead_letter", "jitter": false}`)
	disc := mustParse(t, `{"max_attempts": 5, "non_retryable_errors": ["x.*"], "on_exhaustion": "discard", "jitter": false}`)
	tests := []struct {
		p       *Policy
		attempt int
		errType string
		code    errmatch.Code
		want    Decision
	}{
		{dl, 1, "y.z", errmatch.CodeDiscard, Decision{Discard, 0, ReasonHandlerCode}},
		{dl, 1, "x.a", errmatch.CodeDiscard, Decision{Discard, 0, ReasonHandlerCode}},
		{dl, 9, "y.z", errmatch.CodeDiscard, Decision{Discard, 0, ReasonHandlerCode}},
		{dl, 1, "y.z", errmatch.CodeFail, Decision{Discard, 0, ReasonHandlerCode}},
		{dl, 9, "x.a", errmatch.CodeFail, Decision{Discard, 0, ReasonHandlerCode}},
		{disc, 1, "y.z", errmatch.CodeDeadLetter, Decision{DeadLetter, 0, ReasonHandlerCode}},
		{disc, 1, "x.a", errmatch.CodeDeadLetter, Decision{DeadLetter, 0, ReasonHandlerCode}},
		{disc, 9, "y.z", errmatch.CodeDeadLetter, Decision{DeadLetter, 0, ReasonHandlerCode}},
		// RETRY or no code: the policy
		{dl, 1, "x.a", errmatch.CodeRetry, Decision{DeadLetter, 0, ReasonNonRetryable}},
		{dl, 1, "x.a", "", Decision{DeadLetter, 0, ReasonNonRetryable}},
		{disc, 1, "x.a", "", Decision{Discard, 0, ReasonNonRetryable}},
		{dl, 5, "y.z", errmatch.CodeRetry, Decision{DeadLetter, 0, ReasonExhausted}}, // RETRY never extends
		{disc, 5, "y.z", "", Decision{Discard, 0, ReasonExhausted}},
		{dl, 5, "x.a", "", Decision{DeadLetter, 0, ReasonNonRetryable}},
		{dl, 4, "y.z", errmatch.CodeRetry, Decision{Retry, 8 * time.Second, ReasonRetry}}, // 1s * 2^3
		{dl, 1, "y.z", "", Decision{Retry, time.Second, ReasonRetry}},
	}
	for _, tt := range tests {
		got, err := tt.p.DecideAt(Failure{Attempt: tt.attempt, ErrorType: tt.errType, Code: tt.code}, 0.3)
		if err != nil || got != tt.want {
			t.Errorf("attempt %d %q %q: %+v, %v; want %+v", tt.attempt, tt.errType, tt.code, got, err, tt.want)
		}
	}
}

// Spec §12.7: the handler override example, under the default policy.
func TestHandlerOverrideExample(t *testing.T) {
	p := mustParse(t, `{"jitter": false}`)
	for _, tt := range []struct {
		f    Failure
		want Decision
	}{
		{Failure{Attempt: 1, ErrorType: "payment.card_declined", Code: errmatch.CodeDiscard}, Decision{Discard, 0, ReasonHandlerCode}},
		{Failure{Attempt: 1, ErrorType: "payment.card_stolen", Code: errmatch.CodeDeadLetter}, Decision{DeadLetter, 0, ReasonHandlerCode}},
		{Failure{Attempt: 1, ErrorType: "external.timeout", Code: errmatch.CodeRetry}, Decision{Retry, time.Second, ReasonRetry}},
		{Failure{Attempt: 2, ErrorType: "external.server_error", Code: ""}, Decision{Retry, 2 * time.Second, ReasonRetry}},
	} {
		got, err := p.DecideAt(tt.f, 0)
		if err != nil || got != tt.want {
			t.Errorf("%+v: %+v, %v; want %+v", tt.f, got, err, tt.want)
		}
	}
}

// Spec §12.5: constant 10s polling, 60 attempts, no jitter.
func TestConstantPolling(t *testing.T) {
	p := mustParse(t, `{"max_attempts": 60, "initial_interval": "PT10S", "backoff_coefficient": 1.0,
		"max_interval": "PT10S", "jitter": false, "non_retryable_errors": [], "on_exhaustion": "dead_letter"}`)
	for n := 1; n < 60; n++ {
		d, _ := p.DecideAt(Failure{Attempt: n}, 0.99)
		if d != (Decision{Retry, 10 * time.Second, ReasonRetry}) {
			t.Fatalf("attempt %d: %+v", n, d)
		}
	}
	d, _ := p.DecideAt(Failure{Attempt: 60}, 0)
	if d != (Decision{DeadLetter, 0, ReasonExhausted}) {
		t.Errorf("attempt 60: %+v", d)
	}
}

// Spec §12.1 and §12.6.
func TestNoRetryPolicies(t *testing.T) {
	d, _ := mustParse(t, `{"max_attempts": 1}`).DecideAt(Failure{Attempt: 1, ErrorType: "x.y"}, 0)
	if d != (Decision{Discard, 0, ReasonExhausted}) {
		t.Errorf("§12.1: %+v", d)
	}
	d, _ = mustParse(t, `{"max_attempts": 1, "on_exhaustion": "dead_letter"}`).DecideAt(Failure{Attempt: 1, ErrorType: "x.y"}, 0)
	if d != (Decision{DeadLetter, 0, ReasonExhausted}) {
		t.Errorf("§12.6: %+v", d)
	}
}

func TestDecideErrors(t *testing.T) {
	p := Default()
	for _, f := range []Failure{{Attempt: 0}, {Attempt: -1}, {Attempt: 0, Code: errmatch.CodeDiscard}} {
		_, err := p.DecideAt(f, 0)
		var fe *FailureError
		if !errors.Is(err, ErrInvalidFailure) || !errors.As(err, &fe) || fe.Field != "attempt" {
			t.Errorf("%+v: %v", f, err)
		}
	}
	for _, code := range []errmatch.Code{"retry", "Discard", "ABORT", " RETRY"} {
		_, err := p.Decide(Failure{Attempt: 1, Code: code}, backoff.Fixed(0))
		if !errors.Is(err, ErrInvalidFailure) || !errors.Is(err, errmatch.ErrUnknownCode) {
			t.Errorf("%q: %v", code, err)
		}
	}
	_, err := p.DecideAt(Failure{Attempt: 0}, 0)
	if want := "policy: failure attempt: must be at least 1, got 0"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

type countingSource struct{ n int }

func (c *countingSource) Float64() float64 { c.n++; return 0.5 }

func TestDecideSource(t *testing.T) {
	src := &countingSource{}
	d, err := Default().Decide(Failure{Attempt: 2}, src)
	if err != nil || d != (Decision{Retry, 2 * time.Second, ReasonRetry}) || src.n != 1 {
		t.Errorf("%+v %v, draws %d", d, err, src.n)
	}
	// no draw when not retrying or without jitter
	Default().Decide(Failure{Attempt: 3}, src)
	mustParse(t, `{"jitter": false}`).Decide(Failure{Attempt: 1}, src)
	if src.n != 1 {
		t.Errorf("draws %d, want 1", src.n)
	}
	// nil source: some delay within the jitter bounds of attempt 1
	d, err = Default().Decide(Failure{Attempt: 1}, nil)
	if err != nil || d.Delay < 500*time.Millisecond || d.Delay >= 1500*time.Millisecond {
		t.Errorf("nil source: %+v %v", d, err)
	}
}

// Schedule yields attempts 1..max(max_attempts,1)-1, each with the delay
// Decide gives for the same draw, and stops when the loop breaks.
func TestPolicySchedule(t *testing.T) {
	for _, c := range []struct {
		json string
		want []time.Duration
	}{
		{`{"max_attempts": 0}`, nil},
		{`{"max_attempts": 1}`, nil},
		{`{"max_attempts": 3}`, []time.Duration{time.Second, 2 * time.Second}}, // r = 0.5: multiplier 1
		{`{"max_attempts": 5, "backoff_strategy": "linear", "initial_interval": "PT2S"}`, []time.Duration{2e9, 4e9, 6e9, 8e9}},
	} {
		p := mustParse(t, c.json)
		var got []time.Duration
		for n, d := range p.Schedule(backoff.Fixed(0.5)) {
			if n != len(got)+1 {
				t.Fatalf("%s: attempt %d after %d delays", c.json, n, len(got))
			}
			dec, err := p.DecideAt(Failure{Attempt: n}, 0.5)
			if err != nil || dec.Action != Retry || dec.Delay != d {
				t.Fatalf("%s: attempt %d: Schedule %v, DecideAt %+v %v", c.json, n, d, dec, err)
			}
			got = append(got, d)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Schedule = %v, want %v", c.json, got, c.want)
		}
		if dec, _ := p.DecideAt(Failure{Attempt: len(got) + 1}, 0.5); dec.Action == Retry {
			t.Errorf("%s: attempt %d after the schedule is retried", c.json, len(got)+1)
		}
	}
	// A huge max_attempts: the loop breaks when it has seen enough.
	n := 0
	for range mustParse(t, `{"max_attempts": 9223372036854775807}`).Schedule(nil) {
		if n++; n == 100 {
			break
		}
	}
	if n != 100 {
		t.Errorf("got %d delays", n)
	}
	var nilP *Policy
	count := 0
	for range nilP.Schedule(nil) {
		count++
	}
	if count != 2 {
		t.Errorf("nil Policy schedule has %d delays, want the default's 2", count)
	}
}
