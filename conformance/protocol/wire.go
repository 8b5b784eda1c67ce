package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

// decodeString decodes a JSON string literal as encoding/json does, with
// one difference: nothing becomes U+FFFD. Bytes that are not valid UTF-8
// are kept as they are, and a \u escape of a lone surrogate becomes the
// three bytes a UTF-8 encoder would write for it (not valid UTF-8 either),
// so that the implementation sees, and can reject, what was sent; the
// policy decoder treats policy strings the same way (RK-19). JSON null
// decodes to "". raw must be a syntactically valid JSON value (the caller
// has it from encoding/json); anything but a string or null is a type
// error naming field.
func decodeString(field string, raw []byte) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' || len(raw) < 2 || raw[len(raw)-1] != '"' {
		return "", fmt.Errorf("field %s: got a JSON %s, want a string", field, jsonKind(raw[0]))
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				return "", fmt.Errorf("field %s: bad \\u escape", field)
			}
			i += 4
			if utf16.IsSurrogate(r) && r < 0xDC00 {
				if lo, ok := hex4(s[min(i+3, len(s)):]); ok && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
					out = utf8.AppendRune(out, utf16.DecodeRune(r, lo))
					i += 6
					continue
				}
			}
			if utf16.IsSurrogate(r) {
				// Lone surrogate: its three bytes, as WTF-8 writes them.
				out = append(out, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
				continue
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, s[i])
		}
	}
	return string(out), nil
}

// hex4 reads four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
