package strictjson

import (
	"encoding/json"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Decoder is a strict RFC 8259 tokenizer with the interface of
// json.Decoder.Token/More (delimiters, keys and values as Tokens, numbers
// as their literal text, "," and ":" consumed and checked internally).
//
// It was written for policy.Parse: json.Decoder's Token method costs
// several hundred nanoseconds and allocations per token, which put a
// policy at ~15µs. A Decoder accepts exactly the texts json.Valid accepts
// (FuzzDecoder checks that) and resolves escapes as encoding/json does,
// with one difference: it never replaces anything with U+FFFD. Bytes that
// are not valid UTF-8 are kept as they are, and a \u escape of a lone
// surrogate becomes the three bytes a UTF-8 encoder would write for it
// (which are not valid UTF-8 either), so that the caller can refuse both
// (the one UTF-8 rule: a string must be valid UTF-8 after unescaping;
// [Check] applies it to every string and key). It reads each byte of its
// input a bounded number of times.
//
// The zero value is not usable; call [NewDecoder]. A Decoder is used by
// one goroutine.
type Decoder struct {
	data   []byte
	pos    int
	state  lexState
	stack  []byte // open containers, '[' or '{'
	noText bool   // Valid: numbers are checked, not copied
	buf    [8]byte
}

// Token is one lexed token, unboxed. Kind is '{', '}', '[', ']', 's'
// (string or key), 'n' (number), 't', 'f' (booleans) or '0' (null); Text
// returns a string's value or a number's literal.
//
// The zero value has Kind 0, which no lexed token has. A Token is a plain
// value; a string token may share bytes with the Decoder's input.
type Token struct {
	Kind byte // '{', '}', '[', ']', 's', 'n', 't', 'f' or '0'
	s    string
	raw  []byte // for a string of printable ASCII without escapes: its bytes, s unset
}

// Is reports whether t is a string token equal to w, without allocating.
func (t Token) Is(w string) bool {
	if t.Kind != 's' {
		return false
	}
	if t.raw != nil {
		return string(t.raw) == w
	}
	return t.s == w
}

// Text returns the value of an 's' token or the literal of an 'n' token
// ("" for other kinds).
func (t Token) Text() string {
	if t.raw != nil {
		return string(t.raw)
	}
	return t.s
}

// Value returns the token as encoding/json's Token would (json.Delim,
// string, json.Number, bool or nil), for error values.
func (t Token) Value() any {
	switch t.Kind {
	case '{', '}', '[', ']':
		return json.Delim(t.Kind)
	case 's':
		return t.Text()
	case 'n':
		return json.Number(t.s)
	case 't':
		return true
	case 'f':
		return false
	}
	return nil
}

// Bytes returns the bytes of a string token that needed no unescaping
// (printable ASCII), without allocating; ok is false for any other token,
// whose Text must be used instead.
func (t Token) Bytes() (b []byte, ok bool) { return t.raw, t.raw != nil }

// IsDelim reports whether t is one of '{', '}', '[', ']'.
func (t Token) IsDelim() bool {
	return t.Kind == '{' || t.Kind == '}' || t.Kind == '[' || t.Kind == ']'
}

type lexState uint8

const (
	lexTop         lexState = iota // before the top-level value
	lexTopDone                     // after the top-level value
	lexArrayStart                  // after '['
	lexArrayValue                  // after an array element
	lexArrayComma                  // after ',' in an array
	lexObjectStart                 // after '{'
	lexObjectKey                   // after a key
	lexObjectColon                 // after ':'
	lexObjectValue                 // after a member value
	lexObjectComma                 // after ',' in an object
)

// SyntaxError is a JSON syntax error at a byte offset of the input. It
// matches ErrSyntax with errors.Is.
type SyntaxError struct {
	Msg    string
	Offset int
}

// Is reports whether target is ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// Error returns the message and the offset, e.g. "invalid character 'x' at offset 3".
func (e *SyntaxError) Error() string {
	return e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// NewDecoder returns a Decoder reading data, which must not change while
// the Decoder is used.
func NewDecoder(data []byte) *Decoder {
	l := &Decoder{data: data}
	l.stack = l.buf[:0]
	return l
}

func (l *Decoder) errorf(msg string) error { return &SyntaxError{Msg: msg, Offset: l.pos} }

func (l *Decoder) badChar() error {
	c := l.data[l.pos]
	if c < utf8.RuneSelf {
		return l.errorf("invalid character " + strconv.QuoteRune(rune(c)))
	}
	r, _ := utf8.DecodeRune(l.data[l.pos:])
	return l.errorf("invalid character " + strconv.QuoteRune(r))
}

// peek skips white space and returns the next byte.
func (l *Decoder) peek() (byte, bool) {
	for l.pos < len(l.data) {
		switch c := l.data[l.pos]; c {
		case ' ', '\t', '\n', '\r':
			l.pos++
		default:
			return c, true
		}
	}
	return 0, false
}

// Offset returns the byte offset of the next unread byte.
func (l *Decoder) Offset() int { return l.pos }

// More reports whether the current array or object has another element.
func (l *Decoder) More() bool {
	c, ok := l.peek()
	return ok && c != ']' && c != '}'
}

func (l *Decoder) valueAllowed() bool {
	switch l.state {
	case lexTop, lexArrayStart, lexArrayComma, lexObjectColon:
		return true
	}
	return false
}

func (l *Decoder) afterValue() {
	switch {
	case len(l.stack) == 0:
		l.state = lexTopDone
	case l.stack[len(l.stack)-1] == '[':
		l.state = lexArrayValue
	default:
		l.state = lexObjectValue
	}
}

// Token returns the next token: a bracket or brace, a key or string, a
// number, a boolean or null. At the end of
// the input after a complete value it returns io.EOF.
func (l *Decoder) Token() (Token, error) {
	for {
		c, ok := l.peek()
		if !ok {
			if l.state == lexTopDone {
				return Token{}, io.EOF
			}
			return Token{}, l.errorf("unexpected end of JSON input")
		}
		switch c {
		case ',':
			switch l.state {
			case lexArrayValue:
				l.state = lexArrayComma
			case lexObjectValue:
				l.state = lexObjectComma
			default:
				return Token{}, l.badChar()
			}
			l.pos++
			continue
		case ':':
			if l.state != lexObjectKey {
				return Token{}, l.badChar()
			}
			l.state = lexObjectColon
			l.pos++
			continue
		case '[', '{':
			if !l.valueAllowed() {
				return Token{}, l.badChar()
			}
			l.pos++
			l.stack = append(l.stack, c)
			if c == '[' {
				l.state = lexArrayStart
			} else {
				l.state = lexObjectStart
			}
			return Token{Kind: c}, nil
		case ']':
			if l.state != lexArrayStart && l.state != lexArrayValue {
				return Token{}, l.badChar()
			}
			l.pos++
			l.stack = l.stack[:len(l.stack)-1]
			l.afterValue()
			return Token{Kind: c}, nil
		case '}':
			if l.state != lexObjectStart && l.state != lexObjectValue {
				return Token{}, l.badChar()
			}
			l.pos++
			l.stack = l.stack[:len(l.stack)-1]
			l.afterValue()
			return Token{Kind: c}, nil
		case '"':
			if l.state == lexObjectStart || l.state == lexObjectComma {
				if raw, ok := l.rawKey(); ok {
					l.state = lexObjectKey
					return Token{Kind: 's', raw: raw}, nil
				}
				s, err := l.str()
				if err != nil {
					return Token{}, err
				}
				l.state = lexObjectKey
				return Token{Kind: 's', s: s}, nil
			}
			if !l.valueAllowed() {
				return Token{}, l.badChar()
			}
			if raw, ok := l.rawKey(); ok {
				l.afterValue()
				return Token{Kind: 's', raw: raw}, nil
			}
			s, err := l.str()
			if err != nil {
				return Token{}, err
			}
			l.afterValue()
			return Token{Kind: 's', s: s}, nil
		}
		if !l.valueAllowed() {
			return Token{}, l.badChar()
		}
		var tok Token
		switch c {
		case 't':
			if !l.literal("true") {
				return Token{}, l.literalErr("true")
			}
			tok.Kind = 't'
		case 'f':
			if !l.literal("false") {
				return Token{}, l.literalErr("false")
			}
			tok.Kind = 'f'
		case 'n':
			if !l.literal("null") {
				return Token{}, l.literalErr("null")
			}
			tok.Kind = '0'
		default:
			if c != '-' && (c < '0' || c > '9') {
				return Token{}, l.badChar()
			}
			n, err := l.number()
			if err != nil {
				return Token{}, err
			}
			tok = Token{Kind: 'n', s: n}
		}
		l.afterValue()
		return tok, nil
	}
}

func (l *Decoder) literal(word string) bool {
	if len(l.data)-l.pos >= len(word) && string(l.data[l.pos:l.pos+len(word)]) == word {
		l.pos += len(word)
		return true
	}
	return false
}

func (l *Decoder) literalErr(word string) error {
	for i := 0; i < len(word); i++ {
		if l.pos >= len(l.data) {
			return l.errorf("unexpected end of JSON input")
		}
		if l.data[l.pos] != word[i] {
			return l.badChar()
		}
		l.pos++
	}
	return l.errorf("invalid literal")
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (l *Decoder) number() (string, error) {
	d := l.data
	start := l.pos
	i := l.pos
	if d[i] == '-' {
		i++
	}
	digits := func(i int) (int, bool) {
		j := i
		for j < len(d) && isDigitByte(d[j]) {
			j++
		}
		return j, j > i
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigitByte(d[i]):
		i, _ = digits(i)
	default:
		l.pos = i
		if i >= len(d) {
			return "", l.errorf("unexpected end of JSON input")
		}
		return "", l.badChar()
	}
	if i < len(d) && d[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			l.pos = i
			if i >= len(d) {
				return "", l.errorf("unexpected end of JSON input")
			}
			return "", l.badChar()
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			l.pos = i
			if i >= len(d) {
				return "", l.errorf("unexpected end of JSON input")
			}
			return "", l.badChar()
		}
	}
	l.pos = i
	if l.noText {
		return "", nil
	}
	return string(d[start:i]), nil
}

// rawKey returns the bytes of a string (key or value) without escapes, control characters
// or non-ASCII bytes, without allocating; ok is false (and nothing consumed)
// for any other string.
func (l *Decoder) rawKey() ([]byte, bool) {
	d := l.data
	for i := l.pos + 1; i < len(d); i++ {
		c := d[i]
		if c == '"' {
			raw := d[l.pos+1 : i : i]
			l.pos = i + 1
			return raw, true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return nil, false
}

// str scans a string starting at the opening quote and returns its value.
func (l *Decoder) str() (string, error) {
	d := l.data
	i := l.pos + 1
	start := i
	// fast path: no escapes, ASCII or valid UTF-8
	for i < len(d) {
		c := d[i]
		if c == '"' {
			l.pos = i + 1
			return string(d[start:i]), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	b := make([]byte, 0, i-start+16)
	b = append(b, d[start:i]...)
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			l.pos = i + 1
			return string(b), nil
		case c < 0x20:
			l.pos = i
			return "", l.errorf("invalid character " + strconv.QuoteRune(rune(c)) + " in string literal")
		case c == '\\':
			if i+1 >= len(d) {
				l.pos = len(d)
				return "", l.errorf("unexpected end of JSON input")
			}
			e := d[i+1]
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(d, i+2)
				if !ok {
					l.pos = i
					return "", l.errorf("invalid \\u escape in string literal")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						r2, ok = hex4(d, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
					} else {
						b = appendSurrogate(b, r)
					}
					continue
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				l.pos = i + 1
				return "", l.errorf("invalid escape " + strconv.QuoteRune(rune(e)) + " in string literal")
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			_, size := utf8.DecodeRune(d[i:])
			b = append(b, d[i:i+size]...) // invalid UTF-8 is kept, byte by byte
			i += size
		}
	}
	l.pos = len(d)
	return "", l.errorf("unexpected end of JSON input")
}

// appendSurrogate appends the generalized UTF-8 form of the lone surrogate
// r (U+D800..U+DFFF): three bytes that utf8.Valid rejects.
func appendSurrogate(b []byte, r rune) []byte {
	return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// Valid reports whether data is one complete JSON value, as json.Valid
// does (the two agree on every input).
func Valid(data []byte) bool {
	l := NewDecoder(data)
	l.noText = true
	for {
		_, err := l.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}
