package temporalretry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

func mustParse(t testing.TB, js string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// at makes i see every context as attempt n of an activity of type typ.
// The SDK keeps activity info under an internal context key; the seam
// stands in for activity.GetInfo (the server tests use the real one).
func at(i *Interceptor, typ string, n int32) *Interceptor {
	i.infoOf = func(context.Context) (activity.Info, bool) {
		return activity.Info{ActivityType: activity.Type{Name: typ}, Attempt: n, ActivityID: "a1"}, true
	}
	return i
}

func appErr(t *testing.T, err error) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		t.Fatalf("%v (%T) is not an ApplicationError", err, err)
	}
	return app
}

// The delays are the OJS formula I * C^(n-1), capped, times the jitter
// factor 0.5 + r, written out: I = 1s, C = 2, Max = 10s, r = 0.25.
func TestHandleRetryDelay(t *testing.T) {
	p := mustParse(t, `{"max_attempts":10,"initial_interval":"PT1S","backoff_coefficient":2,"max_interval":"PT10S","jitter":true}`)
	for _, tc := range []struct {
		n    int32
		want time.Duration
	}{
		{1, 750 * time.Millisecond},  // 1s * 0.75
		{2, 1500 * time.Millisecond}, // 2s * 0.75
		{4, 6 * time.Second},         // 8s * 0.75
		{5, 7500 * time.Millisecond}, // 16s capped to 10s, * 0.75
		{9, 7500 * time.Millisecond},
	} {
		i := at(New(p, WithSource(backoff.Fixed(0.25))), "charge", tc.n)
		err := i.Handle(context.Background(), errors.New("boom"))
		app := appErr(t, err)
		if app.NonRetryable() {
			t.Errorf("attempt %d: non-retryable, want a retry", tc.n)
		}
		if got := app.NextRetryDelay(); got != tc.want {
			t.Errorf("attempt %d: NextRetryDelay %v, want %v", tc.n, got, tc.want)
		}
		if want := "temporalretry: retry after " + tc.want.String() + ": boom"; app.Error() != want || app.Type() != "" {
			t.Errorf("attempt %d: %q type %q, want %q and Temporal's type %q", tc.n, app.Error(), app.Type(), want, "")
		}
		o, ok := OutcomeOf(err)
		if !ok || o != (Outcome{Action: "retry", Reason: "retry", Attempt: int(tc.n), Delay: tc.want}) {
			t.Errorf("attempt %d: outcome %+v %v", tc.n, o, ok)
		}
	}
}

// A delay that rounds to zero is sent as 1ns: Temporal reads 0 as unset.
func TestHandleZeroDelay(t *testing.T) {
	p := mustParse(t, `{"initial_interval":"PT0.000000001S","max_interval":"PT0.000000001S","jitter":true}`)
	i := at(New(p, WithSource(backoff.Fixed(0))), "a", 1) // 1ns * 0.5 truncates to 0
	if got := appErr(t, i.Handle(context.Background(), errors.New("x"))).NextRetryDelay(); got != time.Nanosecond {
		t.Errorf("NextRetryDelay %v, want 1ns", got)
	}
}

type myErr struct{ msg string }

func (e *myErr) Error() string { return e.msg }

func TestHandleDecisions(t *testing.T) {
	p := mustParse(t, `{"max_attempts":3,"initial_interval":"PT2S","jitter":false,
		"non_retryable_errors":["validation.bad_input","auth.*"],"on_exhaustion":"dead_letter"}`)
	for _, tc := range []struct {
		name    string
		attempt int32
		err     error
		action  string
		reason  string
		typ     string // the ApplicationError's type
		msg     string // the ApplicationError's own message
	}{
		{"untyped first", 1, errors.New("x"), "retry", "retry", "", "temporalretry: retry after 2s"},
		{"go type name", 1, &myErr{"m"}, "retry", "retry", "myErr", "temporalretry: retry after 2s"},
		{"exact match", 1, errmatch.Wrap(errors.New("x"), "validation.bad_input", ""), "dead_letter", "non_retryable", "validation.bad_input", "temporalretry: dead_letter (non_retryable)"},
		{"exact only", 1, errmatch.Wrap(errors.New("x"), "validation.bad_input2", ""), "retry", "retry", "validation.bad_input2", "temporalretry: retry after 2s"},
		{"prefix", 2, errmatch.Wrap(errors.New("x"), "auth.token.expired", ""), "dead_letter", "non_retryable", "auth.token.expired", "temporalretry: dead_letter (non_retryable)"},
		{"prefix keeps its dot", 1, errmatch.Wrap(errors.New("x"), "authx", ""), "retry", "retry", "authx", "temporalretry: retry after 2s"},
		{"anchored", 1, errmatch.Wrap(errors.New("x"), "external.auth.x", ""), "retry", "retry", "external.auth.x", "temporalretry: retry after 2s"},
		{"code discard", 1, errmatch.Wrap(errors.New("x"), "", errmatch.CodeDiscard), "discard", "handler_code", "", "temporalretry: discard (handler_code)"},
		{"code dead letter", 1, errmatch.Wrap(errors.New("x"), "", errmatch.CodeDeadLetter), "dead_letter", "handler_code", "", "temporalretry: dead_letter (handler_code)"},
		{"code retry", 1, errmatch.Wrap(errors.New("x"), "", errmatch.CodeRetry), "retry", "retry", "", "temporalretry: retry after 2s"},
		{"exhausted", 3, errors.New("x"), "dead_letter", "exhausted", "", "temporalretry: dead_letter (exhausted)"},
		{"past exhausted", 7, errors.New("x"), "dead_letter", "exhausted", "", "temporalretry: dead_letter (exhausted)"},
		{"app error type matched", 1, temporal.NewApplicationError("y", "auth.denied"), "dead_letter", "non_retryable", "auth.denied", "temporalretry: dead_letter (non_retryable)"},
		{"wrapped", 1, fmt.Errorf("ctx: %w", errmatch.Wrap(errors.New("x"), "auth.a", "")), "dead_letter", "non_retryable", "auth.a", "temporalretry: dead_letter (non_retryable)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hooked []DeadLetter
			i := at(New(p, WithDeadLetter(func(_ context.Context, dl DeadLetter) error {
				hooked = append(hooked, dl)
				return nil
			})), "charge", tc.attempt)
			err := i.Handle(context.Background(), tc.err)
			app := appErr(t, err)
			o, ok := OutcomeOf(err)
			if !ok || o.Action != tc.action || o.Reason != tc.reason || o.Attempt != int(tc.attempt) {
				t.Fatalf("outcome %+v (%v), want %s/%s at %d", o, ok, tc.action, tc.reason, tc.attempt)
			}
			if app.Type() != tc.typ {
				t.Errorf("type %q, want %q", app.Type(), tc.typ)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("the handler's error is not kept as the cause: %v", err)
			}
			end := tc.action != "retry"
			if app.NonRetryable() != end {
				t.Errorf("NonRetryable %v, want %v", app.NonRetryable(), end)
			}
			if app.Message() != tc.msg || app.Unwrap() != tc.err {
				t.Errorf("message %q cause %v, want %q and the handler's error", app.Message(), app.Unwrap(), tc.msg)
			}
			if end && app.NextRetryDelay() != 0 || !end && app.NextRetryDelay() != 2*time.Second {
				t.Errorf("NextRetryDelay %v", app.NextRetryDelay())
			}
			if wantHook := tc.action == "dead_letter"; (len(hooked) == 1) != wantHook || len(hooked) > 1 {
				t.Fatalf("dead-letter hook called %d times, want %v", len(hooked), wantHook)
			}
			if len(hooked) == 1 && (hooked[0].Err != tc.err || hooked[0].Info.ActivityID != "a1" || hooked[0].Decision.Action != policy.DeadLetter) {
				t.Errorf("hook got %+v", hooked[0])
			}
		})
	}
}

func TestHandleDiscardSkipsHook(t *testing.T) {
	p := mustParse(t, `{"max_attempts":1,"on_exhaustion":"discard"}`)
	called := false
	i := at(New(p, WithDeadLetter(func(context.Context, DeadLetter) error { called = true; return nil })), "a", 1)
	err := i.Handle(context.Background(), errors.New("x"))
	if o, _ := OutcomeOf(err); o.Action != "discard" || o.Reason != "exhausted" || called {
		t.Errorf("outcome %+v, hook called %v", o, called)
	}
}

func TestHandleHookError(t *testing.T) {
	hookErr := errors.New("kafka down")
	i := at(New(mustParse(t, `{"max_attempts":1,"on_exhaustion":"dead_letter"}`),
		WithDeadLetter(func(context.Context, DeadLetter) error { return hookErr })), "a", 1)
	err := i.Handle(context.Background(), errors.New("x"))
	app := appErr(t, err)
	if !app.NonRetryable() || !strings.Contains(app.Error(), "dead-letter hook: kafka down") {
		t.Errorf("%v", app)
	}
}

func TestHandleUnknownCode(t *testing.T) {
	i := at(New(nil), "a", 1)
	err := i.Handle(context.Background(), errmatch.Wrap(errors.New("x"), "t", "EXPLODE"))
	app := appErr(t, err)
	o, _ := OutcomeOf(err)
	if !app.NonRetryable() || o.Action != "dead_letter" || o.Reason != "handler_code" || !strings.Contains(app.Error(), "EXPLODE") {
		t.Errorf("%v %+v", app, o)
	}
}

func TestHandlePassThrough(t *testing.T) {
	i := at(New(nil), "a", 1)
	nonRetryable := temporal.NewNonRetryableApplicationError("stop", "t", nil)
	canceled := temporal.NewCanceledError()
	for _, err := range []error{nil, activity.ErrResultPending, nonRetryable, canceled, context.Canceled, fmt.Errorf("w: %w", context.Canceled)} {
		if got := i.Handle(context.Background(), err); got != err {
			t.Errorf("Handle(%v) = %v, want it unchanged", err, got)
		}
	}
	plain := errors.New("x")
	if got := New(nil).Handle(context.Background(), plain); got != plain {
		t.Errorf("outside an activity: %v, want unchanged", got)
	}
	local := New(nil)
	local.infoOf = func(context.Context) (activity.Info, bool) {
		return activity.Info{Attempt: 1, IsLocalActivity: true}, true
	}
	if got := local.Handle(context.Background(), plain); got != plain {
		t.Errorf("local activity: %v, want unchanged", got)
	}
	var nilI *Interceptor
	if got := nilI.Handle(context.Background(), plain); got != plain {
		t.Errorf("nil interceptor outside an activity: %v", got)
	}
}

func TestPolicySelection(t *testing.T) {
	def := mustParse(t, `{"initial_interval":"PT1S","jitter":false}`)
	typ := mustParse(t, `{"initial_interval":"PT2S","jitter":false}`)
	call := mustParse(t, `{"initial_interval":"PT3S","jitter":false}`)
	i := New(def, WithActivityPolicy("typed", typ), WithActivityPolicy("removed", typ), WithActivityPolicy("removed", nil))
	pj, _ := call.MarshalJSON()
	pl, err := converter.GetDefaultDataConverter().ToPayload(string(pj))
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := converter.GetDefaultDataConverter().ToPayload(`{"max_attempts":-1}`)
	notString, _ := converter.GetDefaultDataConverter().ToPayload(42)
	for _, tc := range []struct {
		typ    string
		header map[string]*commonpb.Payload
		want   *policy.Policy
		bad    bool
	}{
		{"other", nil, def, false},
		{"removed", nil, def, false},
		{"typed", nil, typ, false},
		{"typed", map[string]*commonpb.Payload{HeaderKey: pl}, call, false},
		{"other", map[string]*commonpb.Payload{HeaderKey: pl}, call, false},
		{"typed", map[string]*commonpb.Payload{HeaderKey: bad}, typ, true},
		{"other", map[string]*commonpb.Payload{HeaderKey: notString}, def, true},
	} {
		got, err := i.policyFor(tc.typ, tc.header)
		if !got.Equal(tc.want) || (err != nil) != tc.bad {
			t.Errorf("%s %v: policy %v err %v", tc.typ, tc.header, got.Spec().InitialInterval, err)
		}
		if tc.bad && !strings.HasPrefix(err.Error(), "temporalretry: activity "+tc.typ+" header "+HeaderKey) {
			t.Errorf("error %q", err)
		}
	}
	// A bad header falls back and the problem reaches the activity's error.
	i = at(New(def), "other", 1)
	err = i.handle(context.Background(), errors.New("x"), map[string]*commonpb.Payload{HeaderKey: bad}, nil)
	if app := appErr(t, err); app.NextRetryDelay() != time.Second || !strings.Contains(app.Error(), "max_attempts") || !errors.Is(err, policy.ErrInvalidPolicy) {
		t.Errorf("%v", err)
	}
}

func TestConcurrentHandle(t *testing.T) {
	i := at(New(nil), "a", 1)
	p := mustParse(t, `{"initial_interval":"PT5S","jitter":false}`)
	pj, _ := p.MarshalJSON()
	pl, _ := converter.GetDefaultDataConverter().ToPayload(string(pj))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				err := i.handle(context.Background(), errors.New("x"), map[string]*commonpb.Payload{HeaderKey: pl}, nil)
				var app *temporal.ApplicationError
				if !errors.As(err, &app) || app.NextRetryDelay() != 5*time.Second {
					t.Errorf("%v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestMaximumAttemptsTable(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want int32
	}{
		{math.MinInt64, 1}, {-1, 1}, {0, 1}, {1, 1}, {3, 3},
		{math.MaxInt32 - 1, math.MaxInt32 - 1}, {math.MaxInt32, math.MaxInt32},
		{math.MaxInt32 + 1, 0}, {math.MaxUint32 + 2, 0}, // would wrap to 1
		{math.MaxInt64, 0},
	} {
		if got := MaximumAttempts(tc.in); got != tc.want {
			t.Errorf("MaximumAttempts(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// Over the whole int64 range the mapping saturates: a value Temporal can
// hold is kept, a larger one is unlimited, never a wrapped small number.
func TestMaximumAttemptsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.OneOf(rapid.Int64(), rapid.Int64Range(math.MaxInt32-4, math.MaxInt32+4), rapid.Int64Range(-2, 2)).Draw(t, "n")
		got := MaximumAttempts(n)
		switch {
		case n > math.MaxInt32:
			if got != 0 {
				t.Fatalf("MaximumAttempts(%d) = %d, want 0 (unlimited)", n, got)
			}
		case n < 1:
			if got != 1 {
				t.Fatalf("MaximumAttempts(%d) = %d, want 1", n, got)
			}
		default:
			if int64(got) != n {
				t.Fatalf("MaximumAttempts(%d) = %d, want the same", n, got)
			}
		}
		// Temporal stops after got attempts (0: never); it never stops
		// before OJS does.
		if got != 0 && int64(got) < max(n, 1) {
			t.Fatalf("MaximumAttempts(%d) = %d stops early", n, got)
		}
	})
}

func TestRetryPolicy(t *testing.T) {
	for _, tc := range []struct {
		js   string
		want temporal.RetryPolicy
	}{
		{`{}`, temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute, MaximumAttempts: 3}},
		{`{"max_attempts":0}`, temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 5 * time.Minute, MaximumAttempts: 1}},
		{`{"max_attempts":9007199254740991,"initial_interval":"PT0.2S","backoff_coefficient":1.5,"max_interval":"PT3S","backoff_strategy":"none"}`,
			temporal.RetryPolicy{InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 1, MaximumInterval: 3 * time.Second, MaximumAttempts: 0}},
	} {
		if got := RetryPolicy(mustParse(t, tc.js)); fmt.Sprint(*got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.js, *got, tc.want)
		}
	}
	if got := RetryPolicy(nil); got.MaximumAttempts != 3 {
		t.Errorf("nil policy: %+v", got)
	}
}

func TestParse(t *testing.T) {
	if _, err := Parse([]byte(`{"max_attempts":-1}`)); !errors.Is(err, policy.ErrInvalidPolicy) {
		t.Errorf("Parse: %v, want policy.ErrInvalidPolicy", err)
	}
	i, err := Parse([]byte(`{"max_attempts":7}`))
	if err != nil || i.typePolicy("x").Spec().MaxAttempts != 7 {
		t.Errorf("Parse: %v", err)
	}
}

func TestOutcomeOfOther(t *testing.T) {
	for _, err := range []error{nil, errors.New("x"), temporal.NewApplicationError("m", "t"), temporal.NewApplicationError("m", "t", "detail")} {
		if o, ok := OutcomeOf(err); ok {
			t.Errorf("OutcomeOf(%v) = %+v, true", err, o)
		}
	}
}

// The header cache stays bounded: past cacheLimit distinct headers, and for
// a header over cacheKeyLimit bytes, policies are parsed on every use and
// still come out right.
func TestHeaderCacheBound(t *testing.T) {
	i := New(nil)
	dc := converter.GetDefaultDataConverter()
	for n := 1; n <= cacheLimit+50; n++ {
		pl, _ := dc.ToPayload(fmt.Sprintf(`{"max_attempts":%d}`, n))
		p, err := i.policyFor("a", map[string]*commonpb.Payload{HeaderKey: pl})
		if err != nil || p.Spec().MaxAttempts != n {
			t.Fatalf("header %d: %v %v", n, p.Spec().MaxAttempts, err)
		}
	}
	if got := i.cache.n.Load(); got != cacheLimit {
		t.Errorf("cache holds %d policies, limit %d", got, cacheLimit)
	}
	var pats []string
	for n := range cacheKeyLimit / 100 {
		pats = append(pats, fmt.Sprintf("%q", fmt.Sprintf("%0100d", n)))
	}
	big := `{"max_attempts":9,"non_retryable_errors":[` + strings.Join(pats, ",") + `]}`
	pl, _ := dc.ToPayload(big)
	j := New(nil)
	p, err := j.policyFor("a", map[string]*commonpb.Payload{HeaderKey: pl})
	if err != nil || p.Spec().MaxAttempts != 9 || j.cache.n.Load() != 0 {
		t.Errorf("big header: %v %v, cached %d", p.Spec().MaxAttempts, err, j.cache.n.Load())
	}
}

// failureSize is the size of err as the worker sends it to Temporal.
func failureSize(err error) int {
	return temporal.GetDefaultFailureConverter().ErrorToFailure(err).Size()
}

// TestHandleCutsHugeErrors: an error far over Temporal's size limits (the
// server makes a failure over 2 MB a non-retryable "Failure exceeds size
// limit.", and cannot take one over 4 MiB at all) comes out of Handle
// within MaxFailureBytes, with the decision unchanged: a retry stays a
// retry, its type and the start of its message are kept, and the outcome
// gives the original size. A non-retryable ApplicationError, which Handle
// passes on, is cut the same way and stays non-retryable.
func TestHandleCutsHugeErrors(t *testing.T) {
	p := mustParse(t, `{"max_attempts":3,"initial_interval":"PT1S","jitter":false,"non_retryable_errors":["auth.*"]}`)
	big := strings.Repeat("é and more text ", 160_000) // 2.7 MB
	for _, tc := range []struct {
		name    string
		err     error
		typ     string
		action  string
		retries bool
	}{
		{"retry", errmatch.Wrap(errors.New(big), "external.timeout", ""), "external.timeout", "retry", true},
		{"discard", errmatch.Wrap(errors.New(big), "auth.denied", ""), "auth.denied", "discard", false},
		{"untyped", fmt.Errorf("wrapped: %w", errors.New(big+big)), "wrapError", "retry", true},
		{"application", temporal.NewApplicationError(big, "payment.declined", strings.Repeat("d", 3<<20)), "payment.declined", "retry", true},
		{"non-retryable application", temporal.NewNonRetryableApplicationError(big, "payment.fatal", nil, strings.Repeat("d", 3<<20)), "payment.fatal", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := failureSize(tc.err); n < 2<<20 {
				t.Fatalf("the test error takes %d bytes, not over Temporal's 2 MB", n)
			}
			err := at(New(p), "charge", 1).Handle(context.Background(), tc.err)
			if n := failureSize(err); n > MaxFailureBytes {
				t.Errorf("failure of %d bytes, over MaxFailureBytes %d", n, MaxFailureBytes)
			}
			app := appErr(t, err)
			if app.Type() != tc.typ || app.NonRetryable() == tc.retries {
				t.Errorf("type %q non-retryable %v, want %q and %v", app.Type(), app.NonRetryable(), tc.typ, !tc.retries)
			}
			if !strings.Contains(err.Error(), "é and more text é and more text") || !strings.Contains(err.Error(), "cut to fit") {
				t.Errorf("message does not keep the start of the error and say it was cut: %.200q", err.Error())
			}
			if tc.action == "" {
				return
			}
			o, ok := OutcomeOf(err)
			if !ok || o.Action != tc.action || o.CutFrom < 2<<20 {
				t.Errorf("outcome %+v %v, want %s and the original size", o, ok, tc.action)
			}
		})
	}
	// A small error is not touched.
	small := errmatch.Wrap(errors.New("boom"), "external.timeout", "")
	if o, _ := OutcomeOf(at(New(p), "charge", 1).Handle(context.Background(), small)); o.CutFrom != 0 {
		t.Errorf("a small error was cut: %+v", o)
	}
}
