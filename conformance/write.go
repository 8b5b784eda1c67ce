package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/retrykit/retrykit/internal/mdtext"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// formats are the report formats accepted by [Report.Write].
var formats = [...]string{"text", "json", "junit", "markdown", "html"}

// Formats returns the names of the report formats accepted by
// [Report.Write], a fresh slice on every call.
func Formats() []string { return append([]string(nil), formats[:]...) }

// Write writes the report in the named format: "text" (the default when
// format is ""), "json", "junit", "markdown" or "html". Every format opens with the
// same summary, before any per-vector detail:
//
//  1. the scores per level (spec requirements, SHOULD-level and optional
//     features, retrykit decisions) and the command of the spec-only run;
//  2. the causes of the failures and errors, each with its count, a
//     one-line explanation and example ids;
//  3. the verdicts that depend on the implementation's own random draws,
//     and those that flipped when repeated.
//
// Text then lists every failure with want and got, errors with the
// adapter's stderr, skips, coverage and the per-requirement table; JSON is
// the [Report] itself (plus "spec_only_command"); JUnit XML has a leading
// "summary" testsuite carrying the summary as properties and system-out,
// then one testsuite per kind; Markdown is meant for a README; HTML is one
// self-contained page (style inline, no script, nothing loaded from
// elsewhere) with the causes' evidence and reproduction commands and the
// requirement table linked to the spec. Markdown, JUnit and HTML draw
// their tables from one model of the report, built from its tallies.
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "", "text":
		return r.writeText(w)
	case "json":
		return r.writeJSON(w)
	case "junit":
		return r.writeJUnit(w)
	case "markdown", "md":
		return r.writeMarkdown(w)
	case "html":
		return r.writeHTML(w)
	}
	return fmt.Errorf("conformance: unknown report format %q (want %s)", format, strings.Join(Formats(), ", "))
}

func (r *Report) title() string {
	h := r.Implementation
	name := h.Implementation
	if name == "" {
		name = "(no hello)"
	}
	return fmt.Sprintf("%s — OJS retry conformance suite %s (spec %s)", strings.TrimSpace(name+" "+h.Version), r.SuiteVersion, r.SpecVersion)
}

// verdictLine is the first line of the text report: the verdict and the
// three scores, "PASS  MUST 412/412  SHOULD 118/118  RK 286/286".
func (r *Report) verdictLine() string {
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	var b strings.Builder
	b.WriteString(verdict)
	for _, s := range r.Scores {
		fmt.Fprintf(&b, "  %s %d/%d", s.Name, s.Pass, s.Pass+s.Fail+s.Error)
		if s.Skip > 0 {
			fmt.Fprintf(&b, " (%d skipped)", s.Skip)
		}
	}
	if r.Implementation.Implementation != "" {
		fmt.Fprintf(&b, "  — %s", strings.TrimSpace(r.Implementation.Implementation+" "+r.Implementation.Version))
	}
	return b.String()
}

func (r *Report) totalsLine() string {
	t := r.Totals
	run := t.Pass + t.Fail + t.Error + t.Skip
	cov := 100.0
	if run+t.NotRun > 0 {
		cov = 100 * float64(run) / float64(run+t.NotRun)
	}
	return fmt.Sprintf("pass %d  fail %d  error %d  skip %d  |  not run %d (coverage %.1f%% of selected)", t.Pass, t.Fail, t.Error, t.Skip, t.NotRun, cov)
}

// outputFlagRE matches a flag of a command line that names a file the run
// writes (-o, --write-skip-file), with its value: group 1 the flag and its
// separator, group 2 the value, quoted as the command line quotes it.
var outputFlagRE = regexp.MustCompile(`(\s--?(?:o|write-skip-file)(?:=|\s+))('[^']*'|"[^"]*"|\S+)`)

// renameOutputs returns cmd with every file it writes renamed by tag
// ("spec-only": report.txt becomes report.spec-only.txt), so that the
// command runs as printed, writes the same formats, and leaves the first
// run's files as they are.
func renameOutputs(cmd, tag string) string {
	return outputFlagRE.ReplaceAllStringFunc(cmd, func(m string) string {
		sub := outputFlagRE.FindStringSubmatch(m)
		v, q := sub[2], ""
		if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
			v, q = v[1:len(v)-1], v[:1]
		}
		dir, base := "", v
		if i := strings.LastIndex(v, "/"); i >= 0 {
			dir, base = v[:i+1], v[i+1:]
		}
		if i := strings.LastIndex(base, "."); i > 0 {
			base = base[:i] + "." + tag + base[i:]
		} else {
			base += "." + tag
		}
		return sub[1] + q + dir + base + q
	})
}

// specOnlyCommand returns the command that gives the spec-only run (MUST
// level only), or "" when this report is that run. It writes the same
// formats as this run, to files renamed with ".spec-only".
func (r *Report) specOnlyCommand() string {
	switch {
	case r.SpecOnly:
		return ""
	case r.Command != "":
		return renameOutputs(r.Command, "spec-only") + " --spec-only"
	case r.Implementation.Implementation == "retrykit":
		return "retrykit conformance --spec-only"
	}
	return "retrykit conformance --impl 'ADAPTER COMMAND' --spec-only"
}

// unclaimCommand returns the command that runs this report's suite again
// with flags (comma-separated) declared unclaimed.
func (r *Report) unclaimCommand(flags string) string {
	var cmd string
	switch {
	case r.Command != "":
		cmd = renameOutputs(r.Command, "unclaimed")
	case r.Implementation.Implementation == "retrykit":
		cmd = "retrykit conformance"
	default:
		cmd = "retrykit conformance --impl 'ADAPTER COMMAND'"
	}
	for _, f := range strings.Split(flags, ",") {
		cmd += " --unclaimed " + f
	}
	return cmd
}

// levelLabel returns the label of a level for reports.
func levelLabel(name string) string {
	for _, l := range levels {
		if l.name == name {
			return l.label
		}
	}
	return name
}

// maxExamples bounds the ids a cause or list shows in text reports.
const maxExamples = 5

// examples returns up to n of ids, comma-separated, with "…" when cut.
func examples(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + ", …"
}

// causeRequirements returns the requirements of a cause's results, most
// frequent first ("RET-16 ×46, RET-19 ×16, …").
func (r *Report) causeRequirements(c Cause, byID map[string]*Result) string {
	n := map[string]int{}
	for _, id := range c.IDs {
		if res := byID[id]; res != nil {
			n[res.Requirement]++
		}
	}
	reqs := make([]string, 0, len(n))
	for k := range n {
		reqs = append(reqs, k)
	}
	sort.Slice(reqs, func(i, j int) bool {
		if n[reqs[i]] != n[reqs[j]] {
			return n[reqs[i]] > n[reqs[j]]
		}
		return requirementLess(reqs[i], reqs[j])
	})
	parts := make([]string, 0, 4)
	for i, k := range reqs {
		if i == 4 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n[k]))
	}
	return strings.Join(parts, ", ")
}

// randomIDs returns the ids of the draw-dependent results.
func (r *Report) randomIDs() []string {
	var ids []string
	for _, res := range r.Results {
		if res.Random {
			ids = append(ids, res.ID)
		}
	}
	return ids
}

// summary returns the opening lines shared by the text and JUnit formats.
func (r *Report) summary() []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	add("%-45s %6s %6s %6s %6s %8s", "scores", "pass", "fail", "error", "skip", "not run")
	for _, s := range r.Scores {
		add("  %-6s %-36s %6d %6d %6d %6d %8d", s.Name, levelLabel(s.Name), s.Pass, s.Fail, s.Error, s.Skip, s.NotRun)
	}
	if r.ScenariosLeftOut > 0 {
		add("%d executor scenarios left out of the scores and coverage: the implementation does not list the scenario op (a policy library)", r.ScenariosLeftOut)
	}
	if cmd := r.specOnlyCommand(); cmd != "" {
		add("spec-only run (MUST level only): %s", cmd)
	} else {
		add("this is the spec-only run: SHOULD-level features and retrykit decisions were not selected")
	}
	bad := r.Totals.Fail + r.Totals.Error
	if bad > 0 {
		add("")
		add("failures by cause: %d failed or errored, %d %s", bad, len(r.Causes), plural(len(r.Causes), "cause", "causes"))
		byID := r.byID()
		fallback := false
		for _, c := range r.Causes {
			if !c.Reproduced && !fallback {
				fallback = true
				if len(r.Causes) > 0 && r.Causes[0].Reproduced {
					add("  not reproduced by any bug model or fitted family (grouped by what was observed):")
				}
			}
			if c.Reproduced {
				add("  %4d  %s: %s", len(c.IDs), c.Class, c.proof())
				add("        fix: %s", c.Explanation)
				if c.Unclaim != "" {
					add("        without it: %s", r.unclaimCommand(c.Unclaim))
				}
				if len(c.Equivalent) > 0 {
					add("        equally explained by: %s", strings.Join(c.Equivalent, ", "))
				}
			} else {
				add("  %4d  %s: %s", len(c.IDs), c.Class, c.Explanation)
				if c.Reproduction != "" {
					add("        smallest reproduction: %s", c.Reproduction)
				}
			}
			add("        requirements %s; e.g. %s", r.causeRequirements(c, byID), examples(c.IDs, maxExamples))
		}
	}
	if ids := r.randomIDs(); len(ids) > 0 {
		add("")
		add("draw-dependent verdicts: %d %s on the implementation's own random draws (jitter it draws itself); another run can judge %s differently: %s",
			len(ids), plural(len(ids), "depends", "depend"), plural(len(ids), "it", "them"), examples(ids, maxExamples))
		switch {
		case r.Repeat > 1 && len(r.Flipped) > 0:
			add("  run %d times each: %d flipped: %s", r.Repeat, len(r.Flipped), examples(r.Flipped, 2*maxExamples))
		case r.Repeat > 1:
			add("  run %d times each: none flipped", r.Repeat)
		default:
			add("  run once; --repeat K runs them K times and reports any that flip")
		}
	}
	if len(r.Figures) > 0 {
		add("")
		for _, f := range r.Figures {
			add("figure: %s", f)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (r *Report) byID() map[string]*Result {
	m := make(map[string]*Result, len(r.Results))
	for i := range r.Results {
		m[r.Results[i].ID] = &r.Results[i]
	}
	return m
}

// writeText writes a terminal-friendly report: the summary of [Report.Write],
// then failures with want and got, errors with the adapter's stderr, skips,
// coverage gaps, the per-requirement summary and the totals.
func (r *Report) writeText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", r.verdictLine())
	ew.printf("%s\n", r.title())
	h := r.Implementation
	if h.Protocol != 0 {
		ew.printf("protocol %d, resolution %dns, jitter %s, ops %s\n", h.Protocol, h.ResolutionNS, h.Jitter, strings.Join(h.Ops, " "))
	}
	for _, wmsg := range r.Warnings {
		ew.printf("warning: %s\n", wmsg)
	}
	ew.printf("\n")
	for _, l := range r.summary() {
		ew.printf("%s\n", l)
	}
	for _, res := range r.filter(StatusFail) {
		ew.printf("\nFAIL  %s  [%s §%s] %s%s\n  reason: %s\n", res.ID, res.Requirement, res.Section, res.Description, drawNote(res), res.Reason)
		if len(res.Want) > 0 || len(res.Got) > 0 { // a live check's reason says both
			ew.printf("  want:   %s\n  got:    %s\n", res.Want, res.Got)
		}
	}
	for _, res := range r.Results {
		if !res.Status.erroneous() {
			continue
		}
		ew.printf("\nERROR %s  [%s §%s] %s\n  reason: %s\n", res.ID, res.Requirement, res.Section, res.Description, errorReason(res))
		if res.Stderr != "" {
			ew.printf("  stderr:\n%s\n", indent(res.Stderr, "    | "))
		}
	}
	if skips := r.filter(StatusSkip); len(skips) > 0 {
		ew.printf("\nskipped:\n")
		for _, res := range skips {
			ew.printf("  SKIP %s  [%s] %s\n", res.ID, res.Requirement, res.Reason)
		}
	}
	if len(r.NotRun) > 0 {
		ew.printf("\nnot run (coverage):\n")
		reasons, keys := notRunReasons(r.NotRun)
		for _, k := range keys {
			ew.printf("  %4d  %s\n", reasons[k], k)
		}
	}
	ew.printf("\n%-12s %6s %6s %6s %6s %8s\n", "requirement", "pass", "fail", "error", "skip", "not run")
	for _, s := range r.Requirements {
		mark := ""
		if s.Fail+s.Error > 0 {
			mark = "  ✗"
		}
		ew.printf("%-12s %6d %6d %6d %6d %8d%s\n", s.Name, s.Pass, s.Fail, s.Error, s.Skip, s.NotRun, mark)
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	ew.printf("\n%s  %s  (%v)\n", verdict, r.totalsLine(), r.Elapsed.Round(time.Millisecond))
	return ew.err
}

// drawNote marks a draw-dependent result in per-vector lists.
func drawNote(res Result) string {
	if res.Random {
		return " (draw-dependent)"
	}
	return ""
}

// errorReason is the reason shown for an erroneous result.
func errorReason(res Result) string {
	if res.Status == StatusError {
		return res.Reason
	}
	reason := fmt.Sprintf("no result recorded (status %s)", res.Status)
	if res.Reason != "" {
		reason += ": " + res.Reason
	}
	return reason
}

// writeJSON writes the report as one indented JSON object: the [Report]
// struct's fields, with "spec_only_command" after the scores.
func (r *Report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Scores          []Summary `json:"scores"`
		SpecOnlyCommand string    `json:"spec_only_command,omitempty"`
		Causes          []Cause   `json:"causes"`
		*Report
	}{r.Scores, r.specOnlyCommand(), r.Causes, r})
}

// writeMarkdown writes a summary an implementer can paste into a README:
// the summary of [Report.Write], the totals, the per-requirement table
// (each requirement's section linked to the spec) and a table of
// failures and errors: the tables of the model HTML draws too.
func (r *Report) writeMarkdown(w io.Writer) error {
	m := r.buildModel()
	ew := &errWriter{w: w}
	ew.printf("### %s\n\n", mdEscape(m.Title))
	mdTable(ew, m.Scores)
	if m.SpecOnly != "" {
		ew.printf("\nSpec-only run (MUST level only): `%s`\n", strings.ReplaceAll(m.SpecOnly, "`", "'"))
	} else {
		ew.printf("\nThis is the spec-only run: SHOULD-level features and retrykit decisions were not selected.\n")
	}
	if len(m.Causes) > 0 {
		ew.printf("\n#### Failures by cause (%d failed or errored, %d %s)\n\n", r.Totals.Fail+r.Totals.Error, len(m.Causes), plural(len(m.Causes), "cause", "causes"))
		mdTable(ew, m.CauseTable)
	}
	if ids := m.Random; len(ids) > 0 {
		ew.printf("\n%d %s on the implementation's own random draws: %s.", len(ids),
			plural(len(ids), "verdict depends", "verdicts depend"), mdEscape(examples(ids, maxExamples)))
		switch {
		case m.Repeat > 1 && len(m.Flipped) > 0:
			ew.printf(" Run %d times each, %d flipped: %s.\n", m.Repeat, len(m.Flipped), mdEscape(examples(m.Flipped, 2*maxExamples)))
		case m.Repeat > 1:
			ew.printf(" Run %d times each, none flipped.\n", m.Repeat)
		default:
			ew.printf(" Run once; `--repeat K` runs them K times and reports any that flip.\n")
		}
	}
	for _, f := range m.Figures {
		ew.printf("\nFigure: %s\n", mdEscape(f))
	}
	ew.printf("\n**%s**\n\n", m.Totals)
	mdTable(ew, m.Requirements)
	if len(m.Problems.Rows) > 0 {
		ew.printf("\n")
		mdTable(ew, m.Problems)
	}
	if len(m.NotRun) > 0 {
		ew.printf("\n%d vectors not run (coverage): %s.\n", len(r.NotRun), mdEscape(strings.Join(m.NotRun, "; ")))
	}
	return ew.err
}

// mdTable writes t as a Markdown table: ids and commands as code, and a
// link where a cell has one outside the page (anchors of the HTML page
// have no target in Markdown).
func mdTable(ew *errWriter, t table) {
	ew.printf("|")
	for _, h := range t.Head {
		ew.printf(" %s |", h)
	}
	ew.printf("\n|")
	for i := range t.Head {
		if t.IsNum(i) {
			ew.printf("---:|")
		} else {
			ew.printf("---|")
		}
	}
	ew.printf("\n")
	for _, row := range t.Rows {
		ew.printf("|")
		for _, c := range row {
			text := mdEscape(c.Text)
			if c.Code {
				// GFM splits cells at "|" inside code spans too
				text = "`" + strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(c.Text) + "`"
			}
			if c.Href != "" && !strings.HasPrefix(c.Href, "#") && text != "" {
				text = "[" + text + "](" + c.Href + ")"
			}
			ew.printf(" %s |", text)
		}
		ew.printf("\n")
	}
}

// mdEscape keeps text as text in Markdown (see package mdtext).
func mdEscape(s string) string { return mdtext.Escape(s) }

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemErr string        `xml:"system-err,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// writeJUnit writes JUnit XML: first a testsuite "summary" without test
// cases whose properties and system-out carry the summary of
// [Report.Write] (score.MUST, spec_only_command, cause.N, cause.N.proof
// for a bug model, ...), then one
// testsuite per vector kind, one testcase per result (failure, error or
// skipped), and a separate testsuite "not-run" whose cases are skipped with
// the coverage reason, so CI systems show coverage gaps without counting
// them as passes.
func (r *Report) writeJUnit(w io.Writer) error {
	name := "retrykit-conformance"
	if r.Implementation.Implementation != "" {
		name += ": " + r.Implementation.Implementation
	}
	m := r.buildModel()
	out := junitSuites{Name: name, Time: strconv.FormatFloat(r.Elapsed.Seconds(), 'f', 3, 64)}
	sum := junitSuite{Name: "summary", SystemOut: strings.Join(r.summary(), "\n") + "\n"}
	prop := func(n, format string, a ...any) {
		sum.Properties = append(sum.Properties, junitProperty{Name: n, Value: fmt.Sprintf(format, a...)})
	}
	for _, s := range r.Scores {
		prop("score."+s.Name, "pass %d fail %d error %d skip %d not_run %d", s.Pass, s.Fail, s.Error, s.Skip, s.NotRun)
	}
	if m.SpecOnly != "" {
		prop("spec_only_command", "%s", m.SpecOnly)
	}
	for i, c := range m.Causes {
		prop(fmt.Sprintf("cause.%d", i+1), "%d %s: %s (e.g. %s)", len(c.IDs), c.Class, c.Explanation, examples(c.IDs, maxExamples))
		if c.Proof != "" {
			prop(fmt.Sprintf("cause.%d.proof", i+1), "%s", c.Proof)
		}
		prop(fmt.Sprintf("cause.%d.reproduce", i+1), "%s", c.Reproduce)
	}
	if ids := m.Random; len(ids) > 0 {
		prop("draw_dependent", "%d", len(ids))
		prop("repeat", "%d", max(m.Repeat, 1))
		prop("flipped", "%s", strings.Join(m.Flipped, " "))
	}
	out.Suites = append(out.Suites, sum)
	idx := map[string]int{}
	suite := func(n string) *junitSuite {
		i, ok := idx[n]
		if !ok {
			i = len(out.Suites)
			idx[n] = i
			out.Suites = append(out.Suites, junitSuite{Name: n})
		}
		return &out.Suites[i]
	}
	for _, res := range r.Results {
		s := suite(res.Kind)
		c := junitCase{Name: res.ID, Classname: "conformance." + res.Kind}
		s.Tests++
		switch res.Status {
		case StatusFail:
			s.Failures++
			c.Failure = &junitMessage{Message: res.Reason, Type: res.Requirement,
				Body: fmt.Sprintf("want: %s\ngot:  %s\n", compactJSON(res.Want), compactJSON(res.Got))}
		case StatusSkip:
			s.Skipped++
			c.Skipped = &junitMessage{Message: res.Reason}
		case StatusPass:
		default: // StatusError, or no status recorded
			s.Errors++
			c.Error = &junitMessage{Message: strings.TrimSuffix(errorReason(res), ": ")}
			c.SystemErr = res.Stderr
		}
		s.Cases = append(s.Cases, c)
	}
	for _, u := range r.NotRun {
		s := suite("not-run")
		s.Tests++
		s.Skipped++
		s.Cases = append(s.Cases, junitCase{Name: u.ID, Classname: "conformance.not-run",
			Skipped: &junitMessage{Message: "not run: " + u.Reason}})
	}
	for _, s := range out.Suites {
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func indent(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// notRunReasons counts the not-run entries by reason and returns the counts
// with the reasons in sorted order.
func notRunReasons(notRun []Uncovered) (counts map[string]int, reasons []string) {
	counts = map[string]int{}
	for _, u := range notRun {
		counts[u.Reason]++
	}
	reasons = make([]string, 0, len(counts))
	for k := range counts {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	return counts, reasons
}
