package riverretry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
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

// The delays here are the OJS formula written out: exponential
// I * C^(attempt-1), capped, no jitter.
func TestNextRetryUsesJobAttempt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := New(mustParse(t, `{"initial_interval":"PT1S","backoff_coefficient":3,"max_interval":"PT1M","jitter":false}`))
	p.now = func() time.Time { return now }
	for _, tc := range []struct {
		attempt int
		errors  int // River's own policy would count these; the plugin must not
		want    time.Duration
	}{
		{1, 0, time.Second},
		{2, 1, 3 * time.Second},
		{3, 2, 9 * time.Second},
		{4, 0, 27 * time.Second}, // snoozed jobs: errors and attempt differ
		{5, 9, time.Minute},      // 81s capped
		{0, 0, time.Second},      // below 1 counts as 1
		{math.MaxInt, 0, time.Minute},
	} {
		job := &rivertype.JobRow{Attempt: tc.attempt, Errors: make([]rivertype.AttemptError, tc.errors)}
		if got := p.NextRetry(job).Sub(now); got != tc.want {
			t.Errorf("attempt %d: NextRetry = now + %v, want %v", tc.attempt, got, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	p := New(mustParse(t, `{"max_attempts":3,"non_retryable_errors":["auth.*"],"on_exhaustion":"dead_letter"}`))
	plain := errors.New("boom")
	for _, tc := range []struct {
		attempt int
		err     error
		action  policy.Action
		reason  policy.Reason
	}{
		{1, plain, policy.Retry, policy.ReasonRetry},
		{2, errmatch.Wrap(plain, "x.timeout", errmatch.CodeRetry), policy.Retry, policy.ReasonRetry},
		{3, plain, policy.DeadLetter, policy.ReasonExhausted},
		{1, errmatch.Wrap(plain, "auth.expired", ""), policy.DeadLetter, policy.ReasonNonRetryable},
		{1, errmatch.Wrap(plain, "x", errmatch.CodeDiscard), policy.Discard, policy.ReasonHandlerCode},
		{1, errmatch.Wrap(plain, "x", errmatch.CodeFail), policy.Discard, policy.ReasonHandlerCode},
		{1, errmatch.Wrap(plain, "x", errmatch.CodeDeadLetter), policy.DeadLetter, policy.ReasonHandlerCode},
	} {
		d, err := p.Decide(&rivertype.JobRow{Attempt: tc.attempt}, tc.err)
		if err != nil || d.Action != tc.action || d.Reason != tc.reason {
			t.Errorf("attempt %d %v: %v %v %v, want %v %v", tc.attempt, tc.err, d.Action, d.Reason, err, tc.action, tc.reason)
		}
	}
	if _, err := p.Decide(&rivertype.JobRow{Attempt: 1}, errmatch.Wrap(plain, "x", "NOPE")); !errors.Is(err, policy.ErrInvalidFailure) || !errors.Is(err, errmatch.ErrUnknownCode) {
		t.Errorf("unknown code: err = %v", err)
	}
	if _, err := p.Decide(nil, plain); !errors.Is(err, policy.ErrInvalidFailure) {
		t.Errorf("nil job: err = %v", err)
	}
}

// work runs the middleware around a worker returning err.
func work(p *Plugin, job *rivertype.JobRow, err error) error {
	return p.Work(context.Background(), job, func(context.Context) error { return err })
}

func TestWorkOutcomes(t *testing.T) {
	p := New(mustParse(t, `{"max_attempts":3,"non_retryable_errors":["auth.*"]}`))
	plain := errors.New("boom")

	if err := work(p, &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, nil); err != nil {
		t.Errorf("success: %v", err)
	}
	if err := work(p, &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, plain); err != plain {
		t.Errorf("retry: got %v, want the worker's error unchanged", err)
	}
	snooze := river.JobSnooze(time.Second)
	if err := work(p, &rivertype.JobRow{Attempt: 3, MaxAttempts: 3}, snooze); err != snooze {
		t.Errorf("snooze: got %v", err)
	}

	// Discard: JobCancel around an EndError that keeps the cause.
	err := work(p, &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}, errmatch.Wrap(plain, "auth.expired", ""))
	var cancel *rivertype.JobCancelError
	var end *EndError
	if !errors.As(err, &cancel) || !errors.As(err, &end) || !errors.Is(err, plain) ||
		end.Decision.Action != policy.Discard || end.Decision.Reason != policy.ReasonNonRetryable {
		t.Errorf("non-retryable: got %v", err)
	}

	// DeadLetter: not a cancel, and River sees the job as exhausted.
	job := &rivertype.JobRow{Attempt: 2, MaxAttempts: 3}
	err = work(p, job, errmatch.Wrap(plain, "x", errmatch.CodeDeadLetter))
	if errors.As(err, &cancel) || !errors.As(err, &end) || end.Decision.Action != policy.DeadLetter || job.MaxAttempts != 2 {
		t.Errorf("dead letter: got %v, MaxAttempts %d", err, job.MaxAttempts)
	}
	if got, want := err.Error(), "riverretry: dead_letter (handler_code): x: boom"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}

	// The policy, not River's max_attempts, decides exhaustion.
	err = work(p, &rivertype.JobRow{Attempt: 3, MaxAttempts: 25}, plain)
	if !errors.As(err, &cancel) || !errors.As(err, &end) || end.Decision.Reason != policy.ReasonExhausted {
		t.Errorf("exhausted under a larger River max_attempts: got %v", err)
	}

	// An unknown code is dead-lettered with the problem named.
	job = &rivertype.JobRow{Attempt: 1, MaxAttempts: 3}
	err = work(p, job, errmatch.Wrap(plain, "x", "LATER"))
	if !errors.As(err, &end) || end.Decision.Action != policy.DeadLetter || !errors.Is(err, errmatch.ErrUnknownCode) || job.MaxAttempts != 1 {
		t.Errorf("unknown code: got %v", err)
	}

	// A bad per-job policy: the default decides, the problem is recorded.
	job = &rivertype.JobRow{ID: 7, Attempt: 1, MaxAttempts: 3, Metadata: []byte(`{"retrykit_policy":{"jitter":"yes"}}`)}
	err = work(p, job, plain)
	if !errors.Is(err, plain) || !errors.Is(err, policy.ErrInvalidPolicy) || !strings.Contains(err.Error(), "riverretry: job 7 metadata retrykit_policy: policy: jitter") {
		t.Errorf("bad metadata policy: got %v", err)
	}
}

func TestZeroAndNilPlugin(t *testing.T) {
	var zero Plugin
	var nilp *Plugin
	job := &rivertype.JobRow{Attempt: 1}
	for _, p := range []*Plugin{&zero, nilp} {
		if !p.Policy(job).Equal(policy.Default()) {
			t.Error("policy is not the OJS default")
		}
		// OJS default after attempt 1: 1s with jitter in [0.5s, 1.5s).
		if d := p.Delay(job); d < 500*time.Millisecond || d >= 1500*time.Millisecond {
			t.Errorf("delay %v outside [0.5s, 1.5s)", d)
		}
		params := &rivertype.JobInsertParams{MaxAttempts: 25, Metadata: []byte(`{}`)}
		if err := p.InsertBegin(context.Background(), params); err != nil || params.MaxAttempts != 3 {
			t.Errorf("InsertBegin: %v, max_attempts %d", err, params.MaxAttempts)
		}
	}
	nilp.Install(nil)
	zero.Install(nil)
	var cfg river.Config
	zero.Install(&cfg)
	if cfg.RetryPolicy != &zero || len(cfg.Plugins) != 1 {
		t.Errorf("Install: %+v", cfg)
	}
}

type argsWith struct{ p *policy.Policy }

func (argsWith) Kind() string                  { return "with" }
func (a argsWith) RetryPolicy() *policy.Policy { return a.p }

func TestInsertBegin(t *testing.T) {
	p := New(mustParse(t, `{"max_attempts":4}`))
	own := mustParse(t, `{"max_attempts":9,"initial_interval":"PT2S"}`)
	ctx := context.Background()

	params := &rivertype.JobInsertParams{Args: argsWith{own}, MaxAttempts: 25, Metadata: []byte(`{"tenant":"a"}`)}
	if err := p.InsertBegin(ctx, params); err != nil {
		t.Fatal(err)
	}
	if params.MaxAttempts != 9 || !strings.Contains(string(params.Metadata), `"tenant":"a"`) {
		t.Errorf("per-job: max_attempts %d metadata %s", params.MaxAttempts, params.Metadata)
	}
	job := &rivertype.JobRow{Attempt: 1, Metadata: params.Metadata}
	if !p.Policy(job).Equal(own) {
		t.Errorf("the stored policy does not read back")
	}

	params = &rivertype.JobInsertParams{Args: argsWith{nil}, MaxAttempts: 25, Metadata: []byte(`{}`)}
	if err := p.InsertBegin(ctx, params); err != nil || params.MaxAttempts != 4 || string(params.Metadata) != `{}` {
		t.Errorf("nil per-job policy: %v max_attempts %d metadata %s", err, params.MaxAttempts, params.Metadata)
	}

	params = &rivertype.JobInsertParams{Kind: "k", Metadata: Metadata(mustParse(t, `{"max_attempts":0}`))}
	if err := p.InsertBegin(ctx, params); err != nil || params.MaxAttempts != 1 {
		t.Errorf("max_attempts 0: %v, River max_attempts %d, want 1", err, params.MaxAttempts)
	}

	params = &rivertype.JobInsertParams{Kind: "k", Metadata: Metadata(mustParse(t, `{"max_attempts":100000}`))}
	if err := p.InsertBegin(ctx, params); err != nil || params.MaxAttempts != math.MaxInt16 {
		t.Errorf("huge max_attempts: %v, River max_attempts %d, want %d", err, params.MaxAttempts, math.MaxInt16)
	}

	for _, tc := range []struct {
		md   string
		want error
	}{
		{`{"retrykit_policy":{"max_attempts":-1}}`, policy.ErrInvalidPolicy},
		{`{"retrykit_policy":"PT1S"}`, policy.ErrInvalidPolicy},
		{`["retrykit_policy"]`, ErrMetadata},
	} {
		params = &rivertype.JobInsertParams{Kind: "k", Metadata: []byte(tc.md)}
		err := p.InsertBegin(ctx, params)
		if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), "riverretry: ") {
			t.Errorf("metadata %s: err = %v, want a riverretry error matching %v", tc.md, err, tc.want)
		}
	}
	var syn *json.UnmarshalTypeError
	if _, err := p.policyFor(&rivertype.JobRow{Metadata: []byte(`["retrykit_policy"]`)}); !errors.Is(err, ErrMetadata) || !errors.As(err, &syn) {
		t.Errorf("non-object metadata on a job: err = %v, want ErrMetadata wrapping the decoder's error", err)
	}
	// The key written with escapes is the same key (jsonb hands it back
	// unescaped), so insert and work agree on the job's policy.
	params = &rivertype.JobInsertParams{Kind: "k", Metadata: []byte(`{"retrykit\u005fpolicy":{"max_attempts":7}}`)}
	if err := p.InsertBegin(ctx, params); err != nil || params.MaxAttempts != 7 {
		t.Errorf("escaped key: %v, River max_attempts %d, want 7", err, params.MaxAttempts)
	}
	params = &rivertype.JobInsertParams{Kind: "k", Metadata: []byte(`{"retrykit_policy":null}`)}
	if err := p.InsertBegin(ctx, params); err != nil || params.MaxAttempts != 4 {
		t.Errorf("null policy: %v, max_attempts %d, want the default's 4", err, params.MaxAttempts)
	}
	params = &rivertype.JobInsertParams{Args: argsWith{own}, Metadata: []byte(`[1]`)}
	if err := p.InsertBegin(ctx, params); !errors.Is(err, ErrMetadata) {
		t.Errorf("per-job policy into non-object metadata: no error")
	}
	if err := p.InsertBegin(ctx, nil); err != nil {
		t.Errorf("nil params: %v", err)
	}
}

func TestCacheIsBounded(t *testing.T) {
	var c policyCache
	for i := range cacheLimit + 50 {
		raw := []byte(`{"initial_interval":"PT` + strconv.Itoa(i+1) + `S","max_interval":"PT1H"}`)
		if _, err := c.get(raw); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.len(); n != cacheLimit {
		t.Errorf("cache holds %d policies, want %d", n, cacheLimit)
	}
}

// Property: for every attempt, NextRetry is now plus the policy's own
// delay for that attempt and draw (the mapping adds nothing and drops
// nothing), and the delay never exceeds max_interval.
func TestPropNextRetryIsPolicyDelay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		initial := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "initial"))
		maxI := initial + time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "extra"))
		coef := rapid.Float64Range(1, 10).Draw(t, "coef")
		r := rapid.Float64Range(0, 0.999).Draw(t, "r")
		attempt := rapid.IntRange(1, math.MaxInt).Draw(t, "attempt")
		spec := policy.DefaultSpec()
		spec.InitialInterval, spec.MaxInterval, spec.BackoffCoefficient = initial, maxI, coef
		pol, err := policy.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(1_800_000_000, 0)
		p := New(pol, WithSource(backoff.Fixed(r)))
		p.now = func() time.Time { return now }
		got := p.NextRetry(&rivertype.JobRow{Attempt: attempt}).Sub(now)
		if want := pol.Backoff().DelayAt(attempt, r); got != want {
			t.Fatalf("attempt %d: now + %v, want + %v", attempt, got, want)
		}
		if got < 0 || got > maxI {
			t.Fatalf("delay %v outside [0, %v]", got, maxI)
		}
	})
}

// FuzzMetadata: whatever a job's metadata holds, reading its policy never
// panics and follows the documented rule: metadata that names the key but
// is not a JSON object gives ErrMetadata, other non-objects the default; an absent or null key gives the
// default; otherwise exactly what policy.Parse reads from the value, or the
// default with policy's error.
func FuzzMetadata(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"retrykit_policy":{"max_attempts":4}}`))
	f.Add([]byte(`{"retrykit_policy":{"max_attempts":-4}}`))
	f.Add([]byte(`{"retrykit_policy":"x"}`))
	f.Add([]byte(`{"retrykit_policy":null}`))
	f.Add([]byte(`"retrykit_policy"`))
	f.Add([]byte(`{"retrykit\u005fpolicy":{"max_attempts":7}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"a":1,"a":2, "retrykit_policy" : {} }`))
	p := New(nil)
	own := mustParse(f, `{"max_attempts":9,"initial_interval":"PT2S"}`)
	f.Fuzz(func(t *testing.T, md []byte) {
		pol, err := p.policyFor(&rivertype.JobRow{Attempt: 1, Metadata: md})
		var m map[string]json.RawMessage
		decodeErr := json.Unmarshal(md, &m)
		raw, present := m[MetadataKey]
		switch {
		case decodeErr != nil && !bytes.Contains(md, []byte(`"`+MetadataKey+`"`)):
			if err != nil || pol != nil {
				t.Fatalf("metadata %q without the key: policy %v, error %v; want the default", md, pol, err)
			}
		case decodeErr != nil:
			if !errors.Is(err, ErrMetadata) || pol != nil {
				t.Fatalf("metadata %q (not an object: %v): policy %v, error %v; want the default and ErrMetadata", md, decodeErr, pol, err)
			}
		case !present || string(bytes.TrimSpace(raw)) == "null":
			if err != nil || pol != nil {
				t.Fatalf("metadata %q without a policy: policy %v, error %v; want the default", md, pol, err)
			}
		default:
			want, perr := policy.Parse(raw)
			switch {
			case perr != nil:
				if !errors.Is(err, policy.ErrInvalidPolicy) || pol != nil {
					t.Fatalf("metadata %q: policy.Parse rejects the value (%v), got policy %v, error %v", md, perr, pol, err)
				}
			case err != nil || !pol.Equal(want):
				t.Fatalf("metadata %q: got policy %v, error %v; want policy.Parse's %v", md, pol, err, want)
			}
		}
		params := &rivertype.JobInsertParams{Kind: "k", Metadata: md}
		if err := p.InsertBegin(context.Background(), params); err == nil && (params.MaxAttempts < 1 || params.MaxAttempts > math.MaxInt16) {
			t.Fatalf("metadata %q: max_attempts %d", md, params.MaxAttempts)
		}
		// Writing a per-job policy into the metadata: either ErrMetadata, or
		// valid JSON from which exactly that policy reads back.
		params = &rivertype.JobInsertParams{Kind: "k", Args: argsWith{own}, Metadata: md}
		if err := p.InsertBegin(context.Background(), params); err != nil {
			if !errors.Is(err, ErrMetadata) {
				t.Fatalf("metadata %q: writing the policy failed with %v, want ErrMetadata", md, err)
			}
		} else if !json.Valid(params.Metadata) || !p.Policy(&rivertype.JobRow{Attempt: 1, Metadata: params.Metadata}).Equal(own) {
			t.Fatalf("metadata %q became %q: not valid JSON holding the policy", md, params.Metadata)
		}
	})
}

// The caches are shared by every worker goroutine (run with -race).
func TestConcurrentPolicies(t *testing.T) {
	p := New(nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				n := (g*400+i)%300 + 1 // past cacheLimit: some misses stay misses
				md := Metadata(mustParse(t, `{"max_attempts":`+strconv.Itoa(n)+`}`))
				job := &rivertype.JobRow{Attempt: 1, Metadata: md}
				if got := p.Policy(job).Spec().MaxAttempts; got != n {
					t.Errorf("max_attempts %d, want %d", got, n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestInsertBeginKeepsUserMetadata: writing the policy into a job's
// metadata leaves every other byte the user wrote as it was: no HTML
// escaping, no reordering, duplicates and odd keys kept. Only the policy
// key is replaced (all its spellings and duplicates), once, at the end.
func TestInsertBeginKeepsUserMetadata(t *testing.T) {
	p := New(nil)
	own := mustParse(t, `{"max_attempts":9}`)
	pj, _ := own.MarshalJSON()
	member := `"retrykit_policy":` + string(pj)
	for _, tc := range []struct{ md, want string }{
		{``, `{` + member + `}`},
		{`null`, `{` + member + `}`},
		{`{}`, `{` + member + `}`},
		{`{"html":"<a&b>","z":1,"a":2}`, `{"html":"<a&b>","z":1,"a":2,` + member + `}`},
		{`{"k":1,"k":2}`, `{"k":1,"k":2,` + member + `}`},
		{"{\"bad\xffkey\":\"v\xfe\"}", "{\"bad\xffkey\":\"v\xfe\"," + member + `}`},
		{`{ "n" : 12345678901234567890123 , "s":"\u00e9" }`, `{"n" : 12345678901234567890123,"s":"\u00e9",` + member + `}`},
		{`{"retrykit_policy":{"max_attempts":1},"x":[1, 2],"retrykit\u005fpolicy":null}`, `{"x":[1, 2],` + member + `}`},
	} {
		params := &rivertype.JobInsertParams{Args: argsWith{own}, Metadata: []byte(tc.md)}
		if err := p.InsertBegin(context.Background(), params); err != nil {
			t.Errorf("metadata %q: %v", tc.md, err)
			continue
		}
		if string(params.Metadata) != tc.want {
			t.Errorf("metadata %q became\n%s\nwant\n%s", tc.md, params.Metadata, tc.want)
		}
		if !p.Policy(&rivertype.JobRow{Attempt: 1, Metadata: params.Metadata}).Equal(own) {
			t.Errorf("metadata %q: the policy does not read back from %s", tc.md, params.Metadata)
		}
	}
}

// TestCacheBoundsKeySize: the caches keep no key over cacheKeyLimit bytes
// (300 jobs with 8 MiB metadata kept 4.1 GB before), and such a job's
// policy is still read right on every use.
func TestCacheBoundsKeySize(t *testing.T) {
	p := New(nil)
	pad := bytes.Repeat([]byte(" "), 1<<20)
	for i := range 20 {
		md := []byte(`{"pad":"` + string(pad) + `","retrykit_policy":{"max_attempts":` + strconv.Itoa(i+1) + `}}`)
		if got := p.Policy(&rivertype.JobRow{Attempt: 1, Metadata: md}).Spec().MaxAttempts; got != i+1 {
			t.Fatalf("job %d: max_attempts %d", i, got)
		}
		raw := []byte(`{"max_attempts":` + strconv.Itoa(i+1) + string(pad) + `}`)
		if pol, err := p.parse(raw); err != nil || pol.Spec().MaxAttempts != i+1 {
			t.Fatalf("policy %d: %v, %v", i, pol, err)
		}
	}
	for name, c := range map[string]*policyCache{"byMD": &p.byMD, "byRaw": &p.byRaw} {
		c.mu.RLock()
		for k := range c.m {
			if len(k) > cacheKeyLimit {
				t.Errorf("%s cached a %d-byte key, over the %d-byte limit", name, len(k), cacheKeyLimit)
			}
		}
		c.mu.RUnlock()
	}
}

// largeMetadata is a job's metadata of about size bytes: a padding member,
// then a per-job policy of maxAttempts, or none when maxAttempts is 0. The
// padding holds escapes, so that the text takes the slow path of
// hasPolicyKey even without a policy.
func largeMetadata(size, maxAttempts int) []byte {
	pad := strings.Repeat(`ab\"cd `, size/7)
	md := `{"pad":"` + pad + `"`
	if maxAttempts > 0 {
		md += `,"retrykit_policy":{"max_attempts":` + strconv.Itoa(maxAttempts) + `}`
	}
	return []byte(md + "}")
}

// TestLargeMetadataIsDecodedOnce: a job whose metadata is far over the
// verbatim cache key limit is decoded on its first use only; later uses
// (River calls the plugin on every failure, twice) find the policy by the
// text's digest. Decoding 2 MiB of JSON allocates thousands of times; a
// digest lookup allocates nothing.
func TestLargeMetadataIsDecodedOnce(t *testing.T) {
	p := New(nil)
	for _, want := range []int{7, 0} {
		job := &rivertype.JobRow{Attempt: 1, Metadata: largeMetadata(2<<20, want)}
		if want == 0 {
			want = policy.Default().Spec().MaxAttempts
		}
		if got := p.Policy(job).Spec().MaxAttempts; got != want {
			t.Fatalf("first use: max_attempts %d, want %d", got, want)
		}
		allocs := testing.AllocsPerRun(5, func() {
			if got := p.Policy(job).Spec().MaxAttempts; got != want {
				t.Fatalf("later use: max_attempts %d, want %d", got, want)
			}
		})
		if allocs > 2 {
			t.Errorf("max_attempts %d: %.0f allocations per later use of 2 MiB metadata: decoded again", want, allocs)
		}
	}
	// The copy of a cached text with one byte changed is a different text.
	md := largeMetadata(2<<20, 7)
	md[len(md)-3] = '8'
	if got := p.Policy(&rivertype.JobRow{Attempt: 1, Metadata: md}).Spec().MaxAttempts; got != 8 {
		t.Errorf("changed metadata: max_attempts %d, want 8", got)
	}
}

// TestLongKeyCacheIsBounded: texts over the verbatim key limit are kept by
// digest, at most cacheLimit of them, the newest always kept.
func TestLongKeyCacheIsBounded(t *testing.T) {
	p := New(nil)
	for i := range cacheLimit + 40 {
		md := largeMetadata(cacheKeyLimit+100, i+1)
		if got := p.Policy(&rivertype.JobRow{Attempt: 1, Metadata: md}).Spec().MaxAttempts; got != i+1 {
			t.Fatalf("job %d: max_attempts %d", i, got)
		}
		if _, ok := p.byMD.load(md); !ok {
			t.Fatalf("job %d: its metadata is not cached", i)
		}
	}
	if n := p.byMD.len(); n != cacheLimit {
		t.Errorf("cache holds %d entries, want %d", n, cacheLimit)
	}
}
