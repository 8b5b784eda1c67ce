// The server's clock as the checker sees it (RK-110).

package live

import (
	"fmt"
	"time"
)

// observe narrows the clock offset with a server timestamp ts taken
// between ex.sent and ex.recv on the local clock. A timestamp carries
// millisecond resolution, so it may read up to 1 ms below the instant it
// names.
func (c *client) observe(ex *exchange, ts time.Time) {
	if ts.IsZero() {
		return
	}
	lo := ts.Sub(ex.recv)
	hi := ts.Sub(ex.sent) + time.Millisecond
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.offSet {
		c.offLo, c.offHi, c.offSet = lo, hi, true
		return
	}
	nlo, nhi := max(c.offLo, lo), min(c.offHi, hi)
	if nlo > nhi {
		// The server's timestamps contradict each other (a clock that
		// jumped, or timestamps not taken at the request): widen to the
		// union rather than judge against an empty window.
		c.inconsistentTS = true
		c.offLo, c.offHi = min(c.offLo, lo), max(c.offHi, hi)
		return
	}
	c.offLo, c.offHi = nlo, nhi
}

// window returns the interval on the server's clock within which a request
// sent and answered in ex was handled. Before any server timestamp was
// seen it returns the local interval and ok false: the local clock stands
// in for the server's.
func (c *client) window(ex *exchange) (lo, hi time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.offSet {
		return ex.sent, ex.recv, false
	}
	return ex.sent.Add(c.offLo), ex.recv.Add(c.offHi), true
}

// parseTime reads an RFC 3339 timestamp of the server; "" is the zero time.
func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: not an RFC 3339 timestamp: %q", field, trunc(s, 64))
	}
	return t, nil
}
