package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxAnswerSize bounds the body of one answer read from the server; a
// larger answer is an error ([ErrServer]), never read whole.
const MaxAnswerSize = 1 << 20

// contentType is the binding's media type (ojs-http-binding §4.1).
const contentType = "application/openjobspec+json"

// client speaks the OJS HTTP binding to one server and keeps the estimate
// of the offset between the server's clock and the local one. It is safe
// for concurrent use.
type client struct {
	root    string // the server's URL, no trailing slash
	base    string // root + "/ojs/v1"
	hc      *http.Client
	timeout time.Duration

	mu             sync.Mutex
	offLo, offHi   time.Duration // server clock - local clock lies in [offLo, offHi]
	offSet         bool
	requests       int64
	inconsistentTS bool
	failing        int64            // answers 5xx or no answer at all
	contentTypes   map[string]int64 // of answers with a body, at most maxContentTypes
	jsonAnswers    int64            // answers with a body
	fetchRTT       []time.Duration  // round trips of FETCHes that returned a job, at most maxRTTs
	pushed         []string         // ids of the jobs the run pushed, at most maxTracked
	answers        int64            // answers read (headers checked)
	wire           wireFindings     // the binding's header and envelope rules (binding.go)
}

// maxTracked bounds the job ids a run keeps for its cleanup.
const maxTracked = 100_000

// track keeps the id of a job the run pushed, for the cleanup.
func (c *client) track(id string) {
	c.mu.Lock()
	if len(c.pushed) < maxTracked {
		c.pushed = append(c.pushed, id)
	}
	c.mu.Unlock()
}

// Bounds of what the client keeps about the answers.
const (
	maxContentTypes = 16
	maxRTTs         = 100_000
)

// serverError is an answer of the server that the checker cannot use: a
// transport error, a timeout, an unexpected status, a body over
// MaxAnswerSize or one that is not the JSON the binding describes.
type serverError struct {
	Op     string // "PUSH", "FETCH", ...
	Status int    // HTTP status, 0 when none came back
	Reason string
	Err    error
}

func (e *serverError) Error() string {
	s := "live: " + e.Op
	if e.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", e.Status)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *serverError) Unwrap() []error { return []error{ErrServer, e.Err} }

// exchange is one request and its answer, timed on the local clock.
type exchange struct {
	status     int
	header     http.Header
	body       []byte
	sent, recv time.Time
}

// do sends one request with a JSON body (nil for none) and reads at most
// MaxAnswerSize bytes of the answer.
func (c *client) do(ctx context.Context, op, method, path string, body any, full ...string) (*exchange, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, &serverError{Op: op, Reason: "encoding the request", Err: err}
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := c.base + path
	if len(full) > 0 {
		u = full[0]
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, &serverError{Op: op, Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", contentType)
	c.mu.Lock()
	c.requests++
	c.mu.Unlock()
	ex := &exchange{sent: time.Now()}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.mu.Lock()
		c.failing++
		c.mu.Unlock()
		return nil, &serverError{Op: op, Err: err}
	}
	defer resp.Body.Close()
	ex.status, ex.header = resp.StatusCode, resp.Header
	ex.body, err = io.ReadAll(io.LimitReader(resp.Body, MaxAnswerSize+1))
	ex.recv = time.Now()
	if err != nil {
		return nil, &serverError{Op: op, Status: ex.status, Reason: "reading the answer", Err: err}
	}
	if len(ex.body) > MaxAnswerSize {
		return nil, &serverError{Op: op, Status: ex.status, Reason: fmt.Sprintf("answer larger than %d bytes", MaxAnswerSize)}
	}
	c.mu.Lock()
	c.answers++
	c.wire.note(op, ex)
	if ex.status >= 500 {
		c.failing++
	}
	if len(ex.body) > 0 {
		c.jsonAnswers++
		ct := mediaType(resp.Header.Get("Content-Type"))
		if _, ok := c.contentTypes[ct]; ok || len(c.contentTypes) < maxContentTypes {
			if c.contentTypes == nil {
				c.contentTypes = map[string]int64{}
			}
			c.contentTypes[ct]++
		}
	}
	c.mu.Unlock()
	return ex, nil
}

// mediaType returns the media type of a Content-Type header, lower case,
// without parameters ("" when absent).
func mediaType(h string) string {
	if i := strings.IndexByte(h, ';'); i >= 0 {
		h = h[:i]
	}
	return trunc(strings.ToLower(strings.TrimSpace(h)), 64)
}

// decode unmarshals an answer's body into v, or names the operation and a
// prefix of the body.
func decode(op string, ex *exchange, v any) error {
	if err := json.Unmarshal(ex.body, v); err != nil {
		return &serverError{Op: op, Status: ex.status, Reason: "answer is not the expected JSON (" + snippet(ex.body) + ")", Err: err}
	}
	return nil
}

// snippet returns up to 120 bytes of b for messages.
func snippet(b []byte) string {
	const n = 120
	s := strings.ToValidUTF8(string(b[:min(len(b), n)]), "?")
	if len(b) > n {
		s += "…"
	}
	return fmt.Sprintf("%q", s)
}

// unexpected is the error for an answer with a status the check did not
// expect.
func unexpected(op string, ex *exchange) error {
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	reason := "unexpected status, body " + snippet(ex.body)
	if json.Unmarshal(ex.body, &env) == nil && env.Error != nil {
		reason = fmt.Sprintf("unexpected status, error %s: %s", env.Error.Code, trunc(env.Error.Message, 200))
	}
	return &serverError{Op: op, Status: ex.status, Reason: reason}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
