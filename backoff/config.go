package backoff

import (
	"errors"
	"math"
	"time"
)

// Config is the plain data of a backoff: the delay-related fields of an OJS
// RetryPolicy plus the strategy extension. [New] validates it.
//
// The zero value is not a valid Config (Initial and Coefficient are zero);
// the OJS default is
//
//	Config{Strategy: Exponential, Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute, Jitter: true}
//
// A Config is a plain value, safe to copy.
type Config struct {
	Strategy    Strategy      // formula; the zero value is Exponential (JSON: backoff_strategy)
	Initial     time.Duration // delay after attempt 1; must be > 0 (JSON: initial_interval)
	Coefficient float64       // growth factor or exponent; finite and >= 1, checked for every strategy (JSON: backoff_coefficient)
	Max         time.Duration // cap on every delay, before and after jitter; must be >= Initial (JSON: max_interval)
	Jitter      bool          // if true, delays are spread by a draw r from [0, 1), as JitterMode says (JSON: jitter)
	JitterMode  JitterMode    // how Jitter spreads a delay; the zero value is the OJS multiplier 0.5 + r; ignored without Jitter (JSON: jitter_mode, docs/extensions.md)
}

// validate returns nil or the errors.Join of one *ConfigError per problem,
// in field order Strategy, JitterMode, Initial, Coefficient, Max.
func (c Config) validate() error {
	var errs []error
	if !c.Strategy.valid() {
		errs = append(errs, &ConfigError{Field: "Strategy", Value: c.Strategy, Reason: "must be Exponential, None, Linear or Polynomial"})
	}
	if !c.JitterMode.valid() {
		errs = append(errs, &ConfigError{Field: "JitterMode", Value: c.JitterMode, Reason: "must be Proportional, Full, Equal or Decorrelated"})
	}
	if c.Initial <= 0 {
		errs = append(errs, &ConfigError{Field: "Initial", Value: c.Initial, Reason: "must be greater than zero"})
	}
	switch {
	case math.IsNaN(c.Coefficient) || math.IsInf(c.Coefficient, 0):
		errs = append(errs, &ConfigError{Field: "Coefficient", Value: c.Coefficient, Reason: "must be a finite number"})
	case c.Coefficient < 1:
		errs = append(errs, &ConfigError{Field: "Coefficient", Value: c.Coefficient, Reason: "must be at least 1"})
	}
	if c.Initial > 0 && c.Max < c.Initial {
		errs = append(errs, &ConfigError{Field: "Max", Value: c.Max, Reason: "must be at least Initial (" + c.Initial.String() + ")"})
	} else if c.Max <= 0 {
		errs = append(errs, &ConfigError{Field: "Max", Value: c.Max, Reason: "must be greater than zero"})
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}
