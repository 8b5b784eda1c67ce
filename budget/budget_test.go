package budget_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

func TestParseDefaultsOfSection6(t *testing.T) {
	b, err := budget.Parse([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := budget.Spec{Timeout: 1800 * time.Second, GracePeriod: 30 * time.Second, HeartbeatTimeout: 60 * time.Second}
	if diff := cmp.Diff(want, b.Spec()); diff != "" {
		t.Fatal(diff)
	}
	if _, ok := b.Deadline(time.Now()); ok {
		t.Error("default budget has a deadline; §5.2: no total timeout by default")
	}
}

func TestParseAcceptsSection6Values(t *testing.T) {
	for in, want := range map[string]budget.Spec{
		`{"timeout": 300, "total_timeout": 300}`:                                             {Timeout: 300 * time.Second, TotalTimeout: 300 * time.Second, GracePeriod: 30 * time.Second, HeartbeatTimeout: time.Minute},
		`{"timeout": 3600, "total_timeout": 86400, "enqueue_ttl": 7200, "grace_period": 60}`: {Timeout: time.Hour, TotalTimeout: 24 * time.Hour, EnqueueTTL: 2 * time.Hour, GracePeriod: time.Minute, HeartbeatTimeout: time.Minute},
		`{"grace_period": 0, "heartbeat_timeout": 1, "timeout": 1.0, "enqueue_ttl": 1e0}`:    {Timeout: time.Second, EnqueueTTL: time.Second, HeartbeatTimeout: time.Second},
	} {
		b, err := budget.Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%s): %v", in, err)
			continue
		}
		if diff := cmp.Diff(want, b.Spec()); diff != "" {
			t.Errorf("Parse(%s): %s", in, diff)
		}
		out, _ := b.MarshalJSON()
		again, err := budget.Parse(out)
		if err != nil || again.Spec() != b.Spec() {
			t.Errorf("round trip of %s through %s: %v", in, out, err)
		}
	}
}

// Each refusal names its field (ojs-timeouts §6 validation rules).
func TestParseRefusesSection6Violations(t *testing.T) {
	for in, field := range map[string]string{
		`{"timeout": 0}`:                         "timeout",
		`{"timeout": -5}`:                        "timeout",
		`{"timeout": 300, "total_timeout": 299}`: "total_timeout",
		`{"total_timeout": 60}`:                  "total_timeout", // below the default timeout, 1800 (RK-215)
		`{"total_timeout": 0}`:                   "total_timeout",
		`{"grace_period": -1}`:                   "grace_period",
		`{"heartbeat_timeout": 0}`:               "heartbeat_timeout",
		`{"enqueue_ttl": 0}`:                     "enqueue_ttl",
		`{"timeout": null}`:                      "timeout",
		`{"timeout": 2.5}`:                       "timeout",
		`{"timeout": "30"}`:                      "timeout",
		`{"timeout": 3153600001}`:                "timeout",
		`{"total_timout": 5000}`:                 "total_timout",
	} {
		_, err := budget.Parse([]byte(in))
		var fe *budget.FieldError
		if !errors.Is(err, budget.ErrInvalidBudget) || !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Parse(%s) = %v, want a FieldError on %q", in, err, field)
		}
		if err != nil && !strings.Contains(err.Error(), "budget: "+field+": ") {
			t.Errorf("Parse(%s): message %q does not name %s", in, err, field)
		}
	}
	_, err := budget.Parse([]byte(`{"total_timout": 5000}`))
	if err == nil || !strings.Contains(err.Error(), `did you mean "total_timeout"?`) {
		t.Errorf("typo: %v", err)
	}
	for _, in := range []string{`{"timeout": 1, "timeout": 2}`, `[]`, `{`, "{\"timeout\": 5}\n{}", strings.Repeat(" ", budget.MaxDocumentSize+1)} {
		if _, err := budget.Parse([]byte(in)); !errors.Is(err, budget.ErrInvalidBudget) {
			t.Errorf("Parse(%.40q) = %v", in, err)
		}
	}
}

func TestNewRefusesFractionsAndNegatives(t *testing.T) {
	s := budget.DefaultSpec()
	s.Timeout = 1500 * time.Millisecond
	s.GracePeriod = -time.Second
	_, err := budget.New(s)
	var ve *budget.ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 2 || ve.Errors[0].Field != "timeout" || ve.Errors[1].Field != "grace_period" {
		t.Fatalf("New = %v", err)
	}
}

// The §8 example error object, field for field.
func TestExpiryIsTheSection8ErrorObject(t *testing.T) {
	e := budget.Expiry{Kind: budget.KindExecution, Limit: 300 * time.Second, Elapsed: 305 * time.Second}
	got, _ := e.MarshalJSON()
	const want = `{"type": "timeout", "message": "Job execution exceeded timeout of 300 seconds", "timeout_kind": "execution", "limit_seconds": 300, "elapsed_seconds": 305}`
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(want), &w)
	if diff := cmp.Diff(w, g); diff != "" {
		t.Fatal(diff)
	}
	for kind, typ := range map[budget.Kind]string{budget.KindExecution: "timeout", budget.KindTotal: "total_timeout", budget.KindEnqueueTTL: "enqueue_ttl_expired", budget.KindStalled: "stalled"} {
		if (budget.Expiry{Kind: kind}).Type() != typ {
			t.Errorf("%s: type %q, want %q (§8 table)", kind, (budget.Expiry{Kind: kind}).Type(), typ)
		}
	}
	if s := (budget.Expiry{Elapsed: 300*time.Second + time.Nanosecond}).ElapsedSeconds(); s != 301 {
		t.Errorf("elapsed 300 s + 1 ns: %d, want 301 (RK-219)", s)
	}
}

// §7.1: now − started_at > timeout + grace_period; §7.3: now − last_heartbeat
// > heartbeat_timeout; §5.2, §5.3 likewise from created_at. At the limit
// itself nothing has expired (RK-216).
func TestExpiryBoundaries(t *testing.T) {
	b, err := budget.Parse([]byte(`{"timeout": 300, "grace_period": 5, "heartbeat_timeout": 60, "total_timeout": 900, "enqueue_ttl": 120}`))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type check func(start, now time.Time) (budget.Expiry, bool)
	for _, c := range []struct {
		name  string
		f     check
		limit time.Duration
		kind  budget.Kind
		rep   time.Duration
	}{
		{"execution", b.Execution, 305 * time.Second, budget.KindExecution, 300 * time.Second},
		{"stalled", b.Stalled, 60 * time.Second, budget.KindStalled, 60 * time.Second},
		{"total", b.Total, 900 * time.Second, budget.KindTotal, 900 * time.Second},
		{"enqueue_ttl", b.EnqueueTTL, 120 * time.Second, budget.KindEnqueueTTL, 120 * time.Second},
	} {
		if _, ok := c.f(t0, t0.Add(c.limit)); ok {
			t.Errorf("%s: expired at the limit", c.name)
		}
		e, ok := c.f(t0, t0.Add(c.limit+time.Nanosecond))
		if !ok || e.Kind != c.kind || e.Limit != c.rep || e.Elapsed != c.limit+time.Nanosecond {
			t.Errorf("%s: 1 ns past the limit: %+v, %v", c.name, e, ok)
		}
		if _, ok := c.f(t0, t0.Add(-time.Hour)); ok {
			t.Errorf("%s: expired before it started", c.name)
		}
	}
	if _, ok := budget.Default().Total(t0, t0.Add(1000*time.Hour)); ok {
		t.Error("no total timeout, yet Total expired")
	}
}

var t0 = time.Date(2026, 2, 19, 12, 0, 0, 0, time.UTC)

func fail(attempt int, typ string, at time.Duration) budget.Failure {
	return budget.Failure{Failure: policy.Failure{Attempt: attempt, ErrorType: typ}, CreatedAt: t0, At: t0.Add(at)}
}

func mustPolicy(t *testing.T, s string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustBudget(t *testing.T, s string) *budget.Budget {
	t.Helper()
	b, err := budget.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// §9.1: created_at + total_timeout < now + backoff_delay + timeout ⇒ discard.
func TestSection91Boundary(t *testing.T) {
	b := mustBudget(t, `{"timeout": 60, "total_timeout": 600}`)
	p := mustPolicy(t, `{"max_attempts": 50, "initial_interval": "PT30S", "backoff_coefficient": 1, "jitter": false}`)
	for _, c := range []struct {
		at     time.Duration
		action policy.Action
		reason budget.Reason
	}{
		{0, policy.Retry, budget.ReasonPolicy},
		{510 * time.Second, policy.Retry, budget.ReasonPolicy},                         // 510+30+60 = 600: equal, retried
		{510*time.Second + time.Nanosecond, policy.Discard, budget.ReasonNoTimeLeft},   // 1 ns over
		{600 * time.Second, policy.Discard, budget.ReasonNoTimeLeft},                   // at the deadline: not yet "exceeded"
		{600*time.Second + time.Nanosecond, policy.Discard, budget.ReasonTotalTimeout}, // exceeded
	} {
		d, err := b.DecideAt(p, fail(3, "x.err", c.at), 0)
		if err != nil || d.Action != c.action || d.Reason != c.reason {
			t.Errorf("failure at %v: %+v, %v; want %v (%v)", c.at, d, err, c.action, c.reason)
		}
		if d.Action == policy.Retry && d.Delay != 30*time.Second {
			t.Errorf("failure at %v: delay %v", c.at, d.Delay)
		}
	}
}

// DecideBeforeDraw judges §9.1 at the top of the jitter range and otherwise
// gives the policy's decision at the middle draw. Timeout 10 s, total 60 s,
// a failure at 40 s, initial_interval 8 s with jitter: the delay is 8 s ×
// (0.5 + r), so 8 s at r = 0.5 (40 + 8 + 10 = 58 s, in time) but 12 s at
// r = 1 (62 s, over): no time left. With initial 6 s: 9 s at the top, 59 s,
// retried after the middle 6 s.
func TestDecideBeforeDrawJudgesTheTopDraw(t *testing.T) {
	b := mustBudget(t, `{"timeout": 10, "total_timeout": 60}`)
	for _, c := range []struct {
		initial string
		action  policy.Action
		reason  budget.Reason
		delay   time.Duration
	}{
		{"PT8S", policy.Discard, budget.ReasonNoTimeLeft, 0},
		{"PT6S", policy.Retry, budget.ReasonPolicy, 6 * time.Second},
	} {
		p := mustPolicy(t, `{"max_attempts": 5, "initial_interval": "`+c.initial+`", "max_interval": "PT1M", "jitter": true}`)
		d, err := b.DecideBeforeDraw(p, fail(1, "x.err", 40*time.Second))
		if err != nil || d.Action != c.action || d.Reason != c.reason || d.Delay != c.delay {
			t.Errorf("initial %s: %+v, %v; want %v (%v) after %v", c.initial, d, err, c.action, c.reason, c.delay)
		}
	}
	// A worker clock behind created_at is no time spent, not an error.
	p := mustPolicy(t, `{"max_attempts": 5, "initial_interval": "PT6S", "max_interval": "PT1M", "jitter": true}`)
	f := fail(1, "x.err", 0)
	f.At = f.CreatedAt.Add(-time.Minute)
	if d, err := b.DecideBeforeDraw(p, f); err != nil || d.Action != policy.Retry || d.Delay != 6*time.Second {
		t.Errorf("at before created_at: %+v, %v; want a retry after 6 s", d, err)
	}
	// Without a total timeout it is the policy's decision at 0.5.
	if d, err := budget.Default().DecideBeforeDraw(p, fail(1, "x.err", time.Hour)); err != nil || d.Reason != budget.ReasonPolicy || d.Delay != 6*time.Second {
		t.Errorf("no total timeout: %+v, %v; want the policy's 6 s", d, err)
	}
}

// §5.2: "regardless of remaining retry attempts"; "MUST take precedence over
// the retry policy's max_attempts".
func TestTotalTimeoutPrecedesMaxAttempts(t *testing.T) {
	b := mustBudget(t, `{"timeout": 10, "total_timeout": 100}`)
	p := mustPolicy(t, `{"max_attempts": 3, "non_retryable_errors": ["x.fatal"], "on_exhaustion": "dead_letter"}`)
	for _, f := range []budget.Failure{fail(1, "x.err", 101*time.Second), fail(3, "x.err", 101*time.Second), fail(1, "x.fatal", 101*time.Second)} {
		d, err := b.DecideAt(p, f, 0.5)
		if err != nil || d.Action != policy.DeadLetter || d.Reason != budget.ReasonTotalTimeout {
			t.Errorf("attempt %d %s past the total timeout: %+v, %v; want dead_letter (total_timeout)", f.Attempt, f.ErrorType, d, err)
		}
	}
	f := fail(1, "x.err", 101*time.Second)
	f.Code = errmatch.CodeDiscard
	if d, _ := b.DecideAt(p, f, 0.5); d.Action != policy.Discard || d.Reason != budget.ReasonPolicy || d.Policy.Reason != policy.ReasonHandlerCode {
		t.Errorf("handler DISCARD past the deadline: %+v", d)
	}
}

// §9.1: "The timeout error type is retryable by default unless explicitly
// listed in the retry policy's non_retryable_errors"; §5.5 and §8 for stalled.
func TestTimeoutAndStalledAreOrdinaryFailures(t *testing.T) {
	b := budget.Default()
	for _, typ := range []string{budget.ErrorTypeTimeout, budget.ErrorTypeStalled} {
		d, err := b.DecideAt(nil, budget.Failure{Failure: policy.Failure{Attempt: 1, ErrorType: typ}}, 0.5)
		if err != nil || d.Action != policy.Retry || d.Delay != time.Second {
			t.Errorf("%s, attempt 1, default policy: %+v, %v; want retry after 1s", typ, d, err)
		}
		d, _ = b.DecideAt(nil, budget.Failure{Failure: policy.Failure{Attempt: 3, ErrorType: typ}}, 0.5)
		if d.Action != policy.Discard || d.Policy.Reason != policy.ReasonExhausted {
			t.Errorf("%s, attempt 3 of 3: %+v; want discard (§8: retries exhausted)", typ, d)
		}
	}
	p := mustPolicy(t, `{"non_retryable_errors": ["timeout"]}`)
	d, _ := b.DecideAt(p, budget.Failure{Failure: policy.Failure{Attempt: 1, ErrorType: "timeout"}}, 0.5)
	if d.Action != policy.Discard || d.Policy.Reason != policy.ReasonNonRetryable {
		t.Errorf("timeout listed as non-retryable: %+v", d)
	}
}

func TestFailureTimesRequiredWithTotalTimeout(t *testing.T) {
	b := mustBudget(t, `{"timeout": 10, "total_timeout": 100}`)
	for field, f := range map[string]budget.Failure{
		"created_at": {Failure: policy.Failure{Attempt: 1}, At: t0},
		"at":         {Failure: policy.Failure{Attempt: 1}, CreatedAt: t0, At: t0.Add(-time.Second)},
	} {
		_, err := b.DecideAt(nil, f, 0)
		var fe *budget.FailureError
		if !errors.Is(err, budget.ErrInvalidFailure) || !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := b.DecideAt(nil, fail(0, "", 0), 0); !errors.Is(err, policy.ErrInvalidFailure) {
		t.Errorf("attempt 0: %v, want policy.ErrInvalidFailure", err)
	}
	// Without a total timeout the times are not needed.
	if _, err := budget.Default().DecideAt(nil, budget.Failure{Failure: policy.Failure{Attempt: 1}}, 0); err != nil {
		t.Error(err)
	}
}
