package strictjson_test

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
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
			case '{', '[':
				if top != nil && top.obj {
					top.key = true
				}
				stack = append(stack, &frame{obj: v == '{', keys: map[string]bool{}, key: true})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
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

// validUTF8Text reports whether the valid JSON text b is UTF-8 and holds
// no \u escape of a lone surrogate (a high one not followed by a low
// one, or a low one alone).
func validUTF8Text(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inStr {
			inStr = c == '"'
			continue
		}
		switch c {
		case '"':
			inStr = false
		case '\\':
			if b[i+1] != 'u' {
				i++
				continue
			}
			r := hex(b[i+2 : i+6])
			i += 5
			if !utf16.IsSurrogate(r) {
				continue
			}
			if r >= 0xDC00 || i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			r2 := hex(b[i+3 : i+7])
			if r2 < 0xDC00 || r2 > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
