package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

func runArgs(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestLiveUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"conformance", "--server", ""}, "--server: empty URL"},
		{[]string{"conformance", "--server", "ftp://x"}, "server URL"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--format", "yaml"}, "unknown --format"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--error-type-field", "kind"}, "error type field"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--interval-form", "s"}, "interval form"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--late-bound", "0s"}, "late bound"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--run", "http-nope"}, `check "http-nope"`},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "extra"}, `unexpected argument "extra"`},
		// Checked before the run, as without --server: a bad output path
		// would otherwise lose the report of a whole run.
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "-o", "/nonexistent/x"}, "-o: "},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--write-skip-file", "/nonexistent/x"}, "--write-skip-file: "},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--strict"}, "--strict: needs --skip-file"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--late-bund", "1s"}, "did you mean --late-bound?"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--skip-file", "/nonexistent/x"}, "--skip-file: open /nonexistent/x"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--timeout", "200ms"}, "HEALTH"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--format", "text", "--format", "json", "--format", "junit", "-o", "a"}, "only the last format may go to standard output"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--format", "text", "-o", "a", "-o", "b"}, "-o: 2 files for 1 formats"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--format", "text", "--format", "json", "-o", "a", "-o", "a"}, `-o: "a" given twice`},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--time", "-1s"}, "--time: must not be negative"},
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--latency-retries", "20000"}, "latency retries"},
	} {
		code, _, stderr := runArgs(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stdout, _ := runArgs("conformance", "--server", "x", "--help")
	if code != 0 || !strings.Contains(stdout, "--error-type-field") || !strings.Contains(stdout, "--late-bound") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
}

// TestLiveAgainstServe runs the command against retrykit's own server: a
// correct one passes (exit 0), a planted fault fails (exit 1) and lands in
// the skip file it writes; that skip file then makes the run pass.
func TestLiveAgainstServe(t *testing.T) {
	good := httptest.NewServer(ojshttp.New(executor.New()))
	defer good.Close()
	dir := t.TempDir()
	report := filepath.Join(dir, "r.json")
	if code, _, stderr := runArgs("conformance", "--server", good.URL, "--format", "json", "-o", report); code != 0 {
		data, _ := os.ReadFile(report)
		t.Fatalf("correct server: exit %d, %s\n%s", code, stderr, data)
	}
	var rep struct {
		Totals  struct{ Pass, Fail, Error int }
		Figures []string
	}
	data, _ := os.ReadFile(report)
	if err := json.Unmarshal(data, &rep); err != nil || rep.Totals.Pass == 0 || len(rep.Figures) == 0 || !strings.Contains(rep.Figures[0], "promotion latency") {
		t.Fatalf("report %s: %v", data[:min(len(data), 300)], err)
	}

	srv := ojshttp.New(executor.New())
	ojsfault.Plant(srv, ojsfault.RegexMatch)
	defer ojsfault.Plant(srv, 0)
	bad := httptest.NewServer(srv)
	defer bad.Close()
	skip := filepath.Join(dir, "skip.txt")
	code, stdout, _ := runArgs("conformance", "--server", bad.URL, "--write-skip-file", skip)
	if code != 1 || !strings.Contains(stdout, "http-exact-literal") {
		t.Fatalf("regex-match server: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runArgs("conformance", "--server", bad.URL, "--skip-file", skip); code != 0 {
		t.Fatalf("with the skip file: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runArgs("conformance", "--server", good.URL, "--skip-file", skip, "--strict"); code != 1 || !strings.Contains(stdout, "passes now") {
		t.Fatalf("strict run against the correct server: exit %d\n%s", code, stdout)
	}
}

// TestLiveEveryFormatFromOneRun: --format repeated, each with its own -o,
// writes every format of the same run (the same totals in each).
func TestLiveEveryFormatFromOneRun(t *testing.T) {
	hs := httptest.NewServer(ojshttp.New(executor.New()))
	defer hs.Close()
	dir := t.TempDir()
	txt, js, md := filepath.Join(dir, "r.txt"), filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	code, stdout, stderr := runArgs("conformance", "--server", hs.URL, "--format", "text", "-o", txt, "--format", "json", "-o", js, "--format", "markdown", "-o", md, "--latency-retries", "0")
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var rep struct {
		Totals  struct{ Pass int } `json:"totals"`
		Elapsed int64              `json:"elapsed_ns"`
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &rep) != nil || rep.Totals.Pass == 0 {
		t.Fatalf("json: %v, %+v", err, rep)
	}
	for _, f := range []string{txt, md} {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte("PASS")) && !bytes.Contains(b, []byte("pass")) {
			t.Errorf("%s: %v, %d bytes", f, err, len(b))
		}
	}
}
