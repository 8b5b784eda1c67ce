package profile

import (
	"iter"
	"math"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// Schedule returns an iterator over attempts 1..k and the delay after each,
// drawing from src as the system draws (nil means [backoff.Random]()). It
// is the way to follow a stateful profile: each delay of decorrelated
// jitter is drawn from the one before it. The delays are those of
// [Profile.Run] with exhaustion ignored. k < 1 yields nothing; breaking out
// of the loop stops it; each range over the iterator draws afresh.
func (p Profile) Schedule(k int, src backoff.Source) iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		m := p.get()
		var prev time.Duration
		for n := 1; n <= k && n > 0; n++ {
			prev = m.delay(n, prev, sourceDraws(src))
			if !yield(n, prev) {
				return
			}
		}
	}
}

// Run is one job's way through a profile: each call to [Run.Next] is the
// next failed attempt, and the delays follow from each other as the
// system's own state would (decorrelated jitter keeps the previous delay).
//
// The zero Run follows the zero Profile. A Run is not safe for concurrent
// use; give each job its own.
type Run struct {
	p    Profile
	n    int
	prev time.Duration
}

// Run returns a fresh Run of p, before its first attempt.
func (p Profile) Run() *Run { return &Run{p: p} }

// Attempt returns the number of failed attempts Next has seen.
func (r *Run) Attempt() int { return r.n }

// Next records that the next attempt failed and returns the decision for
// it: retry after a delay drawn from src (nil means [backoff.Random]()),
// or the profile's exhaustion action once its MaxAttempts is reached. The
// attempt count saturates at math.MaxInt.
func (r *Run) Next(src backoff.Source) policy.Decision {
	if r.n < math.MaxInt {
		r.n++
	}
	if d, done := r.p.exhausted(r.n); done {
		return d
	}
	r.prev = r.p.get().delay(r.n, r.prev, sourceDraws(src))
	return policy.Decision{Action: policy.Retry, Delay: r.prev, Reason: policy.ReasonRetry}
}
