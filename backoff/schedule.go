package backoff

import (
	"iter"
	"time"
)

// Schedule returns an iterator over attempts 1..k and the delay after each,
// drawn as [Backoff.Delay] draws it (one src.Float64() per attempt when
// jitter is on; nil src means [Random]()). k < 1 yields nothing. With
// [Decorrelated] jitter each delay is drawn after the one before it, as
// [Backoff.DelayAfter] with prev the previous yielded delay. Breaking
// out of the loop stops the iteration. The iterator may be ranged over
// more than once; each run draws afresh from src.
func (b *Backoff) Schedule(k int, src Source) iter.Seq2[int, time.Duration] {
	return func(yield func(int, time.Duration) bool) {
		var prev time.Duration
		for n := 1; n <= k && n > 0; n++ {
			prev = b.DelayAfter(n, prev, src)
			if !yield(n, prev) {
				return
			}
		}
	}
}
