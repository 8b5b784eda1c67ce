package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// allocatedBy runs f and returns the bytes it allocated
// (runtime.MemStats.TotalAlloc): a bound on work measured as a benchmark
// measures it, not as a timing.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// --help exits 0 everywhere and prints on stdout; the help says
// what retrykit does with no arguments.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"-h"}, {"help"},
		{"schedule", "--help"}, {"schedule", "-h"}, {"schedule", "p.json", "--help"}, {"help", "schedule"},
		{"simulate", "--help"}, {"simulate", "-help"}, {"help", "simulate"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "usage: retrykit") || errOut != "" {
			t.Errorf("%q: exit %d, stdout %.60q, stderr %q", args, code, out, errOut)
		}
	}
	_, out, _ := runCLI(t, "", "--help")
	if !strings.Contains(out, `With no arguments, retrykit runs "retrykit schedule"`) {
		t.Errorf("help does not describe the no-argument behaviour:\n%s", out)
	}
	if code, _, errOut := runCLI(t, "", "help", "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("help frobnicate: exit %d, %q", code, errOut)
	}
}

// "schedule p.json --json" said "at most one policy file".
func TestScheduleFlagsAfterFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(p, []byte(`{"max_attempts": 4, "initial_interval": "PT3S"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, after, errOut := runCLI(t, "", "schedule", p, "--json")
	if code != 0 {
		t.Fatalf("schedule p.json --json: exit %d, %s", code, errOut)
	}
	_, before, _ := runCLI(t, "", "schedule", "--json", p)
	if after != before || !strings.Contains(after, `"ranges": "inclusive"`) || !strings.Contains(after, `"initial_interval": "PT3S"`) {
		t.Errorf("flags after the file differ from flags before it:\n%s\n%s", after, before)
	}
	// "--" ends the flags: a file named "--json" is a file.
	code, _, errOut = runCLI(t, "", "schedule", "--", "--json")
	if code != 2 || !strings.Contains(errOut, "--json: no such file") {
		t.Errorf("schedule -- --json: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "schedule", p, "--limit", "2", p)
	if code != 2 || !strings.Contains(errOut, "one policy file at most, got 2 arguments") {
		t.Errorf("two files: exit %d, %q", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "schedule", "")
	if code != 2 || !strings.Contains(errOut, "the policy file name is empty") {
		t.Errorf("empty file name: exit %d, %q", code, errOut)
	}
}

// simulate with an empty --policy said "open : no such file or directory".
func TestSimulateEmptyPolicy(t *testing.T) {
	for _, args := range [][]string{{"simulate", "--policy", ""}, {"simulate", "--policy="}, {"simulate", "--policy", "  "}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "retrykit simulate: --policy is empty: give a policy file, inline JSON") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, _, errOut := runCLI(t, "", "simulate", "--policy", "/nonexistent/p.json")
	if code != 2 || !strings.Contains(errOut, "--policy: open /nonexistent/p.json: no such file or directory") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
}

// Every numeric flag out of its documented range is a usage error (exit
// 2) naming the range, before anything runs.
func TestSimulateRanges(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--jobs", "0"}, "--jobs must be between 1 and 1000000, got 0"},
		{[]string{"--jobs", "-1"}, "--jobs must be between 1 and 1000000, got -1"},
		{[]string{"--jobs", "10000000"}, "--jobs must be between 1 and 1000000, got 10000000"},
		{[]string{"--outage", "-1s"}, "--outage must be between 0s and 10000h0m0s, got -1s"},
		{[]string{"--outage", "10001h"}, "--outage must be between 0s and 10000h0m0s, got 10001h0m0s"},
		{[]string{"--bucket", "0s"}, "--bucket must be between 1ms and 10000h0m0s, got 0s"},
		{[]string{"--bucket", "1ns"}, "--bucket must be between 1ms and 10000h0m0s, got 1ns"},
		{[]string{"--bucket", "10001h"}, "--bucket must be between 1ms and 10000h0m0s, got 10001h0m0s"},
		{[]string{"--jobs", "1000000", "--outage", "1h"}, "--jobs 1000000 × up to 21 attempts per job is more than 10000000 attempts per run: use --jobs 476190 or fewer"},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"simulate"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, code, errOut, c.want)
		}
	}
	_, out, _ := runCLI(t, "", "simulate", "--help")
	for _, w := range []string{"--jobs    1 to 1000000", "--outage  0 to 10000h", "--bucket  1ms to 10000h", "at most 10000000 per run"} {
		if !strings.Contains(out, w) {
			t.Errorf("help lacks %q", w)
		}
	}
}

// simulate with a huge outage and max_attempts near 2^63 never
// ended. Now it is refused at once (a few kilobytes of work), or, with an
// outage the limits allow, runs to the end.
func TestSimulateHugeOutageHugeAttempts(t *testing.T) {
	const pol = `{"max_attempts": 9223372036854775807}`
	for _, c := range []struct {
		outage, want string
	}{
		{"1000000h", "--outage must be between 0s and 10000h0m0s, got 1000000h0m0s"},
		{"10000h", "jitter off: a job may make more than 100000 attempts during a 10000h0m0s outage (max_attempts 9223372036854775807, delays from 1s)"},
	} {
		var code int
		var errOut string
		alloc := allocatedBy(func() { code, _, errOut = runCLI(t, "", "simulate", "--outage", c.outage, "--policy", pol) })
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("--outage %s: exit %d, %q", c.outage, code, errOut)
		}
		if alloc > 1<<20 {
			t.Errorf("--outage %s: refusing took %d bytes of allocation, want under 1 MiB", c.outage, alloc)
		}
	}
	// 100h at up to 5 minutes per retry: about 1 200 attempts per job.
	code, out, errOut := runCLI(t, "", "simulate", "--jobs", "3", "--outage", "100h", "--bucket", "1h", "--jitter", "off", "--policy", pol)
	if code != 0 || !strings.Contains(out, "completed 3, discarded 0, last job done at 4d4h4m") { // 100h4m: days in text
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// simulate --jobs 1000000 took 2.3 GB. Jobs now run in batches,
// so the peak resident memory of the process (getrusage, as a benchmark
// would read it) is the same for 1 000 000 jobs as for 1 000.
func TestSimulateMemoryFlatInJobs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ru_maxrss in kilobytes is Linux's")
	}
	bin := filepath.Join(t.TempDir(), "retrykit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	maxRSS := func(jobs string) int64 {
		// No outage: one attempt per job, so the million jobs cost a
		// second, but every job still goes through the executor.
		cmd := exec.Command(bin, "simulate", "--jobs", jobs, "--outage", "0s", "--jitter", "off")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "completed "+jobs+", discarded 0") {
			t.Fatalf("--jobs %s: %v\n%s", jobs, err, out)
		}
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	small, large := maxRSS("1000"), maxRSS("1000000")
	t.Logf("peak RSS: %d MiB for 1000 jobs, %d MiB for 1000000 jobs", small>>20, large>>20)
	if large > small+32<<20 {
		t.Errorf("peak RSS grows with --jobs: %d MiB for 1000 jobs, %d MiB for 1000000", small>>20, large>>20)
	}
}

// A policy file (or stdin) larger than policy.MaxDocumentSize is refused
// after reading one byte more than the limit, not read whole.
func TestSchedulePolicyTooLarge(t *testing.T) {
	big := strings.Repeat(" ", 16<<20+1)
	code, _, errOut := runCLI(t, big, "schedule", "-")
	if code != 2 || !strings.Contains(errOut, "-: larger than the policy size limit of 16777216 bytes (policy.MaxDocumentSize)") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	if code, out, errOut := runCLI(t, big[:16<<20], "schedule", "-"); code != 0 || !strings.Contains(out, "max_attempts=3") {
		t.Errorf("a white-space policy of exactly the limit: exit %d, %q", code, errOut)
	}
}

// compare reads its policy files like schedule: /dev/zero (endless) is
// refused after MaxDocumentSize+1 bytes instead of being read until memory
// runs out, and a policy on stdin is not cut at 1 MiB.
func TestComparePolicyTooLarge(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	code, _, errOut := runCLI(t, "", "compare", "/dev/zero", "--profile", "sidekiq")
	if code != 2 || !strings.Contains(errOut, "/dev/zero: larger than the policy size limit of 16777216 bytes (policy.MaxDocumentSize)") {
		t.Errorf("compare /dev/zero: exit %d, %q", code, errOut)
	}
	padded := `{"max_attempts": 4` + strings.Repeat(" ", 2<<20) + `}`
	if code, out, errOut := runCLI(t, padded, "compare", "-", "--profile", "sidekiq"); code != 0 || !strings.Contains(out, "attempt") {
		t.Errorf("a 2 MiB policy on stdin: exit %d, %q", code, errOut)
	}
}

// A suite directory whose *.json file is endless (a symlink to /dev/zero)
// is refused after the suite file limit, for vectors, scenarios and
// profiles alike, instead of being read until memory runs out.
func TestConformanceSuiteFileEndless(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.json")); err != nil {
		t.Skip(err)
	}
	for _, args := range [][]string{
		{"conformance", "--vectors", dir},
		{"conformance", "--scenarios-dir", dir},
		{"conformance", "--profiles", "--profiles-dir", dir},
	} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "z.json: file too large: more than the limit of 16777216 bytes") {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
}

// A suite directory without vector files, and a missing skip file, are
// named by the flag that gave them (the library's error alone said
// ".: no vector files").
func TestConformanceNamesItsInputs(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "", "conformance", "--vectors", dir)
	if code != 2 || !strings.Contains(errOut, "retrykit conformance: reading --vectors "+dir+": ") || !strings.Contains(errOut, "no vector files") {
		t.Errorf("empty --vectors: exit %d, %q", code, errOut)
	}
	missing := filepath.Join(dir, "missing.txt")
	code, _, errOut = runCLI(t, "", "conformance", "--skip-file", missing)
	if code != 2 || !strings.HasPrefix(errOut, "retrykit conformance: --skip-file: open "+missing+": ") {
		t.Errorf("missing --skip-file: exit %d, %q", code, errOut)
	}
}
