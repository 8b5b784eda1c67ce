package policytest

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"pgregory.net/rapid"
)

var strategies = []backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial}

var coefficients = []float64{2, 1, 1.5, 3, 4, 10, 1.1, 2.5, 1.0000001, 100, 1e308, math.MaxFloat64}

var intervals = []time.Duration{time.Second, time.Nanosecond, time.Millisecond, 10 * time.Second, time.Minute,
	5 * time.Minute, time.Hour, 1500 * time.Millisecond, math.MaxInt64, math.MaxInt64 / 2}

var spec = rapid.Custom(drawSpec)

func drawSpec(t *rapid.T) policy.Spec {
	// Every field's first choice is its default, so a spec shrinks to
	// DefaultSpec and SpecJSON of it to {}.
	s := policy.DefaultSpec()
	switch intRange(0, 3).Draw(t, "max_attempts_kind") {
	case 0, 1:
		s.MaxAttempts = policyPick1.Draw(t, "max_attempts")
	case 2:
		s.MaxAttempts = policyPick2.Draw(t, "max_attempts")
	default:
		s.MaxAttempts = intRange(0, math.MaxInt).Draw(t, "max_attempts")
	}
	switch intRange(0, 2).Draw(t, "initial_kind") {
	case 1:
		s.InitialInterval = pick(t, intervals[:8], "initial_interval")
	case 2:
		s.InitialInterval = time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "initial_interval"))
	}
	switch intRange(0, 4).Draw(t, "max_interval_kind") {
	case 0: // the default, when it fits
		s.MaxInterval = max(5*time.Minute, s.InitialInterval)
	case 1: // equal, or one nanosecond above
		s.MaxInterval = s.InitialInterval + time.Duration(intRange(0, 1).Draw(t, "above"))
	case 2: // a multiple
		k := rapid.Int64Range(1, 1000).Draw(t, "multiple")
		s.MaxInterval = time.Duration(min(int64(s.InitialInterval), math.MaxInt64/k) * k)
	case 3:
		s.MaxInterval = math.MaxInt64
	default:
		s.MaxInterval = time.Duration(rapid.Int64Range(int64(s.InitialInterval), math.MaxInt64).Draw(t, "max_interval"))
	}
	if rapid.Bool().Draw(t, "coefficient_any") {
		s.BackoffCoefficient = rapid.Float64Range(1, 16).Draw(t, "backoff_coefficient")
	} else {
		s.BackoffCoefficient = pick(t, coefficients, "backoff_coefficient")
	}
	s.Jitter = !rapid.Bool().Draw(t, "no_jitter")
	s.NonRetryableErrors = drawValidPatterns(t)
	if rapid.Bool().Draw(t, "dead_letter") {
		s.OnExhaustion = policy.DeadLetter
	}
	s.Strategy = pick(t, strategies, "backoff_strategy")
	return s
}

// Spec generates valid policies as Go values: every strategy, integral and
// fractional coefficients from 1 up to math.MaxFloat64, intervals from 1ns
// to the largest duration with max_interval equal to, just above or far
// above initial_interval, max_attempts from 0 to math.MaxInt, jitter on and
// off, and valid [Patterns]. [policy.New] accepts every value. Shrinks toward
// the OJS default.
func Spec() *rapid.Generator[policy.Spec] { return spec }

// SpecJSON returns s as an OJS retry policy object: the fields that differ
// from the default always, the others only when keep says so (keep is
// called with each JSON field name), so that the default merge is exercised.
// Durations are written in the canonical form of [policy.FormatDuration].
// A nil keep keeps none.
func SpecJSON(s policy.Spec, keep func(field string) bool) json.RawMessage {
	if keep == nil {
		keep = func(string) bool { return false }
	}
	d := policy.DefaultSpec()
	var w objectWriter
	if s.MaxAttempts != d.MaxAttempts || keep("max_attempts") {
		w.field("max_attempts", strconv.Itoa(s.MaxAttempts))
	}
	if s.InitialInterval != d.InitialInterval || keep("initial_interval") {
		w.field("initial_interval", strconv.Quote(policy.FormatDuration(s.InitialInterval)))
	}
	if s.BackoffCoefficient != d.BackoffCoefficient || keep("backoff_coefficient") {
		w.field("backoff_coefficient", formatCoefficient(s.BackoffCoefficient))
	}
	if s.MaxInterval != d.MaxInterval || keep("max_interval") {
		w.field("max_interval", strconv.Quote(policy.FormatDuration(s.MaxInterval)))
	}
	if s.Jitter != d.Jitter || keep("jitter") {
		w.field("jitter", strconv.FormatBool(s.Jitter))
	}
	if len(s.NonRetryableErrors) > 0 || keep("non_retryable_errors") {
		b, _ := json.Marshal(append([]string{}, s.NonRetryableErrors...))
		w.field("non_retryable_errors", string(b))
	}
	if s.OnExhaustion != d.OnExhaustion || keep("on_exhaustion") {
		w.field("on_exhaustion", strconv.Quote(s.OnExhaustion.String()))
	}
	if s.Strategy != d.Strategy || keep("backoff_strategy") {
		w.field("backoff_strategy", strconv.Quote(s.Strategy.String()))
	}
	return w.close()
}

func formatCoefficient(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' {
			return s
		}
	}
	return s + ".0"
}

type objectWriter struct{ b []byte }

func (w *objectWriter) field(name, raw string) {
	if len(w.b) == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.b = strconv.AppendQuote(w.b, name)
	w.b = append(w.b, ':')
	w.b = append(w.b, raw...)
}

func (w *objectWriter) close() json.RawMessage {
	if len(w.b) == 0 {
		return json.RawMessage("{}")
	}
	return append(w.b, '}')
}

// drawSpecJSON draws a valid spec and writes it, keeping each default-valued
// field with a drawn probability.
func drawSpecJSON(t *rapid.T) (policy.Spec, json.RawMessage) {
	s := drawSpec(t)
	keep := rapid.Uint8().Draw(t, "keep_defaults")
	raw := SpecJSON(s, func(field string) bool {
		for i, f := range fieldNames {
			if f == field {
				return keep&(1<<i) != 0
			}
		}
		return false
	})
	return s, raw
}

var validPolicy = rapid.Custom(drawValidPolicy)

func drawValidPolicy(t *rapid.T) json.RawMessage {
	_, raw := drawSpecJSON(t)
	return raw
}

// ValidPolicy generates valid OJS retry policy documents: a [Spec] written
// with [SpecJSON], fields equal to the default left out or written at
// random. Shrinks toward {}.
func ValidPolicy() *rapid.Generator[json.RawMessage] { return validPolicy }

// Field values of generated documents: valid spellings first (the
// generator shrinks toward them), then invalid ones. Each is JSON text.
var fieldValues = map[string][2][]string{
	"max_attempts": {
		{"3", "0", "1", "2", "5", "10", "100", "3.0", "3e0", "30e-1", "0.0", "9223372036854775807", "2147483647", "2147483648", "4294967296"},
		{"-1", "2.5", `"3"`, "true", "null", "9223372036854775808", "1e19", "-0.5", "[]", "{}", "1e400"},
	},
	"initial_interval": {
		{`"PT1S"`, `"PT0.000000001S"`, `"PT0.001S"`, `"PT10S"`, `"PT1M"`, `"PT5M"`, `"PT1.5S"`, `"P1D"`, `"PT2562047H47M16.854775807S"`},
		{`"PT0S"`, `"P"`, `"PT"`, `""`, `"1s"`, `"PT-1S"`, "1", "null", `"pt1s"`, `"PT1S "`, `"P1W"`},
	},
	"backoff_coefficient": {
		{"2.0", "2", "1", "1.0", "1.5", "3", "4.0", "10", "1.1", "2.5", "1e0", "1.0000001", "1E1", "100", "1.7976931348623157e308", "1e308", "0.5e1", "2.00"},
		{"0.9999999", "0", "-1", "0.5", "1e309", "-2.0", `"2.0"`, "null", "true", "[]"},
	},
	"max_interval": {
		{`"PT5M"`, `"PT1S"`, `"PT1H"`, `"PT300S"`, `"PT2562047H47M16.854775807S"`, `"PT1.000000001S"`, `"PT10S"`, `"P1Y"`},
		{`"PT0S"`, `"PT0.999999999S"`, `"PT"`, `"5m"`, "300", "null", `"PT2562047H47M16.854775808S"`, `"P1M1M"`},
	},
	"jitter": {
		{"true", "false"},
		{"1", "0", `"true"`, "null", `"false"`, "[]"},
	},
	"non_retryable_errors": {
		{"[]", `["auth.*"]`, `["a"]`, `["a.b","auth.*"]`},
		{`"auth.*"`, "[1]", "[null]", "null", "{}", `[""]`, `[".*"]`, `["a",""]`},
	},
	"on_exhaustion": {
		{`"discard"`, `"dead_letter"`},
		{`"DISCARD"`, `"dead-letter"`, `"deadletter"`, `"retry"`, `""`, "null", "1", `"discard "`},
	},
	"backoff_strategy": {
		{`"exponential"`, `"none"`, `"linear"`, `"polynomial"`},
		{`"Exponential"`, `"constant"`, `"fixed"`, `""`, "null", "2", `"exponential "`},
	},
}

var fieldNames = []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval",
	"jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy"}

var unknownKeys = []string{"maxAttempts", "Max_Attempts", "retry", "max_attempts ", "", "backoff_strategy2", "jitter_", "initialInterval", "type"}

// fieldValue draws the JSON text of one field: mostly valid, at times
// invalid, and for durations, patterns and coefficients often generated.
func fieldValue(t *rapid.T, name string) string {
	vals := fieldValues[name]
	if intRange(0, 4).Draw(t, name+"_invalid") == 4 {
		return pick(t, vals[1], name)
	}
	if rapid.Bool().Draw(t, name+"_listed") {
		return pick(t, vals[0], name)
	}
	switch name {
	case "initial_interval", "max_interval":
		return strconv.Quote(drawDuration(t))
	case "non_retryable_errors":
		b, _ := json.Marshal(append([]string{}, drawPatterns(t)...))
		return string(b)
	case "backoff_coefficient":
		return strconv.FormatFloat(rapid.Float64Range(0.5, 20).Draw(t, name), 'g', -1, 64)
	case "max_attempts":
		return strconv.Itoa(intRange(-2, 1000).Draw(t, name))
	}
	return pick(t, vals[0], name)
}

var policyDocument = rapid.Custom(drawPolicyDocument)

func drawPolicyDocument(t *rapid.T) json.RawMessage {
	switch intRange(0, 9).Draw(t, "document_kind") {
	case 0, 1, 2, 3, 4: // field by field, each absent, valid or invalid
		var w objectWriter
		for _, name := range fieldNames {
			if rapid.Bool().Draw(t, name+"_present") {
				w.field(name, fieldValue(t, name))
			}
		}
		return w.close()
	case 5, 6:
		return drawValidPolicy(t)
	case 7: // an unknown key
		raw := drawValidPolicy(t)
		key := pick(t, unknownKeys, "unknown_key")
		return withExtraField(raw, key, policyPick3.Draw(t, "unknown_value"))
	case 8: // a duplicate key
		raw := drawValidPolicy(t)
		name := pick(t, fieldNames, "duplicate")
		return withExtraField(withExtraField(raw, name, fieldValue(t, name)), name, fieldValue(t, name))
	default: // not an object, or an absent policy written out
		return json.RawMessage(policyPick4.Draw(t, "document"))
	}
}

// withExtraField appends "key": raw to the object doc.
func withExtraField(doc json.RawMessage, key, raw string) json.RawMessage {
	b := append([]byte(nil), doc[:len(doc)-1]...)
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = strconv.AppendQuote(b, key)
	b = append(b, ':')
	b = append(b, raw...)
	return append(b, '}')
}

// Policy generates OJS retry policy documents, valid and invalid: each
// field absent, valid or wrong — values at, just inside and just outside
// its bounds (max_attempts -1, 0, 2^63 − 1 and 2^63; a coefficient just
// below 1.0 and past math.MaxFloat64; PT0S, the largest duration and one
// nanosecond more), wrong JSON types, null, unknown and duplicate keys,
// documents that are not objects. Every value is well-formed JSON text.
// Shrinks toward {}.
func Policy() *rapid.Generator[json.RawMessage] { return policyDocument }

// Generators of fixed choices, built once.
var policyPick1 = rapid.SampledFrom([]int{3, 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12})
var policyPick2 = rapid.SampledFrom([]int{64, 100, 1000, math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt})
var policyPick3 = rapid.SampledFrom([]string{"1", "null", `"x"`, "true"})
var policyPick4 = rapid.SampledFrom([]string{"null", "{}", "[]", "3", `"x"`, "true", "[{}]", ` { } `, `{"max_attempts":3,"max_attempts":3}`})
