package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// Each binding spelling gives the policy its ISO spelling gives: the
// expected documents are written out by hand.
func TestBindingDialectSpellsTheSamePolicy(t *testing.T) {
	for dialect, iso := range map[string]string{
		`{"initial_interval_ms": 1500}`:                            `{"initial_interval": "PT1.5S"}`,
		`{"initial_interval_ms": 1500.0}`:                          `{"initial_interval": "PT1.5S"}`, // RK-10
		`{"initial_interval_ms": 15e2, "max_interval_ms": 6e4}`:    `{"initial_interval": "PT1.5S", "max_interval": "PT1M"}`,
		`{"backoff_type": "constant"}`:                             `{"backoff_strategy": "none"}`,
		`{"backoff_type": "FIXED"}`:                                `{"backoff_strategy": "none"}`,
		`{"backoff_type": "Linear"}`:                               `{"backoff_strategy": "linear"}`,
		`{"backoff_type": "linear", "backoff_strategy": "linear"}`: `{"backoff_strategy": "linear"}`,
		`{"max_attempts": 3, "backoff_type": "polynomial"}`:        `{"max_attempts": 3, "backoff_strategy": "polynomial"}`,
	} {
		got, err := policy.ParseWith([]byte(dialect), policy.BindingDialect())
		if err != nil {
			t.Errorf("ParseWith(%s): %v", dialect, err)
			continue
		}
		want, err := policy.Parse([]byte(iso))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("ParseWith(%s) = %v, want %v", dialect, got.Spec(), want.Spec())
		}
		if _, err := policy.Parse([]byte(dialect)); !errors.Is(err, policy.ErrUnknownField) {
			t.Errorf("Parse(%s) without the dialect = %v, want ErrUnknownField", dialect, err)
		}
	}
}

func TestBindingDialectRefusals(t *testing.T) {
	for in, field := range map[string]string{
		`{"initial_interval_ms": 1000, "initial_interval": "PT1S"}`:     "initial_interval_ms",
		`{"max_interval": "PT1S", "max_interval_ms": 1000}`:             "max_interval_ms",
		`{"initial_interval_ms": 1, "initial_interval_ms": 2}`:          "initial_interval_ms",
		`{"initial_interval_ms": 0}`:                                    "initial_interval_ms",
		`{"initial_interval_ms": 2.5}`:                                  "initial_interval_ms",
		`{"initial_interval_ms": "1000"}`:                               "initial_interval_ms",
		`{"max_interval_ms": 9223372036855}`:                            "max_interval_ms",
		`{"backoff_type": "exponential", "backoff_strategy": "linear"}`: "backoff_type",
		`{"backoff_type": "random"}`:                                    "backoff_type",
		`{"backoff_type": 1}`:                                           "backoff_type",
		`{"initial_interval_ms": 60000, "max_interval_ms": 1000}`:       "max_interval",
	} {
		_, err := policy.ParseWith([]byte(in), policy.BindingDialect())
		var fe *policy.FieldError
		if !errors.Is(err, policy.ErrInvalidPolicy) || !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("ParseWith(%s) = %v, want a problem with %s", in, err, field)
		}
	}
}

func TestOverKeepsTheFieldsTheOverrideOmits(t *testing.T) {
	base, err := policy.Parse([]byte(`{"max_attempts": 7, "initial_interval": "PT2S", "backoff_strategy": "linear", "non_retryable_errors": ["a.b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := policy.ParseWith([]byte(`{"max_attempts": 2, "initial_interval_ms": 500, "backoff_type": "constant"}`), policy.Over(base), policy.BindingDialect())
	if err != nil {
		t.Fatal(err)
	}
	want := base.Spec()
	want.MaxAttempts, want.InitialInterval, want.Strategy = 2, 500*time.Millisecond, backoff.None
	wantP, err := policy.New(want)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(wantP) {
		t.Fatalf("got %v, want %v", got.Spec(), want)
	}
	for _, empty := range []string{``, `null`} {
		if p, err := policy.ParseWith([]byte(empty), policy.Over(base)); err != nil || !p.Equal(base) {
			t.Errorf("ParseWith(%q, Over) = %v, %v; want base", empty, p, err)
		}
	}
	if _, err := policy.ParseWith([]byte(`{"max_attempts": 1, "max_attempts": 2}`), policy.Over(base)); !errors.Is(err, policy.ErrInvalidPolicy) {
		t.Errorf("duplicate key over a base: %v", err)
	}
}

func ExampleParseWith() {
	p, err := policy.ParseWith([]byte(`{"max_attempts": 5, "initial_interval_ms": 250, "backoff_type": "constant"}`), policy.BindingDialect())
	fmt.Println(p.Spec().InitialInterval, p.Spec().Strategy, err)
	_, err = policy.ParseWith([]byte(`{"initial_interval_ms": 250, "initial_interval": "PT1S"}`), policy.BindingDialect())
	fmt.Println(err)
	// Output:
	// 250ms none <nil>
	// policy: initial_interval_ms: give initial_interval or initial_interval_ms, not both
}

// FuzzParseWith: with the binding dialect, any input gives a policy or an
// ErrInvalidPolicy listing fields, never a panic; and a document without
// the dialect's keys (nor escapes that could spell them) gets Parse's
// verdict and an Equal policy: the option adds spellings, never changes
// the grammar. (The dialect's own keys are pinned by
// TestBindingDialectSpellsTheSamePolicy and TestBindingDialectRefusals.)
func FuzzParseWith(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"initial_interval_ms": 1500}`, `{"max_interval_ms": 60000, "initial_interval_ms": 1000.0}`,
		`{"backoff_type": "constant"}`, `{"backoff_type": "linear", "backoff_strategy": "none"}`,
		`{"initial_interval_ms": 1000, "initial_interval": "PT1S"}`, `{"initial_interval_ms": 0}`,
		`{"initial_interval_ms": 1e400}`, `{"max_attempts": 3, "backoff_type": 7}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.ParseWith(data, policy.BindingDialect())
		if err != nil {
			var ve *policy.ValidationError
			if !errors.Is(err, policy.ErrInvalidPolicy) || !errors.As(err, &ve) || len(ve.Errors) == 0 {
				t.Fatalf("ParseWith(%q) = %v", data, err)
			}
		}
		s := string(data)
		if strings.Contains(s, "_ms") || strings.Contains(s, "backoff_type") || strings.Contains(s, `\u`) {
			return
		}
		q, qerr := policy.Parse(data)
		if (err == nil) != (qerr == nil) || err == nil && !p.Equal(q) {
			t.Fatalf("ParseWith(%q) = %v, %v; Parse = %v, %v", data, p, err, q, qerr)
		}
	})
}
