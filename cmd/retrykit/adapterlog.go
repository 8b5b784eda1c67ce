package main

import (
	"io"
	"sync"
)

// adapterLog returns the writer for protocol.WithLog of a command whose
// standard error is w: each line prefixed, every write (the adapter
// process's goroutines', and the command's own through the returned
// shared writer) serialised by one lock, since w may be a bytes.Buffer.
// It returns the shared writer, to be used for the command's own standard
// error from then on, and the log.
func adapterLog(w io.Writer, prefix string) (shared, log io.Writer) {
	l := &lockedWriter{w: w}
	return l, prefixWriter{prefix, l}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// prefixWriter writes each Write (one line of protocol.WithLog) to w with
// prefix before it, in one Write.
type prefixWriter struct {
	prefix string
	w      io.Writer
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte(p.prefix), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}
