package main

import (
	"net"
	"net/http"
	"sync"
)

// silentConns tracks the server's connections that have not sent a byte of
// a request (http.StateNew). http.Server.Shutdown closes idle keep-alive
// connections at once but waits up to 5 s for such a connection to speak,
// so a client's spare connection (HTTP clients dial ahead) held an idle
// serve for 5 s after SIGINT. closeAll closes them, and any accepted
// afterwards; a connection that has begun a request is left to Shutdown.
type silentConns struct {
	mu      sync.Mutex
	m       map[net.Conn]struct{}
	closing bool
}

func newSilentConns() *silentConns { return &silentConns{m: make(map[net.Conn]struct{})} }

// track is an http.Server ConnState hook.
func (s *silentConns) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st != http.StateNew {
		delete(s.m, c)
		return
	}
	if s.closing {
		c.Close()
		return
	}
	s.m[c] = struct{}{}
}

// closeAll closes every silent connection now and from now on.
func (s *silentConns) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for c := range s.m {
		c.Close()
		delete(s.m, c)
	}
}
