package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScoreboardBuildsSiteFromRunReports: reports written by conformance
// runs (the built-in reference, and a planted adapter at two versions of
// its name) give a site with a row each, a page and a badge each.
func TestScoreboardBuildsSiteFromRunReports(t *testing.T) {
	dir := t.TempDir()
	reports := filepath.Join(dir, "reports")
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "", "conformance", "--scenarios=false", "--jitter-samples", "0", "--format", "json", "-o", filepath.Join(reports, "retrykit.json")); code != 0 {
		t.Fatalf("conformance: exit %d: %s", code, errOut)
	}
	impl := plantedImpl(t, "regex-match")
	if code, _, errOut := runCLI(t, "", "conformance", "--impl", impl, "--jitter-samples", "0", "--timeout", "1m", "--format", "json", "-o", filepath.Join(reports, "planted.json")); code != 1 {
		t.Fatalf("planted conformance: exit %d: %s", code, errOut)
	}
	site := filepath.Join(dir, "site")
	code, out, errOut := runCLI(t, "", "scoreboard", reports, "-o", site)
	if code != 0 || !strings.Contains(out, "2 implementations, 2 reports") {
		t.Fatalf("scoreboard: exit %d\n%s\n%s", code, out, errOut)
	}
	index, err := os.ReadFile(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Suite string `json:"suite_version"`
	}
	if data, err := os.ReadFile(filepath.Join(reports, "retrykit.json")); err != nil || json.Unmarshal(data, &rep) != nil || rep.Suite == "" {
		t.Fatalf("retrykit.json: no suite_version (%v)", err)
	}
	anchor := "suite-" + strings.ReplaceAll(rep.Suite, ".", "-") // the slug of "0.2.0" is "0-2-0"
	for _, want := range []string{`href="impl/retrykit.html#` + anchor + `"`, `href="impl/planted-regex-match.html#` + anchor + `"`,
		`<img src="badges/retrykit.svg"`, `reports/planted-regex-match/planted.html#causes`} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index lacks %s", want)
		}
	}
	page, err := os.ReadFile(filepath.Join(site, "reports", "planted-regex-match", "planted.html"))
	if err != nil || !strings.Contains(string(page), "bug:regex-match") || !strings.Contains(string(page), "--run ") {
		t.Errorf("the planted report's page lacks its cause or reproduction: %v", err)
	}
}

func TestScoreboardUsage(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "r.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scoreboard"}, "give the directory of reports"},
		{[]string{"scoreboard", empty}, "-o: give the directory"},
		{[]string{"scoreboard", filepath.Join(dir, "nope"), "-o", dir}, "does not exist"},
		// errors name the file, and the directory, as given
		{[]string{"scoreboard", empty, "-o", filepath.Join(dir, "site")}, "no conformance report found in " + empty + " "},
		{[]string{"scoreboard", bad, "-o", filepath.Join(dir, "site")}, filepath.Join(bad, "r.json") + ": not a JSON object"},
		{[]string{"scoreboard", bad, "-o", dir}, "holds DIR"},
		{[]string{"scoreboard", dir, "-o", filepath.Join(dir, "site")}, "inside DIR"},
		{[]string{"scoreboard", empty, "extra", "-o", dir}, "unexpected argument"},
	} {
		code, _, errOut := runCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	code, out, _ := runCLI(t, "", "scoreboard", "--help")
	if code != 0 || !strings.Contains(out, "usage: retrykit scoreboard DIR -o SITE") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}
