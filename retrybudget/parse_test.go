package retrybudget_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/retrybudget"
)

// The two forms of docs/extensions.md §2.3 read to the budgets they name,
// with the documented defaults.
func TestParseReadsBothForms(t *testing.T) {
	b, err := retrybudget.Parse([]byte(`{"token_bucket": {"capacity": 100, "refill_per_second": 10, "credit_per_success": 0.1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.(*retrybudget.TokenBucket).Spec(); got != (retrybudget.TokenBucketSpec{Capacity: 100, RefillPerSecond: 10, CreditPerSuccess: 0.1}) {
		t.Fatalf("token bucket %+v", got)
	}
	b, err = retrybudget.Parse([]byte(`{"token_bucket": {"capacity": 5}}`))
	if err != nil || b.(*retrybudget.TokenBucket).Spec() != (retrybudget.TokenBucketSpec{Capacity: 5}) {
		t.Fatalf("defaults: %+v, %v", b, err)
	}
	b, err = retrybudget.Parse([]byte(`{"ratio": {"ratio": 0.1, "min_per_second": 5, "window": "PT1M"}}`))
	if err != nil || b.(*retrybudget.Ratio).Spec() != (retrybudget.RatioSpec{Ratio: 0.1, MinPerSecond: 5, Window: time.Minute}) {
		t.Fatalf("ratio: %+v, %v", b, err)
	}
	b, err = retrybudget.Parse([]byte(`{"ratio": {"ratio": 0.2}}`))
	if err != nil || b.(*retrybudget.Ratio).Spec() != (retrybudget.RatioSpec{Ratio: 0.2, Window: 10 * time.Second}) {
		t.Fatalf("ratio defaults: %+v, %v", b, err)
	}
}

// Every refused document names the member at fault, as a JSON path under
// retry_budget, and matches ErrInvalidSpec and *FieldError.
func TestParseRefusalsNameTheMember(t *testing.T) {
	for _, c := range []struct{ doc, field, has string }{
		{`{}`, "", "exactly one of token_bucket and ratio, got 0"},
		{`{"token_bucket": {"capacity": 1}, "ratio": {"ratio": 1}}`, "", "got 2"},
		{`{"leaky": {}}`, "leaky", "unknown member"},
		{`[]`, "", "must be a JSON object, got an array"},
		{`{"ratio": {"ratio": 1}} x`, "", "invalid JSON"},
		{`{"ratio": {"ratio": 1, "ratio": 2}}`, "", "ratio.ratio: duplicate key"},
		{"{\"ratio\": {\"ratio\": 1, \"w\xff\": 2}}", "", "not valid UTF-8"},
		{`{"token_bucket": {}}`, "token_bucket.capacity", "is required"},
		{`{"token_bucket": {"capacity": "100"}}`, "token_bucket.capacity", "must be a number, got a string"},
		{`{"token_bucket": {"capacity": 1e999}}`, "token_bucket.capacity", "got 1e999"},
		{`{"token_bucket": {"capacity": 0}}`, "token_bucket.capacity", "at least 1"},
		{`{"token_bucket": {"capacity": 10, "cost": 2}}`, "token_bucket.cost", "unknown member"},
		{`{"token_bucket": {"capacity": 10, "refill_per_second": -1}}`, "token_bucket.refill_per_second", "at least 0"},
		{`{"token_bucket": {"capacity": 10, "credit_per_success": 11}}`, "token_bucket.credit_per_success", "at most 10"},
		{`{"token_bucket": null}`, "token_bucket", "must be a JSON object, got null"},
		{`{"ratio": {"window": "PT10S"}}`, "ratio.ratio", "is required"},
		{`{"ratio": {"ratio": 0.1, "window": 10}}`, "ratio.window", "ISO 8601 duration string"},
		{`{"ratio": {"ratio": 0.1, "window": "10s"}}`, "ratio.window", "ISO 8601 duration"},
		{`{"ratio": {"ratio": 0.1, "window": "PT0S"}}`, "ratio.window", "between 10ms"},
		{`{"ratio": {"ratio": 0.1, "window": "P2D"}}`, "ratio.window", "got 48h0m0s"},
		{`{"ratio": {"ratio": 0, "min_per_second": 0}}`, "ratio", "both 0"},
		{`{"ratio": {"ratio": true}}`, "ratio.ratio", "must be a number, got true"},
		{`{"ratio": {"ratio": 1001}}`, "ratio.ratio", "at most 1000"},
		{`{"ratio": {"ratio": 0.1, "min_per_second": 1e9}}`, "ratio.min_per_second", "at most 1e9 retries"},
		{`{"ratio": {"ratio": 0.1, "ttl": "PT1S"}}`, "ratio.ttl", "unknown member"},
		{`{"ratio":` + strings.Repeat(" ", retrybudget.MaxDocumentSize) + `{"ratio": 1}}`, "", "exceeds 4096"},
	} {
		_, err := retrybudget.Parse([]byte(c.doc))
		var fe *retrybudget.FieldError
		prefix := "retrybudget: retry_budget: "
		if c.field != "" {
			prefix = "retrybudget: retry_budget." + c.field + ": "
		}
		if !errors.Is(err, retrybudget.ErrInvalidSpec) || !errors.As(err, &fe) || fe.Field != c.field ||
			!strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), c.has) {
			t.Errorf("%.60s: got %v, want a FieldError on %q saying %q", c.doc, err, c.field, c.has)
		}
	}
}

// Parse never panics, refuses with a matchable FieldError only, and what
// it accepts is a working budget: empty of events, a token bucket allows
// its first retry (capacity ≥ 1), and no budget holds a negative balance.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"token_bucket": {"capacity": 100, "refill_per_second": 10, "credit_per_success": 0.1}}`,
		`{"ratio": {"ratio": 0.1, "min_per_second": 5, "window": "PT10S"}}`,
		`{"ratio": {"ratio": 1e3, "window": "PT0.01S"}}`,
		`{"token_bucket": {"capacity": 1e9, "refill_per_second": 1e-9}}`,
		`{"ratio": {"ratio": 0.1, "window": "P1D"}}`,
		`{"token_bucket": {"capacity": -0}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := retrybudget.Parse(data)
		if err != nil {
			var fe *retrybudget.FieldError
			if !errors.Is(err, retrybudget.ErrInvalidSpec) || !errors.As(err, &fe) || b != nil {
				t.Fatalf("refusal %v (%T) with budget %v", err, err, b)
			}
			return
		}
		if tb, ok := b.(*retrybudget.TokenBucket); ok {
			if !tb.AllowAt(t0) {
				t.Fatalf("a bucket of %+v refuses its first retry", tb.Spec())
			}
		} else {
			b.DepositAt(t0)
			b.AllowAt(t0.Add(time.Second))
		}
		if v := b.TokensAt(t0.Add(time.Hour)); v < 0 || v != v {
			t.Fatalf("balance %v", v)
		}
	})
}
