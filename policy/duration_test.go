package policy

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseDurationValid(t *testing.T) {
	const (
		day   = 24 * time.Hour
		month = 730 * time.Hour
		year  = 365 * day
	)
	tests := []struct {
		in   string
		want time.Duration
	}{
		// spec §4.1 table
		{"PT0.5S", 500 * time.Millisecond},
		{"PT1S", time.Second},
		{"PT5S", 5 * time.Second},
		{"PT30S", 30 * time.Second},
		{"PT1M", time.Minute},
		{"PT5M", 5 * time.Minute},
		{"PT15M", 15 * time.Minute},
		{"PT1H", time.Hour},
		{"PT24H", 24 * time.Hour},
		// zero is a valid duration (RK-12)
		{"PT0S", 0},
		{"P0D", 0},
		{"PT0H0M0S", 0},
		// date components (RK-07)
		{"P1Y", year},
		{"P1M", month},
		{"P1D", day},
		{"P12M", year}, // 12 * 730h = 8760h = 365 days
		{"P1Y2M3DT4H5M6.7S", year + 2*month + 3*day + 4*time.Hour + 5*time.Minute + 6*time.Second + 700*time.Millisecond},
		{"P1DT1S", day + time.Second},
		{"PT1H30M", 90 * time.Minute},
		{"PT1M30.5S", 90*time.Second + 500*time.Millisecond},
		{"PT36H", 36 * time.Hour},
		// leading zeros are digits like any other
		{"PT007S", 7 * time.Second},
		{"PT0001.5000S", 1500 * time.Millisecond},
		// unnormalized values are fine
		{"PT90M", 90 * time.Minute},
		{"PT3600S", time.Hour},
		// fractions exact to the ns, rounded half up past the ninth digit (RK-11)
		{"PT0.000000001S", 1},
		{"PT0.123456789S", 123456789},
		{"PT0.0000000005S", 1},
		{"PT0.00000000049S", 0},
		{"PT0.00000000049999999999S", 0},
		{"PT0.0000000015S", 2},
		{"PT0.1234567894S", 123456789},
		{"PT0.1234567895S", 123456790},
		{"PT0.9999999995S", time.Second},
		{"PT1.9999999999999S", 2 * time.Second},
		{"PT0.1S", 100 * time.Millisecond}, // 0.1 is not exact in float64; here it is
		// the largest time.Duration: 9223372036854775807ns
		{"PT2562047H47M16.854775807S", math.MaxInt64},
		{"PT9223372036.854775807S", math.MaxInt64},
		{"PT9223372036.8547758074S", math.MaxInt64}, // rounds down
		{"PT153722867M16.854775807S", math.MaxInt64},
		{"P106751DT23H47M16.854775807S", math.MaxInt64},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil {
			t.Errorf("ParseDuration(%q): unexpected error %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseDuration(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseDurationInvalid(t *testing.T) {
	tests := []struct {
		in     string
		reason string // substring of the reason
	}{
		{"", "empty"},
		{"P", "at least one component"},
		{"PT", `"T" must be followed by at least one time component`},
		{"P1DT", `"T" must be followed by at least one time component`},
		{"P1W", "weeks"},
		{"P2W", "weeks"},
		{"P1Y1W", "weeks"},
		{"-PT1S", "no sign"},
		{"+PT1S", "no sign"},
		{"P-1D", "sign"},
		{"PT-1S", "sign"},
		{"PT1,5S", `","`},
		{"PT1.S", `"." must be followed by at least one digit`},
		{"PT.5S", `"." must follow at least one digit`},
		{"PT1S1M", "out of order"},
		{"PT1M1H", "out of order"},
		{"P1D1Y", "out of order"},
		{"P1M1Y", "out of order"},
		{"PT1S1S", "more than once"},
		{"P1Y1Y", "more than once"},
		{"PT1H1H", "more than once"},
		{"pt1s", `must start with "P"`},
		{"Pt1S", "lower-case"},
		{"PT1s", "lower-case"},
		{"PT１S", "unexpected character"}, // full-width digit
		{"PT١S", "unexpected character"}, // Arabic-Indic digit
		{"1S", `must start with "P"`},
		{"T1S", `must start with "P"`},
		{" PT1S", `must start with "P"`},
		{"PT1S ", "white space"},
		{"PT1 S", "white space"},
		{"PT1", "no designator"},
		{"P1", "no designator"},
		{"PT1.5", "no designator"},
		{"PTS", "must follow a number"},
		{"PT1H2", "no designator"},
		{"P1.5D", "only on seconds"},
		{"PT1.5M", "only on seconds"},
		{"PT1.5H", "only on seconds"},
		{"P1.5Y", "only on seconds"},
		{"P1H", "must follow \"T\""},
		{"P1S", "must follow \"T\""},
		{"PT1D", "must come before \"T\""},
		{"PT1Y", "must come before \"T\""},
		{"PT1HT1M", "more than once"},
		{"PTT1S", "more than once"},
		{"PT1.5.5S", "unexpected character"},
		{"PT1e3S", "lower-case"},
		{"PT1X", "unexpected character"},
		{"PT1S\x00", "unexpected character"},
		{"PT1S\xff", "invalid UTF-8"},
		{"P1Y\n", "white space"},
		// one nanosecond past the largest time.Duration (RK-11)
		{"PT2562047H47M16.854775808S", "exceeds"},
		{"PT9223372036.8547758075S", "exceeds"}, // rounds up past the limit
		{"PT9223372037S", "exceeds"},
		{"PT2562048H", "exceeds"},
		{"P293Y", "exceeds"},
		{"P99999999999999999999999Y", "exceeds"},
		{"PT99999999999999999999999999999S", "exceeds"},
		{"P106751DT23H47M16.854775808S", "exceeds"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err == nil {
			t.Errorf("ParseDuration(%q) = %v, want error", tt.in, got)
			continue
		}
		if !errors.Is(err, ErrInvalidDuration) {
			t.Errorf("ParseDuration(%q): error %v is not ErrInvalidDuration", tt.in, err)
		}
		var de *DurationError
		if !errors.As(err, &de) {
			t.Errorf("ParseDuration(%q): error %T is not *DurationError", tt.in, err)
			continue
		}
		if de.Value != tt.in {
			t.Errorf("ParseDuration(%q): Value = %q", tt.in, de.Value)
		}
		if !strings.Contains(de.Reason, tt.reason) {
			t.Errorf("ParseDuration(%q): reason %q does not contain %q", tt.in, de.Reason, tt.reason)
		}
		if !strings.HasPrefix(err.Error(), "policy: invalid ISO 8601 duration ") {
			t.Errorf("ParseDuration(%q): message %q lacks the prefix", tt.in, err)
		}
	}
}

func TestDurationErrorMessage(t *testing.T) {
	_, err := ParseDuration("PT")
	want := `policy: invalid ISO 8601 duration "PT": "T" must be followed by at least one time component`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "PT0S"},
		{1, "PT0.000000001S"},
		{500 * time.Millisecond, "PT0.5S"},
		{time.Second, "PT1S"},
		{90 * time.Second, "PT1M30S"},
		{90*time.Second + 500*time.Millisecond, "PT1M30.5S"},
		{90 * time.Minute, "PT1H30M"},
		{36 * time.Hour, "PT36H"},
		{365 * 24 * time.Hour, "PT8760H"},
		{time.Hour + time.Second, "PT1H1S"},
		{time.Hour + 10*time.Millisecond, "PT1H0.01S"},
		{123456789, "PT0.123456789S"},
		{math.MaxInt64, "PT2562047H47M16.854775807S"},
		{-time.Second, "-PT1S"},
		{math.MinInt64, "-PT2562047H47M16.854775808S"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if _, err := ParseDuration(FormatDuration(-time.Second)); err == nil {
		t.Errorf("negative durations must not parse back")
	}
}
