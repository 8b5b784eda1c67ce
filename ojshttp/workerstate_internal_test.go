package ojshttp

import (
	"strconv"
	"testing"
	"time"
)

// TestWorkersBounded: the registry never holds more than maxWorkers; the
// worker seen least recently goes first, and its directive with it.
func TestWorkersBounded(t *testing.T) {
	ws := newWorkers()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxWorkers + 50 {
		ws.seen("w"+strconv.Itoa(i), t0.Add(time.Duration(i)*time.Millisecond), i%2 == 0)
		if i == 10 {
			ws.seen("w0", t0.Add(time.Hour), true) // w0 stays recent
		}
	}
	if n := len(ws.list()); n != maxWorkers {
		t.Fatalf("%d workers held, want %d", n, maxWorkers)
	}
	if _, err := ws.direct("w0", workerQuiet); err != nil {
		t.Fatalf("recent worker evicted: %v", err)
	}
	if _, err := ws.direct("w1", workerQuiet); err == nil {
		t.Fatal("the least recent worker was kept")
	}
}
