package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every --format of a suite run goes to its own -o file, as with --server:
// none is dropped.
func TestConformanceWritesEveryFormat(t *testing.T) {
	dir := t.TempDir()
	txt, js := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.json")
	code, out, errOut := runCLI(t, "", "conformance", "--run", "dur-0001", "--format", "text", "-o", txt, "--format", "json", "-o", js)
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	text, err := os.ReadFile(txt)
	if err != nil || !strings.HasPrefix(string(text), "PASS") {
		t.Errorf("text report %s: %v\n%s", txt, err, text)
	}
	var rep struct {
		Totals struct{ Pass int } `json:"totals"`
	}
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &rep) != nil || rep.Totals.Pass != 1 {
		t.Errorf("json report %s: %v %+v", js, err, rep)
	}
}

// The spec-only command a report prints runs as printed, writes the same
// formats to files of its own and leaves the first run's files alone.
func TestSpecOnlyCommandRunsAsPrinted(t *testing.T) {
	dir := t.TempDir()
	txt, junit := filepath.Join(dir, "a.txt"), filepath.Join(dir, "a.xml")
	if code, _, errOut := runCLI(t, "", "conformance", "--run", "dur-0001,match-0001", "--format", "text", "-o", txt, "--format", "junit", "-o", junit); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first, err := os.ReadFile(txt)
	if err != nil {
		t.Fatal(err)
	}
	_, line, ok := strings.Cut(string(first), "spec-only run (MUST level only): ")
	line, _, _ = strings.Cut(line, "\n")
	argv, err := splitCommand(line)
	if !ok || err != nil || len(argv) < 3 || argv[0] != "retrykit" {
		t.Fatalf("no spec-only command in the report (%v):\n%s", err, first)
	}
	if code, out, errOut := runCLI(t, "", argv[1:]...); code != 0 || out != "" {
		t.Fatalf("%s: exit %d, stdout %q, stderr %s", line, code, out, errOut)
	}
	spec, err := os.ReadFile(filepath.Join(dir, "a.spec-only.txt"))
	if err != nil || !strings.Contains(string(spec), "this is the spec-only run") {
		t.Errorf("%s: text report: %v\n%s", line, err, spec)
	}
	var suites struct {
		XMLName xml.Name `xml:"testsuites"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.spec-only.xml")); err != nil || xml.Unmarshal(b, &suites) != nil {
		t.Errorf("%s: JUnit report: %v\n%s", line, err, b)
	}
	if again, _ := os.ReadFile(txt); string(again) != string(first) {
		t.Errorf("%s overwrote the first run's %s", line, txt)
	}
}
