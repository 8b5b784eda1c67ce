// Package sat is saturating integer arithmetic: results that do not fit
// are clamped to the largest (or smallest) value instead of wrapping. It is
// the one implementation the retrykit packages share for delay, duration
// and schedule sums.
//
// [Add], [Mul] and [Pow] work on uint64 and saturate at math.MaxUint64.
// The generic [AddInt], [MulInt] and [PowInt] work on any ~int64 type
// (time.Duration included): AddInt clamps to [math.MinInt64,
// math.MaxInt64]; MulInt and PowInt treat a negative operand as 0 and
// saturate at math.MaxInt64. None of them panics or wraps, for any input.
package sat
