package policy

import (
	"encoding/json"
	"testing"
)

// The lexer must accept exactly what encoding/json accepts and decode
// strings the same way.
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
		if got, want := validJSON([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid = %v", doc, got, want)
		}
	}
	for _, doc := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, "\"\xff\xfe\"", `"\/\b\f\n\r\t\"\\"`, `"a\u00e9"`, `"plain"`} {
		var want string
		if err := json.Unmarshal([]byte(doc), &want); err != nil {
			t.Fatal(err)
		}
		l := newLexer([]byte(doc))
		tok, err := l.Token()
		if err != nil || tok.text() != want {
			t.Errorf("%s: got %q, %v; want %q", doc, tok.text(), err, want)
		}
	}
}
