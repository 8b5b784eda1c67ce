package policy

import (
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/internal/suggest"
)

// ErrorRule gives the failures whose error type it matches their own
// attempt limit and backoff (docs/extensions.md §3.2). Its fields are
// complete values: Parse fills the ones a JSON rule leaves out from the
// policy (after the merge with the defaults), and [Spec.Rule] starts a
// rule in Go the same way.
//
// The zero value is not a valid rule (Match is empty, InitialInterval 0).
// An ErrorRule is a plain value; copying it shares Match.
type ErrorRule struct {
	// Match lists error types as non_retryable_errors does: exact names,
	// or prefixes ending in ".*"; at least one. JSON: match.
	Match []string
	// MaxAttempts is the job's attempt limit for a failure of a matching
	// type, counted over all its attempts; 0 behaves as 1.
	MaxAttempts int
	// InitialInterval, BackoffCoefficient, MaxInterval, Jitter,
	// JitterMode and Strategy are the rule's backoff, with the constraints
	// of the policy's fields of the same names.
	InitialInterval    time.Duration
	BackoffCoefficient float64
	MaxInterval        time.Duration
	Jitter             bool
	JitterMode         backoff.JitterMode
	Strategy           backoff.Strategy
	// MaxRetryAfter bounds a delay the handler asks for; 0 means the
	// policy's MaxRetryAfter, else this rule's MaxInterval.
	MaxRetryAfter time.Duration
}

// MaxErrorRules is the largest number of error rules a policy holds.
const MaxErrorRules = 64

// Rule returns an ErrorRule for the given patterns whose other fields are
// s's own: change the ones the rule needs.
func (s Spec) Rule(match ...string) ErrorRule {
	return ErrorRule{
		Match:              append([]string(nil), match...),
		MaxAttempts:        s.MaxAttempts,
		InitialInterval:    s.InitialInterval,
		BackoffCoefficient: s.BackoffCoefficient,
		MaxInterval:        s.MaxInterval,
		Jitter:             s.Jitter,
		JitterMode:         s.JitterMode,
		Strategy:           s.Strategy,
	}
}

// equal reports whether r and q hold the same values.
func (r *ErrorRule) equal(q *ErrorRule) bool {
	if r.MaxAttempts != q.MaxAttempts || r.InitialInterval != q.InitialInterval ||
		r.BackoffCoefficient != q.BackoffCoefficient || r.MaxInterval != q.MaxInterval ||
		r.Jitter != q.Jitter || r.JitterMode != q.JitterMode || r.Strategy != q.Strategy ||
		r.MaxRetryAfter != q.MaxRetryAfter || len(r.Match) != len(q.Match) {
		return false
	}
	for i := range r.Match {
		if r.Match[i] != q.Match[i] {
			return false
		}
	}
	return true
}

// extensionEqual compares the extension fields of two specs.
func extensionEqual(a, b *Spec) bool {
	if a.JitterMode != b.JitterMode || a.MaxRetryAfter != b.MaxRetryAfter || a.MaxSnoozes != b.MaxSnoozes ||
		a.MaxSnooze != b.MaxSnooze || len(a.ErrorRules) != len(b.ErrorRules) {
		return false
	}
	for i := range a.ErrorRules {
		if !a.ErrorRules[i].equal(&b.ErrorRules[i]) {
			return false
		}
	}
	return true
}

// validMode reports whether m is one of the four jitter modes.
func validMode(m backoff.JitterMode) bool { return m <= backoff.Decorrelated }

// rule is a compiled ErrorRule.
type rule struct {
	m  *errmatch.Matcher
	bo *backoff.Backoff
}

// ruleField names a field of error rule i.
func ruleField(i int, name string) string {
	return fErrorRules + "[" + strconv.Itoa(i) + "]." + name
}

// checkExtension applies the rules of docs/extensions.md to the extension
// fields of s, for New and Parse alike, and compiles each rule's Match.
// bad holds, for Parse, the fields of each rule that already had a problem
// (nil for New); their cross-field checks are skipped. It returns the
// matchers, nil after a problem.
func checkExtension(s *Spec, c *collector, bad []fieldBit) []*errmatch.Matcher {
	if !validMode(s.JitterMode) {
		c.add(bJitterMode, fJitterMode, s.JitterMode, `must be "proportional", "full", "equal" or "decorrelated", got `+s.JitterMode.String(), nil)
	} else if s.JitterMode != backoff.Proportional && !s.Jitter && c.bad&(bJitter|bJitterMode) == 0 {
		c.add(bJitterMode, fJitterMode, s.JitterMode.String(), `"`+s.JitterMode.String()+`" needs "jitter": true`, nil)
	}
	if s.MaxRetryAfter < 0 {
		c.add(bMaxRetryAfter, fMaxRetryAfter, s.MaxRetryAfter, "must not be negative, got "+formatDur(s.MaxRetryAfter), nil)
	}
	if s.MaxSnoozes < 0 {
		c.add(bMaxSnoozes, fMaxSnoozes, s.MaxSnoozes, "must be a non-negative integer, got "+strconv.Itoa(s.MaxSnoozes), nil)
	}
	if s.MaxSnooze < 0 {
		c.add(bMaxSnooze, fMaxSnooze, s.MaxSnooze, "must not be negative, got "+formatDur(s.MaxSnooze), nil)
	}
	if len(s.ErrorRules) > MaxErrorRules {
		c.add(bErrorRules, fErrorRules, nil, "at most "+strconv.Itoa(MaxErrorRules)+" rules (policy.MaxErrorRules), got "+strconv.Itoa(len(s.ErrorRules)), nil)
		return nil
	}
	var ms []*errmatch.Matcher
	ok := true
	for i := range s.ErrorRules {
		var b fieldBit
		if bad != nil {
			b = bad[i]
		}
		m := checkRule(&s.ErrorRules[i], i, c, b)
		ok = ok && m != nil
		ms = append(ms, m)
	}
	if !ok {
		return nil
	}
	return ms
}

// checkRule checks error rule i. Fields in bad already had a problem.
func checkRule(r *ErrorRule, i int, c *collector, bad fieldBit) *errmatch.Matcher {
	n := len(c.errs) + c.omitted
	if bad&bMaxAttempts == 0 && r.MaxAttempts < 0 {
		c.add(bErrorRules, ruleField(i, fMaxAttempts), r.MaxAttempts, "must be a non-negative integer, got "+strconv.Itoa(r.MaxAttempts), nil)
	}
	if bad&bInitial == 0 && r.InitialInterval <= 0 {
		c.add(bErrorRules, ruleField(i, fInitial), r.InitialInterval, "must be greater than zero, got "+formatDur(r.InitialInterval), nil)
		bad |= bInitial
	}
	switch k := r.BackoffCoefficient; {
	case bad&bCoefficient != 0:
	case math.IsNaN(k) || math.IsInf(k, 0):
		c.add(bErrorRules, ruleField(i, fCoefficient), k, "must be a finite number, got "+formatFloat(k), nil)
	case k < 1:
		c.add(bErrorRules, ruleField(i, fCoefficient), k, "must be >= 1.0, got "+formatFloat(k), nil)
	}
	switch {
	case bad&bMaxInterval != 0:
	case r.MaxInterval <= 0:
		c.add(bErrorRules, ruleField(i, fMaxInterval), r.MaxInterval, "must be greater than zero, got "+formatDur(r.MaxInterval), nil)
	case bad&bInitial == 0 && r.MaxInterval < r.InitialInterval:
		c.add(bErrorRules, ruleField(i, fMaxInterval), r.MaxInterval, "must be >= initial_interval "+formatDur(r.InitialInterval)+", got "+formatDur(r.MaxInterval), nil)
	}
	if _, err := backoff.ParseStrategy(r.Strategy.String()); bad&bStrategy == 0 && err != nil {
		c.add(bErrorRules, ruleField(i, fStrategy), r.Strategy, `must be "none", "linear", "exponential" or "polynomial", got `+r.Strategy.String(), err)
	}
	if bad&bJitterMode == 0 && !validMode(r.JitterMode) {
		c.add(bErrorRules, ruleField(i, fJitterMode), r.JitterMode, `must be "proportional", "full", "equal" or "decorrelated", got `+r.JitterMode.String(), nil)
	} else if r.JitterMode != backoff.Proportional && !r.Jitter && bad&(bJitter|bJitterMode) == 0 {
		c.add(bErrorRules, ruleField(i, fJitterMode), r.JitterMode.String(), `"`+r.JitterMode.String()+`" needs "jitter": true`, nil)
	}
	if bad&bMaxRetryAfter == 0 && r.MaxRetryAfter < 0 {
		c.add(bErrorRules, ruleField(i, fMaxRetryAfter), r.MaxRetryAfter, "must not be negative, got "+formatDur(r.MaxRetryAfter), nil)
	}
	var m *errmatch.Matcher
	if bad&bMatch == 0 {
		m = checkMatch(r.Match, i, c)
	}
	if len(c.errs)+c.omitted != n {
		return nil
	}
	return m
}

// checkMatch checks and compiles the match list of rule i.
func checkMatch(pats []string, i int, c *collector) *errmatch.Matcher {
	field := ruleField(i, fMatch)
	if len(pats) == 0 {
		c.add(bErrorRules, field, pats, "must list at least one error type", nil)
		return nil
	}
	for k, p := range pats {
		if !utf8.ValidString(p) {
			c.add(bErrorRules, field+"["+strconv.Itoa(k)+"]", p, "must be valid UTF-8, got "+strconv.Quote(clip(p)), nil)
			return nil
		}
	}
	m, err := errmatch.Compile(pats)
	if err == nil {
		return m
	}
	var ce *errmatch.CompileError
	if !errors.As(err, &ce) {
		c.add(bErrorRules, field, nil, err.Error(), err)
		return nil
	}
	for _, pe := range ce.Errors {
		c.add(bErrorRules, field+"["+strconv.Itoa(pe.Index)+"]", pe.Pattern, pe.Reason+", got "+strconv.Quote(clip(pe.Pattern)), pe)
	}
	c.skip(bErrorRules, ce.Omitted)
	return nil
}

// compileRules builds the backoff of each rule; ms are their matchers.
func compileRules(s *Spec, ms []*errmatch.Matcher, c *collector) []rule {
	if len(s.ErrorRules) == 0 {
		return nil
	}
	rules := make([]rule, len(s.ErrorRules))
	for i, r := range s.ErrorRules {
		bo, err := backoff.New(backoff.Config{Strategy: r.Strategy, Initial: r.InitialInterval,
			Coefficient: r.BackoffCoefficient, Max: r.MaxInterval, Jitter: r.Jitter, JitterMode: r.JitterMode})
		if err != nil {
			c.add(bErrorRules, ruleField(i, ""), nil, err.Error(), err)
			continue
		}
		rules[i] = rule{m: ms[i], bo: bo}
	}
	return rules
}

// ruleDraft is an error rule being parsed: the values given and which.
type ruleDraft struct {
	r     ErrorRule
	given fieldBit
	bad   fieldBit // fields with a problem
}

// extensionField decodes a top-level extension field.
func (d *decoder) extensionField(s *Spec, key string, bit fieldBit, tok strictjson.Token) bool {
	switch bit {
	case bJitterMode:
		if m, ok := d.jitterMode(key, bit, tok); ok {
			s.JitterMode = m
		}
	case bMaxRetryAfter:
		if v, ok := d.positiveDuration(key, bit, tok); ok {
			s.MaxRetryAfter = v
		}
	case bMaxSnooze:
		if v, ok := d.positiveDuration(key, bit, tok); ok {
			s.MaxSnooze = v
		}
	case bMaxSnoozes:
		if v, ok := d.nonNegativeInt(key, bit, tok); ok {
			s.MaxSnoozes = v
		}
	case bErrorRules:
		return d.errorRules(key, tok)
	}
	return d.skip(tok)
}

func (d *decoder) jitterMode(key string, bit fieldBit, tok strictjson.Token) (backoff.JitterMode, bool) {
	const want = `must be "proportional", "full", "equal" or "decorrelated"`
	if tok.Kind != 's' {
		d.c.add(bit, key, tok.Value(), want+got(tok), nil)
		return 0, false
	}
	for m := backoff.Proportional; m <= backoff.Decorrelated; m++ {
		if tok.Is(m.String()) {
			return m, true
		}
	}
	_, err := backoff.ParseJitterMode(tok.Text())
	d.c.add(bit, key, tok.Value(), want+got(tok), err)
	return 0, false
}

func (d *decoder) positiveDuration(key string, bit fieldBit, tok strictjson.Token) (time.Duration, bool) {
	if tok.Kind != 's' {
		d.c.add(bit, key, tok.Value(), "must be an ISO 8601 duration string"+got(tok), nil)
		return 0, false
	}
	v, err := ParseDuration(tok.Text())
	if err != nil {
		var de *DurationError
		reason := err.Error()
		if errors.As(err, &de) {
			reason = de.detail()
		}
		d.c.add(bit, key, tok.Value(), reason, err)
		return 0, false
	}
	if v <= 0 {
		d.c.add(bit, key, tok.Value(), "must be greater than zero, got "+describe(tok), nil)
		return 0, false
	}
	return v, true
}

func (d *decoder) nonNegativeInt(key string, bit fieldBit, tok strictjson.Token) (int, bool) {
	if tok.Kind != 'n' {
		d.c.add(bit, key, tok.Value(), "must be a non-negative integer"+got(tok), nil)
		return 0, false
	}
	v, reason := parseJSONInt(tok.Text())
	if reason != "" {
		d.c.add(bit, key, tok.Value(), reason+", got "+clip(tok.Text()), nil)
		return 0, false
	}
	return v, true
}

// errorRules decodes the error_rules array. Past MaxErrorRules entries the
// rest are read but not kept, and the count is one problem.
func (d *decoder) errorRules(key string, tok strictjson.Token) bool {
	if tok.Kind != '[' {
		d.c.add(bErrorRules, key, tok.Value(), "must be an array of objects"+got(tok), nil)
		return d.skip(tok)
	}
	n := 0
	for d.dec.More() {
		t, err := d.dec.Token()
		if err != nil {
			return d.syntax(err)
		}
		if n >= MaxErrorRules {
			if !d.skip(t) {
				return false
			}
			n++
			continue
		}
		if t.Kind != '{' {
			d.c.add(bErrorRules, key+"["+strconv.Itoa(n)+"]", t.Value(), "must be an object"+got(t), nil)
			d.rules = append(d.rules, ruleDraft{bad: ruleBits})
			if !d.skip(t) {
				return false
			}
			n++
			continue
		}
		if !d.errorRule(n, &d.rules) {
			return false
		}
		n++
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return d.syntax(err)
	}
	if n > MaxErrorRules {
		d.c.add(bErrorRules, key, nil, "at most "+strconv.Itoa(MaxErrorRules)+" rules (policy.MaxErrorRules), got "+strconv.Itoa(n), nil)
		d.rules = nil
		d.rulesBad = true
	}
	d.rulesGiven = true
	return true
}

// errorRule decodes the members of rule i, whose '{' was read.
func (d *decoder) errorRule(i int, out *[]ruleDraft) bool {
	var rd ruleDraft
	outer := d.c.bad
	d.c.bad = 0
	defer func() { d.c.bad = outer | d.c.bad&^ruleBits }()
	var unknown map[string]struct{}
	for d.dec.More() {
		kt, err := d.dec.Token()
		if err != nil {
			return d.syntax(err)
		}
		bit := fieldBitOf(kt)
		name := fieldName(bit)
		if bit == 0 || bit&ruleBits == 0 {
			name = kt.Text()
		}
		key := ruleField(i, name)
		vt, err := d.dec.Token()
		if err != nil {
			return d.syntax(err)
		}
		switch {
		case bit&ruleBits == 0:
			if _, dup := unknown[name]; dup {
				d.c.add(0, key, nil, "duplicate key", nil)
			} else if d.c.full() {
				d.c.skip(0, 1)
			} else {
				if unknown == nil {
					unknown = make(map[string]struct{})
				}
				unknown[name] = struct{}{}
				reason := "unknown field of an error rule"
				if bit != 0 {
					reason = "not allowed in an error rule (it is the policy's alone)"
				}
				sug := ""
				if bit == 0 {
					sug, _ = suggest.Closest(name, ruleFieldNames[:])
					if sug != "" {
						reason += " (did you mean " + strconv.Quote(sug) + "?)"
					}
				}
				d.c.errs = append(d.c.errs, &FieldError{Field: key, Value: vt.Value(), Reason: reason, Err: ErrUnknownField, Suggestion: sug})
			}
		case rd.given&bit != 0:
			d.c.add(bit, key, vt.Value(), "duplicate key", nil)
		default:
			rd.given |= bit
			before := d.c.bad
			var ok bool
			if bit == bMatch {
				ok = d.ruleMatch(&rd, key, vt)
			} else {
				ok = d.ruleValue(&rd, key, bit, vt)
			}
			if !ok {
				return false
			}
			rd.bad |= d.c.bad &^ before
			continue
		}
		if !d.skip(vt) {
			return false
		}
	}
	if _, err := d.dec.Token(); err != nil { // '}'
		return d.syntax(err)
	}
	if rd.given&bMatch == 0 {
		d.c.add(bMatch, ruleField(i, fMatch), nil, "required: the error types the rule applies to", nil)
		rd.bad |= bMatch
	}
	*out = append(*out, rd)
	return true
}

// ruleFieldNames are the members of an error rule, for suggestions.
var ruleFieldNames = [...]string{fMatch, fMaxAttempts, fInitial, fCoefficient, fMaxInterval, fJitter, fJitterMode, fStrategy, fMaxRetryAfter}

// ruleValue decodes a rule's field other than match into rd.
func (d *decoder) ruleValue(rd *ruleDraft, key string, bit fieldBit, tok strictjson.Token) bool {
	switch bit {
	case bJitterMode:
		if m, ok := d.jitterMode(key, bit, tok); ok {
			rd.r.JitterMode = m
		}
		return d.skip(tok)
	case bMaxRetryAfter:
		if v, ok := d.positiveDuration(key, bit, tok); ok {
			rd.r.MaxRetryAfter = v
		}
		return d.skip(tok)
	}
	// The policy's own fields: decode through a scratch Spec.
	var s Spec
	if !d.field(&s, key, bit, tok) {
		return false
	}
	switch bit {
	case bMaxAttempts:
		rd.r.MaxAttempts = s.MaxAttempts
	case bInitial:
		rd.r.InitialInterval = s.InitialInterval
	case bCoefficient:
		rd.r.BackoffCoefficient = s.BackoffCoefficient
	case bMaxInterval:
		rd.r.MaxInterval = s.MaxInterval
	case bJitter:
		rd.r.Jitter = s.Jitter
	case bStrategy:
		rd.r.Strategy = s.Strategy
	}
	return true
}

// ruleMatch decodes a rule's match list; a non-string entry marks it bad.
func (d *decoder) ruleMatch(rd *ruleDraft, key string, tok strictjson.Token) bool {
	if tok.Kind != '[' {
		d.c.add(bMatch, key, tok.Value(), "must be an array of strings"+got(tok), nil)
		return d.skip(tok)
	}
	pats := []string{}
	k := 0
	for d.dec.More() {
		t, err := d.dec.Token()
		if err != nil {
			return d.syntax(err)
		}
		switch {
		case t.Kind != 's':
			d.c.add(bMatch, key+"["+strconv.Itoa(k)+"]", t.Value(), "must be a string"+got(t), nil)
			if !d.skip(t) {
				return false
			}
		case k < errmatch.MaxPatterns:
			pats = append(pats, t.Text())
		}
		k++
	}
	if _, err := d.dec.Token(); err != nil { // ']'
		return d.syntax(err)
	}
	if k > errmatch.MaxPatterns {
		d.c.add(bMatch, key, nil, "at most "+strconv.Itoa(errmatch.MaxPatterns)+" patterns (errmatch.MaxPatterns), got "+strconv.Itoa(k), errmatch.ErrTooManyPatterns)
	}
	rd.r.Match = pats
	return true
}

// mergeRules fills the fields each parsed rule left out from s, the
// policy after its merge with the defaults, and stores the rules in s.
func (d *decoder) mergeRules(s *Spec) {
	if !d.rulesGiven || d.rulesBad {
		return
	}
	s.ErrorRules = make([]ErrorRule, len(d.rules))
	d.ruleBad = make([]fieldBit, len(d.rules))
	for i, rd := range d.rules {
		r, g := rd.r, rd.given
		if g&bMaxAttempts == 0 {
			r.MaxAttempts = s.MaxAttempts
		}
		if g&bInitial == 0 {
			r.InitialInterval = s.InitialInterval
		}
		if g&bCoefficient == 0 {
			r.BackoffCoefficient = s.BackoffCoefficient
		}
		if g&bMaxInterval == 0 {
			r.MaxInterval = s.MaxInterval
		}
		if g&bJitter == 0 {
			r.Jitter = s.Jitter
		}
		if g&bJitterMode == 0 && r.Jitter {
			// A rule without jitter inherits no jitter mode: it would
			// only make the rule invalid.
			r.JitterMode = s.JitterMode
		}
		if g&bStrategy == 0 {
			r.Strategy = s.Strategy
		}
		s.ErrorRules[i] = r
		// An inherited field that is bad at the top level is not
		// reported again under the rule.
		d.ruleBad[i] = rd.bad | d.c.bad&^g&ruleBits
	}
}

// boundOr returns b, or def when b is 0 (not given).
func boundOr(b, def time.Duration) time.Duration {
	if b == 0 {
		return def
	}
	return b
}

// ruleFor returns the 1-based index of the first error rule whose match
// matches errType, 0 for none.
func (p *Policy) ruleFor(errType string) int {
	for i := range p.rules {
		if p.rules[i].m.Match(errType) {
			return i + 1
		}
	}
	return 0
}

// RuleFor returns the 1-based index in Spec().ErrorRules of the error rule
// a failure of type errType would be decided by, 0 when
// none matches. It does not look at non_retryable_errors, which come first.
// A nil or zero Policy has no rules.
func (p *Policy) RuleFor(errType string) int { return p.get().ruleFor(errType) }

// BackoffFor returns the delay calculator of the rule in force for errType
// (RuleFor), or the policy's own when none matches. It is immutable and
// shared.
func (p *Policy) BackoffFor(errType string) *backoff.Backoff {
	p = p.get()
	if i := p.ruleFor(errType); i > 0 {
		return p.rules[i-1].bo
	}
	return p.bo
}

// checkExtensionFailure checks the extension fields of a Failure.
func checkExtensionFailure(f *Failure) error {
	switch {
	case f.Request.Kind > errmatch.Snooze:
		return &FailureError{Field: "request", Value: f.Request.Kind, Reason: "unknown request kind " + f.Request.Kind.String()}
	case f.Request.Kind != errmatch.NoRequest && f.Request.Delay < 0:
		return &FailureError{Field: f.Request.Kind.String(), Value: f.Request.Delay, Reason: "must not be negative, got " + f.Request.Delay.String()}
	case f.PrevDelay < 0:
		return &FailureError{Field: "prev_delay", Value: f.PrevDelay, Reason: "must not be negative, got " + f.PrevDelay.String()}
	case f.Snoozes < 0:
		return &FailureError{Field: "snoozes", Value: f.Snoozes, Reason: "must not be negative, got " + strconv.Itoa(f.Snoozes)}
	}
	return nil
}

// Decorrelated reports whether the policy or one of its error rules uses
// decorrelated jitter, whose delay grows from the previous one: a caller
// that keeps retry state needs to keep Failure.PrevDelay only then.
func (p *Policy) Decorrelated() bool {
	p = p.get()
	if p.spec.Jitter && p.spec.JitterMode == backoff.Decorrelated {
		return true
	}
	for i := range p.spec.ErrorRules {
		if r := &p.spec.ErrorRules[i]; r.Jitter && r.JitterMode == backoff.Decorrelated {
			return true
		}
	}
	return false
}
