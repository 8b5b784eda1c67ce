package retrybudget

import (
	"math/bits"
	"sync"
	"time"
)

// TokenBucketSpec configures a [TokenBucket]: the token_bucket object of
// a retry_budget (docs/extensions.md §2.3). Counts are in tokens, where
// one retry costs one token, and may be fractional; each is held to the
// nearest billionth of a token. A system whose retry costs c tokens (the
// AWS SDK's 5) is the same bucket with every count divided by c.
type TokenBucketSpec struct {
	// Capacity is the most tokens the bucket holds; it starts full.
	// At least 1 (one retry), at most MaxTokens.
	Capacity float64
	// RefillPerSecond is the tokens added per second of time: 0 (none) to
	// MaxTokens, the classic rate-limiting bucket.
	RefillPerSecond float64
	// CreditPerSuccess is the tokens one succeeded attempt puts back: 0 to
	// Capacity (gRPC's token_ratio, the AWS SDK's no-retry increment).
	CreditPerSuccess float64
}

// TokenBucket is a retry token bucket: a retry is allowed while the bucket
// holds at least one token, and takes it; a success puts CreditPerSuccess
// back; RefillPerSecond adds tokens as time passes; the bucket never holds
// more than Capacity or fewer than 0 tokens.
//
// Tokens are counted exactly in billionths. Refill accrues whole billionths
// and carries the remainder, so refilling over many short gaps adds exactly
// what one long gap would; the remainder is dropped while the bucket is
// full. With RefillPerSecond 0.5 a bucket emptied at t=0 holds 1 token at
// t=2s.
//
// A TokenBucket is safe for concurrent use by multiple goroutines; it must
// not be copied after first use. The zero TokenBucket refuses every retry
// and holds nothing; use NewTokenBucket.
type TokenBucket struct {
	mu     sync.Mutex
	cap    uint64 // billionths of a token, 0 in the zero Bucket
	cost   uint64 // one token
	credit uint64
	rate   uint64 // billionths per second
	tokens uint64
	rem    uint64 // refill remainder, billionths of a billionth, below unit
	last   time.Time
	seen   bool // whether last is set
}

// NewTokenBucket validates s and returns a full TokenBucket. A refused
// spec gives a *FieldError naming the first bad field (matching
// ErrInvalidSpec).
func NewTokenBucket(s TokenBucketSpec) (*TokenBucket, error) {
	if err := checkCount("token_bucket.capacity", s.Capacity, 1, MaxTokens); err != nil {
		return nil, err
	}
	if err := checkCount("token_bucket.refill_per_second", s.RefillPerSecond, 0, MaxTokens); err != nil {
		return nil, err
	}
	if err := checkCount("token_bucket.credit_per_success", s.CreditPerSuccess, 0, s.Capacity); err != nil {
		return nil, err
	}
	b := &TokenBucket{cap: fixed(s.Capacity), cost: unit, credit: fixed(s.CreditPerSuccess), rate: fixed(s.RefillPerSecond)}
	b.tokens = b.cap
	return b, nil
}

// Spec returns the spec of b, its counts as held (rounded to billionths).
func (b *TokenBucket) Spec() TokenBucketSpec {
	return TokenBucketSpec{Capacity: toFloat(b.cap), RefillPerSecond: toFloat(b.rate), CreditPerSuccess: toFloat(b.credit)}
}

// advance returns the tokens and refill remainder at now, and the instant
// to keep as the latest seen, without changing b.
func (b *TokenBucket) advance(now time.Time) (tokens, rem uint64, last time.Time) {
	if !b.seen {
		return b.tokens, b.rem, now
	}
	last = later(b.last, now)
	if b.tokens >= b.cap {
		return b.cap, 0, last
	}
	e := elapsed(b.last, last)
	if b.rate == 0 || e == 0 {
		return b.tokens, b.rem, last
	}
	hi, lo := bits.Mul64(b.rate, e)
	var c uint64
	lo, c = bits.Add64(lo, b.rem, 0)
	hi += c
	if hi >= unit { // the quotient needs more than 64 bits
		return b.cap, 0, last
	}
	q, r := bits.Div64(hi, lo, unit)
	if q >= b.cap-b.tokens {
		return b.cap, 0, last
	}
	return b.tokens + q, r, last
}

// move brings b to now.
func (b *TokenBucket) move(now time.Time) {
	b.tokens, b.rem, b.last = b.advance(now)
	b.seen = true
}

// DepositAt changes no count: a TokenBucket is paid by successes and time,
// not by traffic. Like every event it brings the bucket to now (refilling
// it), so that a later instant earlier than now counts as now.
func (b *TokenBucket) DepositAt(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cap != 0 {
		b.move(now)
	}
}

// SuccessAt puts CreditPerSuccess back into the bucket, up to Capacity.
func (b *TokenBucket) SuccessAt(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cap == 0 {
		return
	}
	b.move(now)
	b.tokens = min(b.cap, b.tokens+b.credit)
}

// AllowAt reports whether the bucket holds at least one token at now, and
// if so takes it.
func (b *TokenBucket) AllowAt(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cap == 0 {
		return false
	}
	b.move(now)
	if b.tokens < b.cost {
		return false
	}
	b.tokens -= b.cost
	return true
}

// TokensAt returns the tokens the bucket holds at now (0 to Capacity).
func (b *TokenBucket) TokensAt(now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, _, _ := b.advance(now)
	return toFloat(t)
}

// NextAt returns now when a retry would be allowed at now, else the first
// instant at which the refill brings the bucket to one token, rounded up to
// the nanosecond; false when RefillPerSecond is 0 (only a success can pay)
// or that instant is more than the largest Duration away.
func (b *TokenBucket) NextAt(now time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cap == 0 {
		return time.Time{}, false
	}
	t, rem, last := b.advance(now)
	if t >= b.cost {
		return now, true
	}
	if b.rate == 0 {
		return time.Time{}, false
	}
	// The smallest e with rate·e + rem ≥ (cost − t)·unit.
	hi, lo := bits.Mul64(b.cost-t, unit)
	var br uint64
	lo, br = bits.Sub64(lo, rem, 0)
	hi -= br
	if hi >= b.rate {
		return time.Time{}, false
	}
	e, r := bits.Div64(hi, lo, b.rate)
	if r != 0 {
		e++
	}
	if e > uint64(maxDuration) {
		return time.Time{}, false
	}
	return last.Add(time.Duration(e)), true
}

// maxDuration is the largest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// toFloat converts billionths to a float64 count.
func toFloat(v uint64) float64 { return float64(v) / unit }
