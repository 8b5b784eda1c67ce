package asynqretry

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
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

// The delays are the OJS exponential formula I * C^(attempt-1), capped,
// written out; asynq's n is attempt-1. now is on a whole second, so no
// rounding applies.
func TestRetryDelayAttemptMapping(t *testing.T) {
	p := New(mustParse(t, `{"initial_interval":"PT1S","backoff_coefficient":3,"max_interval":"PT1M","jitter":false}`))
	p.now = func() time.Time { return time.Unix(1_800_000_000, 0) }
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{0, time.Second}, // after the first attempt
		{1, 3 * time.Second},
		{2, 9 * time.Second},
		{3, 27 * time.Second},
		{4, time.Minute}, // 81s capped
		{-5, time.Second},
		{math.MaxInt, time.Minute},
	} {
		if got := p.RetryDelay(tc.n, errors.New("x"), asynq.NewTask("t", nil)); got != tc.want {
			t.Errorf("n=%d: %v, want %v", tc.n, got, tc.want)
		}
	}
}

func TestRetryDelayRoundsUpToWholeSecond(t *testing.T) {
	p := New(mustParse(t, `{"initial_interval":"PT0.3S","jitter":false}`))
	p.now = func() time.Time { return time.Unix(100, 900_000_000) } // x.9s
	// 100.9s + 0.3s = 101.2s, stored by asynq as 101 (early); rounded to 102.
	if got := p.RetryDelay(0, nil, nil); got != 1100*time.Millisecond {
		t.Errorf("got %v, want 1.1s", got)
	}
	if got := roundUp(time.Unix(5, 1), math.MaxInt64-1); got != math.MaxInt64-1 {
		t.Errorf("roundUp near the top: %v", got)
	}
}

// handle runs the middleware around a handler returning err, as asynq would
// after retried retries.
func handle(p *Plugin, task *asynq.Task, retried int, err error) error {
	// asynq keeps the retry count under an internal context key; the
	// seam stands in for asynq.GetRetryCount (the integration tests use
	// the real one).
	q := &Plugin{}
	if p != nil {
		q = &Plugin{def: p.def, src: p.src}
	}
	q.count = func(context.Context) (int, bool) { return retried, retried >= 0 }
	return q.Handler(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return err })).ProcessTask(context.Background(), task)
}

func TestHandlerOutcomes(t *testing.T) {
	p := New(mustParse(t, `{"max_attempts":3,"non_retryable_errors":["auth.*"],"on_exhaustion":"dead_letter"}`))
	task := asynq.NewTask("t", nil)
	plain := errors.New("boom")
	var end *EndError
	for _, tc := range []struct {
		name    string
		retried int
		err     error
		action  policy.Action // Retry: the error comes back unchanged
		reason  policy.Reason
	}{
		{"first failure", 0, plain, policy.Retry, 0},
		{"second failure", 1, plain, policy.Retry, 0},
		{"third failure is the last attempt", 2, plain, policy.DeadLetter, policy.ReasonExhausted},
		{"non-retryable", 0, errmatch.Wrap(plain, "auth.expired", ""), policy.DeadLetter, policy.ReasonNonRetryable},
		{"DISCARD", 0, errmatch.Wrap(plain, "x", errmatch.CodeDiscard), policy.Discard, policy.ReasonHandlerCode},
		{"FAIL", 1, errmatch.Wrap(plain, "x", errmatch.CodeFail), policy.Discard, policy.ReasonHandlerCode},
		{"DEAD_LETTER", 0, errmatch.Wrap(plain, "x", errmatch.CodeDeadLetter), policy.DeadLetter, policy.ReasonHandlerCode},
		{"unknown code", 0, errmatch.Wrap(plain, "x", "SOON"), policy.DeadLetter, policy.ReasonHandlerCode},
	} {
		err := handle(p, task, tc.retried, tc.err)
		if tc.action == policy.Retry {
			if err != tc.err {
				t.Errorf("%s: got %v, want the handler's error unchanged", tc.name, err)
			}
			continue
		}
		if !errors.As(err, &end) || !errors.Is(err, asynq.SkipRetry) || !errors.Is(err, plain) ||
			end.Decision.Action != tc.action || end.Decision.Reason != tc.reason {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
	// Errors asynq defines pass through, and so does anything outside a server.
	for _, e := range []error{asynq.SkipRetry, asynq.RevokeTask, errors.Join(plain, asynq.RevokeTask)} {
		if err := handle(p, task, 0, e); err != e {
			t.Errorf("%v: got %v", e, err)
		}
	}
	if err := handle(p, task, -1, errmatch.Wrap(plain, "x", errmatch.CodeDiscard)); errors.As(err, &end) {
		t.Errorf("outside a server: got %v", err)
	}
	if err := handle(p, task, 0, nil); err != nil {
		t.Errorf("success: %v", err)
	}
	if got, want := (&EndError{Decision: policy.Decision{Action: policy.Discard, Reason: policy.ReasonNonRetryable}, Err: plain}).Error(),
		"asynqretry: discard (non_retryable): boom"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestPerTaskHeader(t *testing.T) {
	p := New(mustParse(t, `{"max_attempts":2}`))
	own := mustParse(t, `{"max_attempts":6,"initial_interval":"PT2S"}`)
	task := NewTask("t", []byte("x"), own)
	if !p.Policy(task).Equal(own) || task.Headers()[HeaderKey] == "" {
		t.Errorf("per-task policy not read back: %v", task.Headers())
	}
	// Attempt 2 of 6 retries under the task's policy, though the default
	// would end it.
	if err := handle(p, task, 1, errors.New("x")); errors.Is(err, asynq.SkipRetry) {
		t.Errorf("per-task policy ignored: %v", err)
	}
	if NewTask("t", nil, nil).Headers() != nil && len(NewTask("t", nil, nil).Headers()) != 0 {
		t.Errorf("nil policy adds headers")
	}
	bad := asynq.NewTaskWithHeaders("t", nil, map[string]string{HeaderKey: "{"})
	if _, err := p.policyFor(bad); !errors.Is(err, policy.ErrInvalidPolicy) || !strings.HasPrefix(err.Error(), "asynqretry: task t header retrykit-policy: ") {
		t.Errorf("bad header: %v", err)
	}
	if !p.Policy(bad).Equal(mustParse(t, `{"max_attempts":2}`)) {
		t.Errorf("bad header does not fall back to the default")
	}
}

func TestZeroAndNilPlugin(t *testing.T) {
	var zero Plugin
	var nilp *Plugin
	for _, p := range []*Plugin{&zero, nilp} {
		if !p.Policy(nil).Equal(policy.Default()) {
			t.Error("not the OJS default")
		}
		// 1s with jitter in [0.5s, 1.5s), then rounded up by under 1s.
		if d := p.RetryDelay(0, nil, nil); d < 500*time.Millisecond || d >= 2500*time.Millisecond {
			t.Errorf("delay %v", d)
		}
		if err := handle(p, asynq.NewTask("t", nil), 2, errors.New("x")); !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("default policy, attempt 3: %v", err)
		}
		p.Install(nil)
	}
	var cfg asynq.Config
	zero.Install(&cfg)
	if cfg.RetryDelayFunc == nil {
		t.Error("Install did not set RetryDelayFunc")
	}
}

// Property: RetryDelay(n) is the policy's delay for attempt n+1 plus less
// than a second, and lands on a whole second.
func TestPropRetryDelay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		initial := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "initial"))
		maxI := initial + time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "extra"))
		coef := rapid.Float64Range(1, 10).Draw(t, "coef")
		r := rapid.Float64Range(0, 0.999).Draw(t, "r")
		n := rapid.IntRange(-3, math.MaxInt).Draw(t, "n")
		nowNs := rapid.Int64Range(0, 4_000_000_000*int64(time.Second)).Draw(t, "now")
		spec := policy.DefaultSpec()
		spec.InitialInterval, spec.MaxInterval, spec.BackoffCoefficient = initial, maxI, coef
		pol, err := policy.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(0, nowNs)
		p := New(pol, WithSource(backoff.Fixed(r)))
		p.now = func() time.Time { return now }
		got := p.RetryDelay(n, nil, nil)
		want := pol.Backoff().DelayAt(max(n, 0)+1, r)
		if n == math.MaxInt {
			want = pol.Backoff().DelayAt(math.MaxInt, r)
		}
		if got < want || got >= want+time.Second || now.Add(got).Nanosecond() != 0 {
			t.Fatalf("n=%d now=%v: %v, want %v rounded up to a whole second", n, now, got, want)
		}
	})
}

func TestMaxRetry(t *testing.T) {
	for _, tc := range []struct {
		js   string
		want int
	}{
		{`{"max_attempts":1}`, 0},
		{`{"max_attempts":0}`, 0},
		{`{"max_attempts":5}`, 4},
		{`{}`, 2},
	} {
		if got := MaxRetry(mustParse(t, tc.js)).Value(); got != tc.want {
			t.Errorf("%s: MaxRetry %v, want %d", tc.js, got, tc.want)
		}
	}
	if got := MaxRetry(nil).Value(); got != 2 {
		t.Errorf("nil policy: MaxRetry %v, want 2", got)
	}
}

// FuzzHeader: whatever a task's policy header holds, reading the policy
// never panics; it gives exactly the policy policy.Parse reads from the
// header, or, when policy.Parse rejects it, the default with policy's error.
func FuzzHeader(f *testing.F) {
	f.Add(`{"max_attempts":4}`)
	f.Add(`{"max_attempts":-1}`)
	f.Add(`null`)
	f.Add(``)
	p := New(nil)
	f.Fuzz(func(t *testing.T, h string) {
		task := asynq.NewTaskWithHeaders("t", nil, map[string]string{HeaderKey: h})
		pol, err := p.policyFor(task)
		want, perr := policy.Parse([]byte(h))
		switch {
		case perr != nil:
			if !errors.Is(err, policy.ErrInvalidPolicy) || pol != nil {
				t.Fatalf("%q: policy.Parse rejects it (%v), got policy %v, error %v; want the default and ErrInvalidPolicy", h, perr, pol, err)
			}
		case err != nil || !pol.Equal(want):
			t.Fatalf("%q: got policy %v, error %v; want policy.Parse's %v", h, pol, err, want)
		}
		if d := p.RetryDelay(3, nil, task); d < 0 {
			t.Fatalf("%q: negative delay", h)
		}
	})
}

// The cache is shared by every worker goroutine (run with -race).
func TestConcurrentPolicies(t *testing.T) {
	p := New(nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				n := (g*400+i)%300 + 1 // past cacheLimit: some misses stay misses
				task := NewTask("t", nil, mustParse(t, `{"max_attempts":`+strconv.Itoa(n)+`}`))
				if got := p.Policy(task).Spec().MaxAttempts; got != n {
					t.Errorf("max_attempts %d, want %d", got, n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestTypePolicy(t *testing.T) {
	def := mustParse(t, `{"max_attempts":2}`)
	email := mustParse(t, `{"max_attempts":8}`)
	own := mustParse(t, `{"max_attempts":4}`)
	p := New(def, WithTypePolicy("email", email), WithTypePolicy("sms", email), WithTypePolicy("sms", nil))
	for _, tc := range []struct {
		task *asynq.Task
		want *policy.Policy
	}{
		{asynq.NewTask("email", nil), email},
		{NewTask("email", nil, own), own},
		{asynq.NewTask("sms", nil), def},
		{asynq.NewTask("other", nil), def},
		{nil, def},
	} {
		if got := p.Policy(tc.task); !got.Equal(tc.want) {
			t.Errorf("%v: max_attempts %d, want %d", tc.task, got.Spec().MaxAttempts, tc.want.Spec().MaxAttempts)
		}
	}
}

// TestCacheIsBounded: the cache keeps at most cacheLimit entries, none
// longer than cacheKeyLimit bytes, so its text never passes 1 MiB however
// large or many the headers are (300 headers of 8 MiB kept 2 GB before).
func TestCacheIsBounded(t *testing.T) {
	var c policyCache
	big := strings.Repeat(" ", 1<<20)
	for i := range cacheLimit + 50 {
		raw := `{"max_attempts":` + strconv.Itoa(i+1) + `}`
		if i%2 == 0 {
			raw = `{"max_attempts":` + strconv.Itoa(i+1) + big + `}`
		}
		p, err := c.get(raw)
		if err != nil || p.Spec().MaxAttempts != i+1 {
			t.Fatalf("entry %d: %v, %v", i, p, err)
		}
	}
	n, total := 0, 0
	c.m.Range(func(k, _ any) bool {
		n++
		total += len(k.(string))
		if len(k.(string)) > cacheKeyLimit {
			t.Errorf("cached a %d-byte key, over the %d-byte limit", len(k.(string)), cacheKeyLimit)
		}
		return true
	})
	if n > cacheLimit || total > cacheLimit*cacheKeyLimit {
		t.Errorf("cache holds %d entries, %d bytes of keys; limits %d entries, %d bytes", n, total, cacheLimit, cacheLimit*cacheKeyLimit)
	}
	if n == 0 {
		t.Error("cache kept nothing: the small headers should be cached")
	}
}

// TestRetryCountSaturates: MaxRetry never wraps for any max_attempts an OJS
// policy allows (up to 2^63-1): it fits asynq's int32, grows with
// max_attempts, and allows every attempt the policy allows up to 2^31.
func TestRetryCountSaturates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.IntRange(0, math.MaxInt).Draw(t, "a")
		b := rapid.IntRange(a, math.MaxInt).Draw(t, "b")
		ra, rb := retryCount(a), retryCount(b)
		if ra < 0 || rb > math.MaxInt32 || int(int32(rb)) != rb {
			t.Fatalf("retryCount(%d) = %d: outside asynq's int32 range", b, rb)
		}
		if ra > rb {
			t.Fatalf("retryCount(%d) = %d > retryCount(%d) = %d", a, ra, b, rb)
		}
		if attempts := int64(rb) + 1; attempts < min(int64(max(b, 1)), 1<<31) {
			t.Fatalf("max_attempts %d allows only %d attempts", b, attempts)
		}
	})
}
