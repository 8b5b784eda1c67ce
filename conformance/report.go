package conformance

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/retrykit/retrykit/conformance/protocol"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Status is the class of a result. The four classes are never merged.
//
// The zero value is [StatusUnknown], so that a Result whose status was never
// set does not read as a pass: reports count it as an error.
type Status uint8

// The result classes.
const (
	StatusUnknown Status = iota // not set: never a pass, counted as an error
	StatusPass                  // the answer is the expected one
	StatusFail                  // a wrong answer: Want and Got differ
	StatusError                 // no usable answer: crash, timeout, protocol violation
	StatusSkip                  // not judged, for the reason given (skip file)
)

var statusNames = [...]string{"unknown", "pass", "fail", "error", "skip"}

// String returns "unknown", "pass", "fail", "error" or "skip".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText implements encoding.TextMarshaler.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Status) UnmarshalText(b []byte) error {
	for i, n := range statusNames {
		if n == string(b) {
			*s = Status(i)
			return nil
		}
	}
	return fmt.Errorf("conformance: unknown status %q", b)
}

// Result is the outcome of one vector (or of the statistical jitter check).
type Result struct {
	ID          string          `json:"id"`
	Requirement string          `json:"requirement"`
	Section     string          `json:"section"`
	Kind        string          `json:"kind"`
	Description string          `json:"description"`
	Flags       []string        `json:"flags,omitempty"`
	Covers      []string        `json:"covers,omitempty"` // further requirements (scenario vectors)
	Status      Status          `json:"status"`
	Reason      string          `json:"reason,omitempty"` // why it failed, errored or was skipped
	Want        json.RawMessage `json:"want,omitempty"`   // the vector's expected object
	Got         json.RawMessage `json:"got,omitempty"`    // the answer, as on the wire
	Stderr      string          `json:"stderr,omitempty"` // adapter stderr, for errors
}

func resultFor(v *Vector) Result {
	return Result{ID: v.ID, Requirement: v.Requirement, Covers: v.Covers, Section: v.Section, Kind: v.Kind,
		Description: v.Description, Flags: v.Flags}
}

// Uncovered is a vector that was not run because the implementation lacks
// its op or does not claim one of its flags. Coverage is reported apart from
// the four result classes.
type Uncovered struct {
	ID          string   `json:"id"`
	Requirement string   `json:"requirement"`
	Covers      []string `json:"covers,omitempty"` // further requirements (scenario vectors)
	Kind        string   `json:"kind"`
	Reason      string   `json:"reason"`
}

// Counts tallies results by class; NotRun counts coverage gaps.
type Counts struct {
	Pass   int `json:"pass"`
	Fail   int `json:"fail"`
	Error  int `json:"error"`
	Skip   int `json:"skip"`
	NotRun int `json:"not_run"`
}

// add counts one result. A status other than pass, fail and skip, including
// the unset [StatusUnknown], counts as an error: a result nobody judged
// must not let a run pass.
func (c *Counts) add(s Status) {
	switch s {
	case StatusPass:
		c.Pass++
	case StatusFail:
		c.Fail++
	case StatusSkip:
		c.Skip++
	default:
		c.Error++
	}
}

// erroneous reports whether s is counted as an error: StatusError, the
// unset StatusUnknown, or a value outside the defined classes.
func (s Status) erroneous() bool {
	return s != StatusPass && s != StatusFail && s != StatusSkip
}

// RequirementSummary is the tally for one requirement id: the results whose
// requirement it is, and those of scenario vectors that list it in covers.
type RequirementSummary struct {
	Requirement string `json:"requirement"`
	Counts
}

// Report is the outcome of a run. It is plain data, written by
// [Runner.Run] and read by the Write methods.
type Report struct {
	Implementation protocol.Hello       `json:"implementation"`
	SuiteVersion   string               `json:"suite_version"`
	SpecVersion    string               `json:"spec_version"`
	Totals         Counts               `json:"totals"`
	Requirements   []RequirementSummary `json:"requirements"`
	Results        []Result             `json:"results"`
	NotRun         []Uncovered          `json:"not_run"`
	NotSelected    int                  `json:"not_selected"`
	Warnings       []string             `json:"warnings,omitempty"`
	Elapsed        time.Duration        `json:"elapsed_ns"`
}

// OK reports whether nothing failed and nothing errored.
func (r *Report) OK() bool { return r.Totals.Fail == 0 && r.Totals.Error == 0 }

// Filter returns the results with the given status. Filter(StatusError)
// returns only results explicitly marked as errors, not those with an unset
// status, though [Counts] counts both as errors.
func (r *Report) Filter(s Status) []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status == s {
			out = append(out, res)
		}
	}
	return out
}

// finish computes totals and the per-requirement summary.
func (r *Report) finish() {
	r.Totals = Counts{}
	by := map[string]*RequirementSummary{}
	get := func(req string) *RequirementSummary {
		s, ok := by[req]
		if !ok {
			s = &RequirementSummary{Requirement: req}
			by[req] = s
		}
		return s
	}
	for _, res := range r.Results {
		r.Totals.add(res.Status)
		for _, req := range requirementsOf(res.Requirement, res.Covers) {
			get(req).add(res.Status)
		}
	}
	for _, u := range r.NotRun {
		r.Totals.NotRun++
		for _, req := range requirementsOf(u.Requirement, u.Covers) {
			get(req).NotRun++
		}
	}
	r.Requirements = r.Requirements[:0]
	for _, s := range by {
		r.Requirements = append(r.Requirements, *s)
	}
	sort.Slice(r.Requirements, func(i, j int) bool {
		return requirementLess(r.Requirements[i].Requirement, r.Requirements[j].Requirement)
	})
	sort.SliceStable(r.NotRun, func(i, j int) bool { return r.NotRun[i].ID < r.NotRun[j].ID })
}

// requirementsOf returns main followed by the covers ids not equal to an
// earlier one.
func requirementsOf(main string, covers []string) []string {
	if len(covers) == 0 {
		return []string{main}
	}
	out := []string{main}
	for _, c := range covers {
		dup := false
		for _, o := range out {
			dup = dup || o == c
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

// requirementLess orders RET-nn first, then the other families by name
// (CORE-C…, CORE-F…, …, DLQ-nnn, DLQ-Rnnn, RK-nn), numerically within each.
func requirementLess(a, b string) bool {
	pa, na := splitReq(a)
	pb, nb := splitReq(b)
	if pa != pb {
		return pa == "RET-" || (pb != "RET-" && pa < pb)
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

// splitReq splits a requirement id into the prefix before its trailing
// digits and their value: "DLQ-R002" → ("DLQ-R", 2).
func splitReq(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}

// formats are the report formats accepted by [Report.Write].
var formats = [...]string{"text", "json", "junit", "markdown"}

// Formats returns the names of the report formats accepted by
// [Report.Write], a fresh slice on every call.
func Formats() []string { return append([]string(nil), formats[:]...) }

// Write writes the report in the named format: "text" (the default when
// format is ""), "json", "junit" or "markdown".
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "", "text":
		return r.WriteText(w)
	case "json":
		return r.WriteJSON(w)
	case "junit":
		return r.WriteJUnit(w)
	case "markdown", "md":
		return r.WriteMarkdown(w)
	}
	return fmt.Errorf("conformance: unknown report format %q (want %s)", format, strings.Join(Formats(), ", "))
}

func (r *Report) title() string {
	h := r.Implementation
	name := h.Implementation
	if name == "" {
		name = "(no hello)"
	}
	return fmt.Sprintf("%s %s — OJS retry conformance suite %s (spec %s)", name, h.Version, r.SuiteVersion, r.SpecVersion)
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

// WriteText writes a terminal-friendly report: failures with want and got,
// errors with the adapter's stderr, skips, coverage gaps, the
// per-requirement summary and the totals.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", r.title())
	h := r.Implementation
	if h.Protocol != 0 {
		ew.printf("protocol %d, resolution %dns, jitter %s, ops %s\n", h.Protocol, h.ResolutionNS, h.Jitter, strings.Join(h.Ops, " "))
	}
	for _, wmsg := range r.Warnings {
		ew.printf("warning: %s\n", wmsg)
	}
	for _, res := range r.Filter(StatusFail) {
		ew.printf("\nFAIL  %s  [%s §%s] %s\n  reason: %s\n  want:   %s\n  got:    %s\n", res.ID, res.Requirement, res.Section, res.Description, res.Reason, res.Want, res.Got)
	}
	for _, res := range r.Results {
		if !res.Status.erroneous() {
			continue
		}
		reason := res.Reason
		if res.Status != StatusError {
			reason = fmt.Sprintf("no result recorded (status %s)", res.Status)
			if res.Reason != "" {
				reason += ": " + res.Reason
			}
		}
		ew.printf("\nERROR %s  [%s §%s] %s\n  reason: %s\n", res.ID, res.Requirement, res.Section, res.Description, reason)
		if res.Stderr != "" {
			ew.printf("  stderr:\n%s\n", indent(res.Stderr, "    | "))
		}
	}
	if skips := r.Filter(StatusSkip); len(skips) > 0 {
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
		ew.printf("%-12s %6d %6d %6d %6d %8d%s\n", s.Requirement, s.Pass, s.Fail, s.Error, s.Skip, s.NotRun, mark)
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	ew.printf("\n%s  %s  (%v)\n", verdict, r.totalsLine(), r.Elapsed.Round(time.Millisecond))
	return ew.err
}

// WriteJSON writes the report as one indented JSON object (the [Report]
// struct's fields).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes a summary an implementer can paste into a README: the
// totals, the per-requirement table and a table of failures and errors.
func (r *Report) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("### %s\n\n", mdEscape(r.title()))
	ew.printf("**%s**\n\n", r.totalsLine())
	ew.printf("| requirement | pass | fail | error | skip | not run |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range r.Requirements {
		ew.printf("| %s | %d | %d | %d | %d | %d |\n", s.Requirement, s.Pass, s.Fail, s.Error, s.Skip, s.NotRun)
	}
	var bad []Result
	for _, res := range r.Results {
		if res.Status != StatusPass {
			bad = append(bad, res)
		}
	}
	if len(bad) > 0 {
		ew.printf("\n| vector | requirement | result | reason |\n|---|---|---|---|\n")
		for _, res := range bad {
			ew.printf("| `%s` | %s | %s | %s |\n", res.ID, res.Requirement, res.Status, mdEscape(res.Reason))
		}
	}
	if len(r.NotRun) > 0 {
		ew.printf("\n%d vectors not run (coverage): ", len(r.NotRun))
		reasons, keys := notRunReasons(r.NotRun)
		for i, k := range keys {
			if i > 0 {
				ew.printf("; ")
			}
			ew.printf("%s (%d)", mdEscape(k), reasons[k])
		}
		ew.printf(".\n")
	}
	return ew.err
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

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
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
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

// WriteJUnit writes JUnit XML: one testsuite per vector kind, one testcase
// per result (failure, error or skipped), and a separate testsuite
// "not-run" whose cases are skipped with the coverage reason, so CI systems
// show coverage gaps without counting them as passes.
func (r *Report) WriteJUnit(w io.Writer) error {
	name := "retrykit-conformance"
	if r.Implementation.Implementation != "" {
		name += ": " + r.Implementation.Implementation
	}
	out := junitSuites{Name: name, Time: strconv.FormatFloat(r.Elapsed.Seconds(), 'f', 3, 64)}
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
		c := junitCase{Name: res.ID + " [" + res.Requirement + "] " + res.Description, Classname: "conformance." + res.Kind}
		s.Tests++
		switch res.Status {
		case StatusFail:
			s.Failures++
			c.Failure = &junitMessage{Message: res.Reason, Type: res.Requirement,
				Body: fmt.Sprintf("want: %s\ngot:  %s\n", res.Want, res.Got)}
		case StatusSkip:
			s.Skipped++
			c.Skipped = &junitMessage{Message: res.Reason}
		case StatusPass:
		default: // StatusError, or no status recorded
			s.Errors++
			msg := res.Reason
			if res.Status != StatusError {
				msg = strings.TrimSuffix(fmt.Sprintf("no result recorded (status %s): %s", res.Status, res.Reason), ": ")
			}
			c.Error = &junitMessage{Message: msg}
			c.SystemErr = res.Stderr
		}
		s.Cases = append(s.Cases, c)
	}
	for _, u := range r.NotRun {
		s := suite("not-run")
		s.Tests++
		s.Skipped++
		s.Cases = append(s.Cases, junitCase{Name: u.ID + " [" + u.Requirement + "]", Classname: "conformance.not-run",
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
