package retrybudget_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/retrybudget"
)

// The worked table on TokenBucket in the package doc: Capacity 10,
// CreditPerSuccess 0.5, no refill.
func TestBucketFollowsTheDocTable(t *testing.T) {
	b, err := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 10, CreditPerSuccess: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if !b.AllowAt(t0) {
			t.Fatalf("retry %d refused by a full bucket of 10", i+1)
		}
	}
	if b.AllowAt(t0) || b.TokensAt(t0) != 0 {
		t.Fatalf("11th retry allowed, or balance %v after 10 retries", b.TokensAt(t0))
	}
	b.SuccessAt(t0)
	b.SuccessAt(t0)
	if got := b.TokensAt(t0); got != 1 {
		t.Fatalf("two successes of 0.5: balance %v, want 1", got)
	}
	if !b.AllowAt(t0) || b.TokensAt(t0) != 0 {
		t.Fatal("the token two successes paid for is not spendable")
	}
}

// Ten credits of 0.1 are exactly one token (billionths, not float64 sums,
// where 0.1 added ten times is 0.9999999999999999).
func TestTenCreditsOfOneTenthPayForOneRetry(t *testing.T) {
	b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1, CreditPerSuccess: 0.1})
	b.AllowAt(t0)
	for i := 0; i < 9; i++ {
		b.SuccessAt(t0)
	}
	if b.AllowAt(t0) {
		t.Fatal("nine credits of 0.1 paid for a retry of 1")
	}
	b.SuccessAt(t0)
	if !b.AllowAt(t0) {
		t.Fatal("ten credits of 0.1 did not pay for a retry of 1")
	}
}

// The refill carries its remainder: 0.3 tokens per second over ten gaps of
// 1 ns adds 3e-9 tokens, as one gap of 10 ns does (each gap alone is
// 0.3e-9, below the billionth).
func TestRefillOverManyGapsEqualsOneGap(t *testing.T) {
	for _, gaps := range []int{1, 10} {
		b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1, RefillPerSecond: 0.3})
		b.AllowAt(t0)
		for i := 1; i <= gaps; i++ {
			b.DepositAt(t0.Add(time.Duration(i*10/gaps) * time.Nanosecond))
		}
		if got := b.TokensAt(t0.Add(10 * time.Nanosecond)); got != 3e-9 {
			t.Errorf("%d gaps over 10ns at 0.3/s: balance %v, want 3e-09", gaps, got)
		}
	}
}

// An instant before the latest one seen counts as the latest: no refund,
// no negative refill.
func TestClockSteppingBackRefundsNothing(t *testing.T) {
	b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 2, RefillPerSecond: 1})
	b.AllowAt(t0.Add(time.Hour))
	b.AllowAt(t0.Add(time.Hour))
	if b.AllowAt(t0) || b.TokensAt(t0) != 0 {
		t.Fatal("a retry earlier than the last event was paid by time that had not passed")
	}
	if got := b.TokensAt(t0.Add(time.Hour + 1500*time.Millisecond)); got != 1.5 {
		t.Fatalf("1.5s after the last event at 1/s: %v, want 1.5", got)
	}
	r, _ := retrybudget.NewRatio(retrybudget.RatioSpec{Ratio: 1, Window: time.Second})
	r.DepositAt(t0.Add(time.Hour))
	if !r.AllowAt(t0) || r.AllowAt(t0) {
		t.Fatal("a Ratio did not count an earlier instant as the latest slot")
	}
}

// A gap longer than the largest Duration refills as that gap does, and
// never overflows the bucket.
func TestHugeGapsFillTheBucket(t *testing.T) {
	b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1, RefillPerSecond: retrybudget.MaxTokens})
	b.AllowAt(time.Time{}.Add(time.Nanosecond))
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := b.TokensAt(far); got != 1 {
		t.Fatalf("balance %v after centuries, want the capacity", got)
	}
	if next, ok := b.NextAt(far); !ok || !next.Equal(far) {
		t.Fatalf("NextAt(full bucket) = %v, %v", next, ok)
	}
	slow, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1, RefillPerSecond: 1e-9})
	slow.AllowAt(t0)
	if next, ok := slow.NextAt(t0); !ok || next.Sub(t0) != 1e9*time.Second {
		t.Fatalf("a token at 1e-9 per second: NextAt %v, %v, want 1e9 s later", next.Sub(t0), ok)
	}
	slow, _ = retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 1, RefillPerSecond: 1e-10})
	slow.AllowAt(t0)
	if _, ok := slow.NextAt(t0); ok {
		t.Fatal("a refill of 1 token at 1e-10 per second (held as 0) never comes, yet NextAt gave an instant")
	}
}

// The zero Bucket and zero Ratio refuse every retry, hold nothing, and
// never say when a retry would be allowed.
func TestZeroBudgetsRefuseEveryRetry(t *testing.T) {
	for name, b := range map[string]retrybudget.Budget{"Bucket": &retrybudget.TokenBucket{}, "Ratio": &retrybudget.Ratio{}} {
		b.DepositAt(t0)
		b.SuccessAt(t0)
		if b.AllowAt(t0.Add(time.Hour)) || b.TokensAt(t0) != 0 {
			t.Errorf("zero %s allowed a retry or holds %v", name, b.TokensAt(t0))
		}
		if _, ok := b.NextAt(t0); ok {
			t.Errorf("zero %s names an instant for the next retry", name)
		}
	}
}

// Every refused spec names its field and matches ErrInvalidSpec and
// *FieldError.
func TestRefusedSpecsNameTheField(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		spec  any
		field string
		has   string
	}{
		{retrybudget.TokenBucketSpec{Capacity: 0}, "token_bucket.capacity", "must be at least 1, got 0"},
		{retrybudget.TokenBucketSpec{Capacity: -1}, "token_bucket.capacity", "got -1"},
		{retrybudget.TokenBucketSpec{Capacity: 0.5}, "token_bucket.capacity", "at least 1, got 0.5"},
		{retrybudget.TokenBucketSpec{Capacity: nan}, "token_bucket.capacity", "finite"},
		{retrybudget.TokenBucketSpec{Capacity: math.Inf(1)}, "token_bucket.capacity", "finite"},
		{retrybudget.TokenBucketSpec{Capacity: 2e9}, "token_bucket.capacity", "at most 1e+09"},
		{retrybudget.TokenBucketSpec{Capacity: 10, CreditPerSuccess: -0.5}, "token_bucket.credit_per_success", "at least 0"},
		{retrybudget.TokenBucketSpec{Capacity: 10, CreditPerSuccess: 10.5}, "token_bucket.credit_per_success", "at most 10"},
		{retrybudget.TokenBucketSpec{Capacity: 10, RefillPerSecond: math.Inf(1)}, "token_bucket.refill_per_second", "finite"},
		{retrybudget.TokenBucketSpec{Capacity: 10, RefillPerSecond: -1}, "token_bucket.refill_per_second", "at least 0"},
		{retrybudget.RatioSpec{Ratio: -0.1, Window: time.Second}, "ratio.ratio", "at least 0"},
		{retrybudget.RatioSpec{Ratio: 1001, Window: time.Second}, "ratio.ratio", "at most 1000"},
		{retrybudget.RatioSpec{Ratio: nan, Window: time.Second}, "ratio.ratio", "finite"},
		{retrybudget.RatioSpec{Ratio: 0, MinPerSecond: 0, Window: time.Second}, "ratio", "both 0"},
		{retrybudget.RatioSpec{Ratio: 1e-10, MinPerSecond: 1e-10, Window: time.Second}, "ratio", "both 0"},
		{retrybudget.RatioSpec{MinPerSecond: -1, Window: time.Second}, "ratio.min_per_second", "at least 0"},
		{retrybudget.RatioSpec{MinPerSecond: 1e9, Window: 2 * time.Second}, "ratio.min_per_second", "at most 1e9 retries"},
		{retrybudget.RatioSpec{Ratio: 0.2, Window: 0}, "ratio.window", "between 10ms and 24h0m0s, got 0s"},
		{retrybudget.RatioSpec{Ratio: 0.2, Window: 25 * time.Hour}, "ratio.window", "got 25h0m0s"},
	} {
		var err error
		switch s := c.spec.(type) {
		case retrybudget.TokenBucketSpec:
			_, err = retrybudget.NewTokenBucket(s)
		case retrybudget.RatioSpec:
			_, err = retrybudget.NewRatio(s)
		}
		var fe *retrybudget.FieldError
		if !errors.Is(err, retrybudget.ErrInvalidSpec) || !errors.As(err, &fe) || fe.Field != c.field ||
			!strings.HasPrefix(err.Error(), "retrybudget: retry_budget."+c.field+": ") || !strings.Contains(err.Error(), c.has) {
			t.Errorf("%+v: got %v, want a FieldError on %s saying %q", c.spec, err, c.field, c.has)
		}
	}
}

// The spec a budget holds is the one given, rounded to billionths, the
// window to whole slots.
func TestSpecRoundsToBillionths(t *testing.T) {
	b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 3, CreditPerSuccess: 0.1000000004, RefillPerSecond: 2.5})
	if got := b.Spec(); got != (retrybudget.TokenBucketSpec{Capacity: 3, CreditPerSuccess: 0.1, RefillPerSecond: 2.5}) {
		t.Fatalf("bucket spec %+v", got)
	}
	r, _ := retrybudget.NewRatio(retrybudget.RatioSpec{Ratio: 0.2, MinPerSecond: 10, Window: 10*time.Second + 7})
	if got := r.Spec(); got != (retrybudget.RatioSpec{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second}) {
		t.Fatalf("ratio spec %+v", got)
	}
}

// Many goroutines spending one bucket together get exactly its capacity
// (run with -race), and a shared Ratio exactly Ratio·F + floor.
func TestConcurrentRetriesSpendExactlyTheBudget(t *testing.T) {
	b, _ := retrybudget.NewTokenBucket(retrybudget.TokenBucketSpec{Capacity: 100})
	r, _ := retrybudget.NewRatio(retrybudget.RatioSpec{Ratio: 0.5, MinPerSecond: 1, Window: 10 * time.Second})
	for i := 0; i < 100; i++ {
		r.DepositAt(t0)
	}
	var fromBucket, fromRatio atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				at := t0.Add(time.Duration(i) * time.Millisecond)
				if b.AllowAt(at) {
					fromBucket.Add(1)
				}
				if r.AllowAt(at) {
					fromRatio.Add(1)
				}
				b.TokensAt(at)
				r.NextAt(at)
			}
		}()
	}
	wg.Wait()
	if fromBucket.Load() != 100 || fromRatio.Load() != 60 {
		t.Fatalf("allowed %d from a bucket of 100 and %d from a ratio of 0.5×100 + 10", fromBucket.Load(), fromRatio.Load())
	}
}
