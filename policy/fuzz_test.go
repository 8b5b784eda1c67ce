package policy

import (
	"encoding/json"
	"errors"
	"math/big"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sosodev/duration"

	"github.com/retrykit/retrykit/errmatch"

	"github.com/retrykit/retrykit/internal/strictjson"
)

// durationGrammar is the §14 schema pattern as retrykit enforces it (RK-03):
// ASCII digits, a fraction only on seconds, components in order.
var durationGrammar = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)(?:\.([0-9]+))?S)?)?$`)

// oracleDuration is an independent reading of s: whether it is in the
// grammar (at least one component, no bare "T"), and its exact value in
// nanoseconds as a big.Int (Y = 365 d, month = 730 h, D = 24 h, the fraction
// rounded half up to the nanosecond), without any fixed-size arithmetic.
func oracleDuration(s string) (*big.Int, bool) {
	m := durationGrammar.FindStringSubmatch(s)
	if m == nil || s == "P" || s[len(s)-1] == 'T' {
		return nil, false
	}
	const h = int64(3600e9)
	units := []int64{365 * 24 * h, 730 * h, 24 * h, h, 60e9, 1e9}
	sum := new(big.Int)
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		v, _ := new(big.Int).SetString(m[i+1], 10)
		sum.Add(sum, v.Mul(v, big.NewInt(u)))
	}
	if frac := m[7]; frac != "" {
		// round(0.frac * 1e9), half up: (frac * 1e9 * 2 + 10^len) / (2 * 10^len)
		f, _ := new(big.Int).SetString(frac, 10)
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
		f.Mul(f, big.NewInt(2e9))
		f.Add(f, den)
		f.Quo(f, den.Mul(den, big.NewInt(2)))
		sum.Add(sum, f)
	}
	return sum, true
}

// checkOracle checks a duration ParseDuration accepted against
// github.com/sosodev/duration, an independent ISO 8601 parser: it must
// accept s too, with the same components. sosodev/duration reads each
// component with strconv.ParseFloat, so the comparison is exact: the
// integer components, and the seconds with their fraction, parsed as
// float64 from the digits the grammar captured.
func checkOracle(t interface {
	Helper()
	Fatalf(string, ...any)
}, s string) {
	t.Helper()
	m := durationGrammar.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%q: accepted but outside the grammar", s)
	}
	o, err := duration.Parse(s)
	if err != nil {
		t.Fatalf("%q: accepted by ParseDuration, rejected by sosodev/duration: %v", s, err)
	}
	if o.Negative || o.Weeks != 0 {
		t.Fatalf("%q: sosodev/duration reads %+v", s, o)
	}
	num := func(digits string) float64 {
		if digits == "" {
			return 0
		}
		v, err := strconv.ParseFloat(digits, 64)
		if err != nil {
			t.Fatalf("%q: %v", digits, err)
		}
		return v
	}
	sec := m[6]
	if m[7] != "" {
		sec += "." + m[7]
	}
	want := [...]float64{num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(sec)}
	got := [...]float64{o.Years, o.Months, o.Days, o.Hours, o.Minutes, o.Seconds}
	if got != want {
		t.Fatalf("%q: sosodev/duration reads Y M D H M S = %v, the grammar's digits are %v", s, got, want)
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT1S", "PT0.5S", "P1Y2M3DT4H5M6.7S", "PT", "P", "P1W", "-PT1S", "PT1,5S",
		"PT0.0000000005S", "PT2562047H47M16.854775807S", "PT2562047H47M16.854775808S", "PT1S1M", "pt1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, inGrammar := oracleDuration(s)
		d, err := ParseDuration(s)
		if err != nil {
			var de *DurationError
			if !errors.Is(err, ErrInvalidDuration) || !errors.As(err, &de) || de.Value != s {
				t.Fatalf("ParseDuration(%q): bad error %v", s, err)
			}
			if inGrammar && want != nil && want.IsInt64() && len(s) <= MaxDurationLen {
				t.Fatalf("ParseDuration(%q) rejected a string of the schema grammar worth %v ns: %v", s, want, err)
			}
			return
		}
		if !inGrammar {
			t.Fatalf("ParseDuration(%q) = %d, but the string is outside the schema grammar", s, d)
		}
		if !want.IsInt64() || want.Int64() != int64(d) {
			t.Fatalf("ParseDuration(%q) = %d, want %v (exact, big.Int)", s, d, want)
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %d < 0", s, d)
		}
		checkOracle(t, s)
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
		"{\"non_retryable_errors\": [\"a.\xff\"]}",
		`{"non_retryable_errors": ["\ud800.x"]}`,
		`{"initial_interval": "PT1.00000000000000000000000000000000001S"}`,
		`{"jitter_mode": "decorrelated", "max_snoozes": 3, "max_snooze": "PT1M", "max_retry_after": "PT1H"}`,
		`{"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 10, "initial_interval": "PT1M", "jitter": false}, {"match": ["a", 1]}, 3, {}]}`,
		`{"error_rules": [{"match": ["a"], "on_exhaustion": "discard", "match": []}], "match": ["x"]}`,
		`{"jitter": false, "error_rules": [{"match": ["a"], "jitter_mode": "full", "max_atempts": 1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if strictjson.Valid(data) != json.Valid(data) {
			t.Fatalf("strictjson.Valid(%q) = %v, json.Valid says %v", data, strictjson.Valid(data), json.Valid(data))
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
		// Parse and New agree: the Spec Parse built passes New unchanged.
		if n, err := New(p.Spec()); err != nil || !n.Equal(p) {
			t.Fatalf("New(Parse(%q).Spec()) = %v, %v", data, n, err)
		}
		d, err := p.DecideAt(Failure{Attempt: 1, ErrorType: "x.y"}, 0.5)
		if err != nil || d.Delay < 0 || d.Delay > p.BackoffFor("x.y").Config().Max {
			t.Fatalf("DecideAt: %+v %v", d, err)
		}
	})
}

// FuzzDecideExtension decides random failures, with requested delays,
// snoozes and previous delays, under random policies of the retry
// extensions (docs/extensions.md), and checks the bounds of §3: a delay
// is never negative nor above the bound of the rule that chose it, a
// snooze only while snoozes remain and never longer than max_snooze, and
// an error only for invalid input.
func FuzzDecideExtension(f *testing.F) {
	f.Add([]byte(`{"jitter_mode":"decorrelated","max_snoozes":2,"max_snooze":"PT1M","error_rules":[{"match":["a.*"],"max_attempts":9,"initial_interval":"PT1M","max_retry_after":"PT2H"}]}`),
		3, "a.b", uint8(1), int64(3600e9), int64(0), 0, 0.5)
	f.Add([]byte(`{"max_snoozes":1}`), 1, "", uint8(2), int64(-1), int64(5), 1, 0.0)
	f.Add([]byte(`{"jitter_mode":"full","error_rules":[{"match":["x"],"jitter_mode":"equal"}]}`), 2, "x", uint8(0), int64(0), int64(1e12), 0, 0.99)
	f.Fuzz(func(t *testing.T, doc []byte, attempt int, errType string, kind uint8, reqDelay, prev int64, snoozes int, r float64) {
		p, err := Parse(doc)
		if err != nil {
			return
		}
		s := p.Spec()
		fl := Failure{Attempt: attempt, ErrorType: errType, Request: errmatch.Request{Kind: errmatch.RequestKind(kind % 4), Delay: time.Duration(reqDelay)},
			PrevDelay: time.Duration(prev), Snoozes: snoozes}
		d, err := p.DecideAt(fl, r)
		invalid := attempt < 1 || fl.Request.Kind > errmatch.Snooze || (fl.Request.Kind != errmatch.NoRequest && reqDelay < 0) || prev < 0 || snoozes < 0
		if invalid != (err != nil) {
			t.Fatalf("DecideAt(%+v) error %v, invalid input %v", fl, err, invalid)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidFailure) {
				t.Fatalf("error %v is not ErrInvalidFailure", err)
			}
			return
		}
		if why := boundProblem(s, p, fl, d); why != "" {
			t.Fatalf("%s under %s", why, doc)
		}
	})
}
