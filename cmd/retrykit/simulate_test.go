package main

import (
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
	// default policy: 3 attempts, all inside the outage -> everything discarded
	off, on := simColumn(t, out, 0), simColumn(t, out, 1)
	if off["1s"] != 2000 || off["3s"] != 2000 {
		t.Errorf("jitter off: %v", off)
	}
	sum, peakOn := 0, 0
	for k, v := range on {
		d, _ := time.ParseDuration(k)
		// attempt 2 arrives in [0.5s, 1.5s], attempt 3 by 1.5 + 3 = 4.5s
		if v > 0 && (d < 0 || d > 4*time.Second) {
			t.Errorf("jittered arrival in bucket %s", k)
		}
		sum += v
		peakOn = max(peakOn, v)
	}
	if sum != 4000 || peakOn >= 2000*3/4 {
		t.Errorf("jitter on: total %d, peak %d\n%s", sum, peakOn, out)
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<svg") || !strings.Contains(string(b), "jitter on") {
		t.Errorf("svg: %v %.80s", err, b)
	}
	// the same seed gives the same output
	if _, again, _ := runCLI(t, "", "simulate", "--jobs", "2000", "--outage", "1m", "--seed", "7"); again != out {
		t.Error("not reproducible")
	}
}

func TestSimulateBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--jobs", "0"}, {"--outage", "-1s"}, {"--jitter", "maybe"}, {"--bucket", "0s"},
		{"--policy", "/nonexistent.json"}, {"extra"}, {"--nope"},
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
