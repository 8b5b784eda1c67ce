package diagnose

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// bug is one broken rule of the engine. An engine with no bug answers
// every vector of the suite as the reference does (TestBaselinePasses).
type bug uint16

const (
	noBug bug = iota
	// policy and defaults
	bugNoMerge
	bugNoOnExhaustion
	bugNoDupCheck
	bugUnknownFieldsIgnored
	// arithmetic
	bugNoPostCap
	bugJitterBeforeCap
	bugAdditiveJitter
	bugFloatSeconds
	bugFloatMillis
	bugRoundMillis
	bugFloat53
	bugPowDrift
	bugAttemptFrom0
	// strategy
	bugUnknownStrategyExp
	bugPolynomialUnsupported
	bugStrategyIgnored
	// durations
	bugDurEmpty
	bugDurWeeks
	bugDurLower
	bugDurComma
	bugDurNoUpperBound
	bugDurDateZero
	bugZeroInterval
	// matching
	bugRegexMatch
	bugPrefixNoDot
	bugNoPrefix
	// validation of one field or input
	bugNoCheckMaxAttempts
	bugNoCheckCoefficient
	bugNoCheckMaxInterval
	bugNoCheckJitter
	bugNoCheckPatterns
	bugNoCheckOnExhaustion
	bugNoCheckAttempt
	bugNoValidation
	bugInvalidDefaulted
	bugDurNoYearMonth
	bugDurRegexLenient
	bugNoneUnsupported
	bugNoMergeFallbacks
	bugDurTimeOnly
	bugDurZeroRejected
	bugBarePrefixMatch
	bugZeroAttemptsRejected
	bugDurShorthand
	bugMonth30Days
	bugDurNoFraction
	// timeouts and dead-letter extensions
	bugBudgetInclusive
	bugTimeoutNotAttempt
	bugReplayOffByOne
	bugNoStrategyExtension
	bugRegexLiteralFallback
	bugDurNoComponent
	numBugs // the count of bugs; a bugSet has a bit for each
)

// bugSet is a set of bugs, bit b%64 of word b/64 for bug b: it grows with
// the catalogue, so no count of bugs overflows it.
type bugSet [(numBugs + 63) / 64]uint64

// set returns s with bug b added.
func (s bugSet) set(b bug) bugSet {
	s[b/64] |= 1 << (b % 64)
	return s
}

// has reports whether b is in s.
func (s bugSet) has(b bug) bool { return s[b/64]&(1<<(b%64)) != 0 }

// union returns the bugs of s and o.
func (s bugSet) union(o bugSet) bugSet {
	for i := range s {
		s[i] |= o[i]
	}
	return s
}

// without returns s with b removed.
func (s bugSet) without(b bug) bugSet {
	s[b/64] &^= 1 << (b % 64)
	return s
}

// each calls fn for every bug of s, in order.
func (s bugSet) each(fn func(bug)) {
	for b := bug(1); b < numBugs; b++ {
		if s.has(b) {
			fn(b)
		}
	}
}

// count returns the number of bugs in s.
func (s bugSet) count() int {
	n := 0
	s.each(func(bug) { n++ })
	return n
}

// unclaimable maps a bug that is a missing optional feature to the vector
// flag an implementation without the feature declares unclaimed instead
// of fixing it (see [Model.Unclaim]).
var unclaimable = map[bug]string{
	bugNoStrategyExtension: "extension:backoff_strategy",
}

// noCheckField maps a field to the bug that leaves it unvalidated.
var noCheckField = map[string]bug{
	"max_attempts":         bugNoCheckMaxAttempts,
	"backoff_coefficient":  bugNoCheckCoefficient,
	"max_interval":         bugNoCheckMaxInterval,
	"jitter":               bugNoCheckJitter,
	"non_retryable_errors": bugNoCheckPatterns,
	"on_exhaustion":        bugNoCheckOnExhaustion,
}

// engine is the reference rules with a set of catalogue bugs and the
// parameter values of a fitted deviation (family.go); the zero engine is
// the reference.
type engine struct {
	bugs bugSet
	dev  deviation
}

// has reports whether e has bug b.
func (e engine) has(b bug) bool { return b != noBug && e.bugs.has(b) }

// hasAny reports whether e has one of bs.
func (e engine) hasAny(bs ...bug) bool {
	for _, b := range bs {
		if e.has(b) {
			return true
		}
	}
	return false
}

// spec is a policy as a buggy implementation holds it: any values, not
// only valid ones.
type spec struct {
	maxAttempts  int64
	initial, max int64 // ns
	coef         float64
	jitter       bool
	patterns     []string
	onExhaustion string
	strategy     string
	noExhField   bool // the effective policy has no on_exhaustion field
	// echo, when set, is the effective policy as the implementation
	// writes it: the defaults overlaid with the policy's values verbatim
	// (no validation, a JSON spread).
	echo json.RawMessage
	// absent names the fields a struct-decoding implementation
	// (no-defaults-merge-fallbacks) leaves at their zero value in the
	// effective policy while its delay formula falls back to a default.
	absent map[string]bool
	// text holds the duration strings as given, which an implementation
	// with a lenient grammar echoes in its effective policy.
	text map[string]string
}

func defaultSpec() spec {
	return spec{maxAttempts: 3, initial: int64(time.Second), max: int64(5 * time.Minute), coef: 2,
		jitter: true, patterns: []string{}, onExhaustion: "discard", strategy: "exponential"}
}

func reject(id int64, typ, msg string) protocol.Response {
	return protocol.Response{ID: id, Error: &protocol.ErrorResult{Type: typ, Message: msg}}
}

// do answers req as an implementation with e's bug. ok is false for
// requests the engine does not model (profiles, scenarios, own draws).
func (e engine) do(req protocol.Request) (resp protocol.Response, ok bool) {
	if e.dev.durComp != 0 {
		// durations read in another unit: the spec's reading of the
		// same lengths
		req = e.dev.readDurations(req)
		e.dev.durComp, e.dev.durUnit = 0, 0
	}
	resp.ID = req.ID
	switch req.Op {
	case protocol.OpTimeoutDecide, protocol.OpTimeoutExpiry, protocol.OpReplay, protocol.OpExtensionDecide:
		return e.caseOp(req)
	case protocol.OpParseDuration:
		ns, err := e.parseDuration(req.Value)
		if err != nil {
			return reject(req.ID, protocol.ErrorPolicyInvalid, err.Error()), true
		}
		if f, ok := e.floatDuration(req.Value); ok {
			ns = f
		}
		if e.has(bugRoundMillis) {
			ns = roundMillis(ns)
		}
		if e.dev.roundScope&scopeDurations != 0 {
			ns = e.dev.round(ns)
		}
		resp.NS = &ns
		return resp, true
	case protocol.OpMatch:
		m, err := e.match(req.Patterns, req.ErrorType)
		if err != nil {
			return reject(req.ID, protocol.ErrorPatternInvalid, err.Error()), true
		}
		resp.Match = &m
		return resp, true
	case protocol.OpValidate:
		s, err := e.parsePolicy(req.Policy)
		if err != nil {
			return reject(req.ID, protocol.ErrorPolicyInvalid, err.Error()), true
		}
		resp.Effective = e.effective(s)
		return resp, true
	case protocol.OpDelay, protocol.OpDecide:
		if req.Profile != "" {
			return resp, false
		}
		s, err := e.parsePolicy(req.Policy)
		if err != nil {
			return reject(req.ID, protocol.ErrorPolicyInvalid, err.Error()), true
		}
		r, drawn := 0.0, true
		switch {
		case req.Rand != nil:
			r = *req.Rand
		case s.jitter && e.dev.jitterForce >= 0 || e.dev.jitterForce > 0:
			drawn = false // the implementation's own draw: accepted, delay unknown
		}
		n := req.Attempt
		if n < 1 && !e.has(bugNoCheckAttempt) {
			return reject(req.ID, protocol.ErrorInvalidRequest, "attempt must be at least 1"), true
		}
		if e.has(bugFloat53) {
			n = int64(float64ToInt(float64(n)))
		}
		if req.Op == protocol.OpDelay {
			if drawn {
				d, ok := e.delay(s, n, r)
				if !ok {
					return reject(req.ID, protocol.ErrorPolicyInvalid, "float overflow"), true
				}
				resp.DelayNS = &d
			}
			return resp, true
		}
		var typ, code string
		if req.Error != nil {
			typ, code = req.Error.Type, req.Error.Code
		}
		action, err := e.decide(s, n, typ, code)
		if err != nil {
			return reject(req.ID, protocol.ErrorInvalidRequest, err.Error()), true
		}
		resp.Action = action
		if action == "retry" && drawn {
			d, ok := e.delay(s, n, r)
			if !ok {
				return reject(req.ID, protocol.ErrorPolicyInvalid, "float overflow"), true
			}
			resp.DelayNS = &d
		}
		return resp, true
	}
	return resp, false
}

func float64ToInt(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(f)
}

// ---- durations

// asciiDigits replaces every Unicode decimal digit by the ASCII digit of
// the same value, as a regular expression's \d and int() accept them.
func asciiDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0x7f && unicode.IsDigit(r) {
			zero := r
			for unicode.IsDigit(zero-1) && r-zero < 60 {
				zero--
			}
			r = '0' + (r-zero)%10
		}
		b.WriteRune(r)
	}
	return b.String()
}

var (
	weeksRE     = regexp.MustCompile(`^P((?:[0-9]+Y)?(?:[0-9]+M)?)([0-9]+)W(T.*)?$`)
	monthRE     = regexp.MustCompile(`([0-9]+)M`)
	shorthandRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([smhdSMHD])$`)
)

// parseDuration parses an OJS duration with e's bug.
func (e engine) parseDuration(s string) (int64, error) {
	if e.has(bugDurNoFraction) && strings.HasPrefix(strings.ToUpper(s), "P") && strings.ContainsAny(s, ".,") {
		return 0, errors.New("only whole numbers are supported in a duration")
	}
	d, err := policy.ParseDuration(s)
	if err == nil && e.has(bugDurTimeOnly) {
		if date, _, _ := strings.Cut(s[1:], "T"); date != "" {
			return 0, errors.New("only time components (PT...) are supported")
		}
	}
	if err == nil && d == 0 && e.has(bugDurZeroRejected) {
		return 0, errors.New("zero duration")
	}
	if err == nil && e.has(bugDurNoYearMonth) {
		if date, _, _ := strings.Cut(s[1:], "T"); strings.ContainsAny(date, "YM") {
			return 0, errors.New("date components Y and M are not supported")
		}
	}
	if err == nil && e.has(bugMonth30Days) {
		if date, _, _ := strings.Cut(s[1:], "T"); strings.Contains(date, "M") {
			if m := monthRE.FindStringSubmatch(date); m != nil {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				d -= time.Duration(n) * 10 * time.Hour // 730h − 720h per month
			}
		}
	}
	if err == nil {
		if e.has(bugDurDateZero) {
			if ns, ok, err2 := dateAsZero(s); ok {
				return ns, err2
			}
		}
		return int64(d), nil
	}
	// Each lenient bug rewrites the text into the strict grammar, in turn.
	t := s
	if e.has(bugDurRegexLenient) {
		t = asciiDigits(strings.TrimSuffix(t, "\n"))
	}
	if e.has(bugDurLower) {
		t = strings.ToUpper(t)
	}
	if e.has(bugDurComma) {
		t = strings.ReplaceAll(t, ",", ".")
	}
	if e.has(bugDurWeeks) {
		if m := weeksRE.FindStringSubmatch(t); m != nil {
			w, perr := strconv.ParseInt(m[2], 10, 64)
			if perr == nil && w <= math.MaxInt64/7 {
				t = "P" + m[1] + strconv.FormatInt(w*7, 10) + "D" + m[3]
			}
		}
	}
	if e.has(bugDurNoComponent) && t != "" {
		switch {
		case t == "P" || t == "PT":
			return 0, nil
		case strings.HasSuffix(t, "T"):
			t = strings.TrimSuffix(t, "T")
		}
	}
	if e.has(bugDurEmpty) {
		switch {
		case t == "" || t == "P" || t == "PT":
			return 0, nil
		case strings.HasSuffix(t, "T"):
			t = strings.TrimSuffix(t, "T")
		}
	}
	// Date components read as zero are never range-checked, and weeks,
	// where accepted, are date components too.
	if e.has(bugDurDateZero) {
		if ns, ok, err2 := dateAsZero(t); ok {
			if err2 != nil {
				return 0, err
			}
			return ns, nil
		}
	}
	if date, _, _ := strings.Cut(strings.TrimPrefix(t, "P"), "T"); strings.HasPrefix(t, "P") &&
		(e.has(bugDurTimeOnly) && date != "" || e.has(bugDurNoYearMonth) && strings.ContainsAny(date, "YM")) {
		return 0, err // a date part refused by the parser, leniently read or not
	}
	if e.has(bugDurNoUpperBound) {
		if ns, ok := bigDuration(t); ok {
			return ns, nil
		}
	}
	if e.has(bugDurShorthand) {
		if m := shorthandRE.FindStringSubmatch(t); m != nil {
			f, _ := strconv.ParseFloat(m[1], 64)
			unit := map[string]float64{"s": 1, "m": 60, "h": 3600, "d": 86400}[strings.ToLower(m[2])]
			ns := math.Round(f * unit * 1e9)
			if ns >= math.MaxInt64 {
				return math.MaxInt64, nil
			}
			return int64(ns), nil
		}
	}
	if t == s {
		return 0, err
	}
	d, err2 := policy.ParseDuration(t)
	if err2 != nil {
		if e.has(bugDurWeeks) || e.has(bugDurLower) || e.has(bugDurComma) {
			if ns, ok := bigDuration(t); ok && ns == math.MaxInt64 {
				return 0, err
			}
		}
		return 0, err
	}
	return int64(d), nil
}

var dateRE = regexp.MustCompile(`^(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?$`)

// dateAsZero reads s as an implementation that ignores the date
// components (Y, M, D before T) does: their values, however large, count
// zero, and only the time part is parsed. ok is false when s has no date
// part in the grammar.
func dateAsZero(s string) (ns int64, ok bool, err error) {
	if !strings.HasPrefix(s, "P") {
		return 0, false, nil
	}
	date, rest, hasT := strings.Cut(s[1:], "T")
	if date == "" || !dateRE.MatchString(date) {
		return 0, false, nil
	}
	if !hasT {
		return 0, true, nil
	}
	d, err := policy.ParseDuration("PT" + rest)
	return int64(d), true, err
}

var durRE = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?$`)

// bigDuration parses the grammar without an upper bound, saturating at
// the largest int64. ok is false when s is not in the grammar.
func bigDuration(s string) (int64, bool) {
	m := durRE.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, false
	}
	unit := []int64{365 * 24 * 3600, 730 * 3600, 24 * 3600, 3600, 60, 1}
	total := new(big.Rat)
	for i, u := range unit {
		if m[i+1] == "" {
			continue
		}
		r, ok := new(big.Rat).SetString(m[i+1])
		if !ok {
			return 0, false
		}
		if f, _ := r.Float64(); math.IsInf(f, 0) {
			// past float64's range: a parser of floats reads +Inf,
			// which no duration holds, and refuses it
			return 0, false
		}
		total.Add(total, r.Mul(r, new(big.Rat).SetInt64(u*1e9)))
	}
	q := new(big.Int).Quo(total.Num(), total.Denom())
	if !q.IsInt64() {
		return math.MaxInt64, true
	}
	return q.Int64(), true
}

// ---- matching

// match reports whether typ matches patterns, with e's bug.
func (e engine) match(patterns []string, typ string) (bool, error) {
	if e.dev.match != 0 {
		return e.dev.devMatch(patterns, typ)
	}
	if e.has(bugRegexLiteralFallback) {
		// "^" + p + "$" (so "a|b" is anchored on one side only), the
		// pattern itself where that does not compile; no list refused
		for _, p := range patterns {
			re, err := regexp.Compile("^" + p + "$")
			if err == nil && re.MatchString(typ) || err != nil && p == typ {
				return true, nil
			}
		}
		return false, nil
	}
	m, err := errmatch.Compile(patterns)
	if err != nil && !e.has(bugNoCheckPatterns) {
		return false, err
	}
	if err == nil && !e.hasAny(bugRegexMatch, bugPrefixNoDot, bugNoPrefix, bugBarePrefixMatch) {
		return m.Match(typ), nil
	}
	for _, p := range patterns {
		switch {
		case e.has(bugRegexMatch):
			re, rerr := regexp.Compile("^(?:" + p + ")$")
			if rerr == nil && re.MatchString(typ) {
				return true, nil
			}
		case e.has(bugPrefixNoDot):
			if pre, ok := strings.CutSuffix(p, ".*"); ok && strings.HasPrefix(typ, pre) || p == typ {
				return true, nil
			}
		case e.has(bugNoPrefix):
			if p == typ {
				return true, nil
			}
		case e.has(bugBarePrefixMatch):
			if pre, ok := strings.CutSuffix(p, ".*"); ok && (typ == pre || strings.HasPrefix(typ, pre+".")) || p == typ {
				return true, nil
			}
		default:
			if pre, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(typ, pre) || p == typ {
				return true, nil
			}
		}
	}
	return false, nil
}

// ---- policies

// excused reports whether e's bug lets the reference's complaint about
// field f (with the given reason) pass.
func (e engine) excused(f *policy.FieldError, raw map[string]json.RawMessage) bool {
	name := f.Field
	if i := strings.IndexByte(name, '['); i > 0 {
		name = name[:i]
	}
	if e.has(bugNoValidation) || e.has(bugInvalidDefaulted) {
		return true
	}
	switch {
	case f.Reason == "duplicate key":
		return e.has(bugNoDupCheck)
	case strings.HasPrefix(f.Reason, "unknown field"):
		return e.has(bugUnknownFieldsIgnored) || e.has(bugNoOnExhaustion) && name == "on_exhaustion"
	case name == "on_exhaustion" && e.has(bugNoOnExhaustion):
		return true
	case name == "backoff_strategy":
		var s string
		if json.Unmarshal(raw[name], &s) != nil {
			return false
		}
		return e.has(bugUnknownStrategyExp) || e.has(bugStrategyIgnored)
	case name == "initial_interval" || name == "max_interval":
		var s string
		if json.Unmarshal(raw[name], &s) != nil {
			return false
		}
		if _, err := (engine{}).parseDuration(s); err == nil {
			// valid duration, bad value (zero, or max below initial)
			return e.has(bugZeroInterval) && name == "initial_interval" || e.has(bugNoCheckMaxInterval) && name == "max_interval" ||
				e.has(bugDurEmpty) && name == "initial_interval"
		}
		ns, err := e.parseDuration(s)
		if err != nil {
			return false
		}
		if e.has(bugDurEmpty) {
			return true
		}
		// read leniently, then checked by value as any duration: zero,
		// or max_interval below initial_interval
		if name == "initial_interval" && ns == 0 && !e.has(bugZeroInterval) {
			return false
		}
		initial, limit := int64(time.Second), int64(5*time.Minute)
		other := map[string]string{"initial_interval": "max_interval", "max_interval": "initial_interval"}[name]
		var o string
		if json.Unmarshal(raw[other], &o) == nil {
			v, oerr := e.parseDuration(o)
			if oerr != nil {
				return true // the other field's own complaint decides
			}
			if other == "initial_interval" {
				initial = v
			} else {
				limit = v
			}
		}
		if name == "initial_interval" {
			initial = ns
		} else {
			limit = ns
		}
		return limit >= initial || e.has(bugNoCheckMaxInterval)
	}
	return e.has(noCheckField[name])
}

var policyKeys = []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval",
	"jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy"}

// parsePolicy reads a policy as an implementation with e's bug does.
func (e engine) parsePolicy(data json.RawMessage) (spec, error) {
	s, err := e.readPolicy(data)
	if err == nil && e.has(bugZeroAttemptsRejected) && s.maxAttempts == 0 {
		return s, errors.New("max_attempts must be >= 1")
	}
	return s, err
}

// readPolicy reads a policy as an implementation with e's bugs does.
func (e engine) readPolicy(data json.RawMessage) (spec, error) {
	if e.dev.defField != "" {
		data = withDefault(data, e.dev.defField, e.dev.defValue)
	}
	s := defaultSpec()
	if len(data) == 0 || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return e.adjust(s, nil), nil
	}
	if e.has(bugNoStrategyExtension) {
		// The extension field is not known: a policy naming it is
		// rejected as having an unknown field, whatever its value, beside
		// what is wrong with the other fields.
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) == nil {
			if _, ok := top["backoff_strategy"]; ok {
				delete(top, "backoff_strategy")
				msg := "backoff_strategy: unknown field"
				if rest, err := json.Marshal(top); err == nil {
					if _, err := e.readPolicy(rest); err != nil {
						msg += "; " + err.Error()
					}
				}
				return s, errors.New(msg)
			}
		}
	}
	p, perr := policy.Parse(data)
	var raw map[string]json.RawMessage
	bad := map[string]bool{} // fields replaced by their default (no-validation)
	if perr != nil {
		var ve *policy.ValidationError
		if !errors.As(perr, &ve) {
			return s, perr
		}
		if e.has(bugInvalidDefaulted) {
			if json.Unmarshal(data, &raw) != nil {
				if json.Valid(data) {
					return e.adjust(s, nil), nil // not an object: the default policy
				}
				return s, perr
			}
			for _, f := range ve.Errors {
				name := f.Field
				if i := strings.IndexByte(name, '['); i > 0 {
					name = name[:i]
				}
				bad[name] = true
			}
			if ve.Omitted > 0 {
				return s, nil
			}
		} else if ve.Omitted > 0 {
			return s, perr
		}
		if json.Unmarshal(data, &raw) != nil || raw == nil {
			return s, perr
		}
		for _, f := range ve.Errors {
			if f.Field == "" || !e.excused(f, raw) {
				return s, perr
			}
		}
	} else {
		ps := p.Spec()
		s = spec{maxAttempts: int64(ps.MaxAttempts), initial: int64(ps.InitialInterval), max: int64(ps.MaxInterval),
			coef: ps.BackoffCoefficient, jitter: ps.Jitter, patterns: append([]string{}, ps.NonRetryableErrors...),
			onExhaustion: ps.OnExhaustion.String(), strategy: ps.Strategy.String()}
		if e.bugs == (bugSet{}) && e.dev == (deviation{}) {
			return s, nil
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			return s, nil
		}
		if !e.has(bugNoMerge) && !e.has(bugStrategyIgnored) && !e.has(bugPolynomialUnsupported) &&
			!e.hasAny(bugNoneUnsupported, bugNoMergeFallbacks) &&
			!e.has(bugNoOnExhaustion) && !e.has(bugFloat53) && !e.has(bugDurDateZero) {
			return s, nil
		}
	}
	// Lenient decoding: each known key read loosely, last one wins.
	if e.has(bugNoMerge) {
		s = spec{patterns: []string{}, strategy: "exponential", onExhaustion: "discard"}
	}
	if e.has(bugNoMergeFallbacks) {
		// a struct decoded from the policy: zero values, and the delay
		// formula's fallbacks (1s, coefficient 2, no cap)
		s = spec{initial: int64(time.Second), coef: 2, max: math.MaxInt64, patterns: []string{},
			strategy: "exponential", onExhaustion: "discard",
			absent: map[string]bool{"initial_interval": true, "backoff_coefficient": true, "max_interval": true, "on_exhaustion": true}}
	}
	for _, k := range policyKeys {
		v, ok := raw[k]
		if !ok || bad[k] {
			continue
		}
		delete(s.absent, k)
		switch k {
		case "max_attempts":
			var n json.Number
			if json.Unmarshal(v, &n) == nil {
				if i, err := n.Int64(); err == nil {
					s.maxAttempts = i
				} else if f, err := n.Float64(); err == nil {
					s.maxAttempts = float64ToInt(f)
				}
				if e.has(bugFloat53) {
					f, _ := n.Float64()
					s.maxAttempts = float64ToInt(f)
				}
			}
		case "initial_interval", "max_interval":
			var str string
			if json.Unmarshal(v, &str) == nil {
				if ns, err := e.parseDuration(str); err == nil {
					if s.text == nil {
						s.text = map[string]string{}
					}
					s.text[k] = str
					if k == "initial_interval" {
						s.initial = ns
					} else {
						s.max = ns
					}
				}
			}
		case "backoff_coefficient":
			var f float64
			if json.Unmarshal(v, &f) == nil {
				s.coef = f
			}
		case "jitter":
			var b bool
			if json.Unmarshal(v, &b) == nil {
				s.jitter = b
			}
		case "non_retryable_errors":
			var list []any
			if json.Unmarshal(v, &list) == nil {
				s.patterns = s.patterns[:0:0]
				for _, x := range list {
					if str, ok := x.(string); ok {
						s.patterns = append(s.patterns, str)
					}
				}
			}
		case "on_exhaustion":
			var str string
			if json.Unmarshal(v, &str) == nil {
				s.onExhaustion = str
			}
		case "backoff_strategy":
			var str string
			if json.Unmarshal(v, &str) == nil {
				s.strategy = str
			}
		}
	}
	s = e.adjust(s, raw)
	if e.has(bugNoValidation) {
		s.echo = e.echoEffective(s, data)
	}
	return s, nil
}

// echoEffective is the effective policy of an implementation without
// validation: the default fields overlaid with every key of the policy as
// written (the last of duplicates), unknown keys included.
//
// The values pass through a float64 reading, as a dynamic language's JSON
// parser leaves them: numbers become doubles (printed shortest, a non-finite
// one as null); a policy that is not an object leaves the defaults.
func (e engine) echoEffective(s spec, data json.RawMessage) json.RawMessage {
	base := map[string]json.RawMessage{}
	_ = json.Unmarshal(engine{}.effective(defaultSpec()), &base)
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&raw) != nil {
		raw = nil
	}
	if s.noExhField {
		delete(base, "on_exhaustion")
	}
	for k, v := range raw {
		known := false
		for _, f := range policyKeys {
			known = known || f == k
		}
		if !known && e.has(bugUnknownFieldsIgnored) || k == "on_exhaustion" && s.noExhField {
			continue
		}
		b, err := json.Marshal(asDoubles(v))
		if err != nil {
			return nil
		}
		base[k] = b
	}
	out, err := json.Marshal(base)
	if err != nil {
		return nil
	}
	return out
}

// adjust applies the bugs that change how a read policy is held.
func (e engine) adjust(s spec, raw map[string]json.RawMessage) spec {
	if e.has(bugNoOnExhaustion) {
		s.onExhaustion, s.noExhField = "discard", true
	}
	if e.has(bugStrategyIgnored) {
		s.strategy = "exponential"
	}
	if e.has(bugPolynomialUnsupported) && s.strategy == "polynomial" {
		s.strategy = "exponential"
	}
	if e.has(bugNoneUnsupported) && s.strategy == "none" {
		s.strategy = "exponential"
	}
	if e.has(bugUnknownStrategyExp) {
		if _, err := backoff.ParseStrategy(s.strategy); err != nil {
			s.strategy = "exponential"
		}
	}
	return s
}

// effective writes s as an effective policy.
func (e engine) effective(s spec) json.RawMessage {
	if s.echo != nil {
		return s.echo
	}
	var b []byte
	b = append(b, `{"max_attempts":`...)
	if e.has(bugFloat53) {
		// a double printed shortest, as JavaScript does: 2^63 -> 9223372036854776000
		b = strconv.AppendFloat(b, float64(s.maxAttempts), 'g', -1, 64)
	} else {
		b = strconv.AppendInt(b, s.maxAttempts, 10)
	}
	lenient := e.hasAny(bugDurEmpty, bugDurNoComponent, bugDurWeeks, bugDurLower, bugDurComma, bugDurNoUpperBound, bugDurRegexLenient, bugDurShorthand)
	b = append(b, `,"initial_interval":`...)
	if t, ok := s.text["initial_interval"]; ok && lenient {
		b = strconv.AppendQuote(b, t)
	} else if s.absent["initial_interval"] {
		b = append(b, `""`...)
	} else {
		b = strconv.AppendQuote(b, formatNS(s.initial))
	}
	b = append(b, `,"backoff_coefficient":`...)
	if s.absent["backoff_coefficient"] {
		b = append(b, '0')
	} else if math.IsInf(s.coef, 0) || math.IsNaN(s.coef) {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendFloat(b, s.coef, 'g', -1, 64)
	}
	b = append(b, `,"max_interval":`...)
	if t, ok := s.text["max_interval"]; ok && lenient {
		b = strconv.AppendQuote(b, t)
	} else if s.absent["max_interval"] {
		b = append(b, `""`...)
	} else {
		b = strconv.AppendQuote(b, formatNS(s.max))
	}
	b = append(b, `,"jitter":`...)
	b = strconv.AppendBool(b, s.jitter)
	pats, _ := json.Marshal(s.patterns)
	b = append(b, `,"non_retryable_errors":`...)
	b = append(b, pats...)
	if !s.noExhField {
		b = append(b, `,"on_exhaustion":`...)
		if s.absent["on_exhaustion"] {
			b = append(b, `""`...) // a struct's zero value, read as discard
		} else {
			b = strconv.AppendQuote(b, s.onExhaustion)
		}
	}
	if !e.has(bugNoStrategyExtension) {
		b = append(b, `,"backoff_strategy":`...)
		b = strconv.AppendQuote(b, s.strategy)
	}
	return append(b, '}')
}

func formatNS(ns int64) string {
	if ns < 0 {
		return "-" + policy.FormatDuration(time.Duration(-max(ns, -math.MaxInt64)))
	}
	return policy.FormatDuration(time.Duration(ns))
}

// ---- decisions and delays

func (e engine) decide(s spec, n int64, typ, code string) (string, error) {
	if e.dev.ignores(code) {
		code = ""
	}
	switch code {
	case "", "RETRY":
	case "DISCARD", "FAIL":
		return "discard", nil
	case "DEAD_LETTER":
		return "dead_letter", nil
	default:
		return "", errors.New("unknown handler code " + strconv.Quote(code))
	}
	m, err := e.match(s.patterns, typ)
	if err != nil {
		return "", err
	}
	exh := s.onExhaustion
	if m {
		return exh, nil
	}
	last := max(s.maxAttempts, 1)
	if k := int64(e.dev.exhaustShift); k > 0 && last > math.MaxInt64-k {
		last = math.MaxInt64
	} else if k != 0 {
		last = max(last+k, 1)
	}
	if e.has(bugAttemptFrom0) && n < math.MaxInt64 {
		n++
	}
	if n >= last {
		return exh, nil
	}
	return "retry", nil
}

// delay computes the delay after attempt n with draw r.
func (e engine) delay(s spec, n int64, r float64) (int64, bool) {
	if e.dev.delays() {
		if d, ok := e.devDelay(s, n, r); ok {
			return d, true
		}
	}
	if e.has(bugAttemptFrom0) && n < math.MaxInt64 {
		n++
	}
	float := e.hasAny(bugFloatSeconds, bugFloatMillis, bugPowDrift)
	if !float && e.hasAny(bugNoPostCap, bugJitterBeforeCap, bugAdditiveJitter) {
		if d, ok := e.jitterVariant(s, n, r); ok {
			return d, true
		}
		float = true
	}
	if !float && s.initial > 0 && s.max >= s.initial && s.coef >= 1 && n >= 1 {
		st, err := backoff.ParseStrategy(s.strategy)
		if err == nil {
			bo, err := backoff.New(backoff.Config{Strategy: st, Initial: time.Duration(s.initial),
				Coefficient: s.coef, Max: time.Duration(s.max), Jitter: s.jitter})
			if err == nil {
				d := int64(bo.DelayAt(int(min(n, math.MaxInt)), r))
				if e.has(bugRoundMillis) {
					d = roundMillis(d)
				}
				return d, true
			}
		}
	}
	scale := 1.0
	switch {
	case e.has(bugFloatSeconds):
		scale = 1e9
	case e.has(bugFloatMillis):
		scale = 1e6
	}
	i, mx, fn := float64(s.initial)/scale, float64(s.max)/scale, float64(n)
	var raw float64
	switch s.strategy {
	case "none":
		raw = i
	case "linear":
		raw = i * fn
	case "polynomial":
		raw = i * math.Pow(fn, s.coef)
	default:
		raw = i * math.Pow(s.coef, fn-1)
	}
	if math.IsNaN(raw) {
		raw = 0
	}
	if math.IsInf(raw, 0) && e.has(bugFloatSeconds) {
		return 0, false // a float power that overflows raises (Python's OverflowError)
	}
	if e.has(bugPowDrift) {
		// Go: time.Duration(f) of a float64 from 2^63 up wraps to -2^63
		// (amd64), before and after the jitter.
		base := goDuration(math.Min(raw, mx))
		if !s.jitter {
			return base, true
		}
		d := goDuration(float64(base) * (0.5 + r))
		if !e.has(bugNoPostCap) && d > s.max {
			d = s.max
		}
		return d, true
	}
	d := math.Min(raw, mx)
	if s.jitter {
		m := 0.5 + r
		switch {
		case e.has(bugJitterBeforeCap):
			d = raw * m
		case e.has(bugAdditiveJitter):
			d = d + d*r
		default:
			d = d * m
		}
		if !e.has(bugNoPostCap) {
			d = math.Min(d, mx)
		}
	}
	d *= scale
	if e.has(bugFloatSeconds) || e.has(bugFloatMillis) {
		// converted back to nanoseconds the usual way: rounded
		d = math.Round(d)
	}
	switch {
	case math.IsNaN(d) || d <= 0:
		return 0, true
	case d >= math.MaxInt64:
		return math.MaxInt64, true
	}
	return int64(d), true
}

// goDuration converts as Go's time.Duration(f) does on amd64: a value
// outside the int64 range becomes -2^63.
func goDuration(f float64) int64 {
	if math.IsNaN(f) || f >= 0x1p63 || f < -0x1p63 {
		return math.MinInt64
	}
	return int64(f)
}

// jitterVariant computes the delay of the jitter bugs over the exact,
// capped base (uncapped for jitter-before-cap). ok is false for a policy
// outside the reference's domain.
func (e engine) jitterVariant(s spec, n int64, r float64) (int64, bool) {
	st, err := backoff.ParseStrategy(s.strategy)
	if err != nil || n < 1 {
		return 0, false
	}
	mx := s.max
	if e.has(bugJitterBeforeCap) {
		mx = math.MaxInt64
	}
	bo, err := backoff.New(backoff.Config{Strategy: st, Initial: time.Duration(s.initial),
		Coefficient: s.coef, Max: time.Duration(mx)})
	if err != nil || s.max < s.initial {
		return 0, false
	}
	ib := int64(bo.Base(int(min(n, math.MaxInt))))
	if !s.jitter {
		return min(ib, s.max), true
	}
	base := float64(ib)
	var d float64
	switch {
	case e.has(bugAdditiveJitter):
		d = math.Min(base+base*r, float64(s.max))
	case e.has(bugJitterBeforeCap):
		d = math.Min(base*(0.5+r), float64(s.max))
	default:
		d = base * (0.5 + r)
	}
	if d >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return int64(d), true
}

// asDoubles replaces every number in v by its float64 value (nil when not
// finite), as JSON.parse reads it.
func asDoubles(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil
		}
		return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = asDoubles(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = asDoubles(e)
		}
		return out
	}
	return v
}

// floatDuration is the duration of s as the float bugs compute it: in
// float64 seconds (rounded half to even, as Python's round) or
// milliseconds (rounded half up, as Math.round), from the text's
// components. ok is false without such a bug or for text outside the
// grammar.
func (e engine) floatDuration(s string) (int64, bool) {
	if !e.hasAny(bugFloatSeconds, bugFloatMillis) {
		return 0, false
	}
	if e.has(bugDurRegexLenient) {
		s = asciiDigits(strings.TrimSuffix(s, "\n"))
	}
	m := durRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	unit := []float64{365 * 86400, 730 * 3600, 86400, 3600, 60, 1}
	sec := 0.0
	for i, u := range unit {
		if m[i+1] == "" {
			continue
		}
		f, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, false
		}
		sec += f * u
	}
	var ns float64
	if e.has(bugFloatSeconds) {
		ns = math.RoundToEven(sec * 1e9)
	} else {
		ns = math.Floor(sec*1e3*1e6 + 0.5)
	}
	if math.IsNaN(ns) || ns >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return int64(ns), true
}

// lenientAll has every bug of a lenient duration grammar.
var lenientAll = engine{bugs: bugSet{}.set(bugDurEmpty).set(bugDurWeeks).set(bugDurLower).set(bugDurComma).
	set(bugDurNoUpperBound).set(bugDurRegexLenient).set(bugDurShorthand)}

// SameDuration reports whether two duration strings of effective policies
// stand for the same nanoseconds under the most lenient grammar the models
// know ("P" and "PT0S", "pt1s" and "PT1S"), so that an implementation that
// echoes the text it was given and one that writes it back canonically
// are reproduced alike.
func SameDuration(a, b string) bool {
	if a == b {
		return true
	}
	x, err1 := lenientAll.parseDuration(a)
	y, err2 := lenientAll.parseDuration(b)
	return err1 == nil && err2 == nil && x == y
}

// roundMillis rounds ns to whole milliseconds, saturating at the largest
// int64 (a float64 conversion of 2^63 is not an int64).
func roundMillis(ns int64) int64 {
	f := math.Round(float64(ns)/1e6) * 1e6
	if f >= 0x1p63 {
		return math.MaxInt64
	}
	return int64(f)
}
