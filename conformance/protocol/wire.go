package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/retrykit/retrykit/internal/strictjson"
)

// MaxLineBytes is the longest protocol line, its terminating newline
// included (PROTOCOL.md section 1): the runner never writes a longer
// request and treats a longer answer as a protocol error.
const MaxLineBytes = 1 << 20

// readInt reads a JSON number whose value must be whole, in any JSON
// notation ("25", "2.5e1", "9.223372036854776e18"). Values beyond the int64
// range saturate to math.MaxInt64 or math.MinInt64. It fails for a value that
// is not a number or has a fractional part. The work is linear in len(raw)
// and allocation-free: no big-number arithmetic, whatever the exponent.
func readInt(raw []byte) (int64, error) {
	s := raw
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, errors.New("want a whole number of nanoseconds, got nothing")
	}
	if c := s[0]; c != '-' && (c < '0' || c > '9') {
		return 0, fmt.Errorf("want a whole number of nanoseconds, got a JSON %s", jsonKind(c))
	}
	// The project's one integer rule (strictjson.IntLiteral, RK-10), with
	// values past the int64 range saturated.
	if !strictjson.Valid(s) {
		return 0, fmt.Errorf("want a whole number of nanoseconds, got %s", clip(raw))
	}
	v, res := strictjson.IntLiteral(s, math.MinInt64, math.MaxInt64)
	switch res {
	case strictjson.IntBelowRange:
		return math.MinInt64, nil
	case strictjson.IntAboveRange:
		return math.MaxInt64, nil
	case strictjson.IntNotInteger:
		return 0, fmt.Errorf("want a whole number of nanoseconds, got %s", clip(raw))
	}
	return v, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonKind names the JSON type a value starting with c has.
func jsonKind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value"
}

// plainJSONError rewrites an encoding/json error in plain words: a wrong
// type names the field and the JSON types involved instead of Go types.
// The original error stays in the chain.
func plainJSONError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		got := "a JSON " + te.Value // "array", "string", "bool", "object"
		if num, ok := strings.CutPrefix(te.Value, "number "); ok {
			got = "the number " + clip([]byte(num))
		}
		if te.Field == "" {
			return &plainError{msg: "want a JSON object, got " + got, err: err}
		}
		return &plainError{msg: fmt.Sprintf("field %s: got %s, want %s", te.Field, got, goKind(te.Type)), err: err}
	case errors.As(err, &se):
		return &plainError{msg: fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, se), err: err}
	}
	return err
}

type plainError struct {
	msg string
	err error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.err }

// goKind names what a Go type accepts in JSON words.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in the 64-bit range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another type"
}

// clip returns b quoted, cut after 200 bytes.
func clip(b []byte) string { return quoteLine(b) }

// decodeString decodes a JSON string literal with the project's one
// reader (strictjson.Decoder), which differs from encoding/json in one
// way: nothing becomes U+FFFD. Bytes that are not valid UTF-8 are kept as
// they are, and a \u escape of a lone surrogate becomes the three bytes a
// UTF-8 encoder would write for it (not valid UTF-8 either), so that the
// implementation sees, and can reject, what was sent; the policy decoder
// treats policy strings the same way (RK-19). JSON null decodes to "". raw
// must be a syntactically valid JSON value (the caller has it from
// encoding/json); anything but a string or null is a type error naming
// field.
func decodeString(field string, raw []byte) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	tok, err := strictjson.NewDecoder(raw).Token()
	if err != nil || tok.Kind != 's' {
		return "", fmt.Errorf("field %s: got a JSON %s, want a string", field, jsonKind(raw[0]))
	}
	return tok.Text(), nil
}
