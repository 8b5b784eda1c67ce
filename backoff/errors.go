package backoff

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is matched by every error [New] returns: test for it
// with [errors.Is]. Use [errors.As] with a [*ConfigError] for the details.
var ErrInvalidConfig = errors.New("backoff: invalid config")

// ErrUnknownStrategy is matched by the error of [ParseStrategy] and by the
// error [New] reports for a Strategy outside the four constants.
var ErrUnknownStrategy = errors.New("backoff: unknown strategy")

// ErrUnknownJitterMode is matched by the error of [ParseJitterMode] and by
// the error [New] reports for a JitterMode outside the four constants.
var ErrUnknownJitterMode = errors.New("backoff: unknown jitter mode")

// ConfigError describes one invalid field of a [Config].
//
// Its message names the Go field and the matching OJS JSON field, for
// example "backoff: Initial (initial_interval): must be greater than zero,
// got 0s". It matches [ErrInvalidConfig] with [errors.Is], and a problem
// with the Strategy field also matches [ErrUnknownStrategy]. A ConfigError
// is a plain value; the zero value has an empty Field and Reason. New never
// modifies one after returning it, so it is safe to read from several
// goroutines.
type ConfigError struct {
	Field  string // Go field name of Config: "Strategy", "JitterMode", "Initial", "Coefficient" or "Max"
	Value  any    // the rejected value
	Reason string // what the value must satisfy, e.g. "must be greater than zero"
}

// jsonNames maps Config fields to the OJS RetryPolicy JSON names.
var jsonNames = map[string]string{
	"Strategy":    "backoff_strategy",
	"Initial":     "initial_interval",
	"Coefficient": "backoff_coefficient",
	"Max":         "max_interval",
	"Jitter":      "jitter",
	"JitterMode":  "jitter_mode",
}

// Error returns "backoff: FIELD (json_name): REASON, got VALUE".
func (e *ConfigError) Error() string {
	field := e.Field
	if j, ok := jsonNames[e.Field]; ok {
		field += " (" + j + ")"
	}
	var got string
	switch v := e.Value.(type) {
	case string:
		got = fmt.Sprintf("%q", v)
	default:
		got = fmt.Sprint(v)
	}
	return "backoff: " + field + ": " + e.Reason + ", got " + got
}

// Is reports whether target is [ErrInvalidConfig], [ErrUnknownStrategy]
// for an error about the Strategy field, or [ErrUnknownJitterMode] for one
// about the JitterMode field.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidConfig || (target == ErrUnknownStrategy && e.Field == "Strategy") ||
		(target == ErrUnknownJitterMode && e.Field == "JitterMode")
}
