package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
)

// TestFuzzWritesEveryFormatInOneRun: one run writes HTML and JSON to their
// files and text to standard output; the HTML page shows the disagreement's
// cause, the request, the command that reproduces it, and loads nothing.
func TestFuzzWritesEveryFormatInOneRun(t *testing.T) {
	impl := plantedImpl(t, "no-post-jitter-cap")
	dir := t.TempDir()
	page, js := filepath.Join(dir, "fuzz.html"), filepath.Join(dir, "fuzz.json")
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", impl, "--ops", "delay", "--cases", "300", "--seed", "7", "--quiet",
		"--format", "html", "-o", page, "--format", "json", "-o", js, "--format", "text")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a disagreement)\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "DISAGREEMENT") || !strings.Contains(out, "bug:no-post-jitter-cap") {
		t.Errorf("text report on standard output:\n%s", out)
	}
	var doc struct {
		Ops []struct{ Status, Cause, Repeat string }
	}
	b, err := os.ReadFile(js)
	if err != nil || json.Unmarshal(b, &doc) != nil || len(doc.Ops) != 1 || doc.Ops[0].Cause != "bug:no-post-jitter-cap" {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	repeat := strings.ReplaceAll(doc.Ops[0].Repeat, "'", "&#39;")
	for _, want := range []string{"<!DOCTYPE html>", "bug:no-post-jitter-cap", repeat, `&#34;op&#34;:&#34;delay&#34;`,
		`href="https://github.com/openjobspec/spec/blob/main/spec/ojs-retry.md#53-example"`,
		`<meta http-equiv="Content-Security-Policy" content="` + strings.ReplaceAll(conformance.ReportPolicy, "'", "&#39;") + `">`} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=", "<link"} {
		if strings.Contains(s, bad) {
			t.Errorf("HTML report contains %q", bad)
		}
	}
}

// TestFuzzFormatOutputPairs: a format other than text, json and html, and
// more -o files than formats, are usage errors before any adapter starts.
func TestFuzzFormatOutputPairs(t *testing.T) {
	for _, args := range [][]string{
		{"--format", "xml"},
		{"--format", "json", "-o", "a.json", "-o", "b.json"},
		{"--format", "json", "--format", "html"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"fuzz", "--impl", "false"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "retrykit fuzz:") {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
