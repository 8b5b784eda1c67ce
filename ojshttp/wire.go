package ojshttp

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/internal/strictjson"
)

// Error codes: the "code" of the binding's error envelope
// {"error":{"code","message","retryable","details","request_id"}}, the
// value an HTTP client branches on (openapi.yaml OJSError, plus
// invalid_payload for a body that is not one JSON object).
const (
	CodeInvalidRequest = "invalid_request"  // 400, or 413 for a body over the limit; details.field names the field
	CodeInvalidPayload = "invalid_payload"  // 400: the body is not one JSON object
	CodeValidation     = "validation_error" // 422: a retry policy or clock advance out of range
	CodeNotFound       = "not_found"        // 404: unknown job id or route
	CodeConflict       = "conflict"         // 409: the job's state forbids the operation; details.current_state
	CodeDuplicate      = "duplicate"        // 409: the job id, or a unique job's key, exists; details.existing_job_id
	CodeUnsupported    = "unsupported"      // 422: a known option or OJS-Version this server does not implement
	CodeInternal       = "internal_error"   // 500, retryable
	CodeQueueFull      = "queue_full"       // 429, retryable: WithMaxJobs or WithMaxBytes reached
	CodeQueuePaused    = "queue_paused"     // 422, retryable: a PUSH to a paused queue (the binding §11.3); details.queue names it and nothing is stored
)

// docsURL is where an error's docs_url points.
const docsURL = "https://github.com/openjobspec/spec/blob/main/spec/ojs-http-binding.md"

// apiError is an error answered in the binding's envelope.
type apiError struct {
	status    int
	code      string
	message   string
	retryable bool
	details   map[string]any
	hint      string
	// planted: the answer breaks the envelope (planted fault
	// BadErrorObject): no retryable, a request_id not the header's.
	planted bool
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func errf(status int, code, format string, a ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, a...)}
}

// invalid is a 400 invalid_request naming the field.
func invalid(field, format string, a ...any) *apiError {
	e := errf(http.StatusBadRequest, CodeInvalidRequest, field+": "+format, a...)
	e.details = map[string]any{"field": field}
	return e
}

// header writes the headers every answer carries.
func header(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", MediaType)
	h.Set("OJS-Version", ojsVersion)
}

// ojsVersion is the spec version the server speaks.
const ojsVersion = "1.0"

// writeJSON writes v with status, streamed through an encoder that does
// not escape HTML (raw args and results are compacted, never expanded).
func writeJSON(w http.ResponseWriter, status int, v any) { writeSized(w, status, v, 0) }

// writeSized is writeJSON with the answer's estimated size, so that the
// buffer is allocated once.
func writeSized(w http.ResponseWriter, status int, v any, size int64) {
	var b bytes.Buffer
	if size > 0 && size <= 4*maxAnswer {
		b.Grow(int(size) + 64)
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // only our own values are written: cannot happen
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString(`{"error":{"code":"internal_error","type":"internal_error","message":"ojshttp: cannot encode the answer","retryable":true}}` + "\n")
	}
	header(w)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// writeError writes e in the binding's envelope.
func writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	body := map[string]any{
		"code":       e.code,
		"type":       e.code,
		"message":    e.message,
		"retryable":  e.retryable,
		"request_id": w.Header().Get("X-Request-Id"),
		"docs_url":   docsURL,
	}
	if e.details != nil {
		body["details"] = e.details
	}
	if e.planted {
		delete(body, "retryable")
		body["request_id"] = "req_not-this-request"
	}
	if e.hint != "" {
		body["hint"] = e.hint
	} else {
		body["hint"] = defaultHint(e.code)
	}
	writeJSON(w, e.status, map[string]any{"error": body})
}

func defaultHint(code string) string {
	switch code {
	case CodeNotFound:
		return "check the id; finished jobs are kept only for the retention period, and a restart loses every job"
	case CodeConflict:
		return "the job is not in a state that allows this operation; read it with GET /ojs/v1/jobs/{id}"
	case CodeDuplicate:
		return "job ids must be unique; omit id to let the server assign one"
	case CodeValidation:
		return "see ojs-retry.md for the retry policy fields and their ranges"
	case CodeQueuePaused:
		return "resume the queue (POST /ojs/v1/queues/{name}/resume), then push again"
	case CodeUnsupported:
		return "GET /ojs/manifest lists what this server implements"
	case CodeQueueFull:
		return "the server holds as many jobs as it is configured for; retry later"
	}
	return "see the OJS HTTP binding for the request format"
}

// readJSON is the one reader of every request body: through
// http.MaxBytesReader with limit bytes, a supported Content-Type, then
// strictjson.Check (valid JSON, UTF-8 strings, no repeated key; keys that
// differ only in case refused down to fold levels, where encoding/json
// fills a struct afterwards). It returns the trimmed body, which is one
// JSON object, or nil for an empty body when optional is true.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, optional bool, fold int) ([]byte, *apiError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != MediaType && mt != "application/json") {
			return nil, errf(http.StatusBadRequest, CodeInvalidRequest,
				"unsupported Content-Type %q: use %s or application/json", clip(ct), MediaType)
		}
	}
	if optional && r.ContentLength == 0 {
		return nil, nil
	}
	body, err := readMinRate(w, r, limit)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errf(http.StatusRequestEntityTooLarge, CodeInvalidRequest,
				"request body larger than %d bytes", limit)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, errf(http.StatusRequestTimeout, CodeInvalidRequest,
				"the request body came slower than %d bytes a second (ojshttp.MinRequestRate)", MinRequestRate)
		}
		return nil, errf(http.StatusBadRequest, CodeInvalidPayload, "reading the request body: %v", err)
	}
	body = bytes.TrimSpace(body)
	if optional && len(body) == 0 {
		return nil, nil
	}
	if len(body) == 0 || body[0] != '{' {
		if optional {
			return nil, errf(http.StatusBadRequest, CodeInvalidPayload, "the request body must be empty or a JSON object")
		}
		return nil, errf(http.StatusBadRequest, CodeInvalidPayload, "the request body must be a JSON object")
	}
	if aerr := strictBody(body, fold); aerr != nil {
		return nil, aerr
	}
	return body, nil
}

// bodyGrace is the time a body may take beyond what MinRequestRate gives.
const bodyGrace = 2 * time.Second

// readMinRate reads r's body, at most limit bytes, with a read deadline
// that moves with the bytes received: bodyGrace plus one second per
// MinRequestRate bytes read so far, so a client that sends a byte a second
// is cut off after about bodyGrace, whatever the server's ReadTimeout, and
// one that keeps the rate is never. The connection is marked as reading a
// body for ConnLimiter meanwhile.
func readMinRate(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	rc := http.NewResponseController(w)
	markConn(r.Context(), true)
	defer markConn(r.Context(), false)
	mr := &minRateReader{r: http.MaxBytesReader(w, r.Body, limit), rc: rc, start: time.Now()}
	b, err := io.ReadAll(mr)
	if err == nil && mr.set {
		rc.SetReadDeadline(time.Time{}) // read whole: no deadline for the rest of the request
	}
	return b, err
}

type minRateReader struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	n     int64
	set   bool // a deadline was set (the ResponseWriter supports it)
}

func (m *minRateReader) Read(p []byte) (int, error) {
	dl := m.start.Add(bodyGrace + time.Duration(m.n)*time.Second/MinRequestRate)
	if m.rc.SetReadDeadline(dl) == nil {
		m.set = true
	}
	n, err := m.r.Read(p)
	m.n += int64(n)
	return n, err
}

// readBody reads the request body (readJSON) as one JSON object into dst.
// A destination other than a map is a struct, whose fields encoding/json
// matches without regard to case: keys that differ only in case are
// refused in its top two levels.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, dst any) *apiError {
	fold := 2
	if _, isMap := dst.(*map[string]json.RawMessage); isMap {
		fold = 0
	}
	body, aerr := readJSON(w, r, limit, false, fold)
	if aerr != nil {
		return aerr
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return errf(http.StatusBadRequest, CodeInvalidPayload, "the request body is not valid JSON: %v", jsonErr(err))
	}
	return nil
}

// strictBody refuses, naming the field, a body that strictjson.Check
// refuses: bad JSON (invalid_payload), a repeated key or a string that is
// not UTF-8 (invalid_request, RK-163, RK-164): one reading of every body,
// the library's.
func strictBody(body []byte, fold int) *apiError { return strictPart("", body, fold) }

// strictPart is strictBody for the value at path prefix of a body.
func strictPart(prefix string, body []byte, fold int) *apiError {
	var opts []strictjson.Option
	if fold > 0 {
		opts = append(opts, strictjson.FoldKeys(fold))
	}
	err := strictjson.Check(body, opts...)
	if err == nil {
		return nil
	}
	fe := err.(*strictjson.FieldError) // Check's only error type
	path := fe.Path
	if prefix != "" {
		path = strings.TrimSuffix(prefix+"."+path, ".")
	}
	switch {
	case errors.Is(err, strictjson.ErrInvalidUTF8):
		e := invalid(fieldOrBody(path), "%s", fe.Reason)
		e.message += " (JSON text is UTF-8, RFC 8259 §8.1; the server echoes strings and never repairs them)"
		return e
	case errors.Is(err, strictjson.ErrDuplicateKey):
		return invalid(fieldOrBody(path), "%s", fe.Reason)
	}
	return errf(http.StatusBadRequest, CodeInvalidPayload, "the request body is not valid JSON: %s", clip(fe.Reason))
}

// fieldOrBody names the whole body "(body)".
func fieldOrBody(path string) string {
	if path == "" {
		return "(body)"
	}
	return path
}

// readOptionalBody reads a body that may be empty; when it is not, it must
// be a JSON object (its fields are not used).
func readOptionalBody(w http.ResponseWriter, r *http.Request, limit int64) *apiError {
	_, aerr := readJSON(w, r, limit, true, 0)
	return aerr
}

// jsonErr shortens a JSON decoding error for a message.
func jsonErr(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	return clip(err.Error())
}

// clip shortens caller text echoed in a message.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// uuidV7Pattern is the lowercase hyphenated UUIDv7 form (RFC 9562).
var uuidV7Pattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// newUUIDv7 returns a UUIDv7 for the Unix millisecond ms: 48 bits of time,
// the version, 12 + 62 random bits and the variant.
func newUUIDv7(ms int64) string {
	var b [16]byte
	rand.Read(b[6:]) // never fails (crypto/rand)
	binary.BigEndian.PutUint64(b[:8], uint64(ms)<<16|uint64(binary.BigEndian.Uint16(b[6:8])))
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// stamp formats a time for the wire: RFC 3339 in UTC with nanoseconds
// (trailing zeros dropped), so a client can check delays exactly.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
