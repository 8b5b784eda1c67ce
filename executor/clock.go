package executor

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
)

// Clock is the executor's source of time. Every operation reads it once and
// applies everything that became due up to that instant (scheduled jobs,
// finished backoffs, expired reservations, dead-letter retention) before
// doing its own work. The executor assumes the clock never goes backwards.
type Clock interface {
	Now() time.Time
}

// RealClock is the system clock measured on its monotonic reading: Now is
// the wall-clock time read when the package was initialised plus the
// monotonic time elapsed since, so a step of the wall clock (an NTP
// correction, an operator setting the date) neither extends nor shortens a
// reservation or a backoff. The zero value is ready to use and safe for
// concurrent use.
type RealClock struct{}

// realStart is the instant every RealClock counts from; it carries a
// monotonic reading.
var realStart = time.Now()

// Now returns the wall-clock time read at package initialisation plus the
// monotonic time elapsed since, in UTC.
func (c RealClock) Now() time.Time { return time.Unix(0, c.nowNanos()).UTC() }

func (RealClock) nowNanos() int64 {
	return sat.AddInt(realStart.UnixNano(), int64(time.Since(realStart)))
}

// FakeClock is a manually driven Clock for tests and simulations: time only
// moves when Advance or Set is called. It is safe for concurrent use. The zero
// value reads the Unix epoch (1970-01-01T00:00:00Z); NewFakeClock starts
// elsewhere. Times are kept as nanoseconds since the Unix epoch, so only
// 1677-09-21T00:12:43.145224193Z to 2262-04-11T23:47:16.854775807Z are
// representable: NewFakeClock, Set and Advance saturate at those bounds
// instead of wrapping around.
type FakeClock struct {
	ns atomic.Int64
}

// The range of times the executor represents, as Unix nanoseconds.
// math.MinInt64 itself is reserved to mark an unset time (see never).
const (
	minNanos int64 = math.MinInt64 + 1
	maxNanos int64 = math.MaxInt64
)

// minTime and maxTime bound the times the executor represents
// (1677-09-21T00:12:43.145224193Z to 2262-04-11T23:47:16.854775807Z).
var (
	minTime = time.Unix(0, minNanos).UTC()
	maxTime = time.Unix(0, maxNanos).UTC()
)

// representable reports whether t lies in [minTime, maxTime].
func representable(t time.Time) bool { return !t.Before(minTime) && !t.After(maxTime) }

// satNanos returns t as Unix nanoseconds, clamped to [minTime, maxTime]
// (time.Time.UnixNano is undefined, and in practice wraps, outside it).
func satNanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return minNanos
	case t.After(maxTime):
		return maxNanos
	}
	return t.UnixNano()
}

// NewFakeClock returns a FakeClock reading t, clamped to the representable
// range.
func NewFakeClock(t time.Time) *FakeClock {
	c := &FakeClock{}
	c.ns.Store(satNanos(t))
	return c
}

// Now returns the clock's current time, in UTC.
func (c *FakeClock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward by d and returns the new time. It never
// moves the clock backwards: a negative d is ignored (use Set to go back),
// and an advance past the latest representable time stops there.
func (c *FakeClock) Advance(d time.Duration) time.Time {
	if d > 0 {
		for {
			old := c.ns.Load()
			if c.ns.CompareAndSwap(old, sat.AddInt(old, int64(d))) {
				break
			}
		}
	}
	return c.Now()
}

// Set moves the clock to t, clamped to the representable range. Moving it
// backwards is allowed but the executor does not undo anything it already
// applied.
func (c *FakeClock) Set(t time.Time) { c.ns.Store(satNanos(t)) }

// nower is implemented by clocks that can report nanoseconds directly,
// saving a time.Time round trip on the hot path.
type nower interface{ nowNanos() int64 }

func (c *FakeClock) nowNanos() int64 { return c.ns.Load() }

var (
	_ nower = RealClock{}
	_ Clock = RealClock{}
	_ Clock = (*FakeClock)(nil)
)
