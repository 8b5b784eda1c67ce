package scoreboard

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/retrykit/retrykit/conformance"
)

// groupCell is one cell of the index: how the requirements of one group (the
// family of their ids, [conformance.RequirementGroup]) fared in a report,
// read from the report's per-requirement tally.
type groupCell struct {
	Name   string
	Pass   int // requirements with a pass and no failure or error
	Bad    int // requirements with a failure or an error
	Total  int // requirements of the group in the report
	Anchor string
}

// Class returns the cell's CSS class: "ok" when every requirement passed,
// "bad" when one failed or errored, "none" when none was judged.
func (g groupCell) Class() string {
	switch {
	case g.Bad > 0:
		return "bad"
	case g.Pass > 0 && g.Pass == g.Total:
		return "ok"
	}
	return "none"
}

// groups returns the requirement groups of rep in column order.
func groups(rep *conformance.Report) map[string]*groupCell {
	out := map[string]*groupCell{}
	for _, s := range rep.Requirements {
		name := conformance.RequirementGroup(s.Name)
		g := out[name]
		if g == nil {
			g = &groupCell{Name: name, Anchor: conformance.GroupAnchor(name)}
			out[name] = g
		}
		g.Total++
		switch {
		case s.Fail+s.Error > 0:
			g.Bad++
		case s.Pass > 0:
			g.Pass++
		}
	}
	return out
}

// groupLess orders the columns: RET first, RK last, the others by name.
func groupLess(a, b string) bool {
	rank := func(s string) int {
		switch s {
		case "RET":
			return 0
		case "RK":
			return 2
		}
		return 1
	}
	if rank(a) != rank(b) {
		return rank(a) < rank(b)
	}
	return a < b
}

// score returns the level's summary of rep, and whether rep has it.
func score(rep *conformance.Report, level string) (conformance.Summary, bool) {
	for _, s := range rep.Scores {
		if s.Name == level {
			return s, true
		}
	}
	return conformance.Summary{}, false
}

// levelScore is a level's score as the pages show it.
type levelScore struct {
	Level            string
	Pass, Judged     int
	Fail, Error, Not int
}

// Text returns "pass/judged", or "–" when nothing was judged.
func (s levelScore) Text() string {
	if s.Judged == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d", s.Pass, s.Judged)
}

// Class is "ok", "bad" or "none", as for [groupCell.Class].
func (s levelScore) Class() string {
	switch {
	case s.Fail+s.Error > 0:
		return "bad"
	case s.Judged > 0:
		return "ok"
	}
	return "none"
}

// Percent is the share of passes among the judged, 0..100.
func (s levelScore) Percent() float64 {
	if s.Judged == 0 {
		return 0
	}
	return 100 * float64(s.Pass) / float64(s.Judged)
}

func scores(rep *conformance.Report) []levelScore {
	var out []levelScore
	for _, l := range []string{"MUST", "SHOULD", "RK"} {
		s, _ := score(rep, l)
		out = append(out, levelScore{Level: l, Pass: s.Pass, Judged: s.Pass + s.Fail + s.Error, Fail: s.Fail, Error: s.Error, Not: s.NotRun})
	}
	return out
}

// Write writes the site of b to dir (created if missing; files of the
// same names replaced):
//
//   - index.html: a table per suite version, one row per implementation
//     (its latest report under that suite), one column per requirement
//     group, each cell linking to that group in the report's HTML page;
//   - impl/SLUG.html: an implementation's page, per suite version its
//     history (an inline SVG chart of the MUST, SHOULD and RK pass shares
//     and a table linking every report) and its latest causes;
//   - badges/SLUG.svg: its badge, one segment per suite version with the
//     MUST score of the latest report;
//   - reports/SLUG/STEM.html and .json: every report, in the conformance
//     HTML format and as read.
//
// Every page has its style inline and no script.
func Write(b *Board, dir string) error {
	for _, sub := range []string{"impl", "badges", "reports"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("scoreboard: %w", err)
		}
	}
	for _, im := range b.Implementations {
		if err := os.MkdirAll(filepath.Join(dir, "reports", im.Slug), 0o755); err != nil {
			return fmt.Errorf("scoreboard: %w", err)
		}
		for _, s := range im.Suites {
			for _, e := range s.Reports {
				var page bytes.Buffer
				if err := e.Report.Write(&page, "html"); err != nil {
					return fmt.Errorf("scoreboard: %s: %w", e.Path, err)
				}
				js := e.raw // as read: fields this build does not know kept
				if js == nil {
					var err error
					if js, err = json.MarshalIndent(e.Report, "", "  "); err != nil {
						return fmt.Errorf("scoreboard: %s: %w", e.Path, err)
					}
					js = append(js, '\n')
				}
				base := filepath.Join(dir, "reports", im.Slug, e.Stem)
				if err := writeFiles(map[string][]byte{base + ".html": page.Bytes(), base + ".json": js}); err != nil {
					return err
				}
			}
		}
		var page bytes.Buffer
		if err := implTemplate.Execute(&page, implView(b, im)); err != nil {
			return fmt.Errorf("scoreboard: %s: %w", im.Name, err)
		}
		if err := writeFiles(map[string][]byte{
			filepath.Join(dir, "impl", im.Slug+".html"):  page.Bytes(),
			filepath.Join(dir, "badges", im.Slug+".svg"): []byte(Badge(im)),
		}); err != nil {
			return err
		}
	}
	var index bytes.Buffer
	if err := indexTemplate.Execute(&index, indexView(b)); err != nil {
		return fmt.Errorf("scoreboard: index: %w", err)
	}
	return writeFiles(map[string][]byte{filepath.Join(dir, "index.html"): index.Bytes()})
}

func writeFiles(files map[string][]byte) error {
	for p, data := range files {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("scoreboard: %w", err)
		}
	}
	return nil
}

// reportHref returns the address of an entry's HTML page from a page one
// directory below the site's root ("../reports/…") or at the root.
func reportHref(im *Implementation, e *Entry, fromRoot bool) string {
	p := "reports/" + im.Slug + "/" + e.Stem + ".html"
	if fromRoot {
		return p
	}
	return "../" + p
}

// row is one implementation in a suite's table.
type row struct {
	Name, Href, Badge, Version, Report string
	Partial                            string // [Entry.Partial] of the latest report
	Scores                             []levelScore
	Cells                              []groupCell
	Causes                             int
}

// suiteTable is the index table of one suite version.
type suiteTable struct {
	Suite   string
	Spec    string
	Live    bool
	Columns []string
	Rows    []row
}

func indexView(b *Board) any {
	bySuite := map[string]*suiteTable{}
	var order []string
	for _, im := range b.Implementations {
		for _, s := range im.Suites {
			t := bySuite[s.Suite]
			if t == nil {
				t = &suiteTable{Suite: s.Suite, Live: strings.HasPrefix(s.Suite, "live")}
				bySuite[s.Suite] = t
				order = append(order, s.Suite)
			}
			e := s.Latest()
			t.Spec = e.Report.SpecVersion
			gs := groups(e.Report)
			for name := range gs {
				if !contains(t.Columns, name) {
					t.Columns = append(t.Columns, name)
				}
			}
			t.Rows = append(t.Rows, row{Name: im.Name, Href: "impl/" + im.Slug + ".html#" + suiteAnchor(s.Suite),
				Badge: "badges/" + im.Slug + ".svg", Version: e.Report.Implementation.Version, Partial: e.Partial(),
				Report: reportHref(im, e, true), Scores: scores(e.Report), Causes: len(e.Report.Causes)})
		}
	}
	sort.Slice(order, func(i, j int) bool { return suiteLess(order[i], order[j]) })
	var tables []*suiteTable
	for _, name := range order {
		t := bySuite[name]
		sort.Slice(t.Columns, func(i, j int) bool { return groupLess(t.Columns[i], t.Columns[j]) })
		for i := range t.Rows {
			r := &t.Rows[i]
			var e *Entry
			for _, im := range b.Implementations {
				for _, s := range im.Suites {
					if s.Suite == name && im.Name == r.Name {
						e = s.Latest()
					}
				}
			}
			gs := groups(e.Report)
			for _, c := range t.Columns {
				g := groupCell{Name: c}
				if x := gs[c]; x != nil {
					g = *x
				}
				r.Cells = append(r.Cells, g)
			}
		}
		tables = append(tables, t)
	}
	return struct {
		CSS     template.CSS
		Tables  []*suiteTable
		Interop []*Interop
		Skipped []string
		Count   int
	}{template.CSS(conformance.ReportCSS() + siteCSS), tables, b.Interop, b.Skipped, len(b.Implementations)}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// suiteAnchor is the HTML id of a suite's section on an implementation's
// page.
func suiteAnchor(suite string) string { return "suite-" + slug(suite) }

// historyRow is one report in an implementation's history table.
type historyRow struct {
	Label, Path, Href, JSON string
	Partial                 string // [Entry.Partial]
	Scores                  []levelScore
	Fail, Error, Causes     int
}

// causeLink is a cause of the latest report, linking to it in the report.
type causeLink struct {
	Class, Explanation, Href string
	Count                    int
}

// suiteSection is one suite version on an implementation's page.
type suiteSection struct {
	Suite, Spec, Anchor string
	Live                bool
	Chart               template.HTML
	History             []historyRow
	Latest              historyRow
	Cells               []groupCell
	Causes              []causeLink
	Warnings            []string
	Figures             []string
}

func implView(b *Board, im *Implementation) any {
	var secs []suiteSection
	for _, s := range im.Suites {
		sec := suiteSection{Suite: s.Suite, Anchor: suiteAnchor(s.Suite), Live: strings.HasPrefix(s.Suite, "live")}
		for _, e := range s.Reports {
			h := reportHref(im, e, false)
			sec.History = append(sec.History, historyRow{Label: e.Label(), Path: e.Path, Href: h, Partial: e.Partial(),
				JSON: strings.TrimSuffix(h, ".html") + ".json", Scores: scores(e.Report),
				Fail: e.Report.Totals.Fail, Error: e.Report.Totals.Error, Causes: len(e.Report.Causes)})
		}
		last := s.Latest()
		sec.Spec = last.Report.SpecVersion
		sec.Latest = sec.History[len(sec.History)-1]
		gs := groups(last.Report)
		var names []string
		for n := range gs {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return groupLess(names[i], names[j]) })
		for _, n := range names {
			sec.Cells = append(sec.Cells, *gs[n])
		}
		for i, c := range last.Report.Causes {
			sec.Causes = append(sec.Causes, causeLink{Class: c.Class, Explanation: c.Explanation, Count: len(c.IDs),
				Href: fmt.Sprintf("%s#cause-%d", sec.Latest.Href, i+1)})
		}
		sec.Warnings = last.Report.Warnings
		sec.Figures = last.Report.Figures
		sec.Chart = template.HTML(historyChart(s))
		secs = append(secs, sec)
	}
	return struct {
		CSS      template.CSS
		Name     string
		Slug     string
		Sections []suiteSection
		Markdown string
	}{template.CSS(conformance.ReportCSS() + siteCSS), im.Name, im.Slug, secs,
		fmt.Sprintf("![OJS conformance: %s](badges/%s.svg)", altText.Replace(im.Name), im.Slug)}
}

// altText escapes what would end a Markdown image's alt text early ("]"),
// open a link ("["), escape ("\\"), or break its line.
var altText = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "\n", " ", "\r", " ")

// historyChart returns an inline SVG of the pass shares (MUST, SHOULD, RK)
// of a series' reports, in history order: one point per report, its
// label under it, its figures in a tooltip (the title element).
func historyChart(s *Series) string {
	const w, h, left, right, top, bottom = 640, 200, 44, 16, 14, 44
	n := len(s.Reports)
	x := func(i int) float64 {
		if n == 1 {
			return left + float64(w-left-right)/2
		}
		return left + float64(i)*float64(w-left-right)/float64(n-1)
	}
	y := func(pct float64) float64 { return top + (100-pct)*float64(h-top-bottom)/100 }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="history" role="img" viewBox="0 0 %d %d" width="100%%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">`, w, h)
	fmt.Fprintf(&b, `<title>pass share per report, %s</title>`, html.EscapeString(s.Suite))
	for _, p := range []float64{0, 50, 100} {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d0d7de"/><text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#57606a">%.0f%%</text>`,
			left, w-right, y(p), y(p), left-6, y(p)+4, p)
	}
	colors := map[string]string{"MUST": "#0072B2", "SHOULD": "#D55E00", "RK": "#009E73"}
	for li, level := range []string{"MUST", "SHOULD", "RK"} {
		var pts []string
		for i, e := range s.Reports {
			sc := scores(e.Report)[li]
			if sc.Judged == 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(sc.Percent())))
		}
		if len(pts) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<polyline class="series" data-level="%s" fill="none" stroke="%s" stroke-width="2" points="%s"/>`, level, colors[level], strings.Join(pts, " "))
		for i, e := range s.Reports {
			sc := scores(e.Report)[li]
			if sc.Judged == 0 {
				continue
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s %s: %d/%d</title></circle>`,
				x(i), y(sc.Percent()), colors[level], html.EscapeString(e.Label()), level, sc.Pass, sc.Judged)
		}
	}
	// Labels: the report's file name, cut to the room a point has; the
	// first and last anchored at their ends so that none leaves the chart.
	room := w - left - right
	if n > 1 {
		room /= n
	}
	maxChars := max(6, room/8)
	for i, e := range s.Reports {
		label := []rune(strings.TrimSuffix(path.Base(e.Path), ".json"))
		if len(label) > maxChars {
			label = append([]rune("…"), label[len(label)-maxChars+1:]...)
		}
		anchor := "middle"
		switch {
		case n > 1 && i == 0:
			anchor = "start"
		case n > 1 && i == n-1:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="%s" fill="#1b1f24">%s</text>`,
			x(i), h-bottom+16, anchor, html.EscapeString(string(label)))
	}
	lx := left
	for _, level := range []string{"MUST", "SHOULD", "RK"} {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11" fill="#1b1f24">%s</text>`,
			lx, h-12, colors[level], lx+14, h-3, level)
		lx += 70
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// Badge returns the SVG badge of an implementation: "OJS retry" and, per
// suite version, the MUST score of its latest report ("0.1.0 MUST
// 527/527"), green when no MUST requirement failed or errored, red when
// one did, grey when none was judged.
func Badge(im *Implementation) string {
	type seg struct{ text, color string }
	segs := []seg{{"OJS retry", "#555"}}
	for _, s := range im.Suites {
		sc := scores(s.Latest().Report)[0]
		color := "#9f9f9f"
		switch sc.Class() {
		case "ok":
			color = "#2e7d32"
		case "bad":
			color = "#c62828"
		}
		text := fmt.Sprintf("%s MUST %s", s.Suite, sc.Text())
		if s.Latest().Partial() != "" {
			text += " (partial)"
		}
		segs = append(segs, seg{text, color})
	}
	width := func(t string) int { return 6*len([]rune(t)) + 12 }
	total := 0
	for _, s := range segs {
		total += width(s.text)
	}
	var b strings.Builder
	var alt []string
	for _, s := range segs {
		alt = append(alt, s.text)
	}
	label := xmlEscape(strings.Join(alt, " | "))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s"><title>%s: %s</title>`,
		total, label, xmlEscape(im.Name), label)
	x := 0
	for _, s := range segs {
		wd := width(s.text)
		fmt.Fprintf(&b, `<rect x="%d" width="%d" height="20" fill="%s"/><text x="%d" y="14" fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">%s</text>`,
			x, wd, s.color, x+wd/2, xmlEscape(s.text))
		x += wd
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// xmlEscape returns s escaped for XML text and attributes, with every
// character XML does not allow (control characters, a lone surrogate)
// replaced by U+FFFD: a name carrying one still gives a badge that parses.
func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
