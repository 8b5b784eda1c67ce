package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
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
	neg := s[0] == '-'
	i := 0
	if neg {
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits := s[intStart:i]
	var fracDigits []byte
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracDigits = s[start:i]
	}
	// The exponent saturates far beyond any value that matters: a number
	// with more than 19 integral digits saturates anyway.
	const expCap = 1 << 40
	exp := int64(0)
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		for i < len(s) && isDigit(s[i]) {
			if exp < expCap {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) || len(intDigits) == 0 {
		return 0, fmt.Errorf("want a whole number of nanoseconds, got %s", clip(raw))
	}
	// The value is digits × 10^e10, digits being intDigits followed by
	// fracDigits without leading and trailing zeros.
	n := len(intDigits) + len(fracDigits)
	digit := func(k int) byte {
		if k < len(intDigits) {
			return intDigits[k]
		}
		return fracDigits[k-len(intDigits)]
	}
	lo, hi := 0, n
	for lo < hi && digit(lo) == '0' {
		lo++
	}
	if lo == hi {
		return 0, nil
	}
	for digit(hi-1) == '0' {
		hi--
	}
	e10 := exp - int64(len(fracDigits)) + int64(n-hi)
	if e10 < 0 {
		return 0, fmt.Errorf("want a whole number of nanoseconds, got %s", clip(raw))
	}
	sat := int64(math.MaxInt64)
	limit := uint64(math.MaxInt64)
	if neg {
		sat, limit = math.MinInt64, uint64(math.MaxInt64)+1
	}
	if int64(hi-lo)+e10 > 19 {
		return sat, nil
	}
	var v uint64
	for k := lo; k < hi; k++ {
		v = v*10 + uint64(digit(k)-'0') // at most 19 digits: no overflow of uint64
	}
	for ; e10 > 0; e10-- {
		if v > math.MaxUint64/10 {
			return sat, nil
		}
		v *= 10
	}
	if v > limit {
		return sat, nil
	}
	if neg {
		return int64(-v), nil
	}
	return int64(v), nil
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
