package ojshttp_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// startLimited serves a fresh server behind a ConnLimiter of n slots with
// both hooks set, as retrykit serve does.
func startLimited(t *testing.T, n int) string {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := ojshttp.LimitListener(raw, n)
	hs := ojshttp.NewHTTPServer(raw.Addr().String(), ojshttp.New(executor.New()))
	hs.ConnState = lim.ConnState
	hs.ConnContext = lim.ConnContext
	go hs.Serve(lim)
	t.Cleanup(func() { hs.Close() })
	return raw.Addr().String()
}

// slowClient dials addr, writes head at once and then one byte of tail
// every interval until the test ends or the server closes the connection.
func slowClient(t *testing.T, addr, head, tail string, interval time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		if _, err := c.Write([]byte(head)); err != nil {
			return
		}
		for i := 0; i < len(tail); i++ {
			time.Sleep(interval)
			if _, err := c.Write([]byte{tail[i]}); err != nil {
				return
			}
		}
	}()
	return c
}

// TestSlowSendersGiveWay: with every slot held by clients that send a
// request slowly (a body a byte at a time, headers a byte at a time, or
// nothing at all), a fresh client is answered within a second: under
// pressure the slowest sender loses its slot, as an idle one does.
func TestSlowSendersGiveWay(t *testing.T) {
	const slots = 8
	body := `{"type":"t","args":[]}`
	for name, mk := range map[string]func(addr string) (head, tail string){
		"body a byte a second": func(string) (string, string) {
			return "POST /ojs/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n", body
		},
		"headers a byte a second": func(string) (string, string) {
			return "P", "OST /ojs/v1/jobs HTTP/1.1\r\nHost: x\r\n"
		},
		"silent": func(string) (string, string) { return "", "" },
	} {
		t.Run(name, func(t *testing.T) {
			addr := startLimited(t, slots)
			for range slots {
				head, tail := mk(addr)
				slowClient(t, addr, head, tail, time.Second)
			}
			time.Sleep(400 * time.Millisecond) // every slot taken and judged
			client := &http.Client{Timeout: time.Second}
			start := time.Now()
			resp, err := client.Post("http://"+addr+"/ojs/v1/jobs", ojshttp.MediaType, strings.NewReader(body))
			if err != nil {
				t.Fatalf("a fresh client was not answered within 1 s: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != 201 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			t.Logf("answered in %v", time.Since(start))
		})
	}
}

// TestSlowBodyTimesOut: without any pressure, a body that arrives a byte
// a second is cut off after about two seconds (not the 30 s ReadTimeout)
// with 408, naming the minimum rate.
func TestSlowBodyTimesOut(t *testing.T) {
	addr := startLimited(t, 64)
	c := slowClient(t, addr, "POST /ojs/v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 22\r\n\r\n", `{"type":"t","args":[]}`, time.Second)
	start := time.Now()
	c.SetReadDeadline(start.Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || took > 5*time.Second {
		t.Fatalf("status %d after %v, want 408 within 5 s", resp.StatusCode, took)
	}
}
