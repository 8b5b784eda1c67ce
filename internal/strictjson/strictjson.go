// Package strictjson is retrykit's one strict JSON reader: every JSON
// input of the project (retry policies, time budgets, replay rules, every
// request body of the HTTP server, the adapter protocol) is read through
// it, so the same text is accepted or refused the same way on every path.
//
// The rules, applied to the whole text whatever part of it the caller
// reads:
//
//  1. The text is one JSON value (RFC 8259), nothing but white space
//     after it; json.Valid and [Valid] agree on every input.
//  2. Every string and key is valid UTF-8 after unescaping: a byte
//     sequence that is not, or a \u escape of a lone surrogate, is
//     refused, never replaced by U+FFFD.
//  3. No object holds the same key twice (compared after unescaping).
//     With [FoldKeys], two keys that differ only in case are refused too,
//     where encoding/json would match both to one struct field.
//  4. An integer is a JSON number with an integral value: 3, 3.0, 3e0 and
//     30e-1 are 3, 2.5 is not an integer (docs/decisions.md RK-10); [Int]
//     and [IntLiteral] are the one integer rule.
//
// Entry points: [Check] applies rules 1 to 3 and names the path of the
// first offence in a *[FieldError]; [Object] and [Array] split a checked
// value into its members; [Int], [String], [Bool] and [Describe] read and
// describe one member's value; [Decoder] is the allocation-free tokenizer
// under all of them, which policy.Parse drives directly.
//
// Non-goals: streaming (the whole text is in memory), numbers other than
// integers (callers read floats from the literal), encoding.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Member is one key and its raw value, as written.
//
// The zero value is the empty key with no value. A Member is a plain value.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ErrSyntax is matched (errors.Is) by every error of Check and Object: the
// text is not one well-formed JSON value read strictly. The more specific
// ErrDuplicateKey and ErrInvalidUTF8 are matched as well where they apply.
var ErrSyntax = errors.New("not a strict JSON object")

// ErrDuplicateKey is matched by the error for a key given twice in one
// object (or, with FoldKeys, twice up to case).
var ErrDuplicateKey = errors.New("duplicate key")

// ErrInvalidUTF8 is matched by the error for a string or key that is not
// valid UTF-8.
var ErrInvalidUTF8 = errors.New("not valid UTF-8")

// FieldError is the one error shape of the reader: the path of the
// offending value and what is wrong with it. It matches ErrSyntax with
// errors.Is, and Unwrap returns the cause (ErrDuplicateKey,
// ErrInvalidUTF8, a *SyntaxError, or nil).
//
// A FieldError is not changed after it is returned; it is safe to read
// from several goroutines. The zero value is a problem with the whole text
// and no reason.
type FieldError struct {
	// Path is the offending value's path, keys joined by '.' and indexes
	// in brackets ("options.retry.max_attempts", "jobs[2].args"), or ""
	// for the text as a whole (bad syntax, not an object). It is valid
	// UTF-8: a key that is not has each bad byte shown as U+FFFD.
	Path string
	// Reason says what is wrong: "duplicate key", "not valid UTF-8",
	// "invalid JSON: invalid character 'x' at offset 3", ….
	Reason string
	// Err is the cause, or nil.
	Err error
}

// Error returns "PATH: REASON", or REASON alone for the whole text.
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// Is reports whether target is ErrSyntax.
func (e *FieldError) Is(target error) bool { return target == ErrSyntax }

// Unwrap returns the cause, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// Option changes what Check refuses.
type Option func(*checkConfig)

type checkConfig struct{ foldDepth, carrier int }

// CarrierOnly is for a text that carries payloads for another reader to
// judge, as the adapter protocol carries the policies and strings a
// conformance vector sends to the implementation under test: rules 2 and
// 3 then apply only to the keys of the objects down to depth levels (the
// carrier's own fields); string values and deeper objects are passed on
// as written, for their reader to refuse. Rule 1 still applies to the
// whole text.
func CarrierOnly(depth int) Option { return func(c *checkConfig) { c.carrier = depth } }

// FoldKeys refuses, in the objects up to depth levels deep (1: the
// top-level object only), two keys that are equal under Unicode case
// folding but not equal: encoding/json matches struct fields without
// regard to case, so {"queues":…,"QUEUES":…} would reach one field twice.
// Objects deeper down (caller data such as args and meta) are not folded.
func FoldKeys(depth int) Option { return func(c *checkConfig) { c.foldDepth = depth } }

// Check applies rules 1 to 3 of the package doc to data and returns nil,
// or a *FieldError naming the path of the first offence in document
// order. It reads each byte of data a bounded number of times and keeps
// the keys of the objects being read.
func Check(data []byte, opts ...Option) error {
	var cfg checkConfig
	for _, o := range opts {
		o(&cfg)
	}
	c := checker{d: NewDecoder(data), fold: cfg.foldDepth, carrier: cfg.carrier}
	c.d.noText = true // numbers are checked, never read
	return c.run()
}

// frame is one open container while Check reads.
type frame struct {
	array bool
	index int      // next element index (arrays)
	keys  []string // keys seen so far (objects)
	set   map[string]struct{}
	key   string // the current member's key
}

type checker struct {
	d       *Decoder
	stack   []frame
	fold    int
	carrier int // 0: check everything
}

func (c *checker) path() string {
	var b []byte
	for i := range c.stack {
		f := &c.stack[i]
		if f.array {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index-1), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, f.key...)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func (c *checker) run() error {
	for {
		tok, err := c.d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &FieldError{Reason: "invalid JSON: " + err.Error(), Err: err}
		}
		var top *frame
		if n := len(c.stack); n > 0 {
			top = &c.stack[n-1]
		}
		if top != nil && !top.array && c.d.state == lexObjectKey {
			// tok is a key
			key := tok.Text()
			top.key = key
			if c.carrier > 0 && len(c.stack) > c.carrier {
				continue
			}
			if !utf8.ValidString(key) {
				return &FieldError{Path: c.path(), Reason: "not valid UTF-8", Err: ErrInvalidUTF8}
			}
			if reason := top.add(key, len(c.stack) <= c.fold); reason != "" {
				return &FieldError{Path: c.path(), Reason: reason, Err: ErrDuplicateKey}
			}
			continue
		}
		if top != nil && top.array && tok.Kind != ']' {
			top.index++
		}
		switch tok.Kind {
		case '{':
			c.stack = append(c.stack, frame{})
		case '[':
			c.stack = append(c.stack, frame{array: true})
		case '}', ']':
			c.stack = c.stack[:len(c.stack)-1]
		case 's':
			if _, ascii := tok.Bytes(); !ascii && c.carrier == 0 && !utf8.ValidString(tok.s) {
				return &FieldError{Path: c.path(), Reason: "not valid UTF-8", Err: ErrInvalidUTF8}
			}
		}
	}
}

// add records key in an object and returns why it is refused, or "".
func (f *frame) add(key string, fold bool) string {
	if f.set != nil {
		if _, dup := f.set[key]; dup {
			return "duplicate key"
		}
	} else {
		for _, k := range f.keys {
			if k == key {
				return "duplicate key"
			}
		}
	}
	if fold {
		for _, k := range f.keys {
			if strings.EqualFold(k, key) {
				return "duplicate key (differs only in case from " + strconv.Quote(clip(k)) + ")"
			}
		}
	}
	if f.set == nil && len(f.keys) < 16 || fold {
		f.keys = append(f.keys, key)
		return ""
	}
	if f.set == nil {
		f.set = make(map[string]struct{}, 2*len(f.keys))
		for _, k := range f.keys {
			f.set[k] = struct{}{}
		}
		f.keys = nil
	}
	f.set[key] = struct{}{}
	return ""
}

// Object checks data (rules 1 to 3) and returns the members of the JSON
// object it holds, in document order, with the values as written. It
// refuses, with a *FieldError that matches ErrSyntax: what Check refuses,
// a value that is not an object, and more than maxMembers members.
func Object(data []byte, maxMembers int) ([]Member, error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	d := NewDecoder(data)
	tok, _ := d.Token()
	if tok.Kind != '{' {
		return nil, &FieldError{Reason: "must be a JSON object, got " + describeToken(tok)}
	}
	var out []Member
	for d.More() {
		kt, _ := d.Token()
		if len(out) == maxMembers {
			return nil, &FieldError{Reason: "more than " + strconv.Itoa(maxMembers) + " members"}
		}
		start, end := d.value()
		out = append(out, Member{Key: kt.Text(), Value: json.RawMessage(data[start:end:end])})
	}
	return out, nil
}

// value skips the value that starts at the next token of a valid text and
// returns its byte range.
func (d *Decoder) value() (start, end int) {
	for {
		c, _ := d.peek()
		if c == ':' && d.state == lexObjectKey {
			d.state = lexObjectColon
		} else if c == ',' && d.state == lexArrayValue {
			d.state = lexArrayComma
		} else {
			break
		}
		d.pos++
	}
	start = d.pos
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return start, d.pos
		}
		switch tok.Kind {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			return start, d.pos
		}
	}
}

// Array returns the elements of the JSON array raw (a valid value, as a
// Member's Value is), or ok false when raw is not an array or has more than
// maxElems elements.
func Array(raw json.RawMessage, maxElems int) (elems []json.RawMessage, ok bool) {
	if !Valid(raw) {
		return nil, false
	}
	d := NewDecoder(raw)
	if tok, _ := d.Token(); tok.Kind != '[' {
		return nil, false
	}
	for d.More() {
		if len(elems) == maxElems {
			return nil, false
		}
		start, end := d.value()
		elems = append(elems, json.RawMessage(raw[start:end:end]))
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

func describeToken(tok Token) string {
	switch tok.Kind {
	case '[':
		return "an array"
	case 's':
		return "a string"
	case 't':
		return "true"
	case 'f':
		return "false"
	case '0':
		return "null"
	}
	return "a number"
}

// String returns the value of a raw JSON string, or ok false when raw is
// not one string that is valid UTF-8.
func String(raw json.RawMessage) (s string, ok bool) {
	d := NewDecoder(raw)
	tok, err := d.Token()
	if err != nil || tok.Kind != 's' {
		return "", false
	}
	if _, err := d.Token(); err != io.EOF {
		return "", false
	}
	s = tok.Text()
	return s, utf8.ValidString(s)
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

// IntResult says how a number literal fared against an integer range.
type IntResult uint8

// The results of IntLiteral.
const (
	IntOK         IntResult = iota // an integer in range
	IntNotInteger                  // not a number literal, or a number with a fractional part
	IntBelowRange                  // an integer below lo
	IntAboveRange                  // an integer above hi
)

// IntLiteral reads a JSON number literal (as Token.Text gives it, a string
// or bytes) as an integer in [lo, hi] exactly, under RK-10: 3, 3.0, 3e0
// and 30e-1 are 3; 2.5 and 1e-1 are not integers. It reads each byte once,
// whatever the exponent, never overflows and does not allocate.
func IntLiteral[T string | []byte](s T, lo, hi int64) (int64, IntResult) {
	if len(s) == 0 || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return 0, IntNotInteger
	}
	n := scan(s)
	if n.sig == 0 {
		return clampZero(lo, hi)
	}
	if n.scale < 0 {
		return 0, IntNotInteger
	}
	out := func() (int64, IntResult) {
		if n.neg {
			return 0, IntBelowRange
		}
		return 0, IntAboveRange
	}
	// value = sig digits × 10^scale, without leading or trailing zeros.
	if int64(n.sig)+n.scale > 19 {
		return out()
	}
	var u uint64
	for k := 0; k < n.sig; k++ {
		u = u*10 + uint64(digitAt(&n, s, k))
	}
	for k := int64(0); k < n.scale; k++ {
		u *= 10 // at most 19 digits in all: no overflow of uint64
	}
	var v int64
	switch {
	case !n.neg && u > 1<<63-1, n.neg && u > 1<<63:
		return out()
	case n.neg:
		v = -int64(u-1) - 1
	default:
		v = int64(u)
	}
	if v < lo {
		return 0, IntBelowRange
	}
	if v > hi {
		return 0, IntAboveRange
	}
	return v, IntOK
}

func clampZero(lo, hi int64) (int64, IntResult) {
	switch {
	case 0 < lo:
		return 0, IntBelowRange
	case 0 > hi:
		return 0, IntAboveRange
	}
	return 0, IntOK
}

// Int returns the value of a raw JSON number that is an integer in
// [lo, hi] exactly (IntLiteral's rule). reason is "" on success, else what
// is wrong, e.g. "must be an integer, got the number 2.5" or "must be an
// integer from 1 to 100, got the number 1e9".
func Int(raw json.RawMessage, lo, hi int64) (v int64, reason string) {
	s := string(bytes.TrimSpace(raw))
	range_ := "from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10)
	if !Valid([]byte(s)) {
		return 0, "must be an integer " + range_ + ", got " + Describe(raw)
	}
	v, res := IntLiteral(s, lo, hi)
	switch res {
	case IntOK:
		return v, ""
	case IntNotInteger:
		if len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
			return 0, "must be an integer, got " + Describe(raw)
		}
	}
	return 0, "must be an integer " + range_ + ", got " + Describe(raw)
}

// literal is a JSON number literal as sig significant digits (no leading
// or trailing zeros; 0 for zero) times 10^scale. A huge exponent (beyond
// 2^40) saturates scale far past any range IntLiteral accepts, keeping its
// sign.
type literal struct {
	neg             bool
	intEnd, fracBeg int // the integer digits are s[start:intEnd], the fraction's s[fracBeg:fracEnd]
	start, fracEnd  int
	first, sig      int // index of the first significant digit among all digits; their count
	scale           int64
}

// digitAt returns significant digit k of the literal s that n describes.
func digitAt[T string | []byte](n *literal, s T, k int) byte {
	k += n.first
	if nInt := n.intEnd - n.start; k < nInt {
		return s[n.start+k] - '0'
	} else {
		return s[n.fracBeg+k-nInt] - '0'
	}
}

func scan[T string | []byte](s T) literal {
	var n literal
	i := 0
	if s[0] == '-' {
		n.neg = true
		i++
	}
	n.start = i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n.intEnd = i
	n.fracBeg, n.fracEnd = i, i
	if i < len(s) && s[i] == '.' {
		i++
		n.fracBeg = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n.fracEnd = i
	}
	var exp int64
	huge := false
	eneg := false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if exp > 1<<40 {
				huge = true
				continue
			}
			exp = exp*10 + int64(s[i]-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	nInt, nFrac := n.intEnd-n.start, n.fracEnd-n.fracBeg
	total := nInt + nFrac
	at := func(k int) byte {
		if k < nInt {
			return s[n.start+k]
		}
		return s[n.fracBeg+k-nInt]
	}
	first := 0
	for first < total && at(first) == '0' {
		first++
	}
	if first == total {
		return literal{} // zero, whatever the exponent
	}
	last := total - 1
	for at(last) == '0' {
		last--
	}
	n.first, n.sig = first, last-first+1
	switch {
	case huge && eneg:
		n.scale = -1 << 50
	case huge:
		n.scale = 1 << 50
	default:
		n.scale = exp - int64(nFrac) + int64(total-1-last)
	}
	return n
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
