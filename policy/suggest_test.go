package policy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/policy"
)

// Unknown keys get a "did you mean" for the nearest field, and stay values
// callers can branch on.
func TestUnknownFieldSuggestion(t *testing.T) {
	for _, tc := range []struct {
		doc, field, suggestion string
	}{
		{`{"jiter": true}`, "jiter", "jitter"},
		{`{"max_atempts": 3}`, "max_atempts", "max_attempts"},
		{`{"initialInterval": "PT1S"}`, "initialInterval", "initial_interval"},
		{`{"on_exhaustoin": "discard"}`, "on_exhaustoin", "on_exhaustion"},
		{`{"non_retryable_error": []}`, "non_retryable_error", "non_retryable_errors"},
		{`{"max_retries": 3}`, "max_retries", ""},
		{`{"colour": 3}`, "colour", ""},
	} {
		_, err := policy.Parse([]byte(tc.doc))
		if !errors.Is(err, policy.ErrInvalidPolicy) || !errors.Is(err, policy.ErrUnknownField) {
			t.Errorf("%s: %v does not match ErrInvalidPolicy and ErrUnknownField", tc.doc, err)
			continue
		}
		var fe *policy.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || fe.Suggestion != tc.suggestion || fe.Err != policy.ErrUnknownField {
			t.Errorf("%s: FieldError %+v, want field %q, suggestion %q", tc.doc, fe, tc.field, tc.suggestion)
			continue
		}
		want := "policy: " + tc.field + ": unknown field"
		if tc.suggestion != "" {
			want += ` (did you mean "` + tc.suggestion + `"?)`
		}
		if err.Error() != want {
			t.Errorf("%s: message %q, want %q", tc.doc, err, want)
		}
	}
	// A bad value of a known field is not an unknown field.
	if _, err := policy.Parse([]byte(`{"jitter": 1}`)); errors.Is(err, policy.ErrUnknownField) {
		t.Errorf("bad value matches ErrUnknownField: %v", err)
	}
}

// A huge unknown key is clipped in the message and gets no suggestion, and
// many unknown keys cost no more than the listed ones.
func TestUnknownFieldSuggestionHostile(t *testing.T) {
	key := strings.Repeat("jitter", 100000)
	_, err := policy.Parse([]byte(`{"` + key + `": 1}`))
	var fe *policy.FieldError
	if !errors.As(err, &fe) || fe.Suggestion != "" || len(err.Error()) > 200 {
		t.Fatalf("huge key: %d-byte message, suggestion %q", len(err.Error()), fe.Suggestion)
	}
	var b strings.Builder
	b.WriteString("{")
	for i := range 50000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"jiter` + strings.Repeat("x", i%40) + `":` + "1")
	}
	b.WriteString("}")
	_, err = policy.Parse([]byte(b.String()))
	var ve *policy.ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != policy.MaxListedErrors || ve.Errors[0].Suggestion != "jitter" {
		t.Fatalf("many keys: %v", err)
	}
}
