package budget

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/internal/suggest"
)

// Spec is the plain data of a job's time budget (ojs-timeouts §6). Every
// field is a whole number of seconds.
//
// The zero Spec is not valid (Timeout and HeartbeatTimeout must be > 0):
// start from DefaultSpec. A Spec is a plain value, safe to copy.
type Spec struct {
	// Timeout is the execution timeout of one attempt; > 0. JSON: timeout.
	Timeout time.Duration
	// TotalTimeout, if non-zero, bounds the time from created_at to the end
	// of the last attempt; when set it is >= Timeout. JSON: total_timeout.
	TotalTimeout time.Duration
	// EnqueueTTL, if non-zero, bounds the time from created_at to the first
	// fetch. JSON: enqueue_ttl.
	EnqueueTTL time.Duration
	// GracePeriod is the time between the soft timeout and forceful
	// termination; >= 0. JSON: grace_period.
	GracePeriod time.Duration
	// HeartbeatTimeout is the longest interval between two heartbeats of an
	// active job; > 0. JSON: heartbeat_timeout.
	HeartbeatTimeout time.Duration
}

// Defaults of ojs-timeouts §6.
const (
	DefaultTimeout          = 1800 * time.Second
	DefaultGracePeriod      = 30 * time.Second
	DefaultHeartbeatTimeout = 60 * time.Second
)

// MaxSeconds is the largest value of any field, in seconds: 100 years of
// 365 days. Larger values are refused, so that every sum of a time and a
// limit stays far inside time.Duration.
const MaxSeconds = 100 * 365 * 24 * 3600

// DefaultSpec returns the defaults of ojs-timeouts §6: timeout 1800 s, no
// total timeout, no enqueue TTL, grace period 30 s, heartbeat timeout 60 s.
func DefaultSpec() Spec {
	return Spec{Timeout: DefaultTimeout, GracePeriod: DefaultGracePeriod, HeartbeatTimeout: DefaultHeartbeatTimeout}
}

// Budget is a validated, immutable Spec.
//
// The zero Budget, and a nil *Budget, behave as Default(). A Budget is safe
// for concurrent use.
type Budget struct {
	spec Spec
	ok   bool // built by New or Parse; false for the zero value
}

var defaultBudget = &Budget{spec: DefaultSpec(), ok: true}

// Default returns the budget of DefaultSpec.
func Default() *Budget { return defaultBudget }

func (b *Budget) get() *Budget {
	if b == nil || !b.ok {
		return defaultBudget
	}
	return b
}

// Spec returns the budget's fields.
func (b *Budget) Spec() Spec { return b.get().spec }

// Deadline returns created_at + total_timeout, and false when the budget has
// no total timeout.
func (b *Budget) Deadline(createdAt time.Time) (time.Time, bool) {
	s := b.get().spec
	if s.TotalTimeout == 0 {
		return time.Time{}, false
	}
	return createdAt.Add(s.TotalTimeout), true
}

// ErrInvalidBudget is the errors.Is target of every error of New and Parse;
// the concrete error is a *ValidationError listing *FieldError values.
var ErrInvalidBudget = errors.New("budget: invalid time budget")

// FieldError is one problem with one field.
//
// FieldErrors are never mutated after New or Parse returns them; they are
// safe to read from several goroutines.
type FieldError struct {
	// Field is the JSON name ("total_timeout"), an unknown key, or "" for
	// the document as a whole.
	Field string
	// Value is the Spec value (New) or the raw JSON text (Parse), or nil.
	Value any
	// Reason says what is wrong, showing the value.
	Reason string
	// Err is the cause, or nil.
	Err error
}

// Error returns "budget: FIELD: REASON".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return "budget: " + e.Reason
	}
	return "budget: " + label(e.Field) + ": " + e.Reason
}

// label quotes a field name that is not a plain JSON name (an unknown key
// can be any string) and shortens a long one.
func label(f string) string {
	if len(f) > 64 {
		return strconv.Quote(f[:48]) + "…"
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return strconv.Quote(f)
		}
	}
	return f
}

// Is reports whether target is ErrInvalidBudget.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidBudget }

// Unwrap returns the cause, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// ValidationError lists every problem found, in field order.
//
// The zero value lists none. It is never mutated after it is returned.
type ValidationError struct {
	Errors []*FieldError
}

// Error joins the problems: "budget: A; B".
func (e *ValidationError) Error() string {
	if len(e.Errors) == 0 {
		return "budget: invalid time budget"
	}
	parts := make([]string, len(e.Errors))
	for i, f := range e.Errors {
		parts[i] = strings.TrimPrefix(f.Error(), "budget: ")
	}
	return "budget: " + strings.Join(parts, "; ")
}

// Is reports whether target is ErrInvalidBudget.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidBudget }

// Unwrap returns the listed problems, for errors.As.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, f := range e.Errors {
		out[i] = f
	}
	return out
}

// field names in document order.
var fields = []string{"timeout", "total_timeout", "enqueue_ttl", "grace_period", "heartbeat_timeout"}

// New validates s by ojs-timeouts §6 (RK-215):
//
//   - timeout, heartbeat_timeout: > 0;
//   - grace_period: >= 0;
//   - total_timeout, enqueue_ttl: 0 (none) or > 0;
//   - total_timeout, when set, >= timeout;
//   - every field a whole number of seconds, at most MaxSeconds.
//
// Every problem is reported, in the order of the list above, in one
// *ValidationError.
func New(s Spec) (*Budget, error) {
	var errs []*FieldError
	vals := []time.Duration{s.Timeout, s.TotalTimeout, s.EnqueueTTL, s.GracePeriod, s.HeartbeatTimeout}
	for i, v := range vals {
		name := fields[i]
		optional := name == "total_timeout" || name == "enqueue_ttl"
		switch {
		case v < 0 || v == 0 && name != "grace_period" && !optional:
			errs = append(errs, &FieldError{Field: name, Value: v, Reason: "must be a positive number of seconds, got " + v.String()})
		case v%time.Second != 0:
			errs = append(errs, &FieldError{Field: name, Value: v, Reason: "must be a whole number of seconds, got " + v.String()})
		case v > MaxSeconds*time.Second:
			errs = append(errs, &FieldError{Field: name, Value: v, Reason: "must be at most " + strconv.Itoa(MaxSeconds) + " seconds, got " + v.String()})
		}
	}
	if len(errs) == 0 && s.TotalTimeout != 0 && s.TotalTimeout < s.Timeout {
		errs = append(errs, &FieldError{Field: "total_timeout", Value: s.TotalTimeout,
			Reason: "must be at least timeout (" + secs(s.Timeout) + "), got " + secs(s.TotalTimeout)})
	}
	if len(errs) > 0 {
		return nil, &ValidationError{Errors: errs}
	}
	return &Budget{spec: s, ok: true}, nil
}

func secs(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) + " s" }

// MaxDocumentSize is the largest document Parse reads.
const MaxDocumentSize = 64 << 10

// Parse decodes a JSON object holding any of the five fields, as integer
// seconds (3, 3.0 and 3e0 are 3, RK-10), over DefaultSpec, then validates as
// New does. An absent field keeps its default (total_timeout and enqueue_ttl:
// none); null, a fraction, a string, an unknown key (with the closest known
// name suggested), a duplicate key, invalid JSON or UTF-8, and a document
// over MaxDocumentSize are refused, each naming the field. A zero
// total_timeout or enqueue_ttl is refused, not read as "none" (§6: "MUST be
// a positive integer").
func Parse(data []byte) (*Budget, error) {
	if len(data) > MaxDocumentSize {
		return nil, &ValidationError{Errors: []*FieldError{{Reason: "document of " + strconv.Itoa(len(data)) + " bytes exceeds " + strconv.Itoa(MaxDocumentSize)}}}
	}
	members, err := strictjson.Object(data, 32)
	if err != nil {
		fe := err.(*strictjson.FieldError) // Object's only error type
		return nil, &ValidationError{Errors: []*FieldError{{Field: fe.Path, Reason: fe.Reason, Err: err}}}
	}
	s := DefaultSpec()
	var errs []*FieldError
	for _, m := range members {
		var dst *time.Duration
		lo := int64(1)
		switch m.Key {
		case "timeout":
			dst = &s.Timeout
		case "total_timeout":
			dst = &s.TotalTimeout
		case "enqueue_ttl":
			dst = &s.EnqueueTTL
		case "grace_period":
			dst, lo = &s.GracePeriod, 0
		case "heartbeat_timeout":
			dst = &s.HeartbeatTimeout
		default:
			errs = append(errs, &FieldError{Field: m.Key, Value: string(m.Value),
				Reason: "unknown field" + suggest.Hint(m.Key, fields)})
			continue
		}
		v, reason := strictjson.Int(m.Value, lo, MaxSeconds)
		if reason != "" {
			errs = append(errs, &FieldError{Field: m.Key, Value: json.RawMessage(m.Value), Reason: reason + " (seconds)"})
			continue
		}
		*dst = time.Duration(v) * time.Second
	}
	if len(errs) > 0 {
		return nil, &ValidationError{Errors: errs}
	}
	return New(s)
}

// MarshalJSON writes the budget as integer seconds, omitting total_timeout
// and enqueue_ttl when unset; Parse reads it back to an equal Budget.
func (b *Budget) MarshalJSON() ([]byte, error) {
	s := b.get().spec
	out := []byte(`{"timeout":` + strconv.FormatInt(int64(s.Timeout/time.Second), 10))
	if s.TotalTimeout != 0 {
		out = append(out, `,"total_timeout":`+strconv.FormatInt(int64(s.TotalTimeout/time.Second), 10)...)
	}
	if s.EnqueueTTL != 0 {
		out = append(out, `,"enqueue_ttl":`+strconv.FormatInt(int64(s.EnqueueTTL/time.Second), 10)...)
	}
	out = append(out, `,"grace_period":`+strconv.FormatInt(int64(s.GracePeriod/time.Second), 10)...)
	out = append(out, `,"heartbeat_timeout":`+strconv.FormatInt(int64(s.HeartbeatTimeout/time.Second), 10)+"}"...)
	return out, nil
}
