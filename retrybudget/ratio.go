package retrybudget

import (
	"math/bits"
	"sync"
	"time"
)

// Slots is the number of slots a Ratio's window is divided into.
const Slots = 10

// RatioSpec configures a [Ratio]: the ratio object of a retry_budget
// (docs/extensions.md §2.3).
type RatioSpec struct {
	// Ratio is the retries allowed per first attempt within the window:
	// 0.2 lets retries add a fifth to the traffic. 0 to MaxRatio, held to
	// the nearest billionth (Finagle's percentCanRetry, Envoy's
	// budget_percent, failsafe-go's max rate).
	Ratio float64
	// MinPerSecond is the floor: retries per second allowed whatever the
	// traffic, so that a quiet queue can still retry (Finagle's
	// minRetriesPerSec). 0 to MaxTokens; MinPerSecond × Window is at most
	// MaxTokens retries. Ratio and MinPerSecond are not both 0.
	MinPerSecond float64
	// Window is how long a first attempt or a retry counts: MinWindow to
	// MaxWindow (Finagle's ttl, 10 s by default). It is divided into
	// Slots slots of Window/Slots, truncated to the nanosecond.
	Window time.Duration
}

// Ratio is a retry budget as a share of traffic with a floor. It counts
// first attempts F and allowed retries R per slot of Window/Slots, the slots
// counted from the first instant the Ratio sees (slot k holds the instants
// from origin + k·Window/Slots, inclusive, to the next slot's start). At
// an instant in slot k, F and R are the sums over slots k−9 to k, and a
// retry is allowed when
//
//	Ratio·F + floor − R ≥ 1,  where floor = MinPerSecond · Window / 1s
//
// computed exactly in billionths (floor truncated to a billionth). An
// allowed retry adds 1 to R. Over any window of Slots slots, therefore,
// the retries allowed never exceed Ratio times the first attempts of that
// window plus the floor. Retries spent late in a window may outlast the
// first attempts that paid for them: the balance then reads 0 until they
// leave the window too.
//
// With Ratio 0.1, MinPerSecond 0.5 and Window 10s (slots of 1s, floor 5):
//
//	t      event                  F    R    balance  allowed
//	0s     100 first attempts     100  0    15
//	1s     16 retries asked       100  15   0        15 of 16
//	9.9s   retry asked            100  15   0        no
//	10s    retry asked            0    15   0        no   (slot 0 has left)
//	11s    retry asked            0    0    5        yes  (slot 1 has left)
//
// A Ratio is safe for concurrent use by multiple goroutines; it must not be
// copied after first use. The zero Ratio refuses every retry and records
// nothing; use NewRatio.
type Ratio struct {
	mu     sync.Mutex
	ratio  uint64 // billionths of a retry per first attempt
	floor  uint64 // billionths of a retry per window
	slot   time.Duration
	origin time.Time
	latest time.Time
	seen   bool
	counts [Slots]slotCount
	spec   RatioSpec
}

// slotCount is one slot's counts, saturating.
type slotCount struct {
	index   int64 // the slot these counts belong to
	first   uint64
	retries uint64
}

// NewRatio validates s and returns an empty Ratio. A refused spec gives a
// *FieldError naming the first bad field (matching ErrInvalidSpec).
func NewRatio(s RatioSpec) (*Ratio, error) {
	if err := checkCount("ratio.ratio", s.Ratio, 0, MaxRatio); err != nil {
		return nil, err
	}
	if err := checkCount("ratio.min_per_second", s.MinPerSecond, 0, MaxTokens); err != nil {
		return nil, err
	}
	if s.Window < MinWindow || s.Window > MaxWindow {
		return nil, &FieldError{Field: "ratio.window", Value: s.Window, Reason: "must be between " + MinWindow.String() + " and " + MaxWindow.String() + ", got " + s.Window.String()}
	}
	r := &Ratio{ratio: fixed(s.Ratio), slot: s.Window / Slots}
	hi, lo := bits.Mul64(fixed(s.MinPerSecond), uint64(r.slot*Slots))
	if hi >= uint64(time.Second) {
		return nil, &FieldError{Field: "ratio.min_per_second", Value: s.MinPerSecond, Reason: "times the window must be at most 1e9 retries, got " + fmtNum(s.MinPerSecond) + " per second over " + s.Window.String()}
	}
	r.floor, _ = bits.Div64(hi, lo, uint64(time.Second))
	if r.floor > MaxTokens*unit {
		return nil, &FieldError{Field: "ratio.min_per_second", Value: s.MinPerSecond, Reason: "times the window must be at most 1e9 retries, got " + fmtNum(s.MinPerSecond) + " per second over " + s.Window.String()}
	}
	if r.ratio == 0 && r.floor == 0 {
		return nil, &FieldError{Field: "ratio", Reason: "ratio and min_per_second are both 0 (or round to 0), which would refuse every retry"}
	}
	r.spec = RatioSpec{Ratio: toFloat(r.ratio), MinPerSecond: toFloat(fixed(s.MinPerSecond)), Window: r.slot * Slots}
	return r, nil
}

// Spec returns the spec of r as held: counts rounded to billionths, the
// window a whole number of slots.
func (r *Ratio) Spec() RatioSpec { return r.spec }

// move brings r to now and returns its slot.
func (r *Ratio) move(now time.Time) int64 {
	if !r.seen {
		r.seen, r.origin, r.latest = true, now, now
	}
	r.latest = later(r.latest, now)
	return int64(r.latest.Sub(r.origin) / r.slot)
}

// at returns the counts of slot k, making it current.
func (r *Ratio) at(k int64) *slotCount {
	c := &r.counts[k%Slots]
	if c.index != k {
		*c = slotCount{index: k}
	}
	return c
}

// sums returns F and R over the window ending at slot end, counting only
// slots up to upto (later slots are in the future).
func (r *Ratio) sums(end, upto int64) (first, retries uint64) {
	for _, c := range r.counts {
		if c.index > end-Slots && c.index <= upto && (c.first > 0 || c.retries > 0) {
			first = satAdd(first, c.first)
			retries = satAdd(retries, c.retries)
		}
	}
	return first, retries
}

// balance returns Ratio·F + floor − R in billionths, 0 when negative.
func (r *Ratio) balance(first, retries uint64) uint64 {
	hi, lo := bits.Mul64(r.ratio, first)
	var c uint64
	lo, c = bits.Add64(lo, r.floor, 0)
	hi += c
	shi, slo := bits.Mul64(retries, unit)
	if hi < shi || hi == shi && lo <= slo {
		return 0
	}
	lo, c = bits.Sub64(lo, slo, 0)
	hi -= shi + c
	if hi > 0 {
		return 1<<64 - 1
	}
	return lo
}

// DepositAt counts a first attempt in the slot of now.
func (r *Ratio) DepositAt(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot == 0 {
		return
	}
	c := r.at(r.move(now))
	c.first = satAdd(c.first, 1)
}

// SuccessAt changes no count: a Ratio is paid by traffic, not by
// successes. Like every event it brings the Ratio to now, so that a later
// instant earlier than now counts as now.
func (r *Ratio) SuccessAt(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot != 0 {
		r.move(now)
	}
}

// AllowAt reports whether a retry is allowed at now (the rule on Ratio),
// and if so counts it.
func (r *Ratio) AllowAt(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot == 0 {
		return false
	}
	k := r.move(now)
	if r.balance(r.sums(k, k)) < unit {
		return false
	}
	c := r.at(k)
	c.retries = satAdd(c.retries, 1)
	return true
}

// TokensAt returns max(0, Ratio·F + floor − R) at now: how many retries
// would be allowed at now, fractional part included.
func (r *Ratio) TokensAt(now time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot == 0 {
		return 0
	}
	k := r.slotOf(now)
	return toFloat(r.balance(r.sums(k, k)))
}

// slotOf returns the slot of now without moving r.
func (r *Ratio) slotOf(now time.Time) int64 {
	if !r.seen {
		return 0
	}
	return int64(later(r.latest, now).Sub(r.origin) / r.slot)
}

// NextAt returns now when a retry would be allowed at now, else the start
// of the first later slot in which one would be, as first attempts and
// retries leave the window with no new events; false when none would (the
// floor is below one retry) or that slot starts more than the largest
// Duration after the Ratio's first instant.
func (r *Ratio) NextAt(now time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slot == 0 {
		return time.Time{}, false
	}
	k := r.slotOf(now)
	for j := int64(0); j <= Slots; j++ {
		if r.balance(r.sums(k+j, k)) >= unit {
			if j == 0 {
				return now, true
			}
			if k+j > int64(maxDuration/r.slot) {
				return time.Time{}, false
			}
			return r.origin.Add(time.Duration(k+j) * r.slot), true
		}
	}
	return time.Time{}, false
}

// satAdd returns a+b, saturating.
func satAdd(a, b uint64) uint64 {
	s, c := bits.Add64(a, b, 0)
	if c != 0 {
		return 1<<64 - 1
	}
	return s
}
