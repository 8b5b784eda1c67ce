package executor

import (
	"sync/atomic"
	"time"
)

// Clock is the executor's source of time. Every operation reads it once and
// applies everything that became due up to that instant (scheduled jobs,
// finished backoffs, expired reservations, dead-letter retention) before
// doing its own work. The executor assumes the clock never goes backwards.
type Clock interface {
	Now() time.Time
}

// RealClock reads time.Now. The zero value is ready to use and safe for
// concurrent use.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// FakeClock is a manually driven Clock for tests and simulations: time only
// moves when Advance or Set is called. It is safe for concurrent use. The zero
// value reads the Unix epoch (1970-01-01T00:00:00Z); NewFakeClock starts
// elsewhere. Times are kept as nanoseconds since the Unix epoch, so only the
// years 1678 to 2262 are representable.
type FakeClock struct {
	ns atomic.Int64
}

// NewFakeClock returns a FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock {
	c := &FakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

// Now returns the clock's current time, in UTC.
func (c *FakeClock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward by d (a negative d is ignored) and returns
// the new time.
func (c *FakeClock) Advance(d time.Duration) time.Time {
	if d > 0 {
		c.ns.Add(int64(d))
	}
	return c.Now()
}

// Set moves the clock to t. Moving it backwards is allowed but the executor
// does not undo anything it already applied.
func (c *FakeClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// nower is implemented by clocks that can report nanoseconds directly,
// saving a time.Time round trip on the hot path.
type nower interface{ nowNanos() int64 }

func (c *FakeClock) nowNanos() int64 { return c.ns.Load() }

var (
	_ Clock = RealClock{}
	_ Clock = (*FakeClock)(nil)
)
