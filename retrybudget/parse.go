package retrybudget

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/policy"
)

// MaxDocumentSize is the largest retry_budget object Parse reads, in bytes.
const MaxDocumentSize = 4096

// DefaultWindow is the window of a ratio budget that gives none (Finagle's
// and Linkerd's default).
const DefaultWindow = 10 * time.Second

// Parse reads the value of a queue's retry_budget member
// (docs/extensions.md §2.3) and returns the budget it describes:
//
//	{"token_bucket": {"capacity": 100, "refill_per_second": 10, "credit_per_success": 0.1}}
//	{"ratio": {"ratio": 0.1, "min_per_second": 5, "window": "PT10S"}}
//
// Exactly one of token_bucket and ratio is given. token_bucket.capacity
// and ratio.ratio are required; refill_per_second, credit_per_success and
// min_per_second default to 0, window to DefaultWindow. Counts are JSON
// numbers, the window an OJS ISO 8601 duration (policy.ParseDuration).
// The text is read strictly: valid UTF-8, one object, no duplicate or
// unknown member, no trailing data, at most MaxDocumentSize bytes. Every
// error is a *FieldError matching ErrInvalidSpec.
func Parse(data []byte) (Budget, error) {
	if len(data) > MaxDocumentSize {
		return nil, &FieldError{Reason: "document of " + strconv.Itoa(len(data)) + " bytes exceeds " + strconv.Itoa(MaxDocumentSize)}
	}
	members, err := strictjson.Object(data, 2)
	if err != nil {
		return nil, &FieldError{Reason: err.Error(), Err: err}
	}
	if len(members) != 1 {
		return nil, &FieldError{Reason: "must hold exactly one of token_bucket and ratio, got " + strconv.Itoa(len(members)) + " members"}
	}
	m := members[0]
	switch m.Key {
	case "token_bucket":
		var s TokenBucketSpec
		err := readObject(m.Value, "token_bucket", map[string]func(json.RawMessage) error{
			"capacity":           number(&s.Capacity),
			"refill_per_second":  number(&s.RefillPerSecond),
			"credit_per_success": number(&s.CreditPerSuccess),
		}, "capacity")
		if err != nil {
			return nil, err
		}
		b, err := NewTokenBucket(s)
		if err != nil {
			return nil, err // not a nil *TokenBucket in a non-nil Budget
		}
		return b, nil
	case "ratio":
		s := RatioSpec{Window: DefaultWindow}
		err := readObject(m.Value, "ratio", map[string]func(json.RawMessage) error{
			"ratio":          number(&s.Ratio),
			"min_per_second": number(&s.MinPerSecond),
			"window":         duration(&s.Window),
		}, "ratio")
		if err != nil {
			return nil, err
		}
		r, err := NewRatio(s)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	return nil, &FieldError{Field: m.Key, Value: string(m.Value), Reason: "unknown member: a retry_budget holds token_bucket or ratio"}
}

// errReason carries a reason from a member reader to readObject, which
// adds the field.
type errReason string

func (e errReason) Error() string { return string(e) }

// readObject reads the object raw (the member name of the budget kind),
// calling the reader of each member; required must be present.
func readObject(raw json.RawMessage, name string, readers map[string]func(json.RawMessage) error, required string) error {
	members, err := strictjson.Object(raw, len(readers))
	if err != nil {
		return &FieldError{Field: name, Value: string(raw), Reason: err.Error(), Err: err}
	}
	seen := false
	for _, m := range members {
		read, ok := readers[m.Key]
		if !ok {
			return &FieldError{Field: name + "." + m.Key, Value: string(m.Value), Reason: "unknown member"}
		}
		if err := read(m.Value); err != nil {
			return &FieldError{Field: name + "." + m.Key, Value: string(m.Value), Reason: err.Error()}
		}
		seen = seen || m.Key == required
	}
	if !seen {
		return &FieldError{Field: name + "." + required, Reason: "is required"}
	}
	return nil
}

// number reads a JSON number into v.
func number(v *float64) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return errReason("must be a number, got " + strictjson.Describe(raw))
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return errReason("must be a number of at most " + fmtNum(MaxTokens) + ", got " + clip(string(raw)))
		}
		*v = f
		return nil
	}
}

// duration reads an OJS ISO 8601 duration string into d.
func duration(d *time.Duration) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		s, ok := strictjson.String(raw)
		if !ok {
			return errReason("must be an ISO 8601 duration string such as \"PT10S\", got " + strictjson.Describe(raw))
		}
		v, err := policy.ParseDuration(s)
		if err != nil {
			var de *policy.DurationError
			if errors.As(err, &de) {
				return errReason("must be an ISO 8601 duration such as \"PT10S\": " + de.Reason)
			}
			return errReason("must be an ISO 8601 duration such as \"PT10S\", got " + clip(strconv.Quote(s)))
		}
		*d = v
		return nil
	}
}

// clip shortens a long value for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	n := 32
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
