package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Issue 20, the CLI cases. Each test failed before its fix.

// B: "echo {} | retrykit simulate --policy -" panicked on a nil reader.
func TestSimulatePolicyFromStdin(t *testing.T) {
	code, out, errOut := runCLI(t, "{}", "simulate", "--policy", "-", "--jobs", "3", "--jitter", "off")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// {} is the OJS default policy: 3 attempts.
	if !strings.Contains(out, "max_attempts 3") {
		t.Errorf("output does not show the policy read from stdin:\n%s", out)
	}
	if _, err := readPolicyFile("-", nil); err == nil {
		t.Error(`readPolicyFile("-", nil) returned no error`)
	}
}

// C: compare walked every attempt of max_attempts 2^63-1 to sum the time
// to exhaustion.
func TestCompareHugeMaxAttempts(t *testing.T) {
	code, out, errOut := runCLI(t, `{"max_attempts": 9223372036854775807}`, "compare", "--limit", "5", "-", "--profile", "ojs")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "(saturated)") {
		t.Errorf("a sum beyond the largest Duration is not called saturated:\n%s", out)
	}
	// A sum that fits: 2^24 retries, at the 5m cap after 9 doubling ones:
	// 1+2+...+256 = 511 s, then (2^40-9) × 300 s.
	n := 1<<24 + 1
	code, out, errOut = runCLI(t, fmt.Sprintf(`{"max_attempts": %d}`, n), "compare", "--limit", "3", "-", "--profile", "ojs")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := 511*time.Second + time.Duration(1<<24-9)*300*time.Second
	if !strings.Contains(out, want.String()) {
		t.Errorf("time to exhaustion %v not shown:\n%s", want, out)
	}
}

// subject.total by runs agrees with the plain sum, for policies whose
// delays repeat, grow slowly or not at all.
func TestCompareTotalByRunsIsExact(t *testing.T) {
	for _, js := range []string{
		`{}`,
		`{"max_attempts": 3000}`,
		`{"max_attempts": 3000, "backoff_coefficient": 1.001, "jitter": false}`,
		`{"max_attempts": 3000, "backoff_coefficient": 1.5, "max_interval": "PT1H"}`,
		`{"max_attempts": 3000, "backoff_strategy": "linear", "initial_interval": "PT0.001S", "max_interval": "PT1S"}`,
		`{"max_attempts": 3000, "backoff_strategy": "polynomial", "backoff_coefficient": 1.5}`,
		`{"max_attempts": 3000, "backoff_strategy": "none", "initial_interval": "PT7S"}`,
		`{"max_attempts": 3000, "initial_interval": "PT0.000000001S", "max_interval": "PT0.000000001S"}`,
	} {
		p, err := policy.Parse([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		s := policySubject("p", p)
		r := s.retries(30)
		var mid, lo, hi time.Duration
		for n := 1; n <= r; n++ {
			l, h := s.bounds(n)
			mid, lo, hi = sat.AddInt(mid, s.nominal(n)), sat.AddInt(lo, l), sat.AddInt(hi, h)
		}
		got := s.total(r)
		if !got.exact || got.mid != mid || got.lo != lo || got.hi != hi {
			t.Errorf("%s: total %+v, want mid %v lo %v hi %v", js, got, mid, lo, hi)
		}
	}
	// Too many distinct delays for runs: the rest is bounded, and the
	// bounds hold the true sum.
	p, err := policy.Parse([]byte(`{"max_attempts": 9223372036854775807, "backoff_strategy": "linear", "initial_interval": "PT0.000000001S", "max_interval": "PT1000H", "jitter": false}`))
	if err != nil {
		t.Fatal(err)
	}
	got := policySubject("p", p).total(1 << 30)
	// Linear 1ns: the sum of 1..2^30 ns.
	want := time.Duration((1 << 30) * (1<<30 + 1) / 2)
	if got.exact || got.mid > want || got.midHi < want || got.lo > want || got.hi < want {
		t.Errorf("bounded total %+v does not hold %v", got, want)
	}
}

// D: compare had no limit on subjects (20 000 took gigabytes); it now
// refuses more than maxCompareSubjects, before reading the rest.
func TestCompareTooManySubjects(t *testing.T) {
	args := []string{"compare"}
	for i := 0; i < 20000; i++ {
		args = append(args, "--profile", "ojs")
	}
	code, _, errOut := runCLI(t, "", args...)
	if code != 2 || !strings.Contains(errOut, "too many subjects: at most 64") {
		t.Errorf("exit %d, stderr %.200q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "compare", "--profile", strings.Repeat("ojs,", 65)+"ojs")
	if code != 2 || !strings.Contains(errOut, "too many subjects") {
		t.Errorf("comma list: exit %d, stderr %.200q", code, errOut)
	}
	a, _, err := parseSubjects(append(args[1:129], "nonexistent.json"), nil)
	if !errors.Is(err, errTooManySubjects) || len(a.subjects) != maxCompareSubjects {
		t.Errorf("65th subject (a file never read): %v, %d subjects", err, len(a.subjects))
	}
	code, _, errOut = runCLI(t, "", args[:129]...)
	if code != 0 {
		t.Errorf("64 subjects: exit %d, stderr %.200q", code, errOut)
	}
}

// writeColumns lays out a table as text/tabwriter does, without holding
// it.
func TestWriteColumnsMatchesTabwriter(t *testing.T) {
	rows := [][]string{{"attempt", "a", "longer name", "c"}, {"1", "[1s, 2s]", "", "x"}, {"10", "é", "exhausted: discard", ""}}
	var want, got bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	writeColumns(&got, len(rows), func(i int, cells []string) []string { return append(cells, rows[i]...) })
	if got.String() != want.String() {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}
