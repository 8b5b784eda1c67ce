package conformance_test

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// handReport is a report built as the live checker builds one: results
// judged elsewhere, tallied with the notes of their class flags.
func handReport() *conformance.Report {
	rep := &conformance.Report{
		Implementation: protocol.Hello{Implementation: "demo <server>", Version: "1.2"},
		SuiteVersion:   "live-1", SpecVersion: "1.0", Repeat: 1,
		Command: "retrykit conformance --server http://127.0.0.1:9 --format html -o out.html --late-bound 5s",
		Figures: []string{"promotion latency p50 12ms"},
		Results: []conformance.Result{
			{ID: "http-code-retry", Requirement: "RET-08", Section: "7.2", Kind: "live", Description: "codes", Status: conformance.StatusPass, Level: "MUST"},
			{ID: "http-code-fail", Requirement: "RET-08", Section: "7.2", Kind: "live", Description: "FAIL discards", Flags: []string{"class:handler-codes"},
				Status: conformance.StatusFail, Reason: "retried <instead>", Want: json.RawMessage(`{"state":"discarded"}`), Got: json.RawMessage(`{"state":"retryable"}`), Level: "MUST"},
			{ID: "http-code-discard", Requirement: "RET-08", Section: "7.2", Kind: "live", Description: "DISCARD discards", Flags: []string{"class:handler-codes"},
				Status: conformance.StatusFail, Reason: "retried", Level: "MUST"},
			{ID: "http-dead-letter", Requirement: "DLQ-001", Section: "ojs-dead-letter 4.1", Kind: "live", Description: "dead letter", Status: conformance.StatusError, Reason: "timeout", Level: "MUST"},
			{ID: "http-interval-ms", Requirement: "RK-113", Section: "2.1", Kind: "live", Description: "ms", Status: conformance.StatusSkip, Reason: "skip file", Level: "RK"},
		},
	}
	rep.Tally(map[string]string{"class:handler-codes": "Failure class: handler codes are ignored. More words."})
	return rep
}

// TestHTMLReportIsSelfContained: no script, no style sheet or image from
// elsewhere, no element that loads anything; links only navigate.
func TestHTMLReportIsSelfContained(t *testing.T) {
	page := write(t, handReport(), "html")
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "<style>") {
		t.Errorf("not a page with its style inline:\n%.300s", page)
	}
	// A browser runs no script and loads nothing from elsewhere even if a
	// tag slipped through escaping.
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; img-src &#39;self&#39;">`) {
		t.Errorf("no Content-Security-Policy forbidding scripts:\n%.400s", page)
	}
	if strings.Contains(page, "demo <server>") || !strings.Contains(page, "demo &lt;server&gt;") {
		t.Error("the implementation's name is not escaped")
	}
}

var (
	idRE   = regexp.MustCompile(` id="([^"]+)"`)
	hrefRE = regexp.MustCompile(` href="([^"]+)"`)
)

// TestHTMLReportLinksResolve: every id is unique, and every link inside
// the page names an id it has.
func TestHTMLReportLinksResolve(t *testing.T) {
	page := write(t, handReport(), "html")
	ids := map[string]int{}
	for _, m := range idRE.FindAllStringSubmatch(page, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	internal := 0
	for _, m := range hrefRE.FindAllStringSubmatch(page, -1) {
		if frag, ok := strings.CutPrefix(m[1], "#"); ok {
			internal++
			if ids[frag] == 0 {
				t.Errorf("link %s names no id of the page", m[1])
			}
		}
	}
	if internal < 4 {
		t.Errorf("%d links inside the page, want the causes', the failures' and the requirements'", internal)
	}
	for _, want := range []string{"v-http-code-fail", "req-RET-08", "group-RET", "group-DLQ", "cause-1"} {
		if ids[want] == 0 {
			t.Errorf("no id %q", want)
		}
	}
}

// TestHTMLReportCauseEvidence: each cause shows its explanation, the
// command that runs its results again (the report's command without its
// output and format flags, plus --run) and the want and got of its first
// result.
func TestHTMLReportCauseEvidence(t *testing.T) {
	rep := handReport()
	page := write(t, rep, "html")
	want := "retrykit conformance --server http://127.0.0.1:9 --late-bound 5s --run http-code-fail,http-code-discard"
	if !strings.Contains(page, want) {
		t.Errorf("no reproduction command %q", want)
	}
	if len(rep.Causes) == 0 {
		t.Fatal("no cause")
	}
	for _, c := range rep.Causes {
		if !strings.Contains(page, html.EscapeString(c.Explanation)) {
			t.Errorf("page lacks the explanation of %s: %q", c.Class, c.Explanation)
		}
	}
	for _, s := range []string{`{&#34;state&#34;:&#34;discarded&#34;}`, `{&#34;state&#34;:&#34;retryable&#34;}`,
		"retried &lt;instead&gt;", "promotion latency p50 12ms"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

// TestHTMLRequirementsLinkTheSpec: a requirement links to its section's
// heading in the spec document of its family, or of the document its
// section names.
func TestHTMLRequirementsLinkTheSpec(t *testing.T) {
	page := write(t, handReport(), "html")
	for _, want := range []string{
		// "### 7.2 Precedence" in spec/ojs-retry.md
		`href="https://github.com/openjobspec/spec/blob/main/spec/ojs-retry.md#72-precedence"`,
		// "### 4.1 Entry Conditions" in spec/ojs-dead-letter.md
		`href="https://github.com/openjobspec/spec/blob/main/spec/ojs-dead-letter.md#41-entry-conditions"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	cases := []struct{ req, sec, want string }{
		{"RET-01", "2.2", "ojs-retry.md#22-field-semantics"},
		{"CORE-T1", "ojs-core 6", "ojs-core.md#6-job-lifecycle-state-machine"},
		{"TMO-3", "5.2", "ojs-timeouts.md#52-total-timeout"},
		{"RET-01", "99.9", "ojs-retry.md"},
		{"X-1", "2", ""},
	}
	for _, c := range cases {
		got := conformance.SpecURL(c.req, c.sec)
		if c.want == "" && got != "" || c.want != "" && !strings.HasSuffix(got, "/spec/"+c.want) {
			t.Errorf("SpecURL(%q, %q) = %q, want …/spec/%s", c.req, c.sec, got, c.want)
		}
	}
}

// TestFormatsShareOneTally: a report decoded from its JSON renders the same
// HTML and Markdown as the run that wrote it, so neither format counts
// anything the JSON does not carry; Markdown and HTML show the same
// requirement rows and cause counts.
func TestFormatsShareOneTally(t *testing.T) {
	rep := handReport()
	var back conformance.Report
	if err := json.Unmarshal([]byte(write(t, rep, "json")), &back); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"html", "markdown", "junit"} {
		if a, b := write(t, rep, f), write(t, &back, f); a != b {
			t.Errorf("%s differs once the report went through JSON", f)
		}
	}
	md, page := write(t, rep, "markdown"), write(t, rep, "html")
	for _, s := range rep.Requirements {
		if !strings.Contains(md, "| "+s.Name+" |") || !strings.Contains(page, `id="req-`+s.Name+`"`) {
			t.Errorf("requirement %s missing from Markdown or HTML", s.Name)
		}
	}
	if n := strings.Count(page, `<article class="cause"`); n != len(rep.Causes) {
		t.Errorf("HTML shows %d causes, the report has %d", n, len(rep.Causes))
	}
	// The reproduction command of each cause is the same in HTML and JUnit.
	junit := write(t, rep, "junit")
	for i := range rep.Causes {
		m := regexp.MustCompile(`name="cause\.` + itoa(i+1) + `\.reproduce" value="([^"]*)"`).FindStringSubmatch(junit)
		if m == nil || !strings.Contains(page, m[1]) {
			t.Errorf("cause %d: JUnit's reproduction command %v is not the HTML page's", i+1, m)
		}
	}
}

// TestMarkdownShowsHostileTextAsText: Markdown renders inline HTML, and a
// GitHub step summary is Markdown, so an implementation name, a reason or
// a figure holding a tag comes out as the characters it has, never as an
// element; a "|" stays inside its cell.
func TestMarkdownShowsHostileTextAsText(t *testing.T) {
	rep := handReport()
	rep.Implementation.Implementation = `<img src=x onerror=alert(1)> a|b`
	rep.Figures = append(rep.Figures, "<iframe src=//x></iframe>")
	rep.Results[1].Reason = "<script>alert(2)</script>"
	rep.Tally(nil)
	md := write(t, rep, "markdown")
	for _, tag := range []string{"<img", "<iframe", "<script"} {
		if strings.Contains(md, tag) {
			t.Errorf("markdown holds %s as a tag:\n%s", tag, md)
		}
	}
	if !strings.Contains(md, `&lt;img src=x onerror=alert(1)&gt; a\|b`) {
		t.Errorf("markdown title does not show the name escaped:\n%s", md[:min(len(md), 300)])
	}
}

// TestMarkdownTableKeepsItsColumnsWithPipes: a vector id holding "|" (a
// code cell) stays in its cell: its row of the failures table has as many
// cell borders as the row of a plain id.
func TestMarkdownTableKeepsItsColumnsWithPipes(t *testing.T) {
	rep := handReport()
	rep.Results[1].ID = "http-code|fail"
	rep.Tally(nil)
	md := write(t, rep, "markdown")
	borders := regexp.MustCompile(`(^|[^\\])\|`)
	var piped, plain string
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "| `http-code"+`\|`), strings.HasPrefix(line, "| `http-code|"):
			piped = line
		case strings.HasPrefix(line, "| `http-code-discard`"):
			plain = line
		}
	}
	if piped == "" || plain == "" {
		t.Fatalf("no failure rows:\n%s", md)
	}
	if a, b := len(borders.FindAllString(piped, -1)), len(borders.FindAllString(plain, -1)); a != b {
		t.Errorf("row %q has %d cell borders, row %q %d", piped, a, plain, b)
	}
}
