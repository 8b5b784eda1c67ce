package main

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
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

// TestServeSlowSendersGiveWay: with --max-conns 16 held by clients that
// sent their headers and then send the body a byte a second, a new client
// is answered within a second: the slowest sender's slot goes to it.
func TestServeSlowSendersGiveWay(t *testing.T) {
	const slots = 16
	base, stop := startServe(t, "--max-conns", strconv.Itoa(slots))
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	for i := 0; i < slots; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			c.Write([]byte("POST /ojs/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n"))
			for _, b := range []byte(`{"type":"t","args":[]}`) {
				time.Sleep(time.Second)
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
			}
		}()
	}
	time.Sleep(400 * time.Millisecond)
	client := &http.Client{Timeout: time.Second}
	begin := time.Now()
	resp, err := client.Get(base + "/ojs/v1/health")
	if err != nil {
		t.Fatalf("a new client behind %d slow senders: %v after %v", slots, err, time.Since(begin))
	}
	resp.Body.Close()
}
