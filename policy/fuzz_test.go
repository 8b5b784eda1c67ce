package policy

import (
	"encoding/json"
	"errors"
	"testing"
)

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT1S", "PT0.5S", "P1Y2M3DT4H5M6.7S", "PT", "P", "P1W", "-PT1S", "PT1,5S",
		"PT0.0000000005S", "PT2562047H47M16.854775807S", "PT2562047H47M16.854775808S", "PT1S1M", "pt1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			var de *DurationError
			if !errors.Is(err, ErrInvalidDuration) || !errors.As(err, &de) || de.Value != s {
				t.Fatalf("ParseDuration(%q): bad error %v", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %d < 0", s, d)
		}
		f := FormatDuration(d)
		back, err := ParseDuration(f)
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %d; FormatDuration = %q; back %d, %v", s, d, f, back, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `[]`,
		`{"max_attempts": 10, "on_exhaustion": "dead_letter"}`,
		`{"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0, "max_interval": "PT1H", "jitter": true, "non_retryable_errors": ["payment.card_stolen", "validation.*"], "on_exhaustion": "dead_letter", "backoff_strategy": "polynomial"}`,
		`{"max_attempts": 3.0, "max_attempts": 3}`,
		`{"max_attempts": null}`,
		`{"non_retryable_errors": ["", 1, [2], {"a": null}]}`,
		`{"backoff_coefficient": 1e400}`,
		`{"initial_interval": "PT0S"}`,
		`{} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if validJSON(data) != json.Valid(data) {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", data, validJSON(data), json.Valid(data))
		}
		p, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("error %v is not ErrInvalidPolicy", err)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Errors) == 0 {
				t.Fatalf("error %v has no field errors", err)
			}
			return
		}
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(Marshal) of %q: %s: %v", data, b, err)
		}
		if !q.Equal(p) {
			t.Fatalf("round trip of %q differs: %s", data, b)
		}
		d, err := p.DecideAt(Failure{Attempt: 1, ErrorType: "x.y"}, 0.5)
		if err != nil || d.Delay < 0 || d.Delay > p.Spec().MaxInterval {
			t.Fatalf("DecideAt: %+v %v", d, err)
		}
	})
}
