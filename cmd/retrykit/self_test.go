package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands a report prints start the way the user started this
// program, so that they run as printed after the README's go run too.
func TestSelfCommand(t *testing.T) {
	goRun := filepath.Join(os.TempDir(), "go-build123", "b001", "exe", "retrykit")
	for _, tc := range []struct {
		name, exe string
		root      bool
		want      string
	}{
		{"go run at the repository root", goRun, true, "go run ./cmd/retrykit"},
		{"go run in another module", goRun, false, "go run github.com/retrykit/retrykit/cmd/retrykit"},
		{"go install", filepath.Join(os.TempDir(), "gopath", "bin", "retrykit"), true, "retrykit"},
		{"a build of its own", filepath.Join(os.TempDir(), "build", "exe-not", "retrykit"), true, "retrykit"},
	} {
		if got := selfCommand(tc.exe, tc.root); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Under go run, the spec-only command of a report starts with go run, and
// runs as printed from the repository's root.
func TestReportCommandsUnderGoRun(t *testing.T) {
	old := self
	t.Cleanup(func() { self = old })
	self = "go run ./cmd/retrykit"
	code, out, errOut := runCLI(t, "", "conformance", "--run", "dur-0001")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := "spec-only run (MUST level only): go run ./cmd/retrykit conformance --run dur-0001 --spec-only"; !strings.Contains(out, want) {
		t.Errorf("the report lacks %q:\n%s", want, out)
	}
}
