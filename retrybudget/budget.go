package retrybudget

import (
	"errors"
	"math"
	"strconv"
	"time"
)

// Budget is what a retrying executor asks before it schedules a retry.
// *TokenBucket and *Ratio implement it; each method takes the instant of
// the event, so an implementation reads no clock.
type Budget interface {
	// DepositAt records that a job ran its first attempt at now.
	DepositAt(now time.Time)
	// SuccessAt records that an attempt (first or retry) succeeded at now.
	SuccessAt(now time.Time)
	// AllowAt reports whether a retry may be scheduled at now, and if so
	// pays for it. A refused retry costs nothing.
	AllowAt(now time.Time) bool
	// TokensAt returns what the budget holds at now, in retries: the
	// tokens of a TokenBucket, the balance Ratio·F + floor − R of a Ratio
	// (0 when negative). AllowAt allows a retry exactly when it is at
	// least 1.
	TokensAt(now time.Time) float64
	// NextAt returns the earliest instant, not before now, at which AllowAt
	// would allow a retry if no other event happened meanwhile, and false if
	// there is none (an empty bucket with no refill).
	NextAt(now time.Time) (time.Time, bool)
}

var (
	_ Budget = (*TokenBucket)(nil)
	_ Budget = (*Ratio)(nil)
)

// MaxTokens bounds every count in a spec (capacity, refill and credit,
// retries per second), so that counts in billionths fit in 64 bits.
const MaxTokens = 1e9

// MaxRatio is the largest Ratio: a thousand retries per first attempt.
const MaxRatio = 1000

// Window bounds of a RatioSpec.
const (
	MinWindow = 10 * time.Millisecond
	MaxWindow = 24 * time.Hour
)

// ErrInvalidSpec is matched (errors.Is) by every error Parse,
// NewTokenBucket and NewRatio return.
var ErrInvalidSpec = errors.New("retrybudget: invalid budget")

// FieldError is a budget refused by Parse, NewTokenBucket or NewRatio:
// the field, its value and the reason.
type FieldError struct {
	// Field is the JSON path of the field within the retry_budget object
	// ("token_bucket.capacity", "ratio.window"), or "" for the object.
	Field string
	// Value is the refused value: a float64 or time.Duration from Go, the
	// raw JSON text from Parse, or nil.
	Value any
	// Reason says what the value must be.
	Reason string
	// Err is the cause (a JSON syntax error from Parse), or nil.
	Err error
}

// Error returns "retrybudget: retry_budget.FIELD: REASON".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return "retrybudget: retry_budget: " + e.Reason
	}
	return "retrybudget: retry_budget." + e.Field + ": " + e.Reason
}

// Is reports whether target is ErrInvalidSpec.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidSpec }

// Unwrap returns the cause, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// checkCount refuses a count that is not finite, below lo or above hi.
func checkCount(field string, v, lo, hi float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return &FieldError{Field: field, Value: v, Reason: "must be a finite number, got " + fmtNum(v)}
	case v < lo:
		return &FieldError{Field: field, Value: v, Reason: "must be at least " + fmtNum(lo) + ", got " + fmtNum(v)}
	case v > hi:
		return &FieldError{Field: field, Value: v, Reason: "must be at most " + fmtNum(hi) + ", got " + fmtNum(v)}
	}
	return nil
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// later returns now, or last when now is before it, and the instant to
// keep as the latest seen.
func later(last, now time.Time) time.Time {
	if !last.IsZero() && now.Before(last) {
		return last
	}
	return now
}

// unit is the number of parts a token (or a retry) is counted in: every
// count is held in billionths, as an integer, so that a credit of 0.1
// added ten times is exactly one token.
const unit = 1_000_000_000

// fixed returns v in billionths, rounded to the nearest. v is finite and
// between 0 and 1e10 (checked before).
func fixed(v float64) uint64 { return uint64(math.Round(v * unit)) }

// elapsed returns the nanoseconds from last to now, 0 when now is not
// after last; a gap longer than the largest Duration counts as that.
func elapsed(last, now time.Time) uint64 {
	if !now.After(last) {
		return 0
	}
	return uint64(now.Sub(last))
}
