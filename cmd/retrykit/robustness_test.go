package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// Commands under hostile or unusual input: stdin policies, huge counts,
// a full disk, links in an export directory, slow implementations and
// interrupts. Each test failed before its fix.

// "echo {} | retrykit simulate --policy -" panicked on a nil reader.
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

// compare walked every attempt of max_attempts 2^63-1 to sum the time
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
	if !strings.Contains(out, human.Round(want)) {
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

// compare had no limit on subjects (20 000 took gigabytes); it now
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

// Every command lost its output on a full disk and exited 0.
func TestFullDiskExitsNonZero(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	bin := retrykitBinary(t)
	for _, args := range [][]string{
		{"schedule"}, {"schedule", "--list-profiles"}, {"schedule", "--profile", "river"},
		{"compare", "--profile", "ojs", "--profile", "river"}, {"fit", "--profile", "river"},
		{"simulate", "--jobs", "10"}, {"conformance", "--profiles"}, {"conformance", "--format", "json"},
		{"conformance", "export", t.TempDir()}, {"--help"}, {"help", "fuzz"},
		{"fuzz", "--impl", bin + " adapter", "--cases", "20", "--seed", "1"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Stdout = full
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err == nil || code != 2 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v >/dev/full: exit %d (%v), stderr %q", args, code, err, errb.String())
		}
	}
	// A report file on a full disk (-o) is checked as well.
	code, _, errOut := runCLI(t, "", "conformance", "--profiles", "-o", "/dev/full")
	if code != 2 || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("-o /dev/full: exit %d, stderr %q", code, errOut)
	}
}

// conformance --profiles ignored --format and -o.
func TestConformanceProfilesFormatAndOutput(t *testing.T) {
	code, out, errOut := runCLI(t, "", "conformance", "--profiles", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var rep profileReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--format json is not JSON: %v\n%s", err, out)
	}
	if rep.Passed == 0 || len(rep.Profiles) != len(profile.All()) || rep.Failed != 0 {
		t.Errorf("json report: %+v", rep)
	}
	code, out, _ = runCLI(t, "", "conformance", "--profiles", "--format", "junit")
	if code != 0 || xml.Unmarshal([]byte(out), new(struct{})) != nil || !strings.Contains(out, `<testsuite name="profiles"`) {
		t.Errorf("junit: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "conformance", "--profiles", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "| profile | passed |") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	file := filepath.Join(t.TempDir(), "profiles.txt")
	code, out, _ = runCLI(t, "", "conformance", "--profiles", "-o", file)
	data, err := os.ReadFile(file)
	if code != 0 || out != "" || err != nil || !strings.Contains(string(data), "profile vectors against retrykit") {
		t.Errorf("-o: exit %d, stdout %q, file %q (%v)", code, out, data, err)
	}
}

// export wrote through a symbolic link in DIR, and into the current
// directory for an empty DIR.
func TestConformanceExportRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "delay.json")); err != nil {
		t.Skip("no symbolic links here")
	}
	code, _, errOut := runCLI(t, "", "conformance", "export", dir)
	if data, _ := os.ReadFile(outside); code != 2 || string(data) != "keep" || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("link at DIR/delay.json: exit %d, stderr %q, outside file now %q", code, errOut, data)
	}
	// A linked subdirectory would put the scenarios outside DIR.
	dir2, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(dir2, "scenarios")); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "", "conformance", "export", dir2)
	if ents, _ := os.ReadDir(elsewhere); code != 2 || len(ents) != 0 {
		t.Errorf("linked scenarios dir: exit %d, stderr %q, %d files written outside", code, errOut, len(ents))
	}
	code, _, errOut = runCLI(t, "", "conformance", "export", "")
	if code != 2 || !strings.Contains(errOut, "DIR is empty") {
		t.Errorf("export '': exit %d, stderr %q", code, errOut)
	}
	// A plain export still works, and replaces files already there.
	dir3 := t.TempDir()
	os.WriteFile(filepath.Join(dir3, "delay.json"), []byte("old"), 0o600)
	if code, _, errOut = runCLI(t, "", "conformance", "export", dir3); code != 0 {
		t.Fatalf("export: exit %d, stderr %q", code, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(dir3, "delay.json")); !bytes.Equal(data, mustRead(t, retrykit.Vectors, "delay.json")) {
		t.Error("delay.json was not replaced by the embedded one")
	}
}

func mustRead(t *testing.T, fsys fs.FS, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Flags are checked before the suite runs, not after it.
func TestConformanceFlagsCheckedUpFront(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--write-skip-file", "/nonexistent/x"}, "--write-skip-file: "},
		{[]string{"-o", "/nonexistent/x"}, "-o: "},
		{[]string{"--unclaimed", "bogus"}, "--unclaimed: no vector carries the flag bogus"},
		{[]string{"--strict"}, "--strict: needs --skip-file"},
	} {
		// --run of one vector: a suite that ran would still be quick, and
		// its report would show on stdout.
		code, out, errOut := runCLI(t, "", append([]string{"conformance", "--run", "delay-0001"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %.80q, stderr %q", tc.args, code, out, errOut)
		}
	}
	// A writable path is left as it was found.
	p := filepath.Join(t.TempDir(), "skips.txt")
	if err := checkWritable(p); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checkWritable left %s behind (%v)", p, err)
	}
}

// fuzz had no total budget, stayed silent, and named the wrong request
// for a duplicated answer.
func TestFuzzTimeBudgetAndDuplicateAnswers(t *testing.T) {
	needShell(t)
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("needs sed")
	}
	bin := retrykitBinary(t)
	// A slow adapter: 20 ms per answer, one at a time. 10 000 cases would
	// take over 3 minutes; --time 2s stops it and the report says so.
	slowAdapter := "sh -c '" + bin + " adapter | while IFS= read -r l; do sleep 0.02; printf \"%s\\n\" \"$l\"; done'"
	cmd := exec.Command(bin, "fuzz", "--impl", slowAdapter, "--seed", "1", "--time", "2s", "--parallel", "4")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("slow adapter: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "stopped by the --time budget") || !strings.Contains(out.String(), "(out of time)") {
		t.Errorf("stdout does not report the budget:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "fuzz: parse_duration: done,") {
		t.Errorf("no progress on stderr:\n%s", errb.String())
	}
	// An adapter that answers every request twice: the failure names the
	// request whose answer came twice, and "sent" is that request.
	dupAdapter := "sh -c '" + bin + " adapter | sed -u \"/\\\"protocol\\\"/!p\"'"
	cmd = exec.Command(bin, "fuzz", "--impl", dupAdapter, "--seed", "1", "--ops", "validate", "--parallel", "1", "--time", "20s")
	out.Reset()
	errb.Reset()
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("duplicating adapter: exit %d (%v)\n%s\n%s", code, err, out.String(), errb.String())
	}
	m := regexp.MustCompile(`a second answer to request (\d+) `).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the failure does not name the request answered twice:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `sent:     {"id":`+m[1]+`,"op":"validate"`) {
		t.Errorf("sent is not request %s:\n%s", m[1], out.String())
	}
	// Bad --time values are usage errors.
	for _, v := range []string{"0s", "25h", "-1s"} {
		if code, _, errOut := runCLI(t, "", "fuzz", "--impl", "x", "--time", v); code != 2 || !strings.Contains(errOut, "--time: must be in 1s..24h") {
			t.Errorf("--time %s: exit %d, stderr %q", v, code, errOut)
		}
	}
}

// fit --horizon 1000 took 16-18 s (an O(k) cost
// per candidate intercept). The result is unchanged; here the largest
// horizon runs for an unbounded profile, whose fit is exact: temporal is
// min(1s*2^(attempt-1), 100s).
func TestFitLargestHorizon(t *testing.T) {
	code, out, errOut := runCLI(t, "", "fit", "--profile", "temporal", "--horizon", "1000")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "strategy exponential, initial_interval 1s, coefficient 2, max_interval 1m40s, max_attempts 1001") {
		t.Errorf("fit:\n%.600s", out)
	}
}

// A run stopped from outside ended with empty stdout; an interrupt now
// ends it with the report of what was covered.
func TestFuzzInterruptWritesReport(t *testing.T) {
	needShell(t)
	bin := retrykitBinary(t)
	slowAdapter := "sh -c '" + bin + " adapter | while IFS= read -r l; do sleep 0.02; printf \"%s\\n\" \"$l\"; done'"
	cmd := exec.Command(bin, "fuzz", "--impl", slowAdapter, "--seed", "1", "--parallel", "4")
	var out bytes.Buffer
	var errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first progress line shows the run under way.
	for i := 0; i < 200 && !strings.Contains(errb.String(), "cases sent"); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(out.String(), "stopped by an interrupt") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
}

// lockedBuffer is a bytes.Buffer read while a process writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
