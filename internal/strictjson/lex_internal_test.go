package strictjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// The lexer must accept exactly what encoding/json accepts and decode
// strings the same way, except that it keeps invalid UTF-8 and lone
// surrogates (as their 3-byte generalized UTF-8 form) where encoding/json
// writes U+FFFD (RK-19); asFFFD maps the lexer's result to encoding/json's.
func TestLexerMatchesEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `"x"`, ` {"a" : [1, 2, {"b": null}] } `,
		`{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`, `{:1}`, `{1:1}`, `[1 2]`, `{"a":1 "b":2}`,
		`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `NaN`, `Infinity`, `tru`, `nul`, `truex`, `"a`, `"\x"`, `"\u12"`,
		"\"\x01\"", "\"\t\"", "\xef\xbb\xbf{}", `{} {}`, `{}}`, `[[[]]]`, `[[[]]`, ``, ` `,
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\ud83d\u0041"`, "\"\xff\"", `"\/\b\f\n\r\t\"\\"`,
		`{"a\u0000b": 1}`, `{"é": 1}`,
	}
	for _, doc := range docs {
		if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid = %v", doc, got, want)
		}
	}
	for _, doc := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, "\"\xff\xfe\"", `"\/\b\f\n\r\t\"\\"`, `"a\u00e9"`, `"plain"`} {
		var want string
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		l := NewDecoder([]byte(doc))
		tok, err := l.Token()
		if err != nil || asFFFD(tok.Text()) != want {
			t.Errorf("%s: got %q, %v; want %q", doc, tok.Text(), err, want)
		}
	}
	for doc, want := range map[string]string{
		`"\ud83d"`: "\xed\xa0\xbd", `"\ude00"`: "\xed\xb8\x80", `"\ud83d\u0041"`: "\xed\xa0\xbdA",
		"\"\xff\xfe\"": "\xff\xfe", `"\ud83dx"`: "\xed\xa0\xbdx", `"\ud83d\ude00"`: "\U0001F600",
	} {
		tok, err := NewDecoder([]byte(doc)).Token()
		if err != nil || tok.Text() != want {
			t.Errorf("%s: got %q, %v; want %q", doc, tok.Text(), err, want)
		}
	}
}

// asFFFD replaces each lone-surrogate triple and each other invalid byte
// with U+FFFD, as encoding/json decodes them.
func asFFFD(s string) string {
	var b []rune
	for i := 0; i < len(s); {
		if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2]&0xC0 == 0x80 {
			b, i = append(b, utf8.RuneError), i+3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		b, i = append(b, r), i+size
	}
	return string(b)
}
