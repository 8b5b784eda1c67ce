package ojshttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ConnLimiter is a listener that holds at most n accepted connections open
// at once (RK-167, RK-266). When all n are open and a client is waiting to
// connect, Accept closes one connection to give its slot to the new
// client, choosing in this order:
//
//  1. the connection idle between keep-alive requests the longest;
//  2. a connection that is slow to send: one that has not sent the first
//     byte of a request, or is sending a request's headers or body, and
//     has sent less than MinRequestRate bytes a second since it began
//     that (for at least slowGrace) — the slowest first, then the oldest.
//
// A connection whose request the server is working on is never chosen.
// While none qualifies, Accept waits for a connection to close, become
// idle or fall below the rate. Clients that stall (slowloris: headers or a
// body sent a byte at a time) thus cost at most n connections' memory and
// never keep a new client out, and idle keep-alive connections, however
// often renewed, never either.
//
// Create it with LimitListener and set the http.Server's ConnState and
// ConnContext to its methods; without ConnState no connection is known to
// be idle or slow and Accept only waits, and without ConnContext a body
// being read is not told from a request being handled. It is safe for
// concurrent use. Closing it unblocks a waiting Accept.
type ConnLimiter struct {
	net.Listener
	n         int
	mu        sync.Mutex
	open      map[*limitConn]struct{}
	changed   chan struct{} // closed and replaced when a connection closes or goes idle
	done      chan struct{}
	closeOnce sync.Once
}

// LimitListener returns a listener that holds at most n accepted
// connections open at once, evicting idle ones first (see [ConnLimiter]).
// n < 1 is taken as 1.
func LimitListener(l net.Listener, n int) *ConnLimiter {
	return &ConnLimiter{Listener: l, n: max(n, 1), open: map[*limitConn]struct{}{},
		changed: make(chan struct{}), done: make(chan struct{})}
}

// Accept accepts the next connection, then waits for a free slot for it:
// when every slot is taken it closes the longest idle connection, and
// while none is idle it waits for one to close or become idle.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if len(l.open) < l.n {
			lc := &limitConn{Conn: c, l: l}
			l.open[lc] = struct{}{}
			l.mu.Unlock()
			return lc, nil
		}
		now := time.Now()
		victim, recheck := l.victimLocked(now)
		changed := l.changed
		if victim != nil {
			delete(l.open, victim) // its slot goes to c
			l.mu.Unlock()
			victim.Conn.Close() // the server sees a closed connection and forgets it
			continue
		}
		l.mu.Unlock()
		var tick <-chan time.Time
		var t *time.Timer
		if recheck > 0 {
			t = time.NewTimer(recheck)
			tick = t.C
		}
		select {
		case <-changed:
		case <-tick:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
		if t != nil {
			t.Stop()
		}
	}
}

// MinRequestRate is the rate, in bytes a second, below which a client
// sending a request (or not yet sending one) counts as slow: its body read
// times out (WithMinBodyRate's default) and ConnLimiter gives its slot to
// a new client under pressure.
const MinRequestRate = 8 << 10

// slowGrace is how long a connection is watched before its rate is judged.
const slowGrace = 250 * time.Millisecond

// victimLocked returns the connection to close for a new client, or nil
// and how soon one might become slow enough (0: only a state change will
// tell).
func (l *ConnLimiter) victimLocked(now time.Time) (victim *limitConn, recheck time.Duration) {
	var idle, slow *limitConn
	var idleSince time.Time
	slowRate := 0.0
	var slowSince time.Time
	for o := range l.open {
		ph, since, from := o.phase, o.since, o.from
		switch ph {
		case phaseIdle:
			if idle == nil || since.Before(idleSince) {
				idle, idleSince = o, since
			}
		case phaseNew, phaseRequest, phaseBody:
			age := now.Sub(since)
			if age < slowGrace {
				if r := slowGrace - age; recheck == 0 || r < recheck {
					recheck = r
				}
				continue
			}
			rate := float64(o.read.Load()-from) / age.Seconds()
			if rate >= MinRequestRate {
				continue
			}
			if slow == nil || rate < slowRate || rate == slowRate && since.Before(slowSince) {
				slow, slowRate, slowSince = o, rate, since
			}
		}
	}
	if idle != nil {
		return idle, 0
	}
	if slow != nil {
		return slow, 0
	}
	if recheck == 0 && len(l.open) > 0 {
		recheck = slowGrace // a sender may fall below the rate
	}
	return nil, recheck
}

// ConnState is the http.Server ConnState hook that tells the limiter
// which connections are idle, new or sending a request.
func (l *ConnLimiter) ConnState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, open := l.open[lc]; !open {
		return
	}
	switch st {
	case http.StateNew:
		lc.setLocked(phaseNew)
	case http.StateIdle:
		lc.setLocked(phaseIdle)
		l.signalLocked()
	case http.StateActive:
		lc.setLocked(phaseRequest)
	}
}

// connKey is the context key of a request's *limitConn.
type connKey struct{}

// ConnContext is the http.Server ConnContext hook that lets the server
// tell the limiter when a request's handler starts and when it reads the
// body, so that a request being handled is never taken for a slow one.
func (l *ConnLimiter) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok && lc.l == l {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// markConn records that the handler of the request with ctx is working on
// it (body false) or reading its body (body true).
func markConn(ctx context.Context, body bool) {
	lc, ok := ctx.Value(connKey{}).(*limitConn)
	if !ok {
		return
	}
	lc.l.mu.Lock()
	defer lc.l.mu.Unlock()
	if _, open := lc.l.open[lc]; !open {
		return
	}
	if body {
		lc.setLocked(phaseBody)
	} else {
		lc.setLocked(phaseHandled)
	}
}

func (l *ConnLimiter) signalLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *ConnLimiter) release(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.open[c]; ok {
		delete(l.open, c)
		l.signalLocked()
	}
}

// Close closes the listener; a waiting Accept returns net.ErrClosed.
func (l *ConnLimiter) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once sync.Once
	l    *ConnLimiter
	read atomic.Int64 // bytes read from the client
	// Guarded by l.mu:
	phase connPhase
	since time.Time // when phase began
	from  int64     // read when phase began
}

// connPhase is what a connection is doing, as ConnState and the server
// report it.
type connPhase uint8

const (
	phaseUnknown connPhase = iota // no hook has told: never evicted
	phaseNew                      // accepted, no request byte yet
	phaseRequest                  // sending a request's headers
	phaseBody                     // the handler reads the body
	phaseHandled                  // the server works on the request
	phaseIdle                     // between keep-alive requests
)

func (c *limitConn) setLocked(p connPhase) {
	c.phase, c.since, c.from = p, time.Now(), c.read.Load()
}

func (c *limitConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
