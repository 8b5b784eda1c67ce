package live

import (
	"net/http"
	"strings"
	"testing"
)

// TestEnvelopeProblem: the binding's error envelope (§16.1) with a
// request_id mirroring the X-Request-Id header (§19.1) passes; each way of
// breaking it is named.
func TestEnvelopeProblem(t *testing.T) {
	good := `{"error":{"code":"not_found","message":"m","retryable":false,"request_id":"req_1"}}`
	for _, c := range []struct {
		body, header, want string
	}{
		{good, "req_1", ""},
		{`{"error":{"code":"x","message":"","retryable":true,"request_id":"req_1","details":{}}}`, "req_1", ""},
		{good, "", "no X-Request-Id header"},
		{good, "req_2", `is not the X-Request-Id header "req_2"`},
		{`{"error":{"code":"not_found","message":"m","request_id":"req_1"}}`, "req_1", "error.retryable (a boolean)"},
		{`{"error":{"code":"not_found","message":"m","retryable":"false","request_id":"req_1"}}`, "req_1", "error.retryable (a boolean)"},
		{`{"error":{"message":"m","retryable":false,"request_id":"req_1"}}`, "req_1", "error.code"},
		{`{"error":{"code":"c","retryable":false,"request_id":"req_1"}}`, "req_1", "error.message"},
		{`{"error":{"code":"c","message":"m","retryable":false}}`, "req_1", "error.request_id"},
		{`{"code":"not_found","message":"m"}`, "req_1", "no error object"},
		{`not found`, "req_1", "no error object"},
	} {
		ex := &exchange{status: 404, body: []byte(c.body), header: http.Header{}}
		if c.header != "" {
			ex.header.Set("X-Request-Id", c.header)
		}
		got := envelopeProblem(ex)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s (header %q): %q, want %q", c.body, c.header, got, c.want)
		}
	}
}
