package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
)

// defaultSpec is spec §8 written out by hand (not via DefaultSpec).
var defaultSpec = Spec{
	MaxAttempts:        3,
	InitialInterval:    time.Second,
	BackoffCoefficient: 2.0,
	MaxInterval:        5 * time.Minute,
	Jitter:             true,
	NonRetryableErrors: []string{},
	OnExhaustion:       Discard,
	Strategy:           backoff.Exponential,
}

func mustParse(t *testing.T, s string) *Policy {
	t.Helper()
	p, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return p
}

func TestDefaultSpec(t *testing.T) {
	if diff := cmp.Diff(defaultSpec, DefaultSpec()); diff != "" {
		t.Errorf("DefaultSpec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(defaultSpec, Default().Spec()); diff != "" {
		t.Errorf("Default().Spec() (-want +got):\n%s", diff)
	}
}

// Spec §8, §12.2 and RK-09: absent policies are the default.
func TestParseAbsentIsDefault(t *testing.T) {
	for _, in := range []string{"", "  \n\t", "null", " null ", "{}", " { } "} {
		p := mustParse(t, in)
		if diff := cmp.Diff(defaultSpec, p.Spec()); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestParseEffective(t *testing.T) {
	with := func(f func(*Spec)) Spec {
		s := defaultSpec
		s.NonRetryableErrors = []string{}
		f(&s)
		return s
	}
	tests := []struct {
		name string
		in   string
		want Spec
	}{
		{"§8.1 partial override", `{"max_attempts": 10, "on_exhaustion": "dead_letter"}`,
			with(func(s *Spec) { s.MaxAttempts = 10; s.OnExhaustion = DeadLetter })},
		{"§12.1 no retry", `{"max_attempts": 1}`,
			with(func(s *Spec) { s.MaxAttempts = 1 })},
		{"§12.2 default", `{}`, defaultSpec},
		{"§12.3 aggressive (RK-01 strategy field added)", `{
			"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0,
			"max_interval": "PT1H", "jitter": true,
			"non_retryable_errors": ["payment.card_stolen", "payment.card_expired", "validation.*"],
			"on_exhaustion": "dead_letter", "backoff_strategy": "polynomial"}`,
			Spec{MaxAttempts: 25, InitialInterval: 15 * time.Second, BackoffCoefficient: 4, MaxInterval: time.Hour, Jitter: true, NonRetryableErrors: []string{"payment.card_stolen", "payment.card_expired", "validation.*"}, OnExhaustion: DeadLetter, Strategy: backoff.Polynomial}},
		{"§12.3 without the extension field stays exponential (RK-01)", `{
			"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0, "max_interval": "PT1H"}`,
			with(func(s *Spec) {
				s.MaxAttempts = 25
				s.InitialInterval = 15 * time.Second
				s.BackoffCoefficient = 4
				s.MaxInterval = time.Hour
			})},
		{"§12.4 custom non-retryable", `{
			"max_attempts": 5, "initial_interval": "PT30S", "backoff_coefficient": 2.0,
			"max_interval": "PT15M", "jitter": true,
			"non_retryable_errors": ["auth.invalid_credentials", "auth.account_suspended", "resource.not_found", "validation.*", "external.crm.api_deprecated"],
			"on_exhaustion": "dead_letter"}`,
			Spec{MaxAttempts: 5, InitialInterval: 30 * time.Second, BackoffCoefficient: 2, MaxInterval: 15 * time.Minute, Jitter: true, NonRetryableErrors: []string{"auth.invalid_credentials", "auth.account_suspended", "resource.not_found", "validation.*", "external.crm.api_deprecated"}, OnExhaustion: DeadLetter, Strategy: backoff.Exponential}},
		{"§12.5 constant polling", `{
			"max_attempts": 60, "initial_interval": "PT10S", "backoff_coefficient": 1.0,
			"max_interval": "PT10S", "jitter": false, "non_retryable_errors": [], "on_exhaustion": "dead_letter"}`,
			Spec{MaxAttempts: 60, InitialInterval: 10 * time.Second, BackoffCoefficient: 1, MaxInterval: 10 * time.Second, Jitter: false, NonRetryableErrors: []string{}, OnExhaustion: DeadLetter, Strategy: backoff.Exponential}},
		{"§12.6 direct to dead letter", `{"max_attempts": 1, "on_exhaustion": "dead_letter"}`,
			with(func(s *Spec) { s.MaxAttempts = 1; s.OnExhaustion = DeadLetter })},
		{"RK-04 max_attempts 0 valid and kept", `{"max_attempts": 0}`,
			with(func(s *Spec) { s.MaxAttempts = 0 })},
		{"RK-10 3.0", `{"max_attempts": 3.0}`, defaultSpec},
		{"RK-10 3e0", `{"max_attempts": 3e0}`, defaultSpec},
		{"RK-10 30e-1", `{"max_attempts": 30e-1}`, defaultSpec},
		{"RK-10 0.3E+1", `{"max_attempts": 0.3E+1}`, defaultSpec},
		{"RK-10 -0", `{"max_attempts": -0}`, with(func(s *Spec) { s.MaxAttempts = 0 })},
		{"RK-10 max int", `{"max_attempts": 9223372036854775807}`, with(func(s *Spec) { s.MaxAttempts = math.MaxInt })},
		{"RK-10 9.223372036854775807e18", `{"max_attempts": 9.223372036854775807e18}`, with(func(s *Spec) { s.MaxAttempts = math.MaxInt })},
		{"coefficient 1", `{"backoff_coefficient": 1}`, with(func(s *Spec) { s.BackoffCoefficient = 1 })},
		{"coefficient 1e0", `{"backoff_coefficient": 1e0}`, with(func(s *Spec) { s.BackoffCoefficient = 1 })},
		{"coefficient 10e-1", `{"backoff_coefficient": 10e-1}`, with(func(s *Spec) { s.BackoffCoefficient = 1 })},
		{"coefficient 1.5", `{"backoff_coefficient": 1.5}`, with(func(s *Spec) { s.BackoffCoefficient = 1.5 })},
		{"coefficient 1.0000000000000000001 (>= 1 exactly)", `{"backoff_coefficient": 1.0000000000000000001}`, with(func(s *Spec) { s.BackoffCoefficient = 1 })},
		{"coefficient max float", `{"backoff_coefficient": 1.7976931348623157e308}`, with(func(s *Spec) { s.BackoffCoefficient = math.MaxFloat64 })},
		// Long literals: strconv.ParseFloat alone reads "20" + 800 zeros +
		// "e-800" as 0.2 and "1" + 5000 zeros + "e-5000" as 0.
		{"coefficient 20 with 800 zeros", `{"backoff_coefficient": 20` + strings.Repeat("0", 800) + `e-800}`,
			with(func(s *Spec) { s.BackoffCoefficient = 20 })},
		{"coefficient 1 with 5000 zeros", `{"backoff_coefficient": 1` + strings.Repeat("0", 5000) + `e-5000}`,
			with(func(s *Spec) { s.BackoffCoefficient = 1 })},
		// 1 + 2^-53 is the midpoint of 1 and the next float64: exactly, it
		// rounds to even (1); a 1 digit 900 places later puts it above.
		{"coefficient midpoint 1+2^-53", `{"backoff_coefficient": 1.00000000000000011102230246251565404236316680908203125}`,
			with(func(s *Spec) { s.BackoffCoefficient = 1 })},
		{"coefficient just above the midpoint", `{"backoff_coefficient": 1.00000000000000011102230246251565404236316680908203125` + strings.Repeat("0", 900) + `1}`,
			with(func(s *Spec) { s.BackoffCoefficient = math.Nextafter(1, 2) })},
		{"coefficient ignored by none but valid", `{"backoff_coefficient": 3, "backoff_strategy": "none"}`,
			with(func(s *Spec) { s.BackoffCoefficient = 3; s.Strategy = backoff.None })},
		{"strategy linear", `{"backoff_strategy": "linear"}`, with(func(s *Spec) { s.Strategy = backoff.Linear })},
		{"strategy exponential", `{"backoff_strategy": "exponential"}`, defaultSpec},
		{"jitter false", `{"jitter": false}`, with(func(s *Spec) { s.Jitter = false })},
		{"max equal initial", `{"initial_interval": "PT5M", "max_interval": "PT5M"}`, defaultSpec2(5*time.Minute, 5*time.Minute)},
		{"fractional intervals", `{"initial_interval": "PT0.25S", "max_interval": "PT0.5S"}`, defaultSpec2(250*time.Millisecond, 500*time.Millisecond)},
		{"date components", `{"initial_interval": "P1D", "max_interval": "P1Y"}`, defaultSpec2(24*time.Hour, 365*24*time.Hour)},
		{"escaped key", `{"max\u005fattempts": 7}`, with(func(s *Spec) { s.MaxAttempts = 7 })},
		{"duplicate patterns allowed", `{"non_retryable_errors": ["a.b", "a.b"]}`, with(func(s *Spec) { s.NonRetryableErrors = []string{"a.b", "a.b"} })},
		{"odd but exact patterns (RK-15)", `{"non_retryable_errors": ["*", "a.*.b", "auth*", "x.*"]}`,
			with(func(s *Spec) { s.NonRetryableErrors = []string{"*", "a.*.b", "auth*", "x.*"} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustParse(t, tt.in)
			if diff := cmp.Diff(tt.want, p.Spec()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func defaultSpec2(initial, maxI time.Duration) Spec {
	s := defaultSpec
	s.InitialInterval, s.MaxInterval = initial, maxI
	return s
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		fields []string // FieldError.Field of every problem, in order
		msg    []string // substrings of the message
	}{
		// §11.1 max_attempts MUST be a non-negative integer
		{"max_attempts negative", `{"max_attempts": -1}`, []string{"max_attempts"}, []string{"policy: max_attempts: must be a non-negative integer, got -1"}},
		{"max_attempts string", `{"max_attempts": "3"}`, []string{"max_attempts"}, []string{`got "3"`}},
		{"max_attempts bool", `{"max_attempts": true}`, []string{"max_attempts"}, []string{"got true"}},
		{"max_attempts fraction", `{"max_attempts": 2.5}`, []string{"max_attempts"}, []string{"got 2.5"}},
		{"max_attempts 3.01e0", `{"max_attempts": 3.01e0}`, []string{"max_attempts"}, []string{"got 3.01e0"}},
		{"max_attempts 1e-1", `{"max_attempts": 1e-1}`, []string{"max_attempts"}, []string{"got 1e-1"}},
		{"max_attempts null", `{"max_attempts": null}`, []string{"max_attempts"}, []string{"got null"}},
		{"max_attempts array", `{"max_attempts": [3]}`, []string{"max_attempts"}, []string{"got an array"}},
		{"max_attempts object", `{"max_attempts": {"n": 3}}`, []string{"max_attempts"}, []string{"got an object"}},
		{"max_attempts above max int", `{"max_attempts": 9223372036854775808}`, []string{"max_attempts"}, []string{"no larger than 9223372036854775807"}},
		{"max_attempts 1e19", `{"max_attempts": 1e19}`, []string{"max_attempts"}, []string{"no larger than"}},
		{"max_attempts 1e400", `{"max_attempts": 1e400}`, []string{"max_attempts"}, []string{"no larger than"}},
		{"max_attempts -1e400", `{"max_attempts": -1e400}`, []string{"max_attempts"}, []string{"non-negative"}},
		// §11.1 initial_interval MUST be a valid ISO 8601 duration
		{"initial_interval PT", `{"initial_interval": "PT"}`, []string{"initial_interval"},
			[]string{`policy: initial_interval: invalid ISO 8601 duration "PT": "T" must be followed by at least one time component`}},
		{"initial_interval P", `{"initial_interval": "P"}`, []string{"initial_interval"}, []string{"at least one component"}},
		{"initial_interval weeks", `{"initial_interval": "P1W"}`, []string{"initial_interval"}, []string{"weeks"}},
		{"initial_interval number", `{"initial_interval": 1000}`, []string{"initial_interval"}, []string{"must be an ISO 8601 duration string, got 1000"}},
		{"initial_interval null", `{"initial_interval": null}`, []string{"initial_interval"}, []string{"got null"}},
		{"initial_interval 1s", `{"initial_interval": "1s"}`, []string{"initial_interval"}, []string{`"1s"`}},
		// §11.1 initial_interval MUST be greater than zero (RK-12)
		{"initial_interval PT0S", `{"initial_interval": "PT0S"}`, []string{"initial_interval"}, []string{`initial_interval: must be greater than zero, got "PT0S"`}},
		{"initial_interval P0D", `{"initial_interval": "P0D"}`, []string{"initial_interval"}, []string{"greater than zero"}},
		// §11.1 backoff_coefficient MUST be >= 1.0 (RK-14)
		{"coefficient 0.5", `{"backoff_coefficient": 0.5}`, []string{"backoff_coefficient"}, []string{"backoff_coefficient: must be >= 1.0, got 0.5"}},
		{"coefficient 0", `{"backoff_coefficient": 0}`, []string{"backoff_coefficient"}, []string{">= 1.0"}},
		{"coefficient -2", `{"backoff_coefficient": -2}`, []string{"backoff_coefficient"}, []string{">= 1.0"}},
		{"coefficient just below 1", `{"backoff_coefficient": 0.99999999999999999999}`, []string{"backoff_coefficient"}, []string{">= 1.0"}},
		{"coefficient 1e-400", `{"backoff_coefficient": 1e-400}`, []string{"backoff_coefficient"}, []string{">= 1.0"}},
		{"coefficient below 1 for none", `{"backoff_coefficient": 0.5, "backoff_strategy": "none"}`, []string{"backoff_coefficient"}, []string{">= 1.0"}},
		{"coefficient overflow", `{"backoff_coefficient": 1e400}`, []string{"backoff_coefficient"}, []string{"finite", "1e400"}},
		{"coefficient string", `{"backoff_coefficient": "2.0"}`, []string{"backoff_coefficient"}, []string{`must be a number, got "2.0"`}},
		{"coefficient null", `{"backoff_coefficient": null}`, []string{"backoff_coefficient"}, []string{"got null"}},
		// §11.1 max_interval MUST be a valid ISO 8601 duration
		{"max_interval P1DT", `{"max_interval": "P1DT"}`, []string{"max_interval"}, []string{`"P1DT"`}},
		{"max_interval sign", `{"max_interval": "-PT1S"}`, []string{"max_interval"}, []string{"sign"}},
		{"max_interval bool", `{"max_interval": true}`, []string{"max_interval"}, []string{"got true"}},
		{"max_interval PT0S", `{"max_interval": "PT0S"}`, []string{"max_interval"}, []string{"greater than zero"}},
		// §11.1 max_interval MUST be >= initial_interval (RK-12)
		{"max below initial", `{"initial_interval": "PT10S", "max_interval": "PT5S"}`, []string{"max_interval"},
			[]string{`max_interval: must be >= initial_interval "PT10S", got "PT5S"`}},
		{"default max below given initial", `{"initial_interval": "PT10M"}`, []string{"max_interval"}, []string{"(the default)"}},
		// §11.1 jitter MUST be a boolean
		{"jitter string", `{"jitter": "true"}`, []string{"jitter"}, []string{`jitter: must be a boolean, got "true"`}},
		{"jitter number", `{"jitter": 1}`, []string{"jitter"}, []string{"got 1"}},
		{"jitter null", `{"jitter": null}`, []string{"jitter"}, []string{"got null"}},
		// §11.1 non_retryable_errors MUST be an array of strings
		{"patterns string", `{"non_retryable_errors": "auth.*"}`, []string{"non_retryable_errors"}, []string{"must be an array of strings"}},
		{"patterns null", `{"non_retryable_errors": null}`, []string{"non_retryable_errors"}, []string{"got null"}},
		{"patterns object", `{"non_retryable_errors": {}}`, []string{"non_retryable_errors"}, []string{"got an object"}},
		{"patterns item number", `{"non_retryable_errors": ["a.b", 5, "c.d"]}`, []string{"non_retryable_errors[1]"}, []string{"non_retryable_errors[1]: must be a string, got 5"}},
		{"patterns item null", `{"non_retryable_errors": [null]}`, []string{"non_retryable_errors[0]"}, []string{"got null"}},
		{"patterns item nested", `{"non_retryable_errors": [["a"], {"b": [1]}, "x.y"]}`, []string{"non_retryable_errors[0]", "non_retryable_errors[1]"}, nil},
		{"patterns item empty (schema minLength 1)", `{"non_retryable_errors": ["a.b", "c.d", ""]}`, []string{"non_retryable_errors[2]"}, []string{"non_retryable_errors[2]"}},
		{"patterns .* alone", `{"non_retryable_errors": [".*"]}`, []string{"non_retryable_errors[0]"}, nil},
		{"patterns mixed", `{"non_retryable_errors": [1, "", true, ""]}`,
			[]string{"non_retryable_errors[0]", "non_retryable_errors[2]", "non_retryable_errors[1]", "non_retryable_errors[3]"}, nil},
		// §11.1 on_exhaustion MUST be "discard" or "dead_letter"
		{"on_exhaustion retry", `{"on_exhaustion": "retry"}`, []string{"on_exhaustion"}, []string{`on_exhaustion: must be "discard" or "dead_letter", got "retry"`}},
		{"on_exhaustion upper", `{"on_exhaustion": "DISCARD"}`, []string{"on_exhaustion"}, nil},
		{"on_exhaustion dead-letter", `{"on_exhaustion": "dead-letter"}`, []string{"on_exhaustion"}, nil},
		{"on_exhaustion null", `{"on_exhaustion": null}`, []string{"on_exhaustion"}, []string{"got null"}},
		{"on_exhaustion number", `{"on_exhaustion": 1}`, []string{"on_exhaustion"}, nil},
		// extension field
		{"strategy unknown", `{"backoff_strategy": "fibonacci"}`, []string{"backoff_strategy"}, []string{`got "fibonacci"`}},
		{"strategy upper", `{"backoff_strategy": "Exponential"}`, []string{"backoff_strategy"}, nil},
		{"strategy constant", `{"backoff_strategy": "constant"}`, []string{"backoff_strategy"}, nil},
		{"strategy null", `{"backoff_strategy": null}`, []string{"backoff_strategy"}, nil},
		// RK-02 unknown fields
		{"unknown field", `{"max_retries": 3}`, []string{"max_retries"}, []string{"policy: max_retries: unknown field"}},
		{"unknown field case", `{"Max_Attempts": 3}`, []string{"Max_Attempts"}, []string{`did you mean "max_attempts"`}},
		{"unknown empty key", `{"": 3}`, []string{`""`}, []string{`policy: "": unknown field`}},
		{"unknown type field", `{"type": "email.send"}`, []string{"type"}, nil},
		// RK-08 duplicate keys
		{"duplicate key", `{"max_attempts": 3, "max_attempts": 100}`, []string{"max_attempts"}, []string{"max_attempts: duplicate key"}},
		{"duplicate escaped key", `{"jitter": true, "jitt\u0065r": false}`, []string{"jitter"}, []string{"duplicate key"}},
		{"duplicate unknown key", `{"x": 1, "x": 2}`, []string{"x", "x"}, []string{"unknown field", "duplicate key"}},
		{"duplicate unknown key, escaped", `{"\u0078": 1, "x": 2}`, []string{"x", "x"}, []string{"unknown field", "duplicate key"}},
		{"duplicate key, escaped second", `{"max_attempts": 3, "max\u005Fattempts": 3}`, []string{"max_attempts"}, []string{"max_attempts: duplicate key"}},
		{"duplicate key, surrogate-free escape of every byte", `{"on_exhaustion": "discard", "\u006f\u006e\u005f\u0065\u0078\u0068\u0061\u0075\u0073\u0074\u0069\u006f\u006e": "discard"}`,
			[]string{"on_exhaustion"}, []string{"duplicate key"}},
		{"deeply nested unknown value", `{"x": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, []string{"x"}, []string{"x: unknown field"}},
		{"deeply nested top level", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), []string{""}, []string{"must be a JSON object"}},
		{"deeply nested unclosed", `{"x": ` + strings.Repeat("[", 100000), []string{"x", ""}, []string{"invalid JSON"}},
		{"byte order mark", "\xef\xbb\xbf{}", []string{""}, []string{"invalid JSON"}},
		// document
		{"top-level array", `[]`, []string{""}, []string{"policy: must be a JSON object, got an array"}},
		{"top-level string", `"PT1S"`, []string{""}, []string{"must be a JSON object"}},
		{"top-level number", `3`, []string{""}, []string{"must be a JSON object"}},
		{"top-level true", `true`, []string{""}, []string{"must be a JSON object"}},
		{"trailing object", `{} {}`, []string{""}, []string{"unexpected data after the policy object"}},
		{"trailing garbage", `{"max_attempts": 3}x`, []string{""}, []string{"unexpected data"}},
		{"trailing after null", `null null`, []string{""}, []string{"unexpected data"}},
		{"truncated", `{"max_attempts": 3`, []string{""}, []string{"invalid JSON"}},
		{"syntax error", `{"max_attempts": 3,}`, []string{""}, []string{"invalid JSON"}},
		{"single quotes", `{'max_attempts': 3}`, []string{""}, []string{"invalid JSON"}},
		{"errors before syntax error kept", `{"jitter": 1, "max_attempts" 3}`, []string{"jitter", ""}, nil},
		// collect all problems
		{"many problems", `{"max_attempts": -1, "initial_interval": "PT0S", "backoff_coefficient": 0.5, "max_interval": "P1W",
			"jitter": "yes", "non_retryable_errors": [""], "on_exhaustion": "keep", "backoff_strategy": "random", "extra": 1}`,
			[]string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval", "jitter", "non_retryable_errors[0]", "on_exhaustion", "backoff_strategy", "extra"},
			[]string{"policy: 9 problems: max_attempts: must be a non-negative integer, got -1; "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%s) = %+v, want error", tt.in, p.Spec())
			}
			checkValidationError(t, err, tt.fields, tt.msg)
		})
	}
}

func checkValidationError(t *testing.T, err error, fields, msg []string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("error %v is not ErrInvalidPolicy", err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %T is not *ValidationError", err)
	}
	if ve.Type() != "validation.retry_policy_invalid" {
		t.Errorf("Type() = %q", ve.Type())
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Errorf("errors.As(*FieldError) failed")
	}
	var got []string
	for _, fe := range ve.Errors {
		got = append(got, fe.Field)
	}
	if diff := cmp.Diff(fields, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s\nerror: %v", diff, err)
	}
	s := err.Error()
	if !strings.HasPrefix(s, "policy: ") {
		t.Errorf("message %q lacks the prefix", s)
	}
	for _, f := range fields {
		if !strings.Contains(s, f) {
			t.Errorf("message %q does not name %q", s, f)
		}
	}
	for _, m := range msg {
		if !strings.Contains(s, m) {
			t.Errorf("message %q does not contain %q", s, m)
		}
	}
}

func TestErrorCauses(t *testing.T) {
	_, err := Parse([]byte(`{"initial_interval": "PT", "non_retryable_errors": ["a", ""], "backoff_strategy": "x"}`))
	if !errors.Is(err, ErrInvalidDuration) {
		t.Errorf("duration cause lost: %v", err)
	}
	var de *DurationError
	if !errors.As(err, &de) || de.Value != "PT" {
		t.Errorf("errors.As DurationError: %v", de)
	}
	if !errors.Is(err, errmatch.ErrEmptyPattern) {
		t.Errorf("pattern cause lost: %v", err)
	}
	var pe *errmatch.PatternError
	if !errors.As(err, &pe) || pe.Index != 1 {
		t.Errorf("PatternError = %+v, want Index 1", pe)
	}
	if !errors.Is(err, backoff.ErrUnknownStrategy) {
		t.Errorf("strategy cause lost: %v", err)
	}

	// index mapping with non-string entries before the bad one
	_, err = Parse([]byte(`{"non_retryable_errors": [1, 2, ".*"]}`))
	if !errors.As(err, &pe) || pe.Index != 2 {
		t.Errorf("PatternError = %+v, want Index 2", pe)
	}
	if !errors.Is(err, errmatch.ErrEmptyPrefix) {
		t.Errorf("ErrEmptyPrefix lost: %v", err)
	}
}

func TestNewValidation(t *testing.T) {
	good := DefaultSpec()
	if _, err := New(good); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mod    func(*Spec)
		fields []string
	}{
		{"negative attempts", func(s *Spec) { s.MaxAttempts = -1 }, []string{"max_attempts"}},
		{"zero initial", func(s *Spec) { s.InitialInterval = 0 }, []string{"initial_interval"}},
		{"negative initial", func(s *Spec) { s.InitialInterval = -time.Second }, []string{"initial_interval"}},
		{"coefficient below 1", func(s *Spec) { s.BackoffCoefficient = 0.999 }, []string{"backoff_coefficient"}},
		{"coefficient NaN", func(s *Spec) { s.BackoffCoefficient = math.NaN() }, []string{"backoff_coefficient"}},
		{"coefficient +Inf", func(s *Spec) { s.BackoffCoefficient = math.Inf(1) }, []string{"backoff_coefficient"}},
		{"max below initial", func(s *Spec) { s.MaxInterval = s.InitialInterval - 1 }, []string{"max_interval"}},
		{"max zero", func(s *Spec) { s.MaxInterval = 0 }, []string{"max_interval"}},
		{"empty pattern", func(s *Spec) { s.NonRetryableErrors = []string{"a", ""} }, []string{"non_retryable_errors[1]"}},
		{"invalid UTF-8 pattern", func(s *Spec) { s.NonRetryableErrors = []string{"a\xff"} }, []string{"non_retryable_errors[0]"}},
		{"on_exhaustion retry", func(s *Spec) { s.OnExhaustion = Retry }, []string{"on_exhaustion"}},
		{"on_exhaustion out of range", func(s *Spec) { s.OnExhaustion = 9 }, []string{"on_exhaustion"}},
		{"strategy out of range", func(s *Spec) { s.Strategy = 200 }, []string{"backoff_strategy"}},
		{"all", func(s *Spec) {
			*s = Spec{MaxAttempts: -5, BackoffCoefficient: 0, MaxInterval: -1, OnExhaustion: Retry, Strategy: 9, NonRetryableErrors: []string{""}}
		}, []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval", "non_retryable_errors[0]", "on_exhaustion", "backoff_strategy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSpec()
			tt.mod(&s)
			_, err := New(s)
			if err == nil {
				t.Fatal("want error")
			}
			checkValidationError(t, err, tt.fields, nil)
		})
	}
	if _, err := New(Spec{}); err == nil {
		t.Error("zero Spec must be invalid")
	}
}

func TestSpecIsACopy(t *testing.T) {
	in := DefaultSpec()
	in.NonRetryableErrors = []string{"a.b", "c.*"}
	p, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	in.NonRetryableErrors[0] = "changed"
	s := p.Spec()
	if s.NonRetryableErrors[0] != "a.b" {
		t.Errorf("New kept the caller's slice")
	}
	s.NonRetryableErrors[1] = "changed"
	if got := p.Spec().NonRetryableErrors[1]; got != "c.*" {
		t.Errorf("Spec() shares the slice: %q", got)
	}
	if !p.Matcher().Match("c.x") || p.Matcher().Match("changed") {
		t.Errorf("matcher affected by caller mutation")
	}
}

func TestMarshal(t *testing.T) {
	p := Default()
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"max_attempts":3,"initial_interval":"PT1S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"discard","backoff_strategy":"exponential"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	s := Spec{MaxAttempts: 0, InitialInterval: 1500 * time.Millisecond, BackoffCoefficient: 1.5, MaxInterval: 36 * time.Hour, Jitter: false, NonRetryableErrors: []string{"a.*", "quote\"back\\slash", "ctl\x01\n", "uni\u2028é"}, OnExhaustion: DeadLetter, Strategy: backoff.Polynomial}
	q, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(q)
	want = `{"max_attempts":0,"initial_interval":"PT1.5S","backoff_coefficient":1.5,"max_interval":"PT36H","jitter":false,` +
		`"non_retryable_errors":["a.*","quote\"back\\slash","ctl\u0001\n","uni\u2028é"],"on_exhaustion":"dead_letter","backoff_strategy":"polynomial"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Equal(q) {
		t.Errorf("round trip: %+v != %+v", r.Spec(), q.Spec())
	}

	// coefficients that need the exponent form still parse back
	for _, k := range []float64{1, 1e21, 1e308, math.MaxFloat64, 1.0000000000000002, 123456789.123} {
		s := DefaultSpec()
		s.BackoffCoefficient = k
		p, _ := New(s)
		b, _ := p.MarshalJSON()
		r, err := Parse(b)
		if err != nil || r.Spec().BackoffCoefficient != k {
			t.Errorf("coefficient %v: %s -> %v, %v", k, b, r.Spec().BackoffCoefficient, err)
		}
	}
}

// The largest values of every field survive the round trip, written in a
// form the strict parser accepts (hours at most, never days or months).
func TestMarshalExtremes(t *testing.T) {
	s := Spec{MaxAttempts: math.MaxInt, InitialInterval: math.MaxInt64, BackoffCoefficient: math.MaxFloat64, MaxInterval: math.MaxInt64, Jitter: true, NonRetryableErrors: []string{"a.*"}, OnExhaustion: DeadLetter, Strategy: backoff.Linear}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.MarshalJSON()
	want := `{"max_attempts":9223372036854775807,"initial_interval":"PT2562047H47M16.854775807S","backoff_coefficient":1.7976931348623157e+308,` +
		`"max_interval":"PT2562047H47M16.854775807S","jitter":true,"non_retryable_errors":["a.*"],"on_exhaustion":"dead_letter","backoff_strategy":"linear"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	q, err := Parse(b)
	if err != nil || !q.Equal(p) {
		t.Fatalf("Parse(Marshal) = %+v, %v", q.Spec(), err)
	}
	// Smallest: 1ns intervals, coefficient just above 1.
	s = Spec{MaxAttempts: 0, InitialInterval: 1, BackoffCoefficient: math.Nextafter(1, 2), MaxInterval: 1, Jitter: false, NonRetryableErrors: nil, OnExhaustion: Discard, Strategy: backoff.Exponential}
	p, _ = New(s)
	b, _ = p.MarshalJSON()
	if want := `"initial_interval":"PT0.000000001S","backoff_coefficient":1.0000000000000002,"max_interval":"PT0.000000001S"`; !strings.Contains(string(b), want) {
		t.Errorf("got %s, want it to contain %s", b, want)
	}
	if q, err := Parse(b); err != nil || !q.Equal(p) {
		t.Errorf("Parse(%s) = %v", b, err)
	}
}

func TestUnmarshalJSON(t *testing.T) {
	var v struct {
		Retry Policy `json:"retry"`
	}
	if err := json.Unmarshal([]byte(`{"retry": {"max_attempts": 10, "on_exhaustion": "dead_letter"}}`), &v); err != nil {
		t.Fatal(err)
	}
	if s := v.Retry.Spec(); s.MaxAttempts != 10 || s.OnExhaustion != DeadLetter || s.InitialInterval != time.Second {
		t.Errorf("got %+v", s)
	}
	err := json.Unmarshal([]byte(`{"retry": {"max_attempts": 1, "max_attempts": 2}}`), &v)
	if !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("duplicate key through encoding/json: %v", err)
	}
	var p Policy
	if err := p.UnmarshalJSON([]byte("null")); err != nil || !p.Equal(Default()) {
		t.Errorf("null: %v", err)
	}
}

func TestNilAndZeroPolicy(t *testing.T) {
	var nilP *Policy
	var zero Policy
	for _, p := range []*Policy{nilP, &zero} {
		if !p.Equal(Default()) {
			t.Errorf("not equal to Default")
		}
		if diff := cmp.Diff(defaultSpec, p.Spec()); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		d, err := p.DecideAt(Failure{Attempt: 3}, 0)
		if err != nil || d.Action != Discard || d.Reason != ReasonExhausted {
			t.Errorf("DecideAt = %+v, %v", d, err)
		}
		if p.Backoff() == nil {
			t.Errorf("nil Backoff")
		}
	}
}

func TestEqual(t *testing.T) {
	a := mustParse(t, `{"non_retryable_errors": ["a", "b"]}`)
	b := mustParse(t, `{"non_retryable_errors": ["b", "a"]}`)
	if a.Equal(b) {
		t.Error("pattern order must matter")
	}
	s := DefaultSpec()
	s.NonRetryableErrors = nil
	c, _ := New(s)
	if !c.Equal(Default()) {
		t.Error("nil patterns must equal empty")
	}
	if mustParse(t, `{"backoff_strategy": "linear"}`).Equal(Default()) {
		t.Error("strategy must matter")
	}
}

func TestActionText(t *testing.T) {
	for a, s := range map[Action]string{Retry: "retry", Discard: "discard", DeadLetter: "dead_letter"} {
		if a.String() != s {
			t.Errorf("%d.String() = %q", a, a.String())
		}
		b, err := a.MarshalText()
		if err != nil || string(b) != s {
			t.Errorf("MarshalText = %q, %v", b, err)
		}
		var got Action
		if err := got.UnmarshalText([]byte(s)); err != nil || got != a {
			t.Errorf("UnmarshalText(%q) = %v, %v", s, got, err)
		}
	}
	if Action(7).String() != "Action(7)" {
		t.Errorf("Action(7).String() = %q", Action(7).String())
	}
	if _, err := Action(7).MarshalText(); err == nil {
		t.Error("MarshalText of an invalid Action must fail")
	}
	a := Discard
	if err := a.UnmarshalText([]byte("Retry")); err == nil || a != Discard {
		t.Error("UnmarshalText must be exact and leave a unchanged on error")
	}
	for r, s := range map[Reason]string{ReasonRetry: "retry", ReasonHandlerCode: "handler_code", ReasonNonRetryable: "non_retryable", ReasonExhausted: "exhausted", 9: "Reason(9)"} {
		if r.String() != s {
			t.Errorf("Reason %d = %q", r, r.String())
		}
	}
}

// Huge inputs are not echoed whole into messages, but stay whole in Value.
func TestLongValuesClippedInMessages(t *testing.T) {
	long := strings.Repeat("9", 100000)
	key := strings.Repeat("k", 500)
	in := `{"max_attempts": ` + long + `, "initial_interval": "PT` + long + `S", "` + key + `": 1}`
	_, err := Parse([]byte(in))
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 3 {
		t.Fatalf("Parse: %v", err)
	}
	msg := err.Error()
	if len(msg) > 1000 {
		t.Errorf("message is %d bytes long: %.200s...", len(msg), msg)
	}
	for _, want := range []string{"max_attempts: ", "initial_interval: ", "(100000 bytes)", "(500 bytes)", "unknown field"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if v, ok := ve.Errors[0].Value.(json.Number); !ok || string(v) != long {
		t.Errorf("max_attempts Value was clipped: %T of length %d", ve.Errors[0].Value, len(fmt.Sprint(ve.Errors[0].Value)))
	}
	if ve.Errors[2].Field != key {
		t.Errorf("unknown key Field was clipped: %d bytes", len(ve.Errors[2].Field))
	}
}

// Many distinct unknown keys are each counted once, the first
// MaxListedErrors listed, and a repeat of a listed one is a duplicate;
// detection does not scan every earlier key (50 000 keys used to take
// seconds).
func TestManyUnknownKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	const n = 20000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"k%d": 1,`, i)
		if i == 5 {
			b.WriteString(`"k2": 2,`)
		}
	}
	b.WriteString(`"k7": 2}`)
	_, err := Parse([]byte(b.String()))
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != MaxListedErrors || ve.Omitted != n+2-MaxListedErrors {
		t.Fatalf("Parse: got %d problems listed and %d omitted, want %d and %d", len(ve.Errors), ve.Omitted, MaxListedErrors, n+2-MaxListedErrors)
	}
	if dup := ve.Errors[6]; dup.Field != "k2" || dup.Reason != "duplicate key" {
		t.Errorf("problem 6 = %s %q, want k2 duplicate key", dup.Field, dup.Reason)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "policy: 20002 problems: k0: unknown field; ") || !strings.HasSuffix(msg, "; and 19982 more") {
		t.Errorf("message = %q", msg)
	}
}
