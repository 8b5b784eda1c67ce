package ojshttp

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// hasDuplicateKey reports whether a valid JSON text repeats a key in one
// object, reading it with encoding/json's tokenizer (an independent
// reader: keys compared decoded).
func hasDuplicateKey(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.obj && top.key
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
				continue
			case '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if isKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.obj {
			top.key = true
		}
	}
}

// FuzzStrictJSON: on any valid JSON text, strictJSON refuses exactly the
// texts with a repeated key or bytes that are not UTF-8, as an
// independent reader (encoding/json's tokenizer, utf8.Valid) sees them.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, "[\"\xff\"]",
		`{"\u0061":1,"a":2}`, `{"a":"\\\"","b":[]}`, "{\"k\xc3\":1}", `[1,2,{"x":null}]`, `"\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 || !json.Valid(b) {
			return
		}
		_, reason := strictJSON(b)
		want := !utf8.Valid(b) || hasDuplicateKey(b)
		if (reason != "") != want {
			t.Fatalf("strictJSON(%q) = %q, want refusal %v", b, reason, want)
		}
	})
}
