package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// A report's formats render one model of it, built once from the tallies
// of the [Report] (its Scores, Causes, Requirements and Results): the
// Markdown, JUnit and HTML formats draw the same tables from it, so that
// no format counts anything again. The model is built from the exported
// fields alone, so a report decoded from JSON renders exactly as the run
// that wrote it.

// cell is one cell of a [table]: its text, and where the HTML format links
// it (an anchor "#…" in the report, or a URL) when Href is set.
type cell struct {
	Text string
	Href string
	Code bool // an id, a command or a class: set in monospace
}

// table is a table of the report, shared by the formats that draw tables.
type table struct {
	ID   string   // the HTML id of the table
	Head []string // column headings
	Num  []bool   // right-aligned (numeric) columns, by column
	Rows [][]cell
	// RowIDs are the HTML ids of the rows, by row ("" for none): a
	// requirement row is "req-RET-04".
	RowIDs []string
	// Starts are further HTML ids at the rows, by row ("" for none): the
	// first row of a requirement group starts "group-RET".
	Starts []string
	// Bad marks the rows with a failure or an error.
	Bad []bool
}

// IsNum reports whether column i is numeric.
func (t table) IsNum(i int) bool { return i < len(t.Num) && t.Num[i] }

// IsBad reports whether row r has a failure or an error.
func (t table) IsBad(r int) bool { return r < len(t.Bad) && t.Bad[r] }

// RowID returns the HTML id of row r, or "".
func (t table) RowID(r int) string {
	if r < len(t.RowIDs) {
		return t.RowIDs[r]
	}
	return ""
}

// Start returns the further HTML id at row r, or "".
func (t table) Start(r int) string {
	if r < len(t.Starts) {
		return t.Starts[r]
	}
	return ""
}

// causeView is one cause as every format shows it.
type causeView struct {
	Anchor       string // "cause-1"
	Class        string
	Explanation  string // for a bug model: the fix
	Reproduced   bool
	IDs          []string
	Proof        string // for a bug model, what proves it: [Cause.proof]
	Equivalent   []string
	Unclaim      string // the command that declares the flag unclaimed, or ""
	Requirements string // "RET-16 ×46, RET-19 ×16, …"
	Reproduce    string // the command that runs this cause's results again
	// Reproduction is the smallest failure of a group no model
	// reproduces, as a replayable line ([Cause.Reproduction]).
	Reproduction string
}

// model is the report as the formats render it.
type model struct {
	Title    string
	Verdict  string // "PASS" or "FAIL"
	Scores   table
	SpecOnly string // the spec-only command, or "" for the spec-only run
	Causes   []causeView
	// CauseTable is the causes as a table (count, cause, explanation,
	// proof, requirements, examples).
	CauseTable   table
	Random       []string // draw-dependent ids
	Flipped      []string
	Repeat       int
	Figures      []string
	Totals       string
	Requirements table
	// Problems is every result that is not a pass: vector, requirement,
	// result, reason.
	Problems table
	NotRun   []string // "reason (count)"
}

// buildModel returns the model of r.
func (r *Report) buildModel() *model {
	m := &model{Title: r.title(), Verdict: "PASS", SpecOnly: r.specOnlyCommand(), Random: r.randomIDs(),
		Flipped: r.Flipped, Repeat: r.Repeat, Figures: r.Figures, Totals: r.totalsLine()}
	if !r.OK() {
		m.Verdict = "FAIL"
	}
	m.Scores = table{ID: "scores", Head: []string{"score", "pass", "fail", "error", "skip", "not run"},
		Num: []bool{false, true, true, true, true, true}}
	for _, s := range r.Scores {
		m.Scores.Rows = append(m.Scores.Rows, append([]cell{{Text: levelLabel(s.Name)}}, countCells(s.Counts)...))
		m.Scores.RowIDs = append(m.Scores.RowIDs, "score-"+s.Name)
		m.Scores.Bad = append(m.Scores.Bad, s.Fail+s.Error > 0)
	}
	byID := r.byID()
	m.CauseTable = table{ID: "cause-table", Head: []string{"count", "cause", "explanation", "proof", "requirements", "examples"},
		Num: []bool{true, false, false, false, false, false}}
	for i, c := range r.Causes {
		v := causeView{Anchor: fmt.Sprintf("cause-%d", i+1), Class: c.Class, Explanation: c.Explanation,
			Reproduced: c.Reproduced, IDs: c.IDs, Proof: c.proof(), Equivalent: c.Equivalent,
			Requirements: r.causeRequirements(c, byID), Reproduce: r.rerunCommand(c.IDs), Reproduction: c.Reproduction}
		if c.Unclaim != "" {
			v.Unclaim = r.unclaimCommand(c.Unclaim)
		}
		m.Causes = append(m.Causes, v)
		m.CauseTable.Rows = append(m.CauseTable.Rows, []cell{{Text: strconv.Itoa(len(c.IDs))},
			{Text: c.Class, Code: true, Href: "#" + v.Anchor}, {Text: c.Explanation}, {Text: v.Proof}, {Text: v.Requirements},
			{Text: examples(c.IDs, maxExamples)}})
		m.CauseTable.RowIDs = append(m.CauseTable.RowIDs, "")
		m.CauseTable.Bad = append(m.CauseTable.Bad, true)
	}
	m.Requirements = table{ID: "requirements", Head: []string{"requirement", "section", "pass", "fail", "error", "skip", "not run"},
		Num: []bool{false, false, true, true, true, true, true}}
	sections := r.sections()
	firstBad := map[string]string{}
	for _, res := range r.Results {
		if res.Status != StatusPass && res.Status != StatusSkip {
			for _, req := range requirementsOf(res.Requirement, res.Covers) {
				if firstBad[req] == "" {
					firstBad[req] = "#" + resultAnchor(res.ID)
				}
			}
		}
	}
	group := ""
	for _, s := range r.Requirements {
		sec := sections[s.Name]
		row := []cell{{Text: s.Name, Code: true, Href: firstBad[s.Name]}, {Text: sectionLabel(s.Name, sec), Href: SpecURL(s.Name, sec)}}
		m.Requirements.Rows = append(m.Requirements.Rows, append(row, countCells(s.Counts)...))
		start := ""
		if g := RequirementGroup(s.Name); g != group {
			group, start = g, GroupAnchor(g)
		}
		m.Requirements.RowIDs = append(m.Requirements.RowIDs, requirementAnchor(s.Name))
		m.Requirements.Starts = append(m.Requirements.Starts, start)
		m.Requirements.Bad = append(m.Requirements.Bad, s.Fail+s.Error > 0)
	}
	m.Problems = table{ID: "problems", Head: []string{"vector", "requirement", "result", "reason"}}
	for _, res := range r.Results {
		if res.Status == StatusPass {
			continue
		}
		reason := res.Reason
		if res.Status.erroneous() {
			reason = errorReason(res)
		}
		m.Problems.Rows = append(m.Problems.Rows, []cell{{Text: res.ID, Code: true, Href: "#" + resultAnchor(res.ID)},
			{Text: res.Requirement}, {Text: res.Status.String() + drawNote(res)}, {Text: reason}})
		m.Problems.RowIDs = append(m.Problems.RowIDs, "")
		m.Problems.Bad = append(m.Problems.Bad, res.Status != StatusSkip)
	}
	if len(r.NotRun) > 0 {
		reasons, keys := notRunReasons(r.NotRun)
		for _, k := range keys {
			m.NotRun = append(m.NotRun, fmt.Sprintf("%s (%d)", k, reasons[k]))
		}
	}
	return m
}

func countCells(c Counts) []cell {
	return []cell{{Text: strconv.Itoa(c.Pass)}, {Text: strconv.Itoa(c.Fail)}, {Text: strconv.Itoa(c.Error)},
		{Text: strconv.Itoa(c.Skip)}, {Text: strconv.Itoa(c.NotRun)}}
}

// sections returns the spec section of each requirement: the section of
// the first result whose requirement it is.
func (r *Report) sections() map[string]string {
	out := map[string]string{}
	for _, res := range r.Results {
		if _, ok := out[res.Requirement]; !ok && res.Section != "" {
			out[res.Requirement] = res.Section
		}
	}
	return out
}

// rerunFlagRE matches the flags of a command line that a re-run of some
// results leaves out: output files, formats and an earlier selection.
var rerunFlagRE = regexp.MustCompile(`\s--?(?:o|format|run|write-skip-file)(?:=\S+|\s+(?:'[^']*'|"[^"]*"|\S+))`)

// rerunCommand returns the command that runs the results ids again, and
// only them: the report's command without its output, format and
// selection flags, plus --run.
func (r *Report) rerunCommand(ids []string) string {
	var cmd string
	switch {
	case r.Command != "":
		cmd = rerunFlagRE.ReplaceAllString(r.Command, "")
	case r.Implementation.Implementation == "retrykit" && r.SuiteVersion != "" && !strings.HasPrefix(r.SuiteVersion, "live"):
		cmd = "retrykit conformance"
	default:
		cmd = "retrykit conformance --impl 'ADAPTER COMMAND'"
	}
	if len(ids) == 0 {
		return cmd
	}
	return cmd + " --run " + strings.Join(ids, ",")
}

// resultAnchor returns the HTML id under which the HTML format shows the
// result (vector or check) id: "v-" and the id.
func resultAnchor(id string) string { return "v-" + anchorSafe(id) }

// requirementAnchor returns the HTML id of a requirement's row in the HTML
// format's requirement table: "req-" and the requirement.
func requirementAnchor(req string) string { return "req-" + anchorSafe(req) }

// GroupAnchor returns the HTML id of the first requirement row of a group
// (see [RequirementGroup]) in the HTML format: "group-" and the group.
func GroupAnchor(group string) string { return "group-" + anchorSafe(group) }

// RequirementGroup returns the group of a requirement id, the family its
// id names: the id up to its last "-" ("RET-04" → "RET", "CORE-T2" →
// "CORE", "DLQ-R002" → "DLQ", "HTTP-4.1" → "HTTP", "RK-113" → "RK"), or
// the whole id when it has no "-".
func RequirementGroup(req string) string {
	if i := strings.IndexByte(req, '-'); i > 0 {
		return req[:i]
	}
	return req
}

// anchorSafe keeps letters, digits, '-', '_' and '.', and replaces every
// other byte by '_', so that an id from a report is a valid fragment.
func anchorSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// compactJSON returns raw without insignificant space, as on the wire:
// the JSON format indents a result's want and got, and a report read back
// from it renders as the run that wrote it.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
