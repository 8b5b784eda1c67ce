package policy

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/strictjson"
)

// ParseOption changes what ParseWith accepts or starts from.
type ParseOption func(*parseConfig)

type parseConfig struct {
	binding bool
	base    *Policy
}

// start is the policy of an empty or null document.
func (c parseConfig) start() *Policy {
	if c.base != nil {
		return c.base
	}
	return Default()
}

// BindingDialect makes ParseWith accept, besides Parse's grammar, the
// OJS HTTP binding's spellings of three fields (openapi.yaml
// RetryPolicy; docs/decisions.md RK-101, RK-102):
//
//   - initial_interval_ms and max_interval_ms, an integer number of
//     milliseconds (RK-10: 1000, 1000.0 and 1e3 are 1000) from 1 to the
//     largest time.Duration, for initial_interval and max_interval;
//   - backoff_type, "exponential", "linear", "polynomial", "none",
//     "constant" or "fixed" (the last two are "none"), in any case, for
//     backoff_strategy.
//
// A field and its other spelling in one document are refused ("give
// initial_interval or initial_interval_ms, not both"), except backoff_type
// beside a backoff_strategy naming the same strategy. Errors name the key
// as written.
func BindingDialect() ParseOption { return func(c *parseConfig) { c.binding = true } }

// Over makes ParseWith read the document as changes to base rather than to
// DefaultSpec: a field given replaces base's (in either spelling, with
// BindingDialect), a field absent keeps base's value, and an empty or null
// document gives base itself. This is a dead letter's retry override
// (ojs-dead-letter §6.3) read with the grammar of a PUSH. A nil base is
// DefaultSpec, as for Parse.
func Over(base *Policy) ParseOption { return func(c *parseConfig) { c.base = base } }

// ParseWith is Parse with options: Parse(data) is ParseWith(data). The
// rules, limits and errors are Parse's.
func ParseWith(data []byte, opts ...ParseOption) (*Policy, error) {
	var cfg parseConfig
	for _, o := range opts {
		o(&cfg)
	}
	return parse(data, cfg)
}

// The binding dialect's keys.
const (
	fInitialMS = "initial_interval_ms"
	fMaxMS     = "max_interval_ms"
	fType      = "backoff_type"
)

// aliases holds the values of the dialect's keys until the object ends.
type aliases struct {
	seen      fieldBit // bInitial, bMaxInterval, bStrategy: the alias was given
	bad       fieldBit // its value had a problem
	initial   time.Duration
	maxIvl    time.Duration
	strategy  backoff.Strategy
	typeToken any // backoff_type's value, for errors
}

// maxIntervalMS is the largest *_ms value: the largest time.Duration.
const maxIntervalMS = int64(math.MaxInt64) / int64(time.Millisecond)

// dialect reads the value of a binding-dialect key. handled is false for
// any other key; ok is false after a fatal (syntax) error.
func (d *decoder) dialect(key string, tok strictjson.Token) (handled, ok bool) {
	var bit fieldBit
	switch key {
	case fInitialMS:
		bit = bInitial
	case fMaxMS:
		bit = bMaxInterval
	case fType:
		bit = bStrategy
	default:
		return false, true
	}
	if d.alias.seen&bit != 0 {
		d.c.add(bit, key, tok.Value(), "duplicate key", nil)
		d.alias.bad |= bit
		return true, d.skip(tok)
	}
	d.alias.seen |= bit
	if bit == bStrategy {
		d.alias.typeToken = tok.Value()
		st, good := bindingStrategy(tok)
		if !good {
			d.c.add(bit, key, tok.Value(), `must be "exponential", "linear", "polynomial", "none", "constant" or "fixed"`+got(tok), nil)
			d.alias.bad |= bit
		}
		d.alias.strategy = st
		return true, d.skip(tok)
	}
	ms, reason := intervalMS(tok)
	if reason != "" {
		d.c.add(bit, key, tok.Value(), reason, nil)
		d.alias.bad |= bit
		return true, d.skip(tok)
	}
	if bit == bInitial {
		d.alias.initial = time.Duration(ms) * time.Millisecond
	} else {
		d.alias.maxIvl = time.Duration(ms) * time.Millisecond
	}
	return true, d.skip(tok)
}

// intervalMS reads a *_ms value: an integer from 1 to maxIntervalMS.
func intervalMS(tok strictjson.Token) (int64, string) {
	const want = "must be an integer number of milliseconds from 1 to "
	if tok.Kind != 'n' {
		return 0, want + strconv.FormatInt(maxIntervalMS, 10) + got(tok)
	}
	v, res := strictjson.IntLiteral(tok.Text(), 1, maxIntervalMS)
	if res != strictjson.IntOK {
		return 0, want + strconv.FormatInt(maxIntervalMS, 10) + ", got " + clip(tok.Text())
	}
	return v, ""
}

// bindingStrategy reads a backoff_type value.
func bindingStrategy(tok strictjson.Token) (backoff.Strategy, bool) {
	if tok.Kind != 's' {
		return 0, false
	}
	name := strings.ToLower(tok.Text())
	switch name {
	case "constant", "fixed":
		return backoff.None, true
	}
	for _, st := range [...]backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial} {
		if name == st.String() {
			return st, true
		}
	}
	return 0, false
}

// reconcile applies the dialect's values to s once the object is read: a
// field given in both spellings is one problem; backoff_type must agree
// with a backoff_strategy given beside it.
func (d *decoder) reconcile(s *Spec) {
	a := &d.alias
	for _, f := range [...]struct {
		bit     fieldBit
		iso, ms string
		v       time.Duration
		dst     *time.Duration
	}{
		{bInitial, fInitial, fInitialMS, a.initial, &s.InitialInterval},
		{bMaxInterval, fMaxInterval, fMaxMS, a.maxIvl, &s.MaxInterval},
	} {
		if a.seen&f.bit == 0 {
			continue
		}
		switch {
		case d.given&f.bit != 0:
			d.c.add(f.bit, f.ms, nil, "give "+f.iso+" or "+f.ms+", not both", nil)
		case a.bad&f.bit == 0:
			*f.dst = f.v
		}
		d.given |= f.bit
	}
	if a.seen&bStrategy != 0 && a.bad&bStrategy == 0 {
		switch {
		case d.given&bStrategy == 0:
			s.Strategy = a.strategy
		case d.c.bad&bStrategy == 0 && s.Strategy != a.strategy:
			d.c.add(bStrategy, fType, a.typeToken, "disagrees with backoff_strategy "+strconv.Quote(s.Strategy.String()), nil)
		}
		d.given |= bStrategy
	}
}
