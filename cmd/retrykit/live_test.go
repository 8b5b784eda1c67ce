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
		{[]string{"conformance", "--server", "http://127.0.0.1:1", "--timeout", "200ms"}, "HEALTH"},
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
		t.Fatalf("correct server: exit %d, %s", code, stderr)
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
