package policy

import (
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
)

// Action is what happens to a failed job: it is retried, discarded, or moved
// to the dead letter queue.
//
// The zero value is Retry. An Action is a plain value and safe to copy and
// share. Its text form ("retry", "discard", "dead_letter") is the one OJS
// uses for on_exhaustion and the conformance protocol uses for decisions.
type Action uint8

const (
	// Retry schedules another attempt after a delay.
	Retry Action = iota
	// Discard moves the job to the discarded state without dead-lettering it.
	Discard
	// DeadLetter moves the job to the discarded state and the dead letter set.
	DeadLetter
)

// String returns "retry", "discard" or "dead_letter"; any other value prints
// as "Action(N)".
func (a Action) String() string {
	switch a {
	case Retry:
		return "retry"
	case Discard:
		return "discard"
	case DeadLetter:
		return "dead_letter"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// MarshalText returns the String form of the three defined actions and an
// error for any other value.
func (a Action) MarshalText() ([]byte, error) {
	if a > DeadLetter {
		return nil, errors.New("policy: invalid Action " + strconv.Itoa(int(a)))
	}
	return []byte(a.String()), nil
}

// UnmarshalText sets a from exactly "retry", "discard" or "dead_letter"
// (case-sensitive); anything else is an error and leaves a unchanged.
func (a *Action) UnmarshalText(text []byte) error {
	switch string(text) {
	case "retry":
		*a = Retry
	case "discard":
		*a = Discard
	case "dead_letter":
		*a = DeadLetter
	default:
		return errors.New(`policy: unknown action ` + strconv.Quote(string(text)) + `, want "retry", "discard" or "dead_letter"`)
	}
	return nil
}

// Spec is the plain data of an OJS retry policy: the seven fields of the OJS
// RetryPolicy object plus retrykit's extension field backoff_strategy, after
// the merge with the defaults. It is what New validates and Policy.Spec
// returns.
//
// The zero Spec is not a valid policy (InitialInterval must be > 0 and
// OnExhaustion must be Discard or DeadLetter); start from DefaultSpec.
// A Spec is a plain value: copying it shares the NonRetryableErrors backing
// array, so do not modify one that others may read. Reading a Spec from
// several goroutines is safe; writing it while others read is not.
type Spec struct {
	// MaxAttempts is the total number of executions, the first included;
	// >= 0. Zero behaves as 1 (docs/decisions.md RK-04). JSON: max_attempts.
	MaxAttempts int
	// InitialInterval is the delay after the first failure; > 0.
	// JSON: initial_interval, an ISO 8601 duration.
	InitialInterval time.Duration
	// BackoffCoefficient is the growth factor of the exponential and
	// polynomial strategies; >= 1 and finite, for every strategy
	// (RK-14). JSON: backoff_coefficient.
	BackoffCoefficient float64
	// MaxInterval caps every delay, before and after jitter;
	// >= InitialInterval. JSON: max_interval, an ISO 8601 duration.
	MaxInterval time.Duration
	// Jitter multiplies each delay by a random factor in [0.5, 1.5).
	// JSON: jitter.
	Jitter bool
	// NonRetryableErrors lists error types that end the job at once: exact
	// names, or prefixes ending in ".*". Entries must be non-empty valid
	// UTF-8 and not ".*" alone. nil and empty are the same.
	// JSON: non_retryable_errors.
	NonRetryableErrors []string
	// OnExhaustion is what happens when attempts run out or a non-retryable
	// error occurs: Discard or DeadLetter. JSON: on_exhaustion.
	OnExhaustion Action
	// Strategy is the backoff formula, set only by the extension field
	// backoff_strategy; the zero value is exponential (RK-01).
	Strategy backoff.Strategy

	// The fields below are the retry extensions of docs/extensions.md;
	// their zero values are an OJS 1.0 policy.

	// JitterMode is how Jitter spreads a delay; the zero value is the OJS
	// multiplier. Another mode needs Jitter. JSON: jitter_mode.
	JitterMode backoff.JitterMode
	// ErrorRules are tried in order; the first whose Match matches a
	// failure's error type sets its attempt limit and backoff (at most
	// MaxErrorRules). JSON: error_rules.
	ErrorRules []ErrorRule
	// MaxRetryAfter bounds a delay the handler asks for; 0 means the
	// MaxInterval in force (the rule's or the policy's). JSON:
	// max_retry_after.
	MaxRetryAfter time.Duration
	// MaxSnoozes is how many snoozes a job may take; 0 turns snoozing off
	// (a snooze then spends an attempt). JSON: max_snoozes.
	MaxSnoozes int
	// MaxSnooze bounds one snooze; 0 means MaxInterval. JSON: max_snooze.
	MaxSnooze time.Duration
}

// DefaultSpec returns the OJS default retry policy (spec §8): 3 attempts,
// PT1S initial interval, coefficient 2.0, PT5M maximum interval, jitter on,
// no non-retryable errors, discard on exhaustion, exponential backoff.
func DefaultSpec() Spec {
	return Spec{
		MaxAttempts:        3,
		InitialInterval:    time.Second,
		BackoffCoefficient: 2.0,
		MaxInterval:        5 * time.Minute,
		Jitter:             true,
		NonRetryableErrors: []string{},
		OnExhaustion:       Discard,
		Strategy:           backoff.Exponential,
	}
}

// clone returns s with its own copy of NonRetryableErrors (never nil) and
// of ErrorRules (nil when there are none) and their Match lists.
func (s Spec) clone() Spec {
	p := make([]string, len(s.NonRetryableErrors))
	copy(p, s.NonRetryableErrors)
	s.NonRetryableErrors = p
	if len(s.ErrorRules) == 0 {
		s.ErrorRules = nil
		return s
	}
	rules := make([]ErrorRule, len(s.ErrorRules))
	for i, r := range s.ErrorRules {
		r.Match = append([]string(nil), r.Match...)
		rules[i] = r
	}
	s.ErrorRules = rules
	return s
}

// JSON field names, in canonical order.
const (
	fMaxAttempts  = "max_attempts"
	fInitial      = "initial_interval"
	fCoefficient  = "backoff_coefficient"
	fMaxInterval  = "max_interval"
	fJitter       = "jitter"
	fNonRetryable = "non_retryable_errors"
	fOnExhaustion = "on_exhaustion"
	fStrategy     = "backoff_strategy"
	// The retry extensions (docs/extensions.md).
	fJitterMode    = "jitter_mode"
	fErrorRules    = "error_rules"
	fMaxRetryAfter = "max_retry_after"
	fMaxSnoozes    = "max_snoozes"
	fMaxSnooze     = "max_snooze"
	fMatch         = "match" // in an error rule only
)

// fieldBit is a bit set of fields, used to skip cross-field checks on fields
// that already failed.
type fieldBit uint16

const (
	bMaxAttempts fieldBit = 1 << iota
	bInitial
	bCoefficient
	bMaxInterval
	bJitter
	bNonRetryable
	bOnExhaustion
	bStrategy
	bJitterMode
	bErrorRules
	bMaxRetryAfter
	bMaxSnoozes
	bMaxSnooze
	bMatch
)

// ruleBits are the fields an error rule may hold.
const ruleBits = bMatch | bMaxAttempts | bInitial | bCoefficient | bMaxInterval | bJitter | bJitterMode | bStrategy | bMaxRetryAfter

// collector accumulates FieldErrors: the first MaxListedErrors, and a count
// of the others.
type collector struct {
	errs    []*FieldError
	omitted int
	bad     fieldBit // fields with a problem
}

func (c *collector) add(bit fieldBit, field string, value any, reason string, cause error) {
	c.bad |= bit
	if c.full() {
		c.omitted++
		return
	}
	c.errs = append(c.errs, &FieldError{Field: field, Value: value, Reason: reason, Err: cause})
}

// full reports whether further problems are only counted; callers use it
// to skip building messages nobody will read.
func (c *collector) full() bool { return len(c.errs) >= MaxListedErrors }

// skip counts n problems of field bit that are not listed.
func (c *collector) skip(bit fieldBit, n int) {
	c.bad |= bit
	c.omitted += n
}

func (c *collector) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &ValidationError{Errors: c.errs, Omitted: c.omitted}
}

// formatDur renders a duration for error messages as an ISO string.
func formatDur(d time.Duration) string { return strconv.Quote(FormatDuration(d)) }

// validateSpec checks the rules of spec §11.1 plus retrykit's own (RK-12,
// RK-14) on a Go Spec, for New. It returns the compiled matcher when the
// patterns are valid.
func validateSpec(s *Spec, c *collector) (m *errmatch.Matcher, rms []*errmatch.Matcher) {
	if s.MaxAttempts < 0 {
		c.add(bMaxAttempts, fMaxAttempts, s.MaxAttempts, "must be a non-negative integer, got "+strconv.Itoa(s.MaxAttempts), nil)
	}
	if s.InitialInterval <= 0 {
		c.add(bInitial, fInitial, s.InitialInterval, "must be greater than zero, got "+formatDur(s.InitialInterval), nil)
	}
	switch k := s.BackoffCoefficient; {
	case math.IsNaN(k) || math.IsInf(k, 0):
		c.add(bCoefficient, fCoefficient, k, "must be a finite number, got "+formatFloat(k), nil)
	case k < 1:
		c.add(bCoefficient, fCoefficient, k, "must be >= 1.0, got "+formatFloat(k), nil)
	}
	if s.MaxInterval <= 0 {
		c.add(bMaxInterval, fMaxInterval, s.MaxInterval, "must be greater than zero, got "+formatDur(s.MaxInterval), nil)
	}
	m = checkPatterns(s.NonRetryableErrors, len(s.NonRetryableErrors), nil, c)
	if s.OnExhaustion != Discard && s.OnExhaustion != DeadLetter {
		c.add(bOnExhaustion, fOnExhaustion, s.OnExhaustion, `must be "discard" or "dead_letter", got `+strconv.Quote(s.OnExhaustion.String()), nil)
	}
	if _, err := backoff.ParseStrategy(s.Strategy.String()); err != nil {
		c.add(bStrategy, fStrategy, s.Strategy, `must be "none", "linear", "exponential" or "polynomial", got `+s.Strategy.String(), err)
	}
	rms = checkExtension(s, c, nil)
	checkIntervals(s, c, 0)
	return m, rms
}

// checkIntervals reports max_interval < initial_interval, unless either
// field already has a problem. given is the set of fields present in the
// JSON (0 for New), to mark a default max_interval as such.
func checkIntervals(s *Spec, c *collector, given fieldBit) {
	if c.bad&(bInitial|bMaxInterval) != 0 || s.MaxInterval >= s.InitialInterval {
		return
	}
	r := "must be >= initial_interval " + formatDur(s.InitialInterval) + ", got " + formatDur(s.MaxInterval)
	if given != 0 && given&bMaxInterval == 0 {
		r += " (the default)"
	}
	c.add(bMaxInterval, fMaxInterval, s.MaxInterval, r, nil)
}

// checkPatterns applies the rules of non_retryable_errors, for New and
// Parse alike: a list of more than errmatch.MaxPatterns entries (n, the
// length of the list, of which patterns may hold only the first) is one
// problem; otherwise every entry must be valid UTF-8 (RK-19) and pass
// errmatch.Compile, and each bad entry is reported under its own index, with
// the *errmatch.PatternError as cause. idx maps positions in patterns to
// positions in the JSON array (nil: the same). It returns the compiled
// matcher, or nil after a problem.
func checkPatterns(patterns []string, n int, idx []int, c *collector) *errmatch.Matcher {
	at := func(i int) string {
		if idx != nil {
			i = idx[i]
		}
		return fNonRetryable + "[" + strconv.Itoa(i) + "]"
	}
	if n > errmatch.MaxPatterns {
		c.add(bNonRetryable, fNonRetryable, nil, "at most "+strconv.Itoa(errmatch.MaxPatterns)+
			" patterns (errmatch.MaxPatterns), got "+strconv.Itoa(n), errmatch.ErrTooManyPatterns)
		return nil
	}
	badUTF8 := false
	for i, p := range patterns {
		if !utf8.ValidString(p) {
			badUTF8 = true
			if c.full() {
				c.skip(bNonRetryable, 1)
				continue
			}
			c.add(bNonRetryable, at(i), p, "must be valid UTF-8, got "+strconv.Quote(clip(p)), nil)
		}
	}
	m, err := errmatch.Compile(patterns)
	if err == nil {
		if badUTF8 {
			return nil
		}
		return m
	}
	var ce *errmatch.CompileError
	if !errors.As(err, &ce) {
		c.add(bNonRetryable, fNonRetryable, nil, err.Error(), err)
		return nil
	}
	for _, pe := range ce.Errors {
		if c.full() {
			c.skip(bNonRetryable, 1)
			continue
		}
		field := at(pe.Index)
		if idx != nil {
			cp := *pe
			cp.Index = idx[pe.Index]
			pe = &cp
		}
		c.add(bNonRetryable, field, pe.Pattern, pe.Reason+", got "+strconv.Quote(clip(pe.Pattern)), pe)
	}
	c.skip(bNonRetryable, ce.Omitted)
	return nil
}

// formatFloat renders a coefficient so that it parses back to the same
// float64, with ".0" added to integral values ("2.0", as the spec writes it).
func formatFloat(f float64) string {
	var buf [32]byte
	return string(appendFloat(buf[:0], f))
}

func appendFloat(b []byte, f float64) []byte {
	start := len(b)
	b = strconv.AppendFloat(b, f, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' || c == 'n' || c == 'N' || c == 'I' { // fraction, exponent, NaN, ±Inf
			return b
		}
	}
	return append(b, '.', '0')
}
