package main

import (
	"encoding/json"
	"html"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

func TestFuzzUsage(t *testing.T) {
	for _, args := range [][]string{{"fuzz", "--help"}, {"help", "fuzz"}} {
		if code, out, _ := runCLI(t, "", args...); code != 0 || !strings.Contains(out, "usage: retrykit fuzz") {
			t.Errorf("%q: exit %d\n%s", args, code, out)
		}
	}
	impl := "--impl=" + retrykitBinary(t) + " adapter"
	for _, args := range [][]string{
		{},                     // no --impl
		{"--impl", "  "},       // empty command line
		{impl, "--cases", "0"}, // below 1
		{impl, "--cases", "100000001"},
		{impl, "--parallel", "0"},
		{impl, "--parallel", "1025"},
		{impl, "--timeout", "0s"},
		{impl, "--timeout", "2h"},
		{impl, "--seed", "0"},
		{impl, "--seed", "-1"},
		{impl, "--seed", "x"},
		{impl, "--format", "xml"},
		{impl, "--ops", "delay,hello"},
		{impl, "extra"},
		{impl, "--no-such-flag"},
		{"--impl", "'unterminated"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"fuzz"}, args...)...)
		if code != 2 || errOut == "" {
			t.Errorf("fuzz %q: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
}

func TestFuzzAdapterDoesNotStart(t *testing.T) {
	code, _, errOut := runCLI(t, "", "fuzz", "--impl", filepath.Join(t.TempDir(), "no-such-adapter"))
	if code != 2 || !strings.Contains(errOut, "did not start") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	// Starts, but answers hello with garbage.
	code, _, errOut = runCLI(t, "", "fuzz", "--impl", "sh -c 'read l; echo nonsense'", "--timeout", "2s")
	if code != 2 {
		t.Errorf("bad hello: exit %d\n%s", code, errOut)
	}
}

func TestFuzzReferenceAdapterIsClean(t *testing.T) {
	bin := retrykitBinary(t)
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", bin+" adapter", "--cases", "3000", "--seed", "42")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"seed 42", "parse_duration", "validate", "delay", "match", "decide", "scenario", "PASS: no disagreement"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "random") {
		t.Errorf("a given seed is not random:\n%s", out)
	}
	// Without --seed the seed is drawn and printed.
	code, out, _ = runCLI(t, "", "fuzz", "--impl", bin+" adapter", "--cases", "50", "--ops", "match")
	if code != 0 || !strings.Contains(out, "(random; --seed ") {
		t.Errorf("exit %d\n%s", code, out)
	}
	// JSON report.
	code, out, _ = runCLI(t, "", "fuzz", "--impl", bin+" adapter", "--cases", "100", "--seed", "3", "--format", "json", "--parallel", "1")
	var rep struct {
		OK   bool   `json:"ok"`
		Seed uint64 `json:"seed"`
		Ops  []struct {
			Op     string `json:"op"`
			Cases  int    `json:"cases"`
			Status string `json:"status"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || rep.Seed != 3 || len(rep.Ops) != 6 {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
	total := 0
	for _, o := range rep.Ops {
		total += o.Cases
	}
	if total != 100 {
		t.Errorf("%d cases sent, want 100", total)
	}
}

// buggyAdapter is the Python example adapter with a planted bug the shipped
// vectors do not catch: error types are compared on their first four
// segments only.
const buggyAdapter = `import sys
sys.path.insert(0, sys.argv[1])
import json, adapter

def first4(s):
    return ".".join(s.split(".")[:4])

real = adapter.op_match
def op_match(req):
    t = req.get("error_type")
    for p in req.get("patterns") or []:
        if isinstance(p, str) and isinstance(t, str) and not p.endswith(".*") and t.count(".") >= 4 and first4(p) == first4(t):
            return {"match": True}
    return real(req)
adapter._DISPATCH["match"] = op_match
sys.exit(adapter.main())
`

func TestFuzzFindsShrinksAndWritesVector(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "buggy.py")
	if err := os.WriteFile(script, []byte(buggyAdapter), 0o644); err != nil {
		t.Fatal(err)
	}
	impl := py + " " + script + " " + filepath.Join(repoRoot(t), "conformance", "adapters", "python")
	// The premise: the shipped vectors pass.
	if code, out, errOut := runCLI(t, "", "conformance", "--impl", impl, "--jitter-samples", "0"); code != 0 {
		t.Fatalf("the vectors already catch the planted bug: exit %d\n%s\n%s", code, out, errOut)
	}
	out := filepath.Join(dir, "found")
	code, stdout, errOut := runCLI(t, "", "fuzz", "--impl", impl, "--ops", "match", "--cases", "5000", "--seed", "1", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, errOut)
	}
	for _, want := range []string{"DISAGREEMENT", "sent:", "expected:", "got:", `"match":false`, `"match":true`,
		"seed:     1", "repeat:   retrykit fuzz", "vector:   match-9001"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// The vector runs as is: the bug fails it, the reference passes it.
	code, rep, _ := runCLI(t, "", "conformance", "--impl", impl, "--vectors", out, "--scenarios=false", "--jitter-samples", "0")
	if code != 1 || !strings.Contains(rep, "match-9001") {
		t.Errorf("replay against the bug: exit %d, want 1\n%s", code, rep)
	}
	if code, rep, errOut := runCLI(t, "", "conformance", "--vectors", out, "--scenarios=false", "--jitter-samples", "0"); code != 0 {
		t.Errorf("replay against the reference: exit %d, want 0\n%s\n%s", code, rep, errOut)
	}
	// A second run appends the next id to the same file.
	if code, stdout, _ := runCLI(t, "", "fuzz", "--impl", impl, "--ops", "match", "--cases", "5000", "--seed", "2", "--out", out); code != 1 ||
		!strings.Contains(stdout, "match-9002") {
		t.Errorf("second run: exit %d\n%s", code, stdout)
	}
}

func TestFuzzPythonAdapterIsClean(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	adapter := filepath.Join(repoRoot(t), "conformance", "adapters", "python", "adapter.py")
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", py+" "+adapter, "--cases", "2000", "--seed", "5")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// opaqueAdapter is the Python example adapter declaring opaque jitter (the
// runner then sends no rand and checks bounds) and two unclaimed flags.
const opaqueAdapter = `import sys
sys.path.insert(0, sys.argv[1])
import adapter

real = adapter.op_hello
def op_hello(req):
    h = real(req)
    h["jitter"] = "opaque"
    h["unclaimed_flags"] = ["should:date-components", "extension:backoff_strategy"]
    return h
adapter._DISPATCH["hello"] = op_hello
sys.exit(adapter.main())
`

func TestFuzzOpaqueJitterAndUnclaimedFlags(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	script := filepath.Join(t.TempDir(), "opaque.py")
	if err := os.WriteFile(script, []byte(opaqueAdapter), 0o644); err != nil {
		t.Fatal(err)
	}
	impl := py + " " + script + " " + filepath.Join(repoRoot(t), "conformance", "adapters", "python")
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", impl, "--cases", "3000", "--seed", "8", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		Jitter string `json:"jitter"`
		Ops    []struct {
			Op      string `json:"op"`
			Skipped int    `json:"skipped"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Jitter != "opaque" {
		t.Fatalf("%v: %s", err, out)
	}
	skipped := map[string]int{}
	for _, o := range rep.Ops {
		skipped[o.Op] = o.Skipped
	}
	// Date components are not sent as durations, backoff_strategy not in policies.
	if skipped["parse_duration"] == 0 || skipped["delay"] == 0 || skipped["match"] != 0 {
		t.Errorf("skipped per op: %v", skipped)
	}
}

func TestFuzzAdapterCrashIsExitOne(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script := filepath.Join(t.TempDir(), "die.sh")
	// Says hello, then dies on the first request.
	body := "#!/bin/sh\nread line\nid=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\necho '{\"id\":'$id',\"protocol\":1,\"implementation\":\"bad\",\"version\":\"0\",\"ops\":[\"match\"],\"resolution_ns\":1,\"jitter\":\"injectable\"}'\necho 'about to die' >&2\nexit 7\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", "sh "+script, "--cases", "50", "--seed", "1", "--timeout", "2s")
	if code != 1 || !strings.Contains(out, "the adapter failed") || !strings.Contains(out, "about to die") || !strings.Contains(out, "sent:") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// pendingScheduledAdapter runs "retrykit adapter" (argv[1]) with a planted
// executor bug no shipped scenario catches: a job enqueued both pending and
// scheduled is taken as pending (the time dropped) instead of rejected.
const pendingScheduledAdapter = `import json, subprocess, sys
child = subprocess.Popen([sys.argv[1], "adapter"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        req = None
    if isinstance(req, dict) and req.get("op") == "scenario" and isinstance(req.get("steps"), list):
        for st in req["steps"]:
            job = st.get("job") if isinstance(st, dict) else None
            if isinstance(job, dict) and job.get("pending") is True:
                job.pop("scheduled_at_ms", None)
        line = json.dumps(req) + "\n"
    child.stdin.write(line)
    child.stdin.flush()
    sys.stdout.write(child.stdout.readline())
    sys.stdout.flush()
`

func TestFuzzWritesScenario(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "pending.py")
	if err := os.WriteFile(script, []byte(pendingScheduledAdapter), 0o644); err != nil {
		t.Fatal(err)
	}
	impl := py + " " + script + " " + retrykitBinary(t)
	out := filepath.Join(dir, "found")
	code, stdout, errOut := runCLI(t, "", "fuzz", "--impl", impl, "--ops", "scenario", "--cases", "2000", "--seed", "1", "--parallel", "1", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, errOut)
	}
	scenDir := filepath.Join(out, "scenarios")
	for _, want := range []string{"DISAGREEMENT", "scenario: scn-fuzz-9001 in " + filepath.Join(scenDir, "fuzz-scenario.json"),
		"replay:   retrykit conformance --impl"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// The scenario runs as is: the bug fails it, the reference passes it.
	code, rep, errOut := runCLI(t, "", "conformance", "--impl", impl, "--scenarios-dir", scenDir, "--run", "scn-fuzz-9001", "--jitter-samples", "0")
	if code != 1 || !strings.Contains(rep, "scn-fuzz-9001") {
		t.Errorf("replay against the bug: exit %d, want 1\n%s\n%s", code, rep, errOut)
	}
	if code, rep, errOut := runCLI(t, "", "conformance", "--scenarios-dir", scenDir, "--run", "scn-fuzz-9001", "--jitter-samples", "0"); code != 0 {
		t.Errorf("replay against the reference: exit %d, want 0\n%s\n%s", code, rep, errOut)
	}
}

// fuzz --server finds a server that retries past max_attempts, writes
// the shrunk case, and --replay plays it again; a correct server gives
// exit status 0.
func TestFuzzServerFlag(t *testing.T) {
	for _, tc := range []struct {
		fault ojsfault.Set
		code  int
	}{{0, 0}, {ojsfault.ExhaustLate, 1}} {
		srv := ojshttp.New(executor.New())
		ojsfault.Plant(srv, tc.fault)
		hs := httptest.NewServer(srv)
		dir := t.TempDir()
		code, out, errOut := runCLI(t, "", "fuzz", "--server", hs.URL, "--jobs", "40", "--seed", "5", "--time", "30s", "--out", dir)
		if code != tc.code {
			t.Fatalf("fault %v: exit %d, want %d\n%s%s", tc.fault, code, tc.code, out, errOut)
		}
		if !strings.Contains(out, "oracle: the reference executor, in process") || !strings.Contains(out, "jobs/s") {
			t.Errorf("the report does not name its oracle and rate:\n%s", out)
		}
		if tc.code == 1 {
			f := filepath.Join(dir, "fuzz-server-case.json")
			if !strings.Contains(out, `"max_attempts": 1`) {
				t.Errorf("not shrunk to max_attempts 1:\n%s", out)
			}
			if code, out, _ := runCLI(t, "", "fuzz", "--server", hs.URL, "--replay", f); code != 1 || !strings.Contains(out, "still disagrees") {
				t.Errorf("replay: exit %d\n%s", code, out)
			}
			good := httptest.NewServer(ojshttp.New(executor.New()))
			if code, out, _ := runCLI(t, "", "fuzz", "--server", good.URL, "--replay", f); code != 0 || !strings.Contains(out, "agrees with the reference executor") {
				t.Errorf("replay against a correct server: exit %d\n%s", code, out)
			}
			good.Close()
			// A case file of an earlier build, kind "state", replays in
			// that group and says the kind now seen (RK-400); a kind no
			// build wrote is bad usage naming it.
			old := filepath.Join(dir, "old-case.json")
			if err := os.WriteFile(old, []byte(`{"policy":{"initial_interval":"PT0.01S","jitter":false,"max_attempts":1},"failures":[{"type":"fz.timeout"}],"step":1,"kind":"state"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, out, _ := runCLI(t, "", "fuzz", "--server", hs.URL, "--replay", old); code != 1 || !strings.Contains(out, "state:retried-not-discarded(max_attempts)") {
				t.Errorf("replay of a state case file: exit %d\n%s", code, out)
			}
			if err := os.WriteFile(old, []byte(`{"policy":{},"failures":[{"type":"fz.timeout"}],"kind":"state:bogus"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := runCLI(t, "", "fuzz", "--server", hs.URL, "--replay", old); code != 2 || !strings.Contains(errOut, `"state:bogus"`) {
				t.Errorf("replay of an unknown kind: exit %d %s", code, errOut)
			}
		}
		hs.Close()
	}
	// A case file the replay cannot play is bad usage, before any request.
	tooMany := filepath.Join(t.TempDir(), "case.json")
	if err := os.WriteFile(tooMany, []byte(`{"policy":{},"failures":[`+strings.Repeat(`{"type":"t"},`, 64)+`{"type":"t"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "", "fuzz", "--server", "http://127.0.0.1:1", "--replay", tooMany); code != 2 || !strings.Contains(errOut, "1 to 64 failures") {
		t.Errorf("--replay of 65 failures: exit %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "", "fuzz", "--server", "http://127.0.0.1:1", "--impl", "x"); code != 2 || !strings.Contains(errOut, "give one") {
		t.Errorf("--server with --impl: exit %d %s", code, errOut)
	}
}

// fuzz --server takes --late-bound as conformance --server does (above 0,
// at most 10m; refused before any request otherwise), and --format json
// writes the run's figures, its inconclusive count and its
// disagreements.
func TestFuzzServerLateBoundAndJSON(t *testing.T) {
	for _, bad := range []string{"0s", "-1s", "11m"} {
		code, _, errOut := runCLI(t, "", "fuzz", "--server", "http://127.0.0.1:1", "--late-bound", bad)
		if code != 2 || !strings.Contains(errOut, "--late-bound") {
			t.Errorf("--late-bound %s: exit %d %s", bad, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "", "fuzz", "--server", "http://127.0.0.1:1", "--format", "svg"); code != 2 || !strings.Contains(errOut, "text, json or html") {
		t.Errorf("--format svg: exit %d %s", code, errOut)
	}
	srv := ojshttp.New(executor.New())
	ojsfault.Plant(srv, ojsfault.ExhaustLate)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	code, out, errOut := runCLI(t, "", "fuzz", "--server", hs.URL, "--jobs", "30", "--seed", "5", "--late-bound", "3s", "--format", "json")
	var rep struct {
		Jobs         int     `json:"jobs"`
		LateBound    float64 `json:"late_bound_seconds"`
		Inconclusive *int    `json:"inconclusive"`
		Cases        []struct {
			Kind string `json:"kind"`
		} `json:"disagreements"`
		Cleanup string `json:"cleanup"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if rep.LateBound != 3 || rep.Inconclusive == nil || *rep.Inconclusive != 0 || len(rep.Cases) != 1 || !strings.HasSuffix(rep.Cases[0].Kind, "(max_attempts)") || !strings.HasPrefix(rep.Cases[0].Kind, "state:retried-not-") ||
		rep.Jobs < 1 || rep.Jobs > 30 || !strings.Contains(rep.Cleanup, "could not remove 0") {
		t.Errorf("JSON report %+v\n%s", rep, out)
	}
}

// fuzz --server writes every format in one run, each to its own -o and
// the last to standard output, from one report: the HTML page shows the
// verdict, each disagreement's kind and case, the command that runs it
// again with its seed and the one that replays the written case file; the
// JSON holds the same case. --replay prints text only.
func TestFuzzServerWritesEveryFormatInOneRun(t *testing.T) {
	srv := ojshttp.New(executor.New())
	ojsfault.Plant(srv, ojsfault.ExhaustLate)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	dir := t.TempDir()
	page, js := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	code, out, errOut := runCLI(t, "", "fuzz", "--server", hs.URL, "--jobs", "30", "--seed", "5", "--out", filepath.Join(dir, "cases"),
		"--format", "html", "-o", page, "--format", "json", "-o", js, "--format", "text")
	if code != 1 || !strings.Contains(out, "1 disagreements") {
		t.Fatalf("exit %d, want 1; stdout (text):\n%s%s", code, out, errOut)
	}
	var rep struct {
		Cases []struct {
			Kind string `json:"kind"`
		} `json:"disagreements"`
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Cases) != 1 {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	b, err = os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	h := html.UnescapeString(string(b))
	caseFile := filepath.Join(dir, "cases", "fuzz-server-case.json")
	for _, want := range []string{
		`<p class="verdict fail" id="verdict">FAIL</p>`, `<article class="cause" id="case-1">`,
		"<code>" + rep.Cases[0].Kind + "</code>", `"max_attempts": 1`,
		"Reproduce: <code class=\"cmd\">retrykit fuzz --server " + hs.URL + " --seed 5 --jobs 30 --late-bound 2s</code>",
		"Replay this case: <code class=\"cmd\">retrykit fuzz --server " + hs.URL + " --replay " + caseFile + "</code>",
		`name="viewport"`, `<meta http-equiv="Content-Security-Policy" content="` + conformance.ReportPolicy + `">`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML report lacks %s", want)
		}
	}
	if strings.Contains(h, "<script") || strings.Contains(h, "<link") {
		t.Error("HTML report loads or runs something")
	}
	for _, f := range []string{"html", "json"} {
		if code, _, errOut := runCLI(t, "", "fuzz", "--server", hs.URL, "--replay", caseFile, "--format", f); code != 2 || !strings.Contains(errOut, "--replay prints its verdict") {
			t.Errorf("--replay --format %s: exit %d %s", f, code, errOut)
		}
	}
}
