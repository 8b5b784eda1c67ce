package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/profile"
)

// svgSeriesAndTexts reads a chart back: the data-series names and every
// text element.
func svgSeriesAndTexts(t *testing.T, file string) (series, texts []string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	in := false
	var cur strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", file, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "g" {
				for _, a := range e.Attr {
					if a.Name.Local == "data-series" {
						series = append(series, a.Value)
					}
				}
			}
			if e.Name.Local == "text" {
				in = true
				cur.Reset()
			}
		case xml.CharData:
			if in {
				cur.Write(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				in = false
				texts = append(texts, cur.String())
			}
		}
	}
}

func TestListProfiles(t *testing.T) {
	code, out, errOut := runCLI(t, "", "schedule", "--list-profiles")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(profile.Names()) {
		t.Fatalf("%d lines for %d profiles:\n%s", len(lines), len(profile.Names()), out)
	}
	for i, n := range profile.Names() {
		if f := strings.Fields(lines[i]); len(f) < 3 || f[0] != n {
			t.Errorf("line %d = %q, want profile %s and a summary", i, lines[i], n)
		}
	}
}

func TestScheduleProfile(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "asynq.svg")
	code, out, errOut := runCLI(t, "", "schedule", "--profile", "asynq", "--limit", "3", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// asynq: n = attempt-1; n^4 + 15 + rand(30)*(n+1) s; r = 0.5 gives rand(30) = 15.
	for _, want := range []string{"1        retry  30s               [15s, 44s]", "2        retry  46s               [16s, 1m14s]",
		"after attempt 26 fails: dead_letter (archived)", "server.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	series, texts := svgSeriesAndTexts(t, svg)
	if !slices.Equal(series, []string{"asynq"}) || !slices.Contains(texts, "Retry delays of asynq") || !slices.Contains(texts, "10s") {
		t.Errorf("chart series %q texts %q", series, texts)
	}

	code, out, _ = runCLI(t, "", "schedule", "--profile", "temporal", "--limit", "9", "--json")
	var rep struct {
		Profile struct{ Name string }
		Rows    []struct {
			DelayNS int64 `json:"delay_ns"`
		} `json:"attempts"`
		Truncated  bool
		Exhaustion *struct{}
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d, json %s", code, out)
	}
	// Temporal: min(1s * 2^(n-1), 100s), no jitter, unlimited.
	if rep.Profile.Name != "temporal" || len(rep.Rows) != 9 || rep.Rows[6].DelayNS != 64e9 || rep.Rows[7].DelayNS != 100e9 || !rep.Truncated || rep.Exhaustion != nil {
		t.Errorf("temporal schedule: %+v", rep)
	}

	if code, _, errOut := runCLI(t, "", "schedule", "--profile", "sidekick"); code != 2 || !strings.Contains(errOut, `unknown profile "sidekick"`) {
		t.Errorf("unknown profile: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "", "schedule", "--profile", "river", "p.json"); code != 2 || !strings.Contains(errOut, "exclude") {
		t.Errorf("profile and file: exit %d, %q", code, errOut)
	}
}

func TestSchedulePolicySVG(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "ojs.svg")
	if code, _, errOut := runCLI(t, "", "schedule", "--svg", svg); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	series, texts := svgSeriesAndTexts(t, svg)
	if !slices.Equal(series, []string{"OJS default policy"}) || !slices.Contains(texts, "attempt that failed") {
		t.Errorf("series %q texts %q", series, texts)
	}
}

func TestCompare(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "cmp.svg")
	code, out, errOut := runCLI(t, "", "compare", "--profile", "sidekiq", "--profile", "river", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Sidekiq 8: 15 + rand(10) s after attempt 1; River: 1s ± 10 %.
	for _, want := range []string{"attempt  sidekiq", "1        [15s, 24s]              [900ms, 1.1s]",
		"25       [3d20h9m, 3d20h14m]     exhausted: discard", "26       exhausted: dead_letter",
		"largest difference per attempt:", "largest difference in time to exhaustion:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	series, texts := svgSeriesAndTexts(t, svg)
	if !slices.Equal(series, []string{"sidekiq", "river"}) {
		t.Errorf("series %q", series)
	}
	for _, want := range []string{"Retry delays compared", "attempt that failed", "delay before the next attempt (log scale)", "1h", "1d", "2", "24"} {
		if !slices.Contains(texts, want) {
			t.Errorf("chart lacks text %q: %q", want, texts)
		}
	}

	pol := filepath.Join(dir, "p.json")
	os.WriteFile(pol, []byte(`{"max_attempts": 4, "initial_interval": "PT1S", "jitter": false}`), 0o600)
	code, out, errOut = runCLI(t, "", "compare", pol, "--profile=aws,aws_go", "--limit", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The policy: 1s, 2s, 4s, then discard; botocore r * 2^(attempt-1) s,
	// the Go SDK r * 2^attempt s, both 3 attempts.
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"1 1s [0s, 999.999999ms] [0s, 1.999999999s]", "2 2s [0s, 1.999999999s] [0s, 3.999999999s]",
		"3 4s exhausted: discard exhausted: discard", "4 exhausted: discard", "largest difference per attempt: 1s at attempt 2"} {
		if !strings.Contains(flat, want) {
			t.Errorf("compare with a policy lacks %q:\n%s", want, out)
		}
	}

	for _, args := range [][]string{{"compare", "--profile", "river"}, {"compare", "--profile"}, {"compare", "--bogus", "x"},
		{"compare", "--profile", "nope", "--profile", "river"}, {"compare", "--limit", "0", "--profile", "a,b"}} {
		if code, _, errOut := runCLI(t, "", args...); code != 2 || !strings.HasPrefix(errOut, "retrykit compare: ") {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
}

func TestFit(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "fit.svg")
	code, out, errOut := runCLI(t, "", "fit", "--profile", "river", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// River's middle delay is exactly attempt^4 seconds: polynomial, 1s,
	// coefficient 4 fits it with no difference.
	for _, want := range []string{`"initial_interval":"PT1S","backoff_coefficient":4.0`, `"backoff_strategy":"polynomial"`, `"max_attempts":25`,
		"largest relative difference: +0.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	series, _ := svgSeriesAndTexts(t, svg)
	if !slices.Equal(series, []string{"river", "fitted OJS policy"}) {
		t.Errorf("series %q", series)
	}
	// Celery: full jitter over min(600, 2^(attempt-1)) s: the centres are
	// 0.5s, 1s, 2s, an exponential from 500ms with coefficient 2.
	code, out, _ = runCLI(t, "", "fit", "--profile", "celery")
	if code != 0 || !strings.Contains(out, `"initial_interval":"PT0.5S","backoff_coefficient":2.0`) || !strings.Contains(out, "off %") {
		t.Errorf("celery fit: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"fit"}, {"fit", "--profile", "x"}, {"fit", "--profile", "river", "extra"}, {"fit", "--profile", "gax", "--horizon", "0"}} {
		if code, _, _ := runCLI(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d", args, code)
		}
	}
}

func TestProfileCommandsHelp(t *testing.T) {
	for _, args := range [][]string{{"compare", "--help"}, {"compare", "-h"}, {"fit", "--help"}, {"schedule", "--help"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(out+errOut, "usage: retrykit "+args[0]) {
			t.Errorf("%q: exit %d, %q %q", args, code, out, errOut)
		}
	}
}
