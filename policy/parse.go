package policy

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/internal/suggest"
)

// Parse decodes and validates an OJS RetryPolicy JSON object, merges it over
// DefaultSpec (spec §8.1) and compiles it.
//
// An empty (or all white space) input, a top-level JSON null and {} all give
// the default policy (RK-09). Otherwise the input must be exactly one JSON
// object, and decoding is strict:
//
//   - only the seven OJS fields, the extension field backoff_strategy and
//     the retry extensions of docs/extensions.md (jitter_mode,
//     error_rules, max_retry_after, max_snoozes, max_snooze) are allowed;
//     any other key is an error naming it (RK-02), also inside an error
//     rule, whose members are match plus the backoff fields, max_attempts
//     and max_retry_after;
//   - a key given twice is an error, whichever value it has (RK-08);
//   - every field must have its JSON type; null is a wrong type, not a
//     request for the default (RK-09);
//   - max_attempts is a JSON number with an integral value (3, 3.0, 3e0)
//     from 0 to the largest int (RK-10);
//   - backoff_coefficient is a finite JSON number >= 1.0, compared exactly
//     on its decimal digits, for every strategy (RK-14);
//   - initial_interval and max_interval are ParseDuration strings,
//     initial_interval > 0 and max_interval >= initial_interval (RK-12);
//   - non_retryable_errors is an array of non-empty strings, not ".*"
//     alone (RK-15);
//   - on_exhaustion is "discard" or "dead_letter"; backoff_strategy is
//     "none", "linear", "exponential" or "polynomial";
//   - jitter_mode is "proportional", "full", "equal" or "decorrelated",
//     and a mode other than "proportional" needs jitter true;
//     max_retry_after and max_snooze are durations > 0, max_snoozes an
//     integer >= 0; error_rules holds at most MaxErrorRules objects, each
//     with a non-empty match list, its other fields merged over the
//     policy's (a rule without jitter inherits no jitter mode) and then
//     checked as the policy's are;
//   - nothing but white space may follow the object.
//
// Parse reports every problem it finds, not only the first, as one
// *ValidationError whose FieldErrors name the JSON path of each field
// ("non_retryable_errors[2]"); errors.Is(err, ErrInvalidPolicy) is true.
// The first MaxListedErrors problems are listed, the others counted. A
// JSON syntax error stops decoding; it is reported with the problems found
// before it.
//
// Parse and New apply the same rules: Parse(data) succeeds exactly when New
// succeeds on the Spec the JSON spells, and then both give Equal policies.
// A string in non_retryable_errors must be valid UTF-8: a byte sequence
// that is not, or a \u escape of a lone surrogate, is an error, never
// replaced by U+FFFD (RK-19).
//
// Limits (RK-20): a document of more than MaxDocumentSize bytes is refused
// before it is read (errors.Is ErrDocumentTooLarge); durations are at most
// MaxDurationLen bytes (ErrDurationTooLong); non_retryable_errors holds at
// most errmatch.MaxPatterns entries of at most errmatch.MaxPatternLen bytes
// (errmatch.ErrTooManyPatterns, errmatch.ErrPatternTooLong). Within them
// Parse costs time and memory linear in len(data): each byte is read once,
// and no field is parsed twice.
func Parse(data []byte) (*Policy, error) { return parse(data, parseConfig{}) }

func parse(data []byte, cfg parseConfig) (*Policy, error) {
	if len(data) > MaxDocumentSize {
		var c collector
		c.add(0, "", nil, "the document is "+strconv.Itoa(len(data))+" bytes, more than the limit of "+
			strconv.Itoa(MaxDocumentSize)+" bytes (policy.MaxDocumentSize)", ErrDocumentTooLarge)
		return nil, c.err()
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg.start(), nil
	}
	d := decoder{dec: strictjson.NewDecoder(data), cfg: cfg}
	s, ok := d.document()
	var rms []*errmatch.Matcher
	if !ok && len(d.c.errs) == 0 { // null
		return cfg.start(), nil
	}
	if ok {
		given := d.given
		if cfg.base != nil {
			given |= bMaxInterval // the base's max_interval is not the default
		}
		d.mergeRules(&s)
		rms = checkExtension(&s, &d.c, d.ruleBad)
		checkIntervals(&s, &d.c, given)
	}
	if err := d.c.err(); err != nil {
		return nil, err
	}
	return compile(s, d.m, rms)
}

// MaxDocumentSize is the largest policy document Parse reads, in bytes
// (16 MiB). A real policy is a few hundred bytes; the limit is there so that
// a document from an untrusted source has a bounded cost.
const MaxDocumentSize = 16 << 20

// ErrDocumentTooLarge is matched (besides ErrInvalidPolicy) by the error
// Parse returns for a document larger than MaxDocumentSize.
var ErrDocumentTooLarge = errors.New("policy: document too large")

// UnmarshalJSON sets p to Parse(data). JSON null gives the default policy
// (not a no-op, since RK-09 makes null an absent policy). It overwrites p, so
// use it only on a Policy nobody else reads yet; on error p is unchanged.
func (p *Policy) UnmarshalJSON(data []byte) error {
	q, err := Parse(data)
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

type decoder struct {
	cfg   parseConfig
	alias aliases // the binding dialect's keys seen (ParseWith, BindingDialect)
	dec   *strictjson.Decoder
	c     collector
	given fieldBit
	m     *errmatch.Matcher // compiled non_retryable_errors, if given and valid

	rules      []ruleDraft // error_rules as given
	rulesGiven bool        // error_rules was given
	rulesBad   bool        // error_rules had too many entries
	ruleBad    []fieldBit  // per merged rule, the fields with a problem
}

// syntax records a decoding error and reports false.
func (d *decoder) syntax(err error) bool {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	d.c.add(0, "", nil, "invalid JSON: "+err.Error(), err)
	return false
}

// document decodes the top-level value. ok is false for a top-level null
// (with no errors) or after a fatal error.
func (d *decoder) document() (s Spec, ok bool) {
	if d.cfg.base != nil {
		s = d.cfg.base.Spec()
	} else {
		s = DefaultSpec()
	}
	tok, err := d.dec.Token()
	if err != nil {
		return s, d.syntax(err)
	}
	switch tok.Kind {
	case '0':
		return s, d.end()
	case '{':
	default:
		d.c.add(0, "", tok.Value(), "must be a JSON object, got "+describe(tok), nil)
		if !d.skip(tok) {
			return s, false
		}
		d.end()
		return s, false
	}
	var unknown map[string]struct{} // unknown keys seen so far, after unescaping
	for d.dec.More() {
		kt, err := d.dec.Token()
		if err != nil {
			return s, d.syntax(err)
		}
		bit := fieldBitOf(kt) &^ bMatch // match belongs to error rules only
		key := fieldName(bit)
		if bit == 0 {
			key = kt.Text()
		}
		vt, err := d.dec.Token()
		if err != nil {
			return s, d.syntax(err)
		}
		if bit == 0 && d.cfg.binding {
			if handled, ok := d.dialect(key, vt); handled {
				if !ok {
					return s, false
				}
				continue
			}
		}
		switch {
		case bit == 0:
			field := key
			if key == "" {
				field = `""`
			}
			if d.c.full() {
				// Past the listed problems only the count matters, and
				// an unknown key is one problem whether or not it repeats.
				d.c.skip(0, 1)
			} else if _, dup := unknown[key]; dup {
				d.c.add(0, field, nil, "duplicate key", nil)
			} else {
				if unknown == nil {
					unknown = make(map[string]struct{})
				}
				unknown[key] = struct{}{}
				sug, _ := suggest.Closest(key, policyFieldNames)
				d.c.errs = append(d.c.errs, &FieldError{Field: field, Value: vt.Value(), Reason: unknownReason(sug), Err: ErrUnknownField, Suggestion: sug})
			}
		case d.given&bit != 0:
			d.c.add(bit, key, vt.Value(), "duplicate key", nil)
		default:
			d.given |= bit
			if !d.field(&s, key, bit, vt) {
				return s, false
			}
			continue
		}
		if !d.skip(vt) {
			return s, false
		}
	}
	if _, err := d.dec.Token(); err != nil { // '}'
		return s, d.syntax(err)
	}
	if d.alias.seen != 0 {
		d.reconcile(&s)
	}
	return s, d.end()
}

// end checks that nothing follows the top-level value.
func (d *decoder) end() bool {
	_, err := d.dec.Token()
	if err == io.EOF {
		return true
	}
	d.c.add(0, "", nil, "unexpected data after the policy object", err)
	return false
}

// skip consumes the rest of a value whose first token is tok.
func (d *decoder) skip(tok strictjson.Token) bool {
	depth := 0
	for {
		switch tok.Kind {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			return true
		}
		var err error
		tok, err = d.dec.Token()
		if err != nil {
			return d.syntax(err)
		}
	}
}

// fieldName returns the JSON name of a single-field bit.
func fieldName(bit fieldBit) string {
	for i, f := range fieldNames {
		if bit == 1<<i {
			return f
		}
	}
	return ""
}

// fieldBitOf returns the bit of a known key, 0 for any other.
func fieldBitOf(t strictjson.Token) fieldBit {
	if raw, ok := t.Bytes(); ok {
		return fieldBitOfString(string(raw)) // no allocation: the conversion does not escape
	}
	return fieldBitOfString(t.Text())
}

func fieldBitOfString(key string) fieldBit {
	switch key {
	case fMaxAttempts:
		return bMaxAttempts
	case fInitial:
		return bInitial
	case fCoefficient:
		return bCoefficient
	case fMaxInterval:
		return bMaxInterval
	case fJitter:
		return bJitter
	case fNonRetryable:
		return bNonRetryable
	case fOnExhaustion:
		return bOnExhaustion
	case fStrategy:
		return bStrategy
	case fJitterMode:
		return bJitterMode
	case fErrorRules:
		return bErrorRules
	case fMaxRetryAfter:
		return bMaxRetryAfter
	case fMaxSnoozes:
		return bMaxSnoozes
	case fMaxSnooze:
		return bMaxSnooze
	case fMatch:
		return bMatch
	}
	return 0
}

// fieldNames are the JSON names, in the order of their bits.
var fieldNames = [...]string{fMaxAttempts, fInitial, fCoefficient, fMaxInterval, fJitter, fNonRetryable, fOnExhaustion, fStrategy,
	fJitterMode, fErrorRules, fMaxRetryAfter, fMaxSnoozes, fMaxSnooze, fMatch}

// policyFieldNames are the fields of the policy object, for suggestions.
var policyFieldNames = fieldNames[:len(fieldNames)-1]

// unknownReason is the reason of an unknown key, with the known field
// suggest.Closest found for it ("" for none). Only the suggestion, a known
// name, is echoed: the key itself is the FieldError's Field, clipped there.
func unknownReason(suggestion string) string {
	if suggestion == "" {
		return "unknown field"
	}
	return "unknown field (did you mean " + strconv.Quote(suggestion) + "?)"
}

// describe renders a token the way it appeared in the JSON, for messages.
func describe(tok strictjson.Token) string {
	switch tok.Kind {
	case '0':
		return "null"
	case 'n':
		return clip(tok.Text())
	case 's':
		return strconv.Quote(clip(tok.Text()))
	case 't':
		return "true"
	case 'f':
		return "false"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "an unexpected value"
}

// got finishes a wrong-type reason: ", got X" plus a hint for null.
func got(tok strictjson.Token) string {
	if tok.Kind == '0' {
		return ", got null (omit the field to use the default)"
	}
	return ", got " + describe(tok)
}

// field decodes the value of a known field whose first token is tok into s.
// It reports false only after a fatal (syntax) error.
func (d *decoder) field(s *Spec, key string, bit fieldBit, tok strictjson.Token) bool {
	switch bit {
	case bMaxAttempts:
		if tok.Kind != 'n' {
			d.c.add(bit, key, tok.Value(), "must be a non-negative integer"+got(tok), nil)
			break
		}
		n := tok.Text()
		v, reason := parseJSONInt(n)
		if reason != "" {
			d.c.add(bit, key, tok.Value(), reason+", got "+clip(n), nil)
			break
		}
		s.MaxAttempts = v
	case bCoefficient:
		if tok.Kind != 'n' {
			d.c.add(bit, key, tok.Value(), "must be a number"+got(tok), nil)
			break
		}
		n := tok.Text()
		if !atLeastOne(n) {
			d.c.add(bit, key, tok.Value(), "must be >= 1.0, got "+clip(n), nil)
			break
		}
		dec := scanNumber(n)
		f, err := strconv.ParseFloat(dec.short(), 64)
		if err != nil || math.IsInf(f, 0) {
			d.c.add(bit, key, tok.Value(), "must be a finite number, got "+clip(n), err)
			break
		}
		s.BackoffCoefficient = f
	case bInitial, bMaxInterval:
		if tok.Kind != 's' {
			d.c.add(bit, key, tok.Value(), "must be an ISO 8601 duration string"+got(tok), nil)
			break
		}
		str := tok.Text()
		v, err := ParseDuration(str)
		if err != nil {
			var de *DurationError
			reason := err.Error()
			if errors.As(err, &de) {
				reason = de.detail()
			}
			d.c.add(bit, key, tok.Value(), reason, err)
			break
		}
		if v <= 0 {
			d.c.add(bit, key, tok.Value(), "must be greater than zero, got "+describe(tok), nil)
		} else if bit == bInitial {
			s.InitialInterval = v
		} else {
			s.MaxInterval = v
		}
	case bJitter:
		b := tok.Kind == 't'
		if tok.Kind != 't' && tok.Kind != 'f' {
			d.c.add(bit, key, tok.Value(), "must be a boolean"+got(tok), nil)
			break
		}
		s.Jitter = b
	case bOnExhaustion:
		switch {
		case tok.Is("discard"):
			s.OnExhaustion = Discard
		case tok.Is("dead_letter"):
			s.OnExhaustion = DeadLetter
		default:
			d.c.add(bit, key, tok.Value(), `must be "discard" or "dead_letter"`+got(tok), nil)
		}
	case bStrategy:
		if tok.Kind != 's' {
			d.c.add(bit, key, tok.Value(), `must be "none", "linear", "exponential" or "polynomial"`+got(tok), nil)
			break
		}
		st, err := strategyOf(tok)
		if err != nil {
			d.c.add(bit, key, tok.Value(), `must be "none", "linear", "exponential" or "polynomial"`+got(tok), err)
			break
		}
		s.Strategy = st
	case bNonRetryable:
		return d.patterns(s, key, tok)
	case bJitterMode, bErrorRules, bMaxRetryAfter, bMaxSnoozes, bMaxSnooze:
		return d.extensionField(s, key, bit, tok)
	}
	return d.skip(tok)
}

// strategyOf returns the strategy a backoff_strategy string token names,
// without allocating for the four valid names.
func strategyOf(tok strictjson.Token) (backoff.Strategy, error) {
	for _, st := range [...]backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial} {
		if tok.Is(st.String()) {
			return st, nil
		}
	}
	return backoff.ParseStrategy(tok.Text())
}

// patterns decodes non_retryable_errors. Every entry is checked: wrong types
// by position here, string entries through checkPatterns. Past
// errmatch.MaxPatterns entries nothing more is kept, only counted, so the
// memory used is bounded whatever the length of the array.
func (d *decoder) patterns(s *Spec, key string, tok strictjson.Token) bool {
	if tok.Kind != '[' {
		d.c.add(bNonRetryable, key, tok.Value(), "must be an array of strings"+got(tok), nil)
		return d.skip(tok)
	}
	var pats []string
	var idx []int
	i := 0
	for d.dec.More() {
		t, err := d.dec.Token()
		if err != nil {
			return d.syntax(err)
		}
		switch {
		case t.Kind == 's' && i < errmatch.MaxPatterns:
			if pats == nil {
				pats = make([]string, 0, 4)
			}
			pats = append(pats, t.Text())
			if idx != nil {
				idx = append(idx, i)
			}
		case t.Kind == 's':
		default:
			if idx == nil {
				// From now on positions in pats and in the array differ.
				idx = make([]int, len(pats), len(pats)+4)
				for k := range idx {
					idx[k] = k
				}
			}
			if d.c.full() {
				d.c.skip(bNonRetryable, 1)
			} else {
				d.c.add(bNonRetryable, key+"["+strconv.Itoa(i)+"]", t.Value(), "must be a string"+got(t), nil)
			}
			if !d.skip(t) {
				return false
			}
		}
		i++
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return d.syntax(err)
	}
	d.m = checkPatterns(pats, i, idx, &d.c)
	if pats == nil {
		pats = []string{}
	}
	s.NonRetryableErrors = pats
	return true
}

// parseJSONInt returns the value of a JSON number literal that must be an
// integer in [0, math.MaxInt], exactly: 3, 3.0, 3e0 and 30e-1 are 3; 2.5 is
// not an integer. reason is "" on success.
func parseJSONInt(s string) (int, string) {
	const notInt = "must be a non-negative integer"
	tooBig := func() string { return notInt + " no larger than " + strconv.Itoa(math.MaxInt) }
	dec := scanNumber(s)
	if dec.sig == 0 {
		return 0, ""
	}
	if dec.neg {
		return 0, notInt
	}
	if dec.scale < 0 {
		return 0, notInt
	}
	if int64(dec.sig)+dec.scale > 19 {
		return 0, tooBig()
	}
	var v uint64
	for k := 0; k < dec.sig; k++ {
		v = v*10 + uint64(dec.digit(k))
	}
	for k := int64(0); k < dec.scale; k++ {
		if v > math.MaxUint64/10 {
			return 0, tooBig()
		}
		v *= 10
	}
	if v > math.MaxInt {
		return 0, tooBig()
	}
	return int(v), ""
}

// atLeastOne reports whether the JSON number literal s is >= 1, exactly.
func atLeastOne(s string) bool {
	dec := scanNumber(s)
	// value = D × 10^scale with D having sig digits and a non-zero lead, so
	// value >= 1 exactly when sig-1+scale >= 0.
	return !dec.neg && dec.sig > 0 && int64(dec.sig)+dec.scale >= 1
}

// number is a JSON number literal as sig significant digits (leading and
// trailing zeros removed) times 10^scale.
type number struct {
	neg   bool
	intp  string // digits before '.'
	frac  string // digits after '.'
	first int    // index of the first significant digit in intp+frac
	sig   int    // number of significant digits; 0 for zero
	scale int64
}

// maxFloatDigits is how many significant digits short keeps: more than any
// float64 >= 1 or a midpoint between two of them needs (at most 309 integer
// plus 53 fraction digits), so rounding is unchanged.
const maxFloatDigits = 780

// short returns the literal's value as at most maxFloatDigits+1
// significant digits and an exponent, for strconv.ParseFloat, which
// misreads literals with hundreds of digits ("20" + 800 zeros + "e-800"
// reads as 0.2). A cut tail, never zero (the last significant digit is
// not), becomes a single 1 digit so rounding sees that it was there.
func (n *number) short() string {
	if n.sig == 0 {
		return "0"
	}
	k := min(n.sig, maxFloatDigits)
	b := make([]byte, 0, k+24)
	if n.neg {
		b = append(b, '-')
	}
	for i := range k {
		b = append(b, '0'+n.digit(i))
	}
	scale := n.scale + int64(n.sig-k)
	if k < n.sig {
		b = append(b, '1')
		scale--
	}
	b = append(b, 'e')
	return string(strconv.AppendInt(b, scale, 10))
}

// digit returns significant digit k.
func (n *number) digit(k int) byte {
	i := n.first + k
	if i < len(n.intp) {
		return n.intp[i] - '0'
	}
	return n.frac[i-len(n.intp)] - '0'
}

// scanNumber splits a literal already validated by encoding/json.
func scanNumber(s string) number {
	var n number
	if strings.HasPrefix(s, "-") {
		n.neg = true
		s = s[1:]
	}
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	n.intp = mant
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		n.intp, n.frac = mant[:i], mant[i+1:]
	}
	var e int64
	eneg := false
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		eneg = exp[0] == '-'
		exp = exp[1:]
	}
	for i := 0; i < len(exp); i++ {
		if e < 1<<40 {
			e = e*10 + int64(exp[i]-'0')
		}
	}
	if eneg {
		e = -e
	}
	total := len(n.intp) + len(n.frac)
	at := func(i int) byte {
		if i < len(n.intp) {
			return n.intp[i]
		}
		return n.frac[i-len(n.intp)]
	}
	first := 0
	for first < total && at(first) == '0' {
		first++
	}
	if first == total {
		return number{}
	}
	last := total - 1
	for at(last) == '0' {
		last--
	}
	n.first = first
	n.sig = last - first + 1
	trailing := total - 1 - last
	n.scale = e - int64(len(n.frac)) + int64(trailing)
	return n
}
