package main

import (
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// histogram extracts the "jitter off" column counts per bucket label.
func simColumn(t *testing.T, out string, col int) map[string]int {
	t.Helper()
	got := map[string]int{}
	row := regexp.MustCompile(`^\s*(\S+) │`)
	for _, line := range strings.Split(out, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || m[1] == "t" {
			continue
		}
		cells := strings.Split(line, "│")
		if col+1 >= len(cells) {
			t.Fatalf("line %q has no column %d", line, col)
		}
		f := strings.Fields(cells[col+1])
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[m[1]] = n
	}
	return got
}

func TestSimulateWithoutJitterHerd(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.json")
	os.WriteFile(pol, []byte(`{"max_attempts": 5, "jitter": true}`), 0o644)
	code, out, errOut := runCLI(t, "", "simulate", "--jobs", "100", "--outage", "10s", "--policy", pol, "--jitter", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Attempts start at 0, 1s, 1+2 = 3s, 3+4 = 7s (all inside the outage,
	// fail) and 7+8 = 15s (after it, succeed): every job arrives together.
	want := map[string]int{"1s": 100, "3s": 100, "7s": 100, "15s": 100}
	got := simColumn(t, out, 0)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("bucket %s: %d, want %d\n%s", k, got[k], v, out)
		}
	}
	if len(got) != len(want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	if !strings.Contains(out, "retries 400, peak 100") || !strings.Contains(out, "completed 100, discarded 0, last job done at 15s") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestSimulateJitterSpreads(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "herd.svg")
	code, out, errOut := runCLI(t, "", "simulate", "--jobs", "2000", "--outage", "1m", "--seed", "7", "--svg", svg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The default policy is the OJS default with 25 attempts: without
	// jitter attempts start at 0, 1, 3, 7, 15, 31 s (inside the outage,
	// fail) and 31 + 32 = 63 s (after it, succeeds), all 2000 together.
	off, on := simColumn(t, out, 0), simColumn(t, out, 1)
	for _, b := range []string{"1s", "3s", "7s", "15s", "31s", "1m3s"} {
		if off[b] != 2000 {
			t.Errorf("jitter off, bucket %s: %d, want 2000\n%v", b, off[b], off)
		}
	}
	if !strings.Contains(out, "jitter off:            retries 12000, peak 2000 in bucket 1 (t=1s), completed 2000, discarded 0, last job done at 1m3s") {
		t.Errorf("jitter off summary:\n%s", out)
	}
	sum, peakOn, late := 0, 0, 0
	for k, v := range on {
		d, err := time.ParseDuration(k)
		if err != nil {
			t.Fatalf("bucket %q", k)
		}
		// attempt 2 arrives at 0.5 s at the earliest
		if v > 0 && d < 0 {
			t.Errorf("jittered arrival in bucket %s", k)
		}
		if d >= time.Minute {
			late += v
		}
		sum += v
		peakOn = max(peakOn, v)
	}
	// With jitter every job still retries at least 6 times: the multiplier
	// is below 1.5, so attempt 6 starts before 1.5*(1+2+4+8+16) = 46.5 s,
	// inside the outage. The herd is spread: no second holds three quarters
	// of the jobs, some arrive after the outage, and every job completes.
	if sum < 2000*6 || peakOn >= 2000*3/4 || late == 0 || !strings.Contains(out, "completed 2000, discarded 0, last job done at") {
		t.Errorf("jitter on: total %d, peak %d, after the outage %d\n%s", sum, peakOn, late, out)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, new(struct{})); err != nil || !strings.HasPrefix(string(b), "<svg") || !strings.Contains(string(b), "jitter on") {
		t.Errorf("svg is not well-formed XML (%v): %.80s", err, b)
	}
	if n := strings.Count(string(b), "<rect "); n < 2*6 {
		t.Errorf("svg has %d bars", n)
	}
	// the same seed gives the same output
	if _, again, _ := runCLI(t, "", "simulate", "--jobs", "2000", "--outage", "1m", "--seed", "7"); again != out {
		t.Error("not reproducible")
	}
}

// With the OJS default policy (3 attempts) every job gives up inside a long
// outage; an inline policy works like a file.
func TestSimulatePolicies(t *testing.T) {
	code, out, errOut := runCLI(t, "", "simulate", "--jobs", "10", "--outage", "1m", "--policy", "default", "--jitter", "off")
	if code != 0 || !strings.Contains(out, "max_attempts 3") || !strings.Contains(out, "retries 20, peak 10 in bucket 1 (t=1s), completed 0, discarded 10, last job done at 3s") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "simulate", "--jobs", "10", "--outage", "5s", "--policy", `{"max_attempts": 9, "initial_interval": "PT2S", "backoff_strategy": "none"}`, "--jitter", "off")
	// constant 2 s: attempts at 0, 2, 4 (fail), 6 s (succeeds)
	if code != 0 || !strings.Contains(out, "retries 30, peak 10 in bucket 2 (t=2s), completed 10, discarded 0, last job done at 6s") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestSimulateBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--jobs", "0"}, {"--outage", "-1s"}, {"--jitter", "maybe"}, {"--bucket", "0s"},
		{"--policy", "/nonexistent.json"}, {"--policy", `{"max_attempts": -1}`}, {"extra"}, {"--nope"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"simulate"}, args...)...)
		if code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"max_attempts": -1}`), 0o644)
	if code, _, errOut := runCLI(t, "", "simulate", "--policy", bad); code != 2 || !strings.Contains(errOut, policy.ErrorType) && !strings.Contains(errOut, "max_attempts") {
		t.Errorf("bad policy: %d %q", code, errOut)
	}
}

func TestSimulateBucketTooNarrow(t *testing.T) {
	done := make(chan struct{})
	var (
		code   int
		errOut string
	)
	go func() {
		defer close(done)
		code, _, errOut = runCLI(t, "", "simulate", "--bucket", "1ms", "--outage", "10h")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("simulate --bucket 1ms did not return")
	}
	// Default policy: cap 5m, outage 10h, so retries arrive within
	// 10h5m: 10h5m/1ms buckets is far above the limit.
	if code != 2 || !strings.Contains(errOut, "--bucket") || !strings.Contains(errOut, "100000") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	// The suggested width is accepted.
	m := regexp.MustCompile(`use --bucket (\S+) or wider`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("no suggestion in %q", errOut)
	}
	if code, _, errOut := runCLI(t, "", "simulate", "--jobs", "10", "--bucket", m[1]); code != 0 {
		t.Errorf("--bucket %s: exit %d, %s", m[1], code, errOut)
	}
	// A narrow bucket is fine when the run is short: 3 attempts of PT1S
	// without jitter end after 3s, 3000 buckets of 1ms.
	code, out, errOut := runCLI(t, "", "simulate", "--jobs", "5", "--policy", "default", "--jitter", "off", "--bucket", "1ms")
	if code != 0 || !strings.Contains(out, "last job done at 3s") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestSimulateSVGBadPathFailsFirst(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.svg")
	code, out, errOut := runCLI(t, "", "simulate", "--jobs", "10", "--svg", bad)
	if code != 2 || !strings.Contains(errOut, "--svg") || !strings.Contains(errOut, bad) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if out != "" {
		t.Errorf("the simulation ran before the --svg error:\n%s", out)
	}
}

func TestSimulateHelpEndsWithNewline(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		code, out, _ := runCLI(t, "", "simulate", arg)
		if code != 0 || !strings.HasSuffix(out, "\n") || !strings.Contains(out, "usage: retrykit simulate") {
			t.Errorf("%s: exit %d, output %q", arg, code, out)
		}
	}
}

func TestRoundUp(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{4*time.Minute + 48*time.Second + 3000001, 4*time.Minute + 49*time.Second},
		{time.Second, time.Second},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{math.MaxInt64, math.MaxInt64},
	} {
		if got := roundUp(c.in); got != c.want {
			t.Errorf("roundUp(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Jobs that end in the dead letter queue are reported as dead-lettered,
// the words a user looks for. They were not counted at all: the counts
// were read at the end, after the fake clock had jumped to the
// dead-letter retention deadline, which pruned them ("completed 0,
// discarded 0" for 5 jobs).
func TestSimulateDeadLetteredJobs(t *testing.T) {
	pol := `{"max_attempts": 2, "initial_interval": "PT1S", "on_exhaustion": "dead_letter"}`
	code, out, errOut := runCLI(t, "", "simulate", "--policy", pol, "--jobs", "5", "--outage", "1h", "--jitter", "off")
	if code != 0 || !strings.Contains(out, "completed 0, dead-lettered 5, last job done at 1s") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// An outage the retries outlast: every job completes, and the report
	// still says how many were dead-lettered.
	code, out, errOut = runCLI(t, "", "simulate", "--policy", `{"max_attempts": 3, "initial_interval": "PT1S", "on_exhaustion": "dead_letter", "jitter": false}`,
		"--jobs", "4", "--outage", "2s")
	if code != 0 || !strings.Contains(out, "completed 4, dead-lettered 0,") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
