package ojshttp

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// ConnLimiter is a listener that holds at most n accepted connections open
// at once (RK-167). When all n are open and a client is waiting to connect,
// Accept closes the connection that has been idle between keep-alive
// requests the longest (as reported through ConnState); while none is
// idle, Accept waits for one to close or become idle. Clients that stall
// (slowloris) thus cost at most n connections' memory, each cut off by
// NewHTTPServer's timeouts, and idle keep-alive connections, however
// often renewed, never keep a new client out.
//
// Create it with LimitListener and set the http.Server's ConnState to
// its ConnState method; without that hook no connection is known to be
// idle and Accept only waits. It is safe for concurrent use. Closing it
// unblocks a waiting Accept.
type ConnLimiter struct {
	net.Listener
	n         int
	mu        sync.Mutex
	open      map[*limitConn]time.Time // idle since (zero: not idle)
	changed   chan struct{}            // closed and replaced when a connection closes or goes idle
	done      chan struct{}
	closeOnce sync.Once
}

// LimitListener returns a listener that holds at most n accepted
// connections open at once, evicting idle ones first (see [ConnLimiter]).
// n < 1 is taken as 1.
func LimitListener(l net.Listener, n int) *ConnLimiter {
	return &ConnLimiter{Listener: l, n: max(n, 1), open: map[*limitConn]time.Time{},
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
			l.open[lc] = time.Time{}
			l.mu.Unlock()
			return lc, nil
		}
		var oldest *limitConn
		var since time.Time
		for o, t := range l.open {
			if !t.IsZero() && (oldest == nil || t.Before(since)) {
				oldest, since = o, t
			}
		}
		changed := l.changed
		if oldest != nil {
			delete(l.open, oldest) // its slot goes to c
			l.mu.Unlock()
			oldest.Conn.Close() // the server sees a closed idle connection and forgets it
			continue
		}
		l.mu.Unlock()
		select {
		case <-changed:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// ConnState is the http.Server ConnState hook that tells the limiter
// which connections are idle.
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
	case http.StateIdle:
		l.open[lc] = time.Now()
		l.signalLocked()
	case http.StateActive:
		l.open[lc] = time.Time{}
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
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}
