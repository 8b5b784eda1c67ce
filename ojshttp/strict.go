package ojshttp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// strictJSON checks a request body that encoding/json accepted as one
// JSON value for what it lets through (RK-163, RK-164): a key repeated in
// one object (encoding/json keeps the last, policy.Parse refuses it) and
// bytes that are not UTF-8 inside a string (encoding/json keeps them in
// raw values and would echo them). It returns the path of the first
// offence ("options.retry.max_attempts", "jobs[2].args[0]") and the
// reason, or "" when b is clean. It reads b once, left to right; keys of
// one object are remembered while it is read.
func strictJSON(b []byte) (field, reason string) {
	w := walker{b: b}
	w.value()
	if w.reason == "" {
		return "", ""
	}
	return w.field, w.reason
}

type walker struct {
	b      []byte
	i      int
	path   []string // segments of the value being read
	field  string
	reason string
}

func (w *walker) fail(reason string) {
	if w.reason == "" {
		w.reason = reason
		w.field = strings.Join(w.path, "")
		w.field = strings.TrimPrefix(w.field, ".")
		if w.field == "" {
			w.field = "(body)"
		}
	}
}

func (w *walker) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value reads one value at w.i.
func (w *walker) value() {
	w.space()
	if w.i >= len(w.b) || w.reason != "" {
		return
	}
	switch w.b[w.i] {
	case '{':
		w.i++
		var seen map[string]bool
		for w.reason == "" {
			w.space()
			if w.i >= len(w.b) {
				return
			}
			if w.b[w.i] == '}' {
				w.i++
				return
			}
			if w.b[w.i] == ',' {
				w.i++
				continue
			}
			raw := w.str()
			if w.reason != "" {
				return
			}
			key := string(raw)
			if bytes.IndexByte(raw, '\\') >= 0 {
				json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &key)
			}
			w.path = append(w.path, "."+key)
			if seen == nil {
				seen = map[string]bool{}
			}
			if seen[key] {
				w.fail("duplicate key")
				return
			}
			seen[key] = true
			w.space()
			if w.i < len(w.b) && w.b[w.i] == ':' {
				w.i++
			}
			w.value()
			w.path = w.path[:len(w.path)-1]
		}
	case '[':
		w.i++
		for n := 0; w.reason == ""; {
			w.space()
			if w.i >= len(w.b) {
				return
			}
			if w.b[w.i] == ']' {
				w.i++
				return
			}
			if w.b[w.i] == ',' {
				w.i++
				continue
			}
			w.path = append(w.path, "["+strconv.Itoa(n)+"]")
			w.value()
			w.path = w.path[:len(w.path)-1]
			n++
		}
	case '"':
		w.str()
	default: // a number or a literal
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			w.i++
		}
	}
}

// str reads a string at w.i and returns its raw contents (escapes kept);
// bytes that are not UTF-8 are an offence.
func (w *walker) str() []byte {
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		w.i = len(w.b)
		return nil
	}
	w.i++
	start := w.i
	ascii := true
	for w.i < len(w.b) {
		c := w.b[w.i]
		switch {
		case c == '\\':
			w.i += 2
			continue
		case c == '"':
			raw := w.b[start:w.i]
			w.i++
			if !ascii && !utf8.Valid(raw) {
				w.fail("not valid UTF-8")
			}
			return raw
		case c >= utf8.RuneSelf:
			ascii = false
		}
		w.i++
	}
	return nil
}
