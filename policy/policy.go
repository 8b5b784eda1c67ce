package policy

import (
	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
)

// Policy is a validated, compiled retry policy: a Spec together with its
// backoff calculator and its non-retryable error matcher.
//
// A Policy is immutable once built by Default, New or Parse, so it is safe
// to share between goroutines (the one exception is UnmarshalJSON, which
// overwrites its receiver and is meant for decoding into a fresh value).
// A nil *Policy and the zero Policy behave as Default() in every method.
type Policy struct {
	spec Spec // owns its NonRetryableErrors slice
	bo   *backoff.Backoff
	m    *errmatch.Matcher
	// rules are the compiled ErrorRules, in order.
	rules []rule
}

var defaultPolicy = mustDefault()

func mustDefault() *Policy {
	p, err := New(DefaultSpec())
	if err != nil {
		// Unreachable: DefaultSpec is valid. Keep a usable value anyway.
		return &Policy{spec: DefaultSpec()}
	}
	return p
}

// Default returns the OJS default retry policy (DefaultSpec). The same
// immutable *Policy is returned on every call.
func Default() *Policy { return defaultPolicy }

// get returns the policy to use for p: p itself, or the default for a nil
// or zero Policy.
func (p *Policy) get() *Policy {
	if p == nil || p.bo == nil {
		return defaultPolicy
	}
	return p
}

// New validates s and compiles it into a Policy. It applies the same rules as
// Parse to the Go values:
//
//   - MaxAttempts >= 0
//   - InitialInterval > 0
//   - BackoffCoefficient >= 1 and finite (for every strategy)
//   - MaxInterval >= InitialInterval
//   - NonRetryableErrors entries non-empty, valid UTF-8, not ".*" alone
//   - OnExhaustion is Discard or DeadLetter
//   - Strategy is one of the four backoff strategies
//
// Every problem is reported, as one *ValidationError (errors.Is
// ErrInvalidPolicy). New copies NonRetryableErrors; s may be reused.
func New(s Spec) (*Policy, error) {
	var c collector
	m, rms := validateSpec(&s, &c)
	if err := c.err(); err != nil {
		return nil, err
	}
	return compile(s.clone(), m, rms)
}

// compile builds a Policy from a Spec that passed validation; m is the
// matcher already compiled for s.NonRetryableErrors, or nil, and rms those
// of the error rules. The Policy keeps s.NonRetryableErrors and
// s.ErrorRules: the caller must own them (fresh slices, never ones a user
// can still modify) and must not use them afterwards.
func compile(s Spec, m *errmatch.Matcher, rms []*errmatch.Matcher) (*Policy, error) {
	if s.NonRetryableErrors == nil {
		s.NonRetryableErrors = []string{}
	}
	var c collector
	bo, err := backoff.New(backoff.Config{
		Strategy:    s.Strategy,
		Initial:     s.InitialInterval,
		Coefficient: s.BackoffCoefficient,
		Max:         s.MaxInterval,
		Jitter:      s.Jitter,
		JitterMode:  s.JitterMode,
	})
	if err != nil {
		c.add(0, "", nil, err.Error(), err)
	}
	if m == nil {
		if m, err = errmatch.Compile(s.NonRetryableErrors); err != nil {
			c.add(bNonRetryable, fNonRetryable, s.NonRetryableErrors, err.Error(), err)
		}
	}
	rules := compileRules(&s, rms, &c)
	if err := c.err(); err != nil {
		return nil, err
	}
	return &Policy{spec: s, bo: bo, m: m, rules: rules}, nil
}

// Spec returns a copy of the policy's data; the NonRetryableErrors slice is
// a fresh copy (never nil) that the caller may modify.
func (p *Policy) Spec() Spec { return p.get().spec.clone() }

// Backoff returns the policy's delay calculator. It is immutable and shared.
func (p *Policy) Backoff() *backoff.Backoff { return p.get().bo }

// Matcher returns the policy's non-retryable error matcher. It is immutable
// and shared.
func (p *Policy) Matcher() *errmatch.Matcher { return p.get().m }

// Equal reports whether p and q hold the same Spec (a nil or zero Policy
// counts as Default). NonRetryableErrors and ErrorRules are compared in
// order, nil equal to empty.
func (p *Policy) Equal(q *Policy) bool {
	a, b := &p.get().spec, &q.get().spec
	if a.MaxAttempts != b.MaxAttempts || a.InitialInterval != b.InitialInterval ||
		a.BackoffCoefficient != b.BackoffCoefficient || a.MaxInterval != b.MaxInterval ||
		a.Jitter != b.Jitter || a.OnExhaustion != b.OnExhaustion || a.Strategy != b.Strategy ||
		len(a.NonRetryableErrors) != len(b.NonRetryableErrors) || !extensionEqual(a, b) {
		return false
	}
	for i := range a.NonRetryableErrors {
		if a.NonRetryableErrors[i] != b.NonRetryableErrors[i] {
			return false
		}
	}
	return true
}
