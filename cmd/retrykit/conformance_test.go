package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
	buildDir  string
)

// retrykitBinary builds the command once per test run into a temporary
// directory, so that end-to-end tests exercise a real subprocess.
func retrykitBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "retrykit-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "retrykit")
		if runtime.GOOS == "windows" {
			binPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	if n := os.Getenv(envSilentAdapter); n != "" {
		os.Exit(silentAdapter(n)) // this binary is a test's adapter process
	}
	code := m.Run()
	for _, dir := range []string{buildDir, serveBinDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestConformanceReferenceInProcess(t *testing.T) {
	code, out, errOut := runCLI(t, "", "conformance")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "PASS  pass ") || !strings.Contains(out, "fail 0  error 0") {
		t.Errorf("report:\n%s", out)
	}
}

// TestConformanceThroughAdapterSubprocess runs the suite against
// "retrykit adapter" through a real pipe: the protocol end to end,
// including every executor scenario through the scenario op.
func TestConformanceThroughAdapterSubprocess(t *testing.T) {
	bin := retrykitBinary(t)
	cmd := exec.Command(bin, "conformance", "--impl", bin+" adapter", "--format", "json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var rep conformance.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Totals.Pass < 400 || rep.Totals.NotRun != 0 || rep.Implementation.Implementation != "retrykit" {
		t.Errorf("report: %+v %+v", rep.Implementation, rep.Totals)
	}
	if !rep.Implementation.Supports(protocol.OpScenario) {
		t.Errorf("retrykit adapter does not advertise the scenario op: %v", rep.Implementation.Ops)
	}
	scenarios := 0
	for _, r := range rep.Results {
		if r.Kind == "scenario" {
			scenarios++
			if r.Status != conformance.StatusPass {
				t.Errorf("%s: %s %s", r.ID, r.Status, r.Reason)
			}
		}
	}
	if want := countScenarios(t); scenarios != want || want < 60 {
		t.Errorf("%d scenario results through the adapter, want all %d", scenarios, want)
	}
}

// countScenarios counts the scenarios in the embedded files.
func countScenarios(t *testing.T) int {
	t.Helper()
	s, err := conformance.Load(nil, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	return len(s.Vectors)
}

func TestConformancePythonAdapter(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	adapter := filepath.Join(repoRoot(t), "conformance", "adapters", "python", "adapter.py")
	if _, err := os.Stat(adapter); err != nil {
		t.Skip("python adapter not present")
	}
	code, out, errOut := runCLI(t, "", "conformance", "--impl", py+" "+adapter, "--format", "junit")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal([]byte(out), &junit); err != nil {
		t.Fatal(err)
	}
	if junit.Tests < 400 || junit.Failures != 0 || junit.Errors != 0 {
		t.Errorf("junit %+v", junit)
	}
	// The Python adapter is a policy library: the scenarios leave the
	// scores and coverage, and one line says so.
	code, out, errOut = runCLI(t, "", "conformance", "--impl", py+" "+adapter, "--jitter-samples", "0")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("%d executor scenarios left out of the scores and coverage", countScenarios(t))) ||
		strings.Contains(out, "op scenario not supported") || !strings.HasPrefix(out, "PASS  MUST ") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestConformanceFailingImplExitsOne(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.sh")
	// An adapter that says hello and then crashes on everything.
	body := "#!/bin/sh\nread line\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\necho '{\"id\":'$id',\"protocol\":1,\"implementation\":\"bad\",\"version\":\"0\",\"ops\":[\"match\"],\"resolution_ns\":1,\"jitter\":\"injectable\"}'\necho 'about to die' >&2\nexit 7\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	skip := filepath.Join(dir, "skip.txt")
	code, out, errOut := runCLI(t, "", "conformance", "--impl", "sh "+script, "--requirement", "RET-18",
		"--timeout", "2s", "--write-skip-file", skip)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "ERROR") || !strings.Contains(out, "about to die") || strings.Contains(out, "FAIL  match-") {
		t.Errorf("crashes must be errors with stderr, not failures:\n%s", out)
	}
	data, err := os.ReadFile(skip)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "match-") {
		t.Errorf("skip file:\n%s", data)
	}
	// With that skip file the same run is clean.
	code, out, _ = runCLI(t, "", "conformance", "--impl", "sh "+script, "--requirement", "RET-18", "--skip-file", skip)
	if code != 0 {
		t.Errorf("with skip file: exit %d\n%s", code, out)
	}
}

func TestConformanceFlagsAndFormats(t *testing.T) {
	code, out, _ := runCLI(t, "", "conformance", "--run", "dur-0001,dur-0002", "--format", "markdown", "--jitter-samples", "0")
	if code != 0 || !strings.Contains(out, "pass 2  fail 0") || !strings.Contains(out, "| requirement |") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "conformance", "--flag", "class:overflow", "--format", "json")
	var rep conformance.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	for _, r := range rep.Results {
		if !strings.Contains(strings.Join(r.Flags, ","), "class:overflow") {
			t.Errorf("--flag ran %s", r.ID)
		}
	}
	for _, bad := range [][]string{
		{"conformance", "--format", "yaml"},
		{"conformance", "--impl", "'unterminated"},
		{"conformance", "--vectors", "/nonexistent"},
		{"conformance", "--skip-file", "/nonexistent"},
		{"conformance", "extra"},
		{"conformance", "export"},
		// A selection that matches nothing would report an empty PASS.
		{"conformance", "--run", "dur-0001,dur-9999"},
		{"conformance", "--requirement", "RET-99"},
		{"conformance", "--flag", "class:made-up"},
		{"conformance", "--scenarios-dir", "/nonexistent"},
		{"conformance", "--scenarios=false", "--scenarios-dir", "."},
		{"conformance", "--scenarios=false", "--run", "scn-core-0001"},
	} {
		if code, _, _ := runCLI(t, "", bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

func TestConformanceScenarioFlags(t *testing.T) {
	// A scenario is selected by id, and by a requirement it only covers.
	code, out, _ := runCLI(t, "", "conformance", "--run", "scn-core-0013", "--requirement", "CORE-T17", "--jitter-samples", "0", "--format", "json")
	var rep conformance.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	ids := map[string]bool{}
	for _, r := range rep.Results {
		ids[r.ID] = r.Status == conformance.StatusPass
	}
	// CORE-T17 is the requirement of scn-core-0014 and covered by scn-dlq-0001..0003.
	for _, id := range []string{"scn-core-0013", "scn-core-0014", "scn-dlq-0001", "scn-dlq-0002", "scn-dlq-0003"} {
		if !ids[id] {
			t.Errorf("%s not run or not passed: %v", id, ids)
		}
	}
	// --scenarios=false leaves them out entirely.
	code, out, _ = runCLI(t, "", "conformance", "--scenarios=false", "--format", "json", "--jitter-samples", "0")
	rep = conformance.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	for _, r := range rep.Results {
		if r.Kind == "scenario" {
			t.Fatalf("--scenarios=false ran %s", r.ID)
		}
	}
	if rep.Totals.NotRun != 0 || rep.NotSelected != 0 {
		t.Errorf("--scenarios=false: %+v, %d not selected", rep.Totals, rep.NotSelected)
	}
}

func TestConformanceExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vectors")
	code, out, errOut := runCLI(t, "", "conformance", "export", dir)
	if code != 0 {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	for _, f := range []string{"duration.json", "validate.json", "delay.json", "match.json", "decide.json", "vector.schema.json"} {
		want, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "vectors", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s not exported verbatim (%v)", f, err)
		}
	}
	want, _ := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "scenarios", "lifecycle.json"))
	if got, err := os.ReadFile(filepath.Join(dir, "scenarios", "lifecycle.json")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("scenarios/lifecycle.json not exported verbatim (%v)", err)
	}
	// The exported directories are valid --vectors and --scenarios-dir sources.
	code, out, _ = runCLI(t, "", "conformance", "--vectors", dir, "--scenarios-dir", filepath.Join(dir, "scenarios"), "--jitter-samples", "0")
	if code != 0 || !strings.Contains(out, "not run 0") {
		t.Errorf("run on exported vectors: exit %d\n%s", code, out)
	}
}

func TestAdapterCommand(t *testing.T) {
	in := `{"id":1,"op":"hello"}
{"id":2,"op":"parse_duration","value":"PT1.5S"}
{"id":3,"op":"delay","policy":{"initial_interval":"PT10S","jitter":true},"attempt":3,"rand":0.25}
{"id":4,"op":"match","patterns":["auth.*"],"error_type":"auth"}
{"id":5,"op":"decide","policy":{"max_attempts":3},"attempt":3,"error":{"type":"x","code":""}}
{"id":6,"op":"validate","policy":{"max_attempts":-1}}
{"id":7,"op":"frobnicate"}
not json
`
	code, out, errOut := runCLI(t, in, "adapter")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d answers for 8 requests:\n%s", len(lines), out)
	}
	// Expected values from the spec: PT1.5S = 1.5e9 ns; exponential 10s*2^2
	// = 40s, times (0.5+0.25) = 30s; "auth" does not match "auth.*"; attempt
	// 3 of 3 exhausts to discard.
	want := []string{
		`"protocol":1`,
		`{"id":2,"ns":1500000000}`,
		`{"id":3,"delay_ns":30000000000}`,
		`{"id":4,"match":false}`,
		`{"id":5,"action":"discard"}`,
		`"type":"validation.retry_policy_invalid"`,
		`{"id":7,"unsupported":true}`,
		`{"id":0,"error":{"type":"validation.invalid_request"`,
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("answer %d = %s, want it to contain %s", i+1, lines[i], w)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	cases := map[string][]string{
		`python3 adapter.py`:          {"python3", "adapter.py"},
		`  a   b  `:                   {"a", "b"},
		`"my dir/bin" --x 'a b' c\ d`: {"my dir/bin", "--x", "a b", "c d"},
		`node "say \"hi\""`:           {"node", `say "hi"`},
		`''`:                          {""},
	}
	for in, want := range cases {
		got, err := splitCommand(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := splitCommand(`"open`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestConformanceBadRunFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		// An explicit empty --impl must not silently test the reference.
		{[]string{"--impl", ""}, "--impl"},
		{[]string{"--impl=   "}, "--impl"},
		{[]string{"--jitter-samples", "-1"}, "--jitter-samples"},
		{[]string{"--parallel", "0"}, "--parallel"},
		{[]string{"--parallel", "-3"}, "--parallel"},
		{[]string{"--timeout", "0s"}, "--timeout"},
		{[]string{"--timeout", "-1s"}, "--timeout"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, "", append([]string{"conformance"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q", c.args, code, len(out), errOut)
		}
	}
	// The boundaries are accepted.
	code, out, errOut := runCLI(t, "", "conformance", "--run", "dur-0001", "--jitter-samples", "0", "--parallel", "1", "--timeout", "1ns")
	if code != 0 {
		t.Errorf("boundary values: exit %d\n%s%s", code, out, errOut)
	}
}

func TestConformanceAdapterDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"missing program": filepath.Join(dir, "no-such-adapter"),
	}
	if p, err := exec.LookPath("false"); err == nil {
		cases["exits at once"] = p
	}
	if _, err := exec.LookPath("sh"); err == nil {
		// Answers hello with another protocol version.
		script := filepath.Join(dir, "v2.sh")
		body := "#!/bin/sh\nread line\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\necho '{\"id\":'$id',\"protocol\":2,\"implementation\":\"v2\",\"version\":\"0\",\"ops\":[\"match\"],\"resolution_ns\":1,\"jitter\":\"injectable\"}'\ncat >/dev/null\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		cases["wrong protocol"] = "sh " + script
		// Dies before answering, with a diagnostic.
		script = filepath.Join(dir, "die.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'cannot load config' >&2\nexit 3\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cases["dies with stderr"] = "sh " + script
	}
	for name, impl := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "conformance", "--impl", impl, "--timeout", "5s")
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			// One clear error, not one per vector.
			if out != "" || strings.Count(errOut, "did not start") != 1 || !strings.Contains(errOut, "--impl") {
				t.Errorf("stdout %d bytes, stderr:\n%s", len(out), errOut)
			}
			if name == "dies with stderr" && !strings.Contains(errOut, "cannot load config") {
				t.Errorf("stderr of the adapter not shown:\n%s", errOut)
			}
		})
	}
}

func TestConformanceHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"conformance", "--help"}, {"conformance", "-h"}, {"conformance", "--run", "dur-0001", "--help"},
		{"conformance", "export", "--help"}, {"conformance", "export", "-h"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "usage: retrykit conformance") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	// The help documents the ranges of the numeric flags.
	_, out, _ := runCLI(t, "", "conformance", "--help")
	for _, want := range []string{"--parallel N         1..1024", "--jitter-samples K   0..1000000", "--repeat K           1..100", "--spec-only"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

func TestConformanceNumericFlagRanges(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--parallel", "1025"}, "--parallel: must be in 1..1024, got 1025"},
		{[]string{"--parallel", "100000000"}, "--parallel: must be in 1..1024"},
		{[]string{"--jitter-samples", "1000001"}, "--jitter-samples: must be in 0..1000000"},
		{[]string{"--jitter-samples", "1000000000"}, "--jitter-samples: must be in 0..1000000"},
		{[]string{"--repeat", "0"}, "--repeat: must be in 1..100, got 0"},
		{[]string{"--repeat", "101"}, "--repeat: must be in 1..100, got 101"},
		{[]string{"--vectors", "/nonexistent"}, "--vectors: /nonexistent does not exist"},
		{[]string{"--scenarios-dir", "/nonexistent"}, "--scenarios-dir: /nonexistent does not exist"},
		{[]string{"--vectors", "conformance_test.go"}, "is not a directory"},
	}
	for _, c := range cases {
		code, out, errOut := runCLI(t, "", append([]string{"conformance"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q, want %q", c.args, code, len(out), errOut, c.want)
		}
	}
	// The upper bounds are accepted.
	code, out, errOut := runCLI(t, "", "conformance", "--run", "dur-0001", "--parallel", "1024", "--repeat", "100")
	if code != 0 {
		t.Errorf("upper bounds: exit %d\n%s%s", code, out, errOut)
	}
}

func TestConformanceSpecOnlyCommand(t *testing.T) {
	// The report names the exact command of the spec-only run ...
	code, out, _ := runCLI(t, "", "conformance", "--requirement", "RET-07", "--jitter-samples", "0")
	want := "spec-only run (MUST level only): retrykit conformance --requirement RET-07 --jitter-samples 0 --spec-only"
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d, report lacks %q:\n%s", code, want, out)
	}
	// ... and that command runs the MUST level alone.
	code, out, _ = runCLI(t, "", "conformance", "--requirement", "RET-07", "--jitter-samples", "0", "--spec-only", "--format", "json")
	var rep conformance.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if !rep.SpecOnly || len(rep.Results) == 0 || rep.NotSelected == 0 {
		t.Fatalf("spec-only run: %d results, %d not selected", len(rep.Results), rep.NotSelected)
	}
	for _, r := range rep.Results {
		if r.Level != "MUST" {
			t.Errorf("spec-only run judged %s (level %s, flags %v)", r.ID, r.Level, r.Flags)
		}
	}
	if got := commandLine([]string{"--impl", "python3 my adapter.py", "--run", "it's"}); got != `retrykit conformance --impl 'python3 my adapter.py' --run 'it'\''s'` {
		t.Errorf("commandLine quoting: %s", got)
	}
}
