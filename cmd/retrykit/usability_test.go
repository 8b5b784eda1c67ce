package main

// The commands as README.md and docs/getting-started.md use them, followed
// literally on a fresh clone: help, flag checks, suggestions and messages.
// Each test pins a fix.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// goBlockAfter returns the first ```go block of the markdown file after the
// line containing marker.
func goBlockAfter(t *testing.T, file, marker string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("%s: no %q", file, marker)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(s[i:])
	if m == nil {
		t.Fatalf("%s: no go block after %q", file, marker)
	}
	return m[1]
}

// The getting-started adapter answers a request with both a bad policy and
// a bad attempt as the reference does (policy first): its first fuzz run,
// as the page tells it, must pass. It checked the attempt first, and
// "retrykit fuzz" reported a disagreement on the page's own example.
func TestGettingStartedAdapterPassesFuzz(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the getting-started adapter")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	src := goBlockAfter(t, filepath.Join(root, "docs", "getting-started.md"), "## 2. Test an implementation")
	dir := t.TempDir()
	gomod := "module example.com/myqueue\n\ngo 1.24\n\nrequire github.com/retrykit/retrykit v0.0.0-00010101000000-000000000000\n\nreplace github.com/retrykit/retrykit => " + root + "\n"
	for name, body := range map[string]string{"go.mod": gomod, "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "my-adapter")
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the getting-started adapter: %v\n%s", err, out)
	}
	// The seed that found it; the shrunk request was
	// {"policy":{"max_attempts":0,"max_attempts":0},"attempt":0}.
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", bin, "--cases", "2000", "--seed", "2057263088991375648", "--quiet")
	if code != 0 {
		t.Fatalf("fuzz of the getting-started adapter: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "", "conformance", "--impl", bin, "--jitter-samples", "0")
	if code != 0 {
		t.Fatalf("conformance of the getting-started adapter: exit %d\n%s\n%s", code, out, errOut)
	}
}

// --list-profiles lists each older release under the NAME@VERSION that
// selects it, and that name works with --profile. sidekiq@6.4.1 was listed
// as "sidekiq6", so the list showed sidekiq6 twice and no sidekiq@VERSION.
func TestListProfilesOlderReleasesByVersionName(t *testing.T) {
	code, out, errOut := runCLI(t, "", "schedule", "--list-profiles")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		seen[strings.Fields(line)[0]]++
	}
	for name, n := range seen {
		if n > 1 {
			t.Errorf("%s listed %d times:\n%s", name, n, out)
		}
	}
	for _, v := range []string{"sidekiq@6.4.1", "aws_go@1.47"} {
		if seen[v] != 1 {
			t.Errorf("older release %s not listed:\n%s", v, out)
		}
		if code, _, errOut := runCLI(t, "", "schedule", "--profile", v); code != 0 {
			t.Errorf("schedule --profile %s: exit %d: %s", v, code, errOut)
		}
	}
	if strings.Contains(out, "a ordinary") {
		t.Errorf("summary says \"a ordinary\":\n%s", out)
	}
}

// A mistyped --server gets a did-you-mean like every other flag: --server
// was taken out of the arguments before the flag set saw them, so the set
// did not know it.
func TestConformanceServeSuggestsServer(t *testing.T) {
	code, _, errOut := runCLI(t, "", "conformance", "--serve", "http://127.0.0.1:1")
	if code != 2 || !strings.Contains(errOut, "(did you mean --server?)") {
		t.Errorf("exit %d, stderr lacks the suggestion:\n%s", code, errOut)
	}
}

// fuzz --out naming a file is refused before the run: it was found only
// when the first disagreement was written, after a run of minutes, and the
// vector was lost.
func TestFuzzOutCheckedUpFront(t *testing.T) {
	file := filepath.Join(t.TempDir(), "found")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The adapter command does not exist: a check after the hello would
	// report that instead.
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", "/nonexistent/adapter", "--out", file)
	if code != 2 || out != "" || !strings.Contains(errOut, "--out: "+file+" is not a directory") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// translate --to bullmq of a policy that reaches its cap: BullMQ's
// exponential type has no cap, and the only fixed candidate was the first
// delay, so 25 attempts of the OJS defaults (1s doubling to a 5m cap)
// became "type=fixed,delay=1000": retries 300 times too early at the cap.
// The chosen configuration (least squared log error of the middles, which
// puts a fixed delay at their geometric mean) must now wait in all within
// a factor of 3 of the policy, not 200.
func TestTranslateToBullMQCappedPolicy(t *testing.T) {
	code, out, errOut := runCLI(t, `{"max_attempts": 25}`, "translate", "--json", "--to", "bullmq", "-")
	var tr translation
	if code != 0 || json.Unmarshal([]byte(out), &tr) != nil {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	// The policy's middles after attempts 1..24: 1s, 2s, ..., 256s (511s
	// in all), then 15 at the 300s cap: 5011s.
	const want = 5011 * time.Second
	var got time.Duration
	retries := 0
	for _, r := range tr.Rows {
		if r.ToAction == "retry" {
			got += time.Duration(r.ToMidNS)
			retries++
		}
	}
	if retries != 24 || got < want/3 || got > want*3 {
		t.Errorf("%s: %d retries waiting %v in all, want 24 and within a factor of 3 of %v", tr.Profile, retries, got, want)
	}
}

// "retrykit profiles" (the README's "Other systems' profiles" reads like a
// command) points at schedule --list-profiles instead of a bare "unknown
// command".
func TestProfilesCommandPointsToListProfiles(t *testing.T) {
	for _, name := range []string{"profiles", "list-profiles", "--list-profiles"} {
		code, out, errOut := runCLI(t, "", name)
		if code != 2 || out != "" || !strings.Contains(errOut, `"retrykit schedule --list-profiles"`) {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", name, code, out, errOut)
		}
	}
}

// An adapter whose hello has no version (the getting-started example had
// none) is named without a dangling space: "— my-queue", not "— my-queue ".
func TestReportNamesAdapterWithoutVersion(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "a.py")
	// The hello without "version"; every other request is unsupported.
	src := `import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["op"] == "hello":
        a = {"id": r["id"], "protocol": 1, "implementation": "my-queue", "ops": ["match"], "resolution_ns": 1, "jitter": "injectable"}
    else:
        a = {"id": r["id"], "unsupported": True}
    print(json.dumps(a), flush=True)
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	impl := "python3 " + script
	_, out, errOut := runCLI(t, "", "conformance", "--impl", impl, "--jitter-samples", "0", "--scenarios=false")
	_, fout, _ := runCLI(t, "", "fuzz", "--impl", impl, "--cases", "10", "--seed", "1", "--quiet")
	_, pout, _ := runCLI(t, "", "conformance", "--profiles", "--impl", impl)
	for what, text := range map[string]string{"conformance": out, "fuzz": fout, "conformance --profiles": pout} {
		if !strings.Contains(text, "my-queue") {
			t.Errorf("%s: adapter not named:\n%s%s", what, text, errOut)
		}
		for _, bad := range []string{"my-queue \n", "my-queue  ", "my-queue  —"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: %q in:\n%s", what, bad, text)
			}
		}
	}
}

// An integer setting too large for 64 bits is out of range, not "not an
// integer".
func TestProfileSettingOutOfRange(t *testing.T) {
	for _, spec := range []string{"bullmq:delay=99999999999999999999", "bullmq:attempts=-99999999999999999999"} {
		code, _, errOut := runCLI(t, "", "schedule", "--profile", spec)
		if code != 2 || !strings.Contains(errOut, "must be between") || strings.Contains(errOut, "not an integer") {
			t.Errorf("%s: exit %d, %s", spec, code, errOut)
		}
	}
}

// Every command with flags sets them apart under "flags:" in its help
// (fit ran its flag list straight on from the description).
func TestHelpHasFlagsSection(t *testing.T) {
	for _, c := range []string{"schedule", "fit", "translate", "simulate", "fuzz", "conformance", "serve"} {
		code, out, errOut := runCLI(t, "", c, "--help")
		if code != 0 || errOut != "" || !strings.Contains(out, "\n\nflags:\n") || strings.Count(out, "usage: retrykit "+c) != 1 {
			t.Errorf("%s --help: exit %d, stderr %q, stdout:\n%s", c, code, errOut, out)
		}
	}
}

// A skip file that cannot be read names the flag.
func TestSkipFileDirectoryNamesFlag(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", "conformance", "--skip-file", dir)
	if code != 2 || out != "" || !strings.Contains(errOut, "--skip-file "+dir) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// An empty policy input is the default policy (RK-09), and every command
// that reads one says so on stderr instead of showing the default as if
// it were the file's; the output stays the default policy's.
func TestEmptyPolicyInputIsNoted(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(empty, []byte(" \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"schedule", empty}, {"schedule", "-"},
		{"compare", empty, "--profile", "river"},
		{"translate", "--to", "bullmq", "-"},
		{"simulate", "--jobs", "2", "--policy", empty},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || out == "" || !strings.Contains(errOut, "is empty: using the OJS default policy") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, out, errOut := runCLI(t, "", "schedule", empty)
	if code != 0 || !strings.Contains(out, "max_attempts=3 initial_interval=PT1S") {
		t.Errorf("empty policy: exit %d, not the default policy:\n%s%s", code, out, errOut)
	}
	if _, _, errOut := runCLI(t, "{}", "schedule", "-"); errOut != "" {
		t.Errorf("{} is a policy, noted anyway: %q", errOut)
	}
}

// conformance --server checks -o and --write-skip-file before the run, as
// the vector suite does: a directory for -o was found only after the run,
// with an error that named no flag. The server here does not exist: a
// check after connecting would report that instead.
func TestLiveOutputCheckedUpFront(t *testing.T) {
	dir := t.TempDir()
	for _, flagName := range []string{"-o", "--write-skip-file"} {
		code, out, errOut := runCLI(t, "", "conformance", "--server", "http://127.0.0.1:1", flagName, dir)
		if code != 2 || out != "" || !strings.Contains(errOut, flagName+": "+dir+" is a directory") {
			t.Errorf("%s DIR: exit %d, stdout %q, stderr %q", flagName, code, out, errOut)
		}
	}
}

// conformance --timeout (with --impl or --server) has a range, as fuzz's
// has, and the help says it: 1000h was accepted, a hang per request of an
// unresponsive adapter or server.
func TestConformanceTimeoutBounded(t *testing.T) {
	for _, args := range [][]string{
		{"conformance", "--timeout", "2h"},
		{"conformance", "--server", "http://127.0.0.1:1", "--timeout", "1000h"},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "--timeout: must be") || !strings.Contains(errOut, "at most 1h0m0s") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"conformance", "--help"}, {"conformance", "--server", "x", "--help"}} {
		if _, out, _ := runCLI(t, "", args...); !strings.Contains(out, "at most 1h") {
			t.Errorf("%q: the help gives no range for --timeout", args)
		}
	}
}

// A skip file is bounded (16 MiB, 100 000 ids): /dev/zero or a huge file
// given by mistake was read whole into memory.
func TestSkipFileBounded(t *testing.T) {
	dir := t.TempDir()
	many := filepath.Join(dir, "many.txt")
	var b strings.Builder
	for i := range 100_001 {
		b.WriteString("v-" + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(many, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.txt")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("# a comment line of a skip file\n"), 17<<20/32), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{many: "more than 100000 ids", huge: "more than the limit of 16777216 bytes"} {
		code, out, errOut := runCLI(t, "", "conformance", "--skip-file", file)
		if code != 2 || out != "" || !strings.Contains(errOut, "--skip-file "+file) || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, %d bytes of stdout, stderr %q", filepath.Base(file), code, len(out), errOut)
		}
	}
}

// "retrykit --version" and "retrykit version" answer (they were unknown
// commands), and "retrykit help help" is the overview, not an unknown
// command.
func TestVersionAndHelpHelp(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "retrykit ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", "version", "extra"); code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "", "help", "help")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: retrykit <command>") {
		t.Errorf("help help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// "retrykit schedule help" reads a policy file named help; when there is
// none, the error points at --help.
func TestPolicyFileNamedHelp(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"schedule", "help"}, {"translate", "--to", "river", "help"}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, "--help") {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
}

// A mistyped flag gives one error line with the did-you-mean, the usage
// line and a pointer to --help: not the whole help (80 lines for
// conformance) with the suggestion below it, and not the flag package's
// line and ours both. conformance --server had no suggestion at all.
func TestUnknownFlagIsTerse(t *testing.T) {
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"schedule", "--limt", "3"}, "(did you mean --limit?)"},
		{[]string{"simulate", "--job", "3"}, "(did you mean --jobs?)"},
		{[]string{"fit", "--profil", "celery"}, "(did you mean --profile?)"},
		{[]string{"translate", "--t", "bullmq"}, "(did you mean --to?)"},
		{[]string{"serve", "--adr", "x"}, "(did you mean --addr?)"},
		{[]string{"fuzz", "--imp", "x"}, "(did you mean --impl?)"},
		{[]string{"conformance", "--requirment", "RET-01"}, "(did you mean --requirement?)"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--timout", "1s"}, "(did you mean --timeout?)"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		// At most the error line, a usage line wrapped at 80 columns (serve's
		// lists every flag: 7 lines) and the pointer to --help.
		if code != 2 || out != "" || len(lines) > 10 || !strings.Contains(lines[0], tc.hint) ||
			!strings.Contains(errOut, "--help\" describes every flag") || strings.Contains(errOut, "flag provided but not defined") {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", tc.args, code, out, errOut)
		}
	}
	code, _, errOut := runCLI(t, "", "schedule", "--limit", "99999999999999999999")
	if code != 2 || !strings.HasPrefix(errOut, "retrykit schedule: invalid value \"99999999999999999999\" for flag -limit") {
		t.Errorf("--limit 2^66: exit %d, %q", code, errOut)
	}
}

// A file, name or list flag given an empty value (an unset shell variable)
// is refused, naming the flag: schedule --profile with an empty value printed the default
// policy's schedule, and an empty --svg or -o was silently dropped.
func TestEmptyFlagValuesRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"schedule", "--profile", ""}, "--profile"},
		{[]string{"schedule", "--svg="}, "--svg"},
		{[]string{"schedule", "--rand", " "}, "--rand"},
		{[]string{"fit", "--profile", "celery", "--svg", ""}, "--svg"},
		{[]string{"simulate", "--jobs", "3", "--svg", ""}, "--svg"},
		{[]string{"compare", "--profile", "river", "--profile", "sidekiq", "--svg", ""}, "--svg"},
		{[]string{"translate", "--to", ""}, "--to"},
		{[]string{"conformance", "-o", ""}, "-o"},
		{[]string{"conformance", "--run", ""}, "--run"},
		{[]string{"conformance", "--skip-file", ""}, "--skip-file"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--reset-url", ""}, "--reset-url"},
		{[]string{"fuzz", "--impl", "x", "--out", ""}, "--out"},
		// An empty address listened on every interface, not loopback.
		{[]string{"serve", "--addr", ""}, "--addr"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.flag+": empty value") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
	}
}

// The range of a duration setting up to the largest Duration is printed
// as that, not as a negative duration (the float bound overflowed).
func TestProfileDurationRangeMessage(t *testing.T) {
	code, _, errOut := runCLI(t, "", "schedule", "--profile", "temporal:initial_interval=0s")
	if code != 2 || !strings.Contains(errOut, "must be between 1ns and 2562047h47m16.854775807s") || strings.Contains(errOut, "and -") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// conformance --profiles refuses the suite's selection and scoring flags
// (they were silently dropped: "--profiles --spec-only" ran every profile
// vector), and an empty --profiles-dir is an error, not a passing report
// of nothing.
func TestConformanceProfilesRefusesSuiteFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--spec-only"}, "--spec-only"},
		{[]string{"--run", "x", "--strict"}, "--run, --strict"},
		{[]string{"--requirement", "RET-01"}, "--requirement"},
		{[]string{"--jitter-samples", "10"}, "--jitter-samples"},
	} {
		args := append([]string{"conformance", "--profiles"}, tc.args...)
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "it takes no "+tc.flag) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", "conformance", "--profiles", "--profiles-dir", dir)
	if code != 2 || out != "" || !strings.Contains(errOut, "--profiles-dir: no profile vector files") {
		t.Errorf("empty --profiles-dir: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", "conformance", "--profiles", "--format", "json"); code != 0 {
		t.Errorf("--profiles --format json: exit %d, %s", code, errOut)
	}
}

// conformance export with a wrong argument says what is wrong before the
// usage; it printed the usage alone.
func TestConformanceExportSaysWhy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the directory to write"},
		{[]string{"--impl", "x"}, `takes no flags, got "--impl"`},
		{[]string{dir, "--impl", "x"}, "one directory, got 3 arguments"},
	} {
		args := append([]string{"conformance", "export"}, tc.args...)
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "retrykit conformance export: "+tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("%s written", dir)
	}
}

// fit --horizon for a profile with an attempt limit is noted, not silently
// ignored; for one without a limit it sets the retries fitted.
func TestFitHorizonNoted(t *testing.T) {
	code, out, errOut := runCLI(t, "", "fit", "--profile", "celery", "--horizon", "500")
	if code != 0 || !strings.Contains(errOut, "--horizon is for profiles without an attempt limit; celery makes 4 attempts") || !strings.Contains(out, "attempts 1..3") {
		t.Errorf("celery: exit %d, stderr %q\n%s", code, errOut, out)
	}
	code, out, errOut = runCLI(t, "", "fit", "--profile", "temporal", "--horizon", "5")
	if code != 0 || errOut != "" || !strings.Contains(out, "attempts 1..5") {
		t.Errorf("temporal: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// schedule --error-class and --retry-after without --profile are refused:
// they were silently dropped and the policy's schedule printed as if they
// applied.
func TestScheduleProfileOnlyFlags(t *testing.T) {
	for _, args := range [][]string{
		{"schedule", "--error-class", "throttling"},
		{"schedule", "--retry-after", "3s", "-"},
	} {
		code, out, errOut := runCLI(t, "{}", args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "only with --profile") || !strings.Contains(errOut, args[1]) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", "schedule", "--profile", "aws_go", "--error-class", "throttling", "--retry-after", "3s"); code != 0 {
		t.Errorf("with --profile: exit %d, %s", code, errOut)
	}
}
