package main

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeIdleConnsGiveWay: with --max-conns 2 held by two idle
// keep-alive connections, a new client is served at once (the longest
// idle connection is closed for it) instead of waiting for an idle
// timeout.
func TestServeIdleConnsGiveWay(t *testing.T) {
	base, stop := startServe(t, "--max-conns", "2", "--idle-timeout", "10m")
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET /ojs/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // the connection stays open, idle
	}
	time.Sleep(50 * time.Millisecond)
	client := &http.Client{Timeout: 5 * time.Second}
	begin := time.Now()
	resp, err := client.Get(base + "/ojs/v1/health")
	if err != nil {
		t.Fatalf("a new client behind 2 idle connections: %v after %v", err, time.Since(begin))
	}
	resp.Body.Close()
}
