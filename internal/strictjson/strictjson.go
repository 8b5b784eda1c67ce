// Package strictjson reads the small JSON objects of retrykit's
// configuration formats (time budgets, replay rules) strictly and in time
// linear in their size: the text must be valid UTF-8 and valid JSON, an
// object, with no duplicate key and no trailing data, and integers follow
// the retry policy's rule (docs/decisions.md RK-10: 3, 3.0 and 3e0 are the
// integer 3; 2.5 is not an integer).
//
// [Object] splits an object into its members in document order; [Int],
// [String], [Bool] and [Describe] read and describe one member's value.
// The policy package keeps its own faster lexer; this package serves the
// formats that are read once, at configuration time.
//
// Non-goals: streaming, nested paths, numbers other than integers.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// Member is one key and its raw value, as written.
//
// The zero value is the empty key with no value. A Member is a plain value.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ErrSyntax is matched (errors.Is) by every error of Object: the text is not
// one well-formed JSON object read strictly.
var ErrSyntax = errors.New("not a strict JSON object")

// syntaxError is an ErrSyntax with a reason.
type syntaxError struct{ reason string }

func (e *syntaxError) Error() string        { return e.reason }
func (e *syntaxError) Is(target error) bool { return target == ErrSyntax }

// Object returns the members of the JSON object data in document order. It
// refuses, with an error matching ErrSyntax that says why: text that is not
// valid UTF-8 or not valid JSON, a value that is not an object, a key given
// twice, and more than maxMembers members.
func Object(data []byte, maxMembers int) ([]Member, error) {
	if !utf8.Valid(data) {
		return nil, &syntaxError{"not valid UTF-8"}
	}
	if !json.Valid(data) {
		// Let encoding/json say where.
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, &syntaxError{"invalid JSON: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, &syntaxError{"invalid JSON: " + err.Error()}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &syntaxError{"must be a JSON object, got " + describeToken(tok)}
	}
	var out []Member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &syntaxError{"invalid JSON: " + err.Error()}
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, &syntaxError{"invalid JSON: " + err.Error()}
		}
		if seen[key] {
			return nil, &syntaxError{"duplicate key " + strconv.Quote(clip(key))}
		}
		if len(out) == maxMembers {
			return nil, &syntaxError{"more than " + strconv.Itoa(maxMembers) + " members"}
		}
		seen[key] = true
		out = append(out, Member{Key: key, Value: raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, &syntaxError{"invalid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &syntaxError{"trailing data after the object"}
	}
	return out, nil
}

// Array returns the elements of the JSON array raw (valid JSON, as a
// Member's Value is), or ok false when raw is not an array or has more than
// maxElems elements.
func Array(raw json.RawMessage, maxElems int) (elems []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if d, isDelim := tok.(json.Delim); err != nil || !isDelim || d != '[' {
		return nil, false
	}
	for dec.More() {
		var e json.RawMessage
		if err := dec.Decode(&e); err != nil || len(elems) == maxElems {
			return nil, false
		}
		elems = append(elems, e)
	}
	return elems, true
}

// Describe names the kind of a raw JSON value for an error message: "a
// string", "a number", "true", "false", "null", "an object", "an array".
func Describe(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	}
	return "the number " + clip(string(raw))
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return "a number"
}

// String returns the value of a raw JSON string, or ok false when raw is not
// a string.
func String(raw json.RawMessage) (s string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// Bool returns the value of a raw JSON boolean, or ok false when raw is not
// true or false.
func Bool(raw json.RawMessage) (b bool, ok bool) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Int returns the value of a raw JSON number that is an integer in
// [lo, hi] exactly (3, 3.0, 3e0 and 30e-1 are 3). reason is "" on success,
// else what is wrong, e.g. "must be an integer, got the number 2.5" or
// "must be at most 100, got 1e9". It reads each byte once, whatever the
// exponent.
func Int(raw json.RawMessage, lo, hi int64) (v int64, reason string) {
	s := string(bytes.TrimSpace(raw))
	range_ := "from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10)
	if len(s) == 0 || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return 0, "must be an integer " + range_ + ", got " + Describe(raw)
	}
	neg, digits, scale, ok := scan(s)
	if !ok {
		return 0, "must be an integer " + range_ + ", got " + Describe(raw)
	}
	if scale < 0 {
		return 0, "must be an integer, got " + Describe(raw)
	}
	// value = digits × 10^scale, digits without leading or trailing zeros.
	if int64(len(digits))+scale > 19 {
		return 0, "must be an integer " + range_ + ", got " + Describe(raw)
	}
	var u uint64
	for i := 0; i < len(digits); i++ {
		u = u*10 + uint64(digits[i]-'0')
	}
	for k := int64(0); k < scale; k++ {
		u *= 10 // at most 19 digits in all: no overflow of uint64
	}
	if u > 1<<63-1 {
		return 0, "must be an integer " + range_ + ", got " + Describe(raw)
	}
	v = int64(u)
	if neg {
		v = -v
	}
	if v < lo || v > hi {
		return 0, "must be an integer " + range_ + ", got " + Describe(raw)
	}
	return v, ""
}

// scan splits a JSON number literal into its sign, its significant digits
// (no leading or trailing zeros; "" for zero) and the power of ten they are
// multiplied by. ok is false for an exponent too large to matter (the value
// is then far out of any range Int accepts, or not an integer).
func scan(s string) (neg bool, digits string, scale int64, ok bool) {
	i := 0
	if s[0] == '-' {
		neg = true
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intp := s[start:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		for ; i < len(s); i++ {
			if exp > 1<<40 {
				return false, "", 0, false
			}
			exp = exp*10 + int64(s[i]-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	all := intp + frac
	scale = exp - int64(len(frac))
	j := 0
	for j < len(all) && all[j] == '0' {
		j++
	}
	all = all[j:]
	k := len(all)
	for k > 0 && all[k-1] == '0' {
		k--
	}
	scale += int64(len(all) - k)
	all = all[:k]
	if all == "" {
		return false, "", 0, true
	}
	return neg, all, scale, true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	n := 48
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
