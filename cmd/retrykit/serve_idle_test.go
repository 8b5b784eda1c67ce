package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeExitsPromptlyWithIdleConnections: connections that carry no
// request — one dialled and never written to (a client's spare
// connection), one kept alive after a request — do not hold up shutdown.
// net/http's Shutdown waits up to 5 s for a connection that has not sent
// its first byte; serve closes those at once.
func TestServeExitsPromptlyWithIdleConnections(t *testing.T) {
	base, stop := startServe(t)
	addr := strings.TrimPrefix(base, "http://")
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	resp, err := http.Get(base + "/ojs/v1/health") // leaves a keep-alive connection
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	time.Sleep(50 * time.Millisecond) // let the server see the silent connection
	began := time.Now()
	code, errs := stop()
	took := time.Since(began)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if took > 2*time.Second {
		t.Fatalf("serve took %v to exit with idle connections open, want well under the 5 s net/http waits for a silent one", took)
	}
	// The silent connection was closed by the server.
	silent.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatal("the silent connection is still open")
	}
}
