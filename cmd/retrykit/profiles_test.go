package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
	if len(lines) != len(profile.Names())+len(profile.Versions()) {
		t.Fatalf("%d lines for %d profiles and %d older releases:\n%s", len(lines), len(profile.Names()), len(profile.Versions()), out)
	}
	if !strings.Contains(out, "aws_go@1.47 ") || !strings.Contains(strings.Join(strings.Fields(out), " "), "aws_go@1.47 1.47.7 ") {
		t.Errorf("the older releases are not listed:\n%s", out)
	}
	for i, n := range profile.Names() {
		p, _ := profile.Lookup(n)
		if f := strings.Fields(lines[i]); len(f) < 3 || f[0] != n || f[1] != p.Release() {
			t.Errorf("line %d = %q, want profile %s, its release %s and a summary", i, lines[i], n, p.Release())
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

// The chart of a policy file is titled and labelled with the file's name,
// wherever the file stands among the flags.
func TestSchedulePolicySVGNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "my-policy.json")
	if err := os.WriteFile(file, []byte(`{"max_attempts": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	after, before := filepath.Join(dir, "after.svg"), filepath.Join(dir, "before.svg")
	for svg, args := range map[string][]string{
		after:  {"schedule", file, "--svg", after},
		before: {"schedule", "--svg", before, file},
	} {
		if code, _, errOut := runCLI(t, "", args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		series, texts := svgSeriesAndTexts(t, svg)
		if !slices.Equal(series, []string{file}) || !slices.Contains(texts, "Retry delays of "+file) {
			t.Errorf("%q: series %q texts %q, want the file's name %s", args, series, texts, file)
		}
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
	code, out, errOut = runCLI(t, "", "compare", pol, "--profile=aws:mode=standard", "--profile=aws_go", "--limit", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The policy: 1s, 2s, 4s, then discard; botocore's standard mode r * 2^(attempt-1) s,
	// the Go SDK (retry behavior 2.1) r * 0.05 * 2^(attempt-1) s, both 3
	// attempts.
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"1 1s [0s, 999.999999ms] [0s, 49.999999ms]", "2 2s [0s, 1.999999999s] [0s, 99.999999ms]",
		"3 4s exhausted: discard exhausted: discard", "4 exhausted: discard", "largest difference per attempt: 1.95s at attempt 2"} {
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
		"largest relative difference of the middle (r = 0.5) delays: +0.0%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	series, _ := svgSeriesAndTexts(t, svg)
	if !slices.Equal(series, []string{"river", "fitted OJS policy"}) {
		t.Errorf("series %q", series)
	}
	// Celery with retry_backoff True: full jitter randrange(c + 1) over c = min(600, 2^(attempt-1))
	// s: the middles (r = 0.5) are floor(0.5 * (c + 1)) = 1s, 1s, 2s. The
	// text, the JSON and the chart show the same middles; three retries
	// cannot pin Celery's 600 s cap, so max_interval is left unconstrained.
	code, out, _ = runCLI(t, "", "fit", "--profile", "celery:retry_backoff=true")
	if code != 0 || !strings.Contains(out, "max_interval is unconstrained") || !strings.Contains(out, "off %") ||
		!strings.Contains(out, "largest difference of the jitter ranges") {
		t.Errorf("celery fit: exit %d\n%s", code, out)
	}
	svg = filepath.Join(t.TempDir(), "celery.svg")
	code, out, _ = runCLI(t, "", "fit", "--profile", "celery:retry_backoff=true", "--json", "--svg", svg)
	var rep struct {
		Middle    string `json:"middle"`
		CapPinned bool   `json:"cap_pinned"`
		Attempts  []struct {
			Attempt   int   `json:"attempt"`
			ProfMid   int64 `json:"profile_middle_ns"`
			PolicyMid int64 `json:"policy_middle_ns"`
			PolicyMin int64 `json:"policy_min_ns"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("fit --json: exit %d, %v\n%s", code, err, out)
	}
	if rep.Middle != "middle (r = 0.5)" || rep.CapPinned || len(rep.Attempts) != 3 {
		t.Errorf("fit --json: %+v", rep)
	}
	wantMid := []time.Duration{time.Second, time.Second, 2 * time.Second}
	chartMid := map[string]string{}
	svgData, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	// Each point's title: "NAME, attempt N: middle (r = 0.5) D, range [...]".
	for _, m := range regexp.MustCompile(`<title>([^<]*), attempt (\d+): middle \(r = 0\.5\) ([^,]+), range[^<]*</title>`).FindAllStringSubmatch(string(svgData), -1) {
		chartMid[m[1]+m[2]] = m[3]
	}
	for i, a := range rep.Attempts {
		if time.Duration(a.ProfMid) != wantMid[i] {
			t.Errorf("attempt %d: profile middle %v, want %v", a.Attempt, time.Duration(a.ProfMid), wantMid[i])
		}
		for name, ns := range map[string]int64{"celery:retry_backoff=true": a.ProfMid, "fitted OJS policy": a.PolicyMid} {
			got, ok := chartMid[fmt.Sprint(name, a.Attempt)]
			d, err := time.ParseDuration(got)
			if !ok || err != nil {
				t.Errorf("chart: no middle for %s attempt %d (%q)", name, a.Attempt, got)
				continue
			}
			if d != time.Duration(ns) {
				t.Errorf("chart: %s attempt %d middle %v, the JSON says %v", name, a.Attempt, d, time.Duration(ns))
			}
		}
		// The policy's jitter range is [0.5, 1.5) of its middle, Celery's
		// [0, 2c]: the fit reports the low ends apart.
		if a.PolicyMin <= 0 {
			t.Errorf("attempt %d: policy range starts at %v", a.Attempt, time.Duration(a.PolicyMin))
		}
	}
	if code, out, errOut := runCLI(t, "", "fit", "--help"); code != 0 || strings.Count(out+errOut, "usage: retrykit fit") != 1 {
		t.Errorf("fit --help: exit %d, usage %d times:\n%s\n%s", code, strings.Count(out+errOut, "usage: retrykit fit"), out, errOut)
	}
	code, out, _ = runCLI(t, "", "fit", "--profile", "bullmq:type=exponential,delay=3000,attempts=5")
	if code != 0 || !strings.Contains(out, `"initial_interval":"PT3S","backoff_coefficient":2.0`) {
		t.Errorf("configured bullmq fit: exit %d\n%s", code, out)
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

// TestScheduleConfigured: three configured schedules, from each system's
// formula: the AWS SDK for Go (2.1) r * 0.05s at attempt 1; BullMQ
// Math.round(2^(n-1) * 3000) ms for 5 attempts; Temporal min(2s * 3^(n-1),
// 1m).
func TestScheduleConfigured(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--profile", "aws_go"}, []string{"1 retry 25ms [0s, 49.999999ms]", "3 discard"}},
		{[]string{"--profile", "aws_go", "--error-class", "throttling"}, []string{"1 retry 500ms [0s, 999.999999ms]"}},
		{[]string{"--profile", "aws_go@1.47"}, []string{"1 retry 1s [0s, 1.999999999s]"}},
		{[]string{"--profile", "aws_go", "--retry-after", "2s"}, []string{"1 retry 2s 2s"}},
		{[]string{"--profile", "bullmq:type=exponential,delay=3000,attempts=5"},
			[]string{"1 retry 3s 3s", "2 retry 6s 6s", "3 retry 12s 12s", "4 retry 24s 24s", "5 discard", "after attempt 5 fails: discard"}},
		{[]string{"--profile", "temporal:initial_interval=2s,backoff_coefficient=3,maximum_interval=1m", "--limit", "5"},
			[]string{"1 retry 2s 2s", "2 retry 6s 6s", "3 retry 18s 18s", "4 retry 54s 54s", "5 retry 1m 1m"}},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"schedule"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", c.args, code, errOut)
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, w := range c.want {
			if !strings.Contains(flat, w) {
				t.Errorf("%q: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "bullmq:tpye=fixed"}, `did you mean "type"?`},
		{[]string{"--profile", "sidkiq"}, `did you mean "sidekiq"?`},
		{[]string{"--profile", "aws_go", "--error-class", "throttle"}, `did you mean "throttling"?`},
		{[]string{"--profile", "river", "--error-class", "throttling"}, "treats every error alike"},
		{[]string{"--profile", "river", "--retry-after", "1s"}, "reads no retry-after hint"},
		{[]string{"--profile", "aws_go", "--retry-after", "soon"}, "not a duration"},
		{[]string{"--profile", strings.Repeat("x", 1<<20)}, "longer than 4096"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"schedule"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || len(errOut) > 2000 {
			t.Errorf("%.60q: exit %d, stderr %.300q, want %q", c.args, code, errOut, c.want)
		}
	}
}

// The library and queue profiles added beside the job systems work in
// compare and fit like any other, with their release listed.
func TestCompareAndFitLibraryProfiles(t *testing.T) {
	names := []string{"cenkalti", "retryablehttp", "failsafe", "retry_go", "go_retry", "tenacity", "backoff", "rq", "p_retry", "bee_queue", "delayed_job", "pg_boss", "graphile_worker"}
	args := []string{"compare", "--limit", "6"}
	for _, n := range names {
		args = append(args, "--profile", n)
		code, out, errOut := runCLI(t, "", "fit", "--profile", n)
		if code != 0 || !strings.Contains(out, "off %") {
			t.Errorf("fit --profile %s: exit %d\n%s%s", n, code, out, errOut)
		}
	}
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	// delayed_job: attempt^4 + 5 s, so 21s after attempt 2; retryablehttp 2s.
	for _, want := range []string{"delayed_job", "21s", "retryablehttp"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
}

// A column that stops because the table reached --limit says so, with the
// retries left, and the per-attempt difference names the attempts it
// covers; past them, each subject's longest delay is shown.
func TestCompareSaysWhereTheTableStops(t *testing.T) {
	// Sidekiq retries 25 times (its 26th attempt dead-letters); River 24.
	code, out, errOut := runCLI(t, "", "compare", "--profile", "sidekiq", "--profile", "river", "--limit", "6")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	last := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "…") {
			last = l
		}
	}
	for _, want := range []string{fmt.Sprintf("%d more retries, then dead_letter (--limit 6)", 25-6), fmt.Sprintf("%d more retries, then discard (--limit 6)", 24-6)} {
		if !strings.Contains(last, want) {
			t.Errorf("the last row %q lacks %q:\n%s", last, want, out)
		}
	}
	file := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(file, []byte(`{"max_attempts": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "compare", "--profile", "sidekiq", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "\n…") {
		t.Errorf("a table that reaches every exhaustion has a cut row:\n%s", out)
	}
	if !strings.Contains(out, "over attempts 1 to 4, which every subject retries") {
		t.Errorf("the per-attempt difference does not name its attempts:\n%s", out)
	}
	// Sidekiq's delay after attempt 25 is count⁴ + 15 + rand(10)·(count+1)
	// seconds with count = 24 (it counts retries from 0); at the middle draw
	// 4.5: 331776 + 15 + 112.5 = 331903.5 s = 3d20h11m43.5s, shown as 3d20h12m.
	if !strings.Contains(out, "longest delay of each (middle (r = 0.5)): sidekiq 3d20h12m (after attempt 25), "+file+" 8s (after attempt 4)") {
		t.Errorf("no longest delay of each subject:\n%s", out)
	}
}
