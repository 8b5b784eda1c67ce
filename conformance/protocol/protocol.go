package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/internal/strictjson"
)

// Version is the adapter protocol version this package speaks
// (PROTOCOL.md).
const Version = 1

// The ops (PROTOCOL.md section 3).
const (
	OpHello         = "hello"
	OpParseDuration = "parse_duration"
	OpValidate      = "validate"
	OpDelay         = "delay"
	OpMatch         = "match"
	OpDecide        = "decide"
	OpScenario      = "scenario"
	// OpTimeoutDecide, OpTimeoutExpiry and OpReplay are the optional ops of
	// the OJS timeouts and dead-letter extensions (PROTOCOL.md section
	// 3.10): a Request.Case in, a Response.Result out.
	OpTimeoutDecide = "timeout_decide"
	OpTimeoutExpiry = "timeout_expiry"
	OpReplay        = "replay"
	// OpExtensionDecide is the optional op of the retry extensions
	// (docs/extensions.md): a case in, a decision result out.
	OpExtensionDecide = "extension_decide"
)

// The error types of rejections (PROTOCOL.md section 4).
const (
	ErrorPolicyInvalid  = "validation.retry_policy_invalid"
	ErrorPatternInvalid = "validation.pattern_invalid"
	ErrorInvalidRequest = "validation.invalid_request"
)

// The values of [Hello.Jitter].
const (
	JitterInjectable = "injectable" // Request.Rand is honoured exactly
	JitterOpaque     = "opaque"     // Request.Rand is never sent
)

// Implementation is an implementation of the OJS retry policy under test:
// retrykit's own (conformance.Reference), an adapter process ([Process]) or
// any Go value.
//
// Hello is called once per run before any Do. Do answers one request; the
// runner calls it from several goroutines at once, so an Implementation must
// be safe for concurrent use. Do returns an error only for a broken
// implementation (crash, timeout, protocol violation): such a result is
// reported as an "error", never as a failure. A rejected input is a normal
// [Response] with Error set; an op the implementation lacks is a Response
// with Unsupported set. Do need not set Response.ID.
type Implementation interface {
	Hello(ctx context.Context) (Hello, error)
	Do(ctx context.Context, req Request) (Response, error)
}

// Hello describes an implementation (PROTOCOL.md section 3.1). The zero value
// is not useful: Protocol must be [Version] and ResolutionNS ≥ 1 (see
// [Hello.Check]).
type Hello struct {
	// Protocol is the protocol version the adapter speaks; it must be
	// [Version].
	Protocol int `json:"protocol"`
	// Implementation names the implementation in reports; it must not be
	// empty.
	Implementation string `json:"implementation"`
	// Version is the implementation's own version, for reports.
	Version string `json:"version"`
	// Ops lists the ops the adapter answers (OpParseDuration, ...; never
	// OpHello). Vectors of an unlisted op are reported as not covered.
	Ops []string `json:"ops"`
	// ResolutionNS is the granularity, in nanoseconds, of the durations the
	// implementation computes: 1 for exact nanoseconds, 1e6 for
	// milliseconds; from 1 to [MaxResolutionNS]. Answers within it of the
	// expected value pass.
	ResolutionNS int64 `json:"resolution_ns"`
	// Jitter is [JitterInjectable] when the adapter uses a request's Rand
	// as its draw, [JitterOpaque] when it cannot; the runner then sends no
	// Rand and checks bounds and the distribution instead.
	Jitter string `json:"jitter"`
	// UnclaimedFlags lists vector flags the implementation does not claim;
	// vectors carrying one are not sent.
	UnclaimedFlags []string `json:"unclaimed_flags,omitempty"`
	// Profiles names the profiles of other systems (package profile) the
	// delay op answers for in place of a policy (PROTOCOL.md section 3.4).
	Profiles []string `json:"profiles,omitempty"`
}

// Supports reports whether op is listed in h.Ops.
func (h Hello) Supports(op string) bool {
	for _, o := range h.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// Claims reports whether the implementation claims vectors carrying flag,
// that is whether flag is not in h.UnclaimedFlags.
func (h Hello) Claims(flag string) bool {
	for _, f := range h.UnclaimedFlags {
		if f == flag {
			return false
		}
	}
	return true
}

// MaxResolutionNS is the coarsest resolution_ns a hello may declare: one
// second. The OJS default policy's first delay is 1 s; at a coarser
// resolution an answer of 0 (retry at once) would compare equal to it, so
// the suite could no longer judge the implementation (PROTOCOL.md 3.1).
const MaxResolutionNS = int64(time.Second)

// ErrHello is matched (with errors.Is) by every error [Hello.Check] returns.
var ErrHello = errors.New("protocol: unusable hello")

// Check reports why h is not a usable hello answer: another protocol
// version, a resolution below 1 ns or above [MaxResolutionNS], an unknown
// jitter mode or an empty implementation name. It returns nil for a usable
// one; its errors match [ErrHello].
func (h Hello) Check() error {
	switch {
	case h.Protocol != Version:
		return fmt.Errorf("%w: protocol %d, want %d (this runner speaks version %d only)", ErrHello, h.Protocol, Version, Version)
	case h.ResolutionNS < 1:
		return fmt.Errorf("%w: resolution_ns %d, want at least 1", ErrHello, h.ResolutionNS)
	case h.ResolutionNS > MaxResolutionNS:
		return fmt.Errorf("%w: resolution_ns %d is coarser than the suite can judge: at most %d (1 s), "+
			"because at a coarser resolution a delay of 0 compares equal to the default policy's first delay of 1 s",
			ErrHello, h.ResolutionNS, MaxResolutionNS)
	case h.Jitter != JitterInjectable && h.Jitter != JitterOpaque:
		return fmt.Errorf("%w: jitter %q, want %q or %q", ErrHello, h.Jitter, JitterInjectable, JitterOpaque)
	case h.Implementation == "":
		return fmt.Errorf("%w: implementation name is empty", ErrHello)
	}
	return nil
}

// Request is one protocol request (PROTOCOL.md section 3). Only the fields of
// its Op are meaningful. A Request is plain data.
type Request struct {
	ID        int64           // echoed in the answer
	Op        string          // one of the Op constants
	Value     string          // parse_duration
	Policy    json.RawMessage // validate, delay, decide; nil = absent policy; sent verbatim
	Profile   string          // delay: a profile name in place of Policy ("" = none)
	Attempt   int64           // delay, decide
	Rand      *float64        // delay, decide; nil = the implementation's own randomness
	Patterns  []string        // match
	ErrorType string          // match
	Error     *FailureInput   // decide
	Config    json.RawMessage // scenario: the scenario's config object
	Steps     json.RawMessage // scenario: its steps, expectations removed
	Case      json.RawMessage // timeout_decide, timeout_expiry, replay: the case object, sent verbatim
}

// FailureInput is the "error" object of a decide request: the failed
// attempt's error type and handler code ("" means RETRY).
type FailureInput struct {
	Type string `json:"type"` // the error type, matched against non_retryable_errors; may be ""
	Code string `json:"code"` // the handler code (RETRY, DISCARD, DEAD_LETTER, FAIL); "" means RETRY
}

// AppendJSON appends the request as one protocol line (without newline).
// It is hand-written for strictness: the vector's policy text reaches the
// adapter as written (duplicate keys, number spellings and "<" kept), which
// json.Marshal would not guarantee (it HTML-escapes raw messages).
func (r *Request) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"op":`...)
	b = appendString(b, r.Op)
	switch r.Op {
	case OpParseDuration:
		b = append(b, `,"value":`...)
		b = appendString(b, r.Value)
	case OpMatch:
		b = append(b, `,"patterns":[`...)
		for i, p := range r.Patterns {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, `],"error_type":`...)
		b = appendString(b, r.ErrorType)
	case OpValidate, OpDelay, OpDecide:
		if r.Op == OpDelay && r.Profile != "" {
			b = append(b, `,"profile":`...)
			b = appendString(b, r.Profile)
		}
		if r.Policy != nil {
			b = append(b, `,"policy":`...)
			b = appendCompact(b, r.Policy)
		}
		if r.Op == OpValidate {
			break
		}
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, r.Attempt, 10)
		if r.Rand != nil {
			b = append(b, `,"rand":`...)
			b = strconv.AppendFloat(b, *r.Rand, 'g', -1, 64)
		}
		if r.Op == OpDecide && r.Error != nil {
			b = append(b, `,"error":{"type":`...)
			b = appendString(b, r.Error.Type)
			b = append(b, `,"code":`...)
			b = appendString(b, r.Error.Code)
			b = append(b, '}')
		}
	case OpTimeoutDecide, OpTimeoutExpiry, OpReplay, OpExtensionDecide:
		if r.Case != nil {
			b = append(b, `,"case":`...)
			b = appendCompact(b, r.Case)
		}
	case OpScenario:
		if r.Config != nil {
			b = append(b, `,"config":`...)
			b = appendCompact(b, r.Config)
		}
		if r.Steps != nil {
			b = append(b, `,"steps":`...)
			b = appendCompact(b, r.Steps)
		}
	}
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with [Request.AppendJSON].
func (r Request) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// MaxID is the largest request id (PROTOCOL.md section 2: 1 ≤ id < 2^53,
// so that a JSON number read as float64 keeps it exactly).
const MaxID = 1<<53 - 1

// UnmarshalJSON decodes a protocol request line. Unknown fields are ignored
// (PROTOCOL.md section 2); "policy" is kept verbatim, and "policy": null is
// kept as the JSON text null, distinct from an absent policy. It rejects a
// line without an id, an id outside 1..[MaxID], and a line that gives a
// field twice at the top level (encoding/json would keep the last one, and
// match keys without regard to case: "id" and "ID" are the same field).
// The strings of value, patterns, error_type and error.type keep what was
// sent: bytes that are not valid UTF-8 and \u escapes of lone surrogates
// are not turned into U+FFFD, so that the implementation rejects them as a
// policy's strings are rejected.
func (r *Request) UnmarshalJSON(data []byte) error {
	var w struct {
		ID        *int64            `json:"id"`
		Op        string            `json:"op"`
		Value     json.RawMessage   `json:"value"`
		Policy    json.RawMessage   `json:"policy"`
		Profile   string            `json:"profile"`
		Attempt   int64             `json:"attempt"`
		Rand      *float64          `json:"rand"`
		Patterns  []json.RawMessage `json:"patterns"`
		ErrorType json.RawMessage   `json:"error_type"`
		Error     *struct {
			Type json.RawMessage `json:"type"`
			Code *string         `json:"code"`
		} `json:"error"`
		Config json.RawMessage `json:"config"`
		Steps  json.RawMessage `json:"steps"`
		Case   json.RawMessage `json:"case"`
	}
	// The one reader first (strictjson), then encoding/json's fields.
	if k, ok := duplicateKey(data); ok {
		return fmt.Errorf("protocol: request: field %s: given more than once", clip([]byte(k)))
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("protocol: request: %w", plainJSONError(err))
	}
	if w.ID == nil {
		return errors.New("protocol: request: no id")
	}
	if *w.ID < 1 || *w.ID > MaxID {
		return fmt.Errorf("protocol: request: id: must be in 1..2^53-1, got %d", *w.ID)
	}
	*r = Request{ID: *w.ID, Op: w.Op, Policy: w.Policy, Profile: w.Profile, Attempt: w.Attempt,
		Rand: w.Rand, Config: w.Config, Steps: w.Steps, Case: w.Case}
	var err error
	if r.Value, err = decodeString("value", w.Value); err != nil {
		return fmt.Errorf("protocol: request: %w", err)
	}
	if r.ErrorType, err = decodeString("error_type", w.ErrorType); err != nil {
		return fmt.Errorf("protocol: request: %w", err)
	}
	if w.Patterns != nil {
		r.Patterns = make([]string, len(w.Patterns))
		for i, raw := range w.Patterns {
			if r.Patterns[i], err = decodeString(fmt.Sprintf("patterns[%d]", i), raw); err != nil {
				return fmt.Errorf("protocol: request: %w", err)
			}
		}
	}
	if w.Error != nil {
		r.Error = &FailureInput{}
		if r.Error.Type, err = decodeString("error.type", w.Error.Type); err != nil {
			return fmt.Errorf("protocol: request: %w", err)
		}
		if w.Error.Code != nil {
			r.Error.Code = *w.Error.Code
		}
	}
	return nil
}

// duplicateKey returns a top-level key of the JSON object data that occurs
// more than once, compared as encoding/json matches field names (without
// regard to case). data must be valid JSON (the caller has decoded it).
// The reader is the project's one (strictjson.Check); the payloads the
// line carries (policies, strings) are passed on as written, for the
// implementation under test to judge.
func duplicateKey(data []byte) (string, bool) {
	var fe *strictjson.FieldError
	if errors.As(strictjson.Check(data, strictjson.CarrierOnly(1), strictjson.FoldKeys(1)), &fe) && errors.Is(fe, strictjson.ErrDuplicateKey) {
		return fe.Path, true
	}
	return "", false
}

// Response is one protocol answer. Exactly one group is set: the result of
// the op (NS; Effective; DelayNS; Match; Action with DelayNS for a retry;
// Steps), Error, or Unsupported. A Response is plain data.
type Response struct {
	ID          int64           `json:"id"`                    // the ID of the request answered
	NS          *int64          `json:"ns,omitempty"`          // parse_duration: the duration in nanoseconds
	Effective   json.RawMessage `json:"effective,omitempty"`   // validate: the effective policy, defaults filled in, as OJS JSON
	Action      string          `json:"action,omitempty"`      // decide: "retry", "discard" or "dead_letter"
	DelayNS     *int64          `json:"delay_ns,omitempty"`    // delay, and decide when Action is "retry": the delay in nanoseconds
	Match       *bool           `json:"match,omitempty"`       // match: whether the error type matches the patterns
	Steps       json.RawMessage `json:"steps,omitempty"`       // scenario: one observation per step (scenario.Observation)
	Result      json.RawMessage `json:"result,omitempty"`      // timeout_decide, timeout_expiry, replay: the result object
	Error       *ErrorResult    `json:"error,omitempty"`       // a rejected input: its error type and message
	Unsupported bool            `json:"unsupported,omitempty"` // the implementation lacks the op or a feature the request needs

	// nsWire and delayWire keep ns and delay_ns as the answer line wrote
	// them when that text is not the decoded value's ("1e30", saturated to
	// math.MaxInt64; "1e9"), so that AppendJSON shows what was sent.
	nsWire, delayWire wireNumber
}

// wireNumber is a number's text on the wire beside the value it was read
// as; AppendJSON writes the text only while the field still holds that
// value.
type wireNumber struct {
	n    int64
	text string
}

// wire returns the wireNumber for raw read as n: empty when raw is n's
// canonical text.
func wire(raw json.RawMessage, n *int64) wireNumber {
	if n == nil || string(raw) == strconv.FormatInt(*n, 10) {
		return wireNumber{}
	}
	return wireNumber{n: *n, text: string(raw)}
}

// appendNanos appends n, or the text it was read from (w).
func appendNanos(b []byte, n int64, w wireNumber) []byte {
	if w.text != "" && w.n == n {
		return append(b, w.text...)
	}
	return strconv.AppendInt(b, n, 10)
}

// UnmarshalJSON decodes one answer line (PROTOCOL.md sections 3 and 4). It
// checks JSON syntax and field types only; whether the fields fit the
// request's op is [Response.Check]'s job. Effective and Steps are kept
// verbatim. ns and delay_ns may be any JSON number with a whole value
// ("1e9", "9.223372036854776e18"); values beyond the int64 range saturate
// to math.MaxInt64 or math.MinInt64 (PROTOCOL.md section 3), so a float64
// implementation's 2^63 for the saturated 2^63 − 1 ns is compared, not
// rejected. The work is linear in len(data).
func (r *Response) UnmarshalJSON(data []byte) error {
	var w struct {
		ID          int64           `json:"id"`
		NS          json.RawMessage `json:"ns"`
		Effective   json.RawMessage `json:"effective"`
		Action      string          `json:"action"`
		DelayNS     json.RawMessage `json:"delay_ns"`
		Match       *bool           `json:"match"`
		Steps       json.RawMessage `json:"steps"`
		Result      json.RawMessage `json:"result"`
		Error       *ErrorResult    `json:"error"`
		Unsupported bool            `json:"unsupported"`
	}
	if k, ok := duplicateKey(data); ok {
		return fmt.Errorf("protocol: answer: field %s: given more than once", clip([]byte(k)))
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("protocol: answer: %w", plainJSONError(err))
	}
	out := Response{ID: w.ID, Effective: w.Effective, Action: w.Action, Match: w.Match, Steps: w.Steps,
		Result: w.Result, Error: w.Error, Unsupported: w.Unsupported}
	if string(out.Result) == "null" {
		out.Result = nil
	}
	var err error
	if out.NS, err = readNanos("ns", w.NS); err != nil {
		return err
	}
	if out.DelayNS, err = readNanos("delay_ns", w.DelayNS); err != nil {
		return err
	}
	out.nsWire, out.delayWire = wire(w.NS, out.NS), wire(w.DelayNS, out.DelayNS)
	*r = out
	return nil
}

// readNanos reads an optional nanosecond field of an answer: absent and
// null give nil.
func readNanos(field string, raw json.RawMessage) (*int64, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	n, err := readInt(raw)
	if err != nil {
		return nil, fmt.Errorf("protocol: answer: field %s: %w", field, err)
	}
	return &n, nil
}

// ErrorResult is a rejection: an error type (ErrorPolicyInvalid, ...) and a
// human-readable message.
type ErrorResult struct {
	Type    string `json:"type"`    // the error type, such as ErrorPolicyInvalid; never ""
	Message string `json:"message"` // human-readable; vectors check only that it names the offending fields
}

// AppendJSON appends the response as one protocol line (without newline).
// A response read by UnmarshalJSON keeps ns and delay_ns as they were
// written on the wire ("1e30" stays "1e30", not the int64 it saturated to).
func (r *Response) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	if r.NS != nil {
		b = append(b, `,"ns":`...)
		b = appendNanos(b, *r.NS, r.nsWire)
	}
	if r.Effective != nil {
		b = append(b, `,"effective":`...)
		b = appendCompact(b, r.Effective)
	}
	if r.Action != "" {
		b = append(b, `,"action":`...)
		b = appendString(b, r.Action)
	}
	if r.DelayNS != nil {
		b = append(b, `,"delay_ns":`...)
		b = appendNanos(b, *r.DelayNS, r.delayWire)
	}
	if r.Match != nil {
		b = append(b, `,"match":`...)
		b = strconv.AppendBool(b, *r.Match)
	}
	if r.Steps != nil {
		b = append(b, `,"steps":`...)
		b = appendCompact(b, r.Steps)
	}
	if r.Result != nil {
		b = append(b, `,"result":`...)
		b = appendCompact(b, r.Result)
	}
	if r.Error != nil {
		b = append(b, `,"error":{"type":`...)
		b = appendString(b, r.Error.Type)
		b = append(b, `,"message":`...)
		b = appendString(b, r.Error.Message)
		b = append(b, '}')
	}
	if r.Unsupported {
		b = append(b, `,"unsupported":true`...)
	}
	return append(b, '}')
}

// Check reports whether r is a well-formed answer to a request with the
// given op: exactly one outcome group set, and the result fields those of
// op (PROTOCOL.md sections 3 and 4). It returns a short description of the
// problem, or nil.
func (r *Response) Check(op string) error {
	n := 0
	for _, ok := range []bool{r.NS != nil, r.Effective != nil, r.Action != "" || r.DelayNS != nil, r.Match != nil, r.Steps != nil, r.Result != nil, r.Error != nil, r.Unsupported} {
		if ok {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("answer must carry exactly one of a result, error or unsupported (has %d)", n)
	}
	if r.Error != nil || r.Unsupported {
		if r.Error != nil && r.Error.Type == "" {
			return errors.New("error answer without a type")
		}
		return nil
	}
	ok := false
	switch op {
	case OpParseDuration:
		ok = r.NS != nil
	case OpValidate:
		ok = r.Effective != nil
	case OpDelay:
		ok = r.DelayNS != nil && r.Action == ""
	case OpMatch:
		ok = r.Match != nil
	case OpDecide:
		ok = r.Action != "" && (r.DelayNS != nil) == (r.Action == "retry")
	case OpScenario:
		ok = r.Steps != nil
	case OpTimeoutDecide, OpTimeoutExpiry, OpReplay, OpExtensionDecide:
		ok = len(r.Result) > 0 && r.Result[0] == '{'
	}
	if !ok {
		return fmt.Errorf("answer fields do not fit op %s", op)
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendCompact appends raw JSON without insignificant whitespace, so that
// the value fits on one protocol line. Duplicate keys and number spellings
// are kept.
func appendCompact(b []byte, raw json.RawMessage) []byte {
	simple := true
	for _, c := range raw {
		if c == '\n' || c == '\r' {
			simple = false
			break
		}
	}
	if simple {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, buf.Bytes()...)
}
