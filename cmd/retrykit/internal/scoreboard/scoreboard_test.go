package scoreboard

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"pgregory.net/rapid"
)

// report returns the JSON of a report of name at version under suite with
// the given verdicts (requirement → statuses).
func report(t testing.TB, name, version, suite string, verdicts map[string][]conformance.Status) []byte {
	t.Helper()
	rep := &conformance.Report{Implementation: protocol.Hello{Implementation: name, Version: version},
		SuiteVersion: suite, SpecVersion: "1.0", Repeat: 1}
	for req, sts := range verdicts {
		for i, st := range sts {
			level := "MUST"
			if strings.HasPrefix(req, "RK-") {
				level = "RK"
			}
			rep.Results = append(rep.Results, conformance.Result{ID: req + "-" + string(rune('a'+i)), Requirement: req,
				Section: "7.2", Kind: "live", Status: st, Reason: "reason", Level: level})
		}
	}
	rep.Tally(nil)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	pass = conformance.StatusPass
	fail = conformance.StatusFail
)

func board(t *testing.T) fstest.MapFS {
	return fstest.MapFS{
		"srv/0.10.0.json": {Data: report(t, "srv", "0.10.0", "live-1", map[string][]conformance.Status{"RET-01": {pass, pass}, "DLQ-001": {pass}, "RK-113": {pass}})},
		"srv/0.9.0.json":  {Data: report(t, "srv", "0.9.0", "live-1", map[string][]conformance.Status{"RET-01": {pass, fail}, "DLQ-001": {pass}, "RK-113": {fail}})},
		"srv/lib.json":    {Data: report(t, "srv", "0.9.0", "0.1.0", map[string][]conformance.Status{"RET-02": {pass}, "CORE-T1": {fail}})},
		"other.json":      {Data: report(t, "other <b>", "1", "0.1.0", map[string][]conformance.Status{"RET-02": {pass}})},
		"fuzz.json":       {Data: []byte(`{"implementation":"x","ops":[]}`)},
		"notes.txt":       {Data: []byte("not json")},
	}
}

// TestLoadGroupsBySuiteAndOrdersHistory: reports are grouped by
// implementation and suite version, the library suite before the live
// checker's, and history follows the version numerically (0.9.0 before
// 0.10.0); a JSON file that is no report is left out with its reason.
func TestLoadGroupsBySuiteAndOrdersHistory(t *testing.T) {
	b, err := Load(board(t), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Implementations) != 2 || b.Implementations[0].Name != "other <b>" || b.Implementations[1].Name != "srv" {
		t.Fatalf("implementations: %+v", b.Implementations)
	}
	srv := b.Implementations[1]
	if len(srv.Suites) != 2 || srv.Suites[0].Suite != "0.1.0" || srv.Suites[1].Suite != "live-1" {
		t.Fatalf("suites of srv: %+v", srv.Suites)
	}
	var hist []string
	for _, e := range srv.Suites[1].Reports {
		hist = append(hist, e.Report.Implementation.Version)
	}
	if strings.Join(hist, " ") != "0.9.0 0.10.0" {
		t.Errorf("history %v, want 0.9.0 0.10.0", hist)
	}
	if len(b.Skipped) != 1 || !strings.HasPrefix(b.Skipped[0], "fuzz.json: no suite_version") {
		t.Errorf("skipped %q", b.Skipped)
	}
	if b.Implementations[0].Slug != "other-b" {
		t.Errorf("slug %q", b.Implementations[0].Slug)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(fstest.MapFS{"a/bad.json": {Data: []byte(`{"scores":`)}}, ".")
	var re *ReportError
	if !errors.As(err, &re) || re.Path != "a/bad.json" || !strings.Contains(re.Reason, "not a JSON object") {
		t.Errorf("malformed file: %v", err)
	}
	_, err = Load(fstest.MapFS{"x.json": {Data: []byte(`{"suite_version":"1","scores":"many"}`)}}, ".")
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "not a conformance report") {
		t.Errorf("wrong field type: %v", err)
	}
	_, err = Load(fstest.MapFS{"x.json": {Data: []byte(`{"a":1}`)}, "y.txt": {}}, ".")
	if !errors.Is(err, ErrNoReports) {
		t.Errorf("no report: %v", err)
	}
	_, err = Load(fstest.MapFS{"big.json": {Data: make([]byte, MaxReportSize+1)}}, ".")
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "more than") {
		t.Errorf("oversized file: %v", err)
	}
}

// TestSuitesNeverMixed: the index has one table per suite version, and a
// row's MUST score is that of its latest report under that suite alone;
// the badge has a segment per suite version.
func TestSuitesNeverMixed(t *testing.T) {
	site := build(t)
	index := read(t, site, "index.html")
	if n := strings.Count(index, `<section class="suite"`); n != 2 {
		t.Fatalf("%d suite tables, want 2", n)
	}
	live := index[strings.Index(index, "live checker live-1"):]
	lib := index[:strings.Index(index, "live checker live-1")]
	// srv's latest live report (0.10.0): 2 of 2 MUST results pass; its
	// library report: 1 of 2. Added up they would read 3/4.
	if !strings.Contains(live, `<td class="num score ok">3/3</td>`) || strings.Contains(index, "4/5") {
		t.Errorf("live table does not show srv's latest live MUST score 3/3:\n%s", live)
	}
	if !strings.Contains(lib, `<td class="num score bad">1/2</td>`) {
		t.Errorf("library table does not show srv's MUST score 1/2:\n%s", lib)
	}
	badge := read(t, site, "badges/srv.svg")
	if !strings.Contains(badge, "0.1.0 MUST 1/2") || !strings.Contains(badge, "live-1 MUST 3/3") ||
		!strings.Contains(badge, "#c62828") || !strings.Contains(badge, "#2e7d32") {
		t.Errorf("badge:\n%s", badge)
	}
	page := read(t, site, "impl/srv.html")
	if n := strings.Count(page, `<svg class="history"`); n != 2 {
		t.Errorf("%d history charts, want one per suite version", n)
	}
	// The live history: MUST 2/3 (67%) then 3/3 (100%), in version order.
	if !strings.Contains(page, "0.9.0 (0.9.0) MUST: 2/3") || strings.Index(page, "0.9.0 (0.9.0) MUST") > strings.Index(page, "0.10.0 (0.10.0) MUST") {
		t.Errorf("history chart points:\n%s", page)
	}
}

// TestIndexCellsLinkToEvidence: a cell counts the requirements of its
// group that passed and links to the group's rows in the report's page.
func TestIndexCellsLinkToEvidence(t *testing.T) {
	site := build(t)
	index := read(t, site, "index.html")
	want := `<a href="reports/srv/srv-0-9-0.html#group-RET" title="RET: 0 of 1 requirements passed, 1 failed">0/1</a>`
	if strings.Contains(index, want) {
		t.Errorf("index links the older report: %s", want)
	}
	for _, w := range []string{
		`href="reports/srv/srv-0-10-0.html#group-RET"`, `href="reports/srv/srv-lib.html#group-CORE"`,
		`title="CORE: 0 of 1 requirements passed, 1 failed">0/1</a>`,
	} {
		if !strings.Contains(index, w) {
			t.Errorf("index lacks %s", w)
		}
	}
	if strings.Contains(index, "other <b>") || !strings.Contains(index, "other &lt;b&gt;") {
		t.Error("an implementation's name is not escaped")
	}
}

var linkRE = regexp.MustCompile(`(?:href|src)="([^"]+)"`)

// TestSiteLinksResolve: every link between the site's pages names a file
// the site has, and an anchor that page has; no page has a script.
// The board holds names with a slash, spaces, quotes, a tag, Unicode
// and 300 characters, two reports of one version, and a report in a
// nested directory; a link out of the site must be to the spec.
func TestSiteLinksResolve(t *testing.T) {
	fsys := board(t)
	for i, name := range []string{"ojs retry/python", `<script>alert("x")</script> 'q'`, "ретрай ✓ 日本", strings.Repeat("long-name ", 30), "Srv"} {
		v := map[string][]conformance.Status{"RET-01": {pass, fail}, "DLQ-001": {pass}, "RK-113": {fail}}
		fsys[fmt.Sprintf("odd/%d/a.json", i)] = &fstest.MapFile{Data: report(t, name, "1", "0.1.0", v)}
		fsys[fmt.Sprintf("odd/%d/b c.json", i)] = &fstest.MapFile{Data: report(t, name, "1", "0.1.0", map[string][]conformance.Status{"RET-02": {pass}})}
	}
	site := buildFrom(t, fsys)
	pages := map[string]string{}
	err := filepath.WalkDir(site, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".html") {
			b, err := os.ReadFile(p)
			pages[p] = string(b)
			return err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for p, s := range pages {
		if strings.Contains(s, "<script") {
			t.Errorf("%s has a script", p)
		}
		if !strings.Contains(html.UnescapeString(s), `<meta http-equiv="Content-Security-Policy" content="`+conformance.ReportPolicy+`">`) {
			t.Errorf("%s has no Content-Security-Policy forbidding scripts", p)
		}
		for _, m := range linkRE.FindAllStringSubmatch(s, -1) {
			ref := html.UnescapeString(m[1])
			u, err := url.Parse(ref)
			if err != nil {
				t.Errorf("%s links %q: %v", p, ref, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				if !strings.HasPrefix(ref, "https://github.com/openjobspec/spec/blob/main/spec/") {
					t.Errorf("%s links %s: out of the site, and not the spec", p, ref)
				}
				continue
			}
			target := p
			if u.Path != "" {
				target = filepath.Join(filepath.Dir(p), filepath.FromSlash(u.Path))
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s: no such file", p, m[1])
				continue
			}
			if u.Fragment != "" && !strings.Contains(html.UnescapeString(pages[target]), `id="`+u.Fragment+`"`) {
				t.Errorf("%s links %s: no such anchor", p, m[1])
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d links checked", checked)
	}
}

// TestVersionOrderIsTotal: versionCompare is antisymmetric and
// transitive, and equal only for equal strings up to leading zeros.
func TestVersionOrderIsTotal(t *testing.T) {
	gen := rapid.StringMatching(`[0-9a-cgr.\-]{0,10}`)
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := gen.Draw(t, "a"), gen.Draw(t, "b"), gen.Draw(t, "c")
		if versionCompare(a, b) != -versionCompare(b, a) {
			t.Fatalf("not antisymmetric: %q %q", a, b)
		}
		if versionCompare(a, b) <= 0 && versionCompare(b, c) <= 0 && versionCompare(a, c) > 0 {
			t.Fatalf("not transitive: %q %q %q", a, b, c)
		}
		if versionCompare(a, a) != 0 {
			t.Fatalf("%q unequal to itself", a)
		}
	})
	for _, c := range [][2]string{{"0.9.0", "0.10.0"}, {"1.0.0-rc.1", "1.0.0-rc.2"}, {"v1", "v10"}, {"1", "1.0"},
		// SemVer: a pre-release (a "-" then a letter) comes before its
		// release; git describe's "-N-gHASH" after its tag.
		{"1.0.0-rc.1", "1.0.0"}, {"1.0.0-alpha", "1.0.0-beta"}, {"1.0.0-beta.2", "1.0.0-beta.10"}, {"v2.0.0-rc.1", "v2.0.0"},
		{"0.9.9", "1.0.0-rc.1"}, {"0.1.0", "0.1.0-3-gabc1234"}, {"0.1.0-3-gabc1234", "0.1.1-rc.1"}} {
		if versionCompare(c[0], c[1]) >= 0 {
			t.Errorf("%q not before %q", c[0], c[1])
		}
	}
}

func FuzzVersionCompare(f *testing.F) {
	for _, s := range []string{"0.9.0", "0.10.0", "1.0.0-rc.1", "", "007", "v2"} {
		f.Add(s, "0.10.0")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if versionCompare(a, b) != -versionCompare(b, a) {
			t.Fatalf("not antisymmetric: %q %q", a, b)
		}
		_ = slug(a)
	})
}

func build(t *testing.T) string { return buildFrom(t, board(t)) }

// buildFrom loads the reports of fsys and writes their site to a
// temporary directory, which it returns.
func buildFrom(t *testing.T, fsys fstest.MapFS) string {
	t.Helper()
	b, err := Load(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(b, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzLoadAndWrite: any file content is loaded or refused with an error
// naming the file, and whatever loads is written without a panic.
func FuzzLoadAndWrite(f *testing.F) {
	f.Add(report(f, "srv", "0.9.0", "live-1", map[string][]conformance.Status{"RET-01": {pass, fail}, "RK-113": {fail}}))
	f.Add([]byte(`{"suite_version":"x","scores":[{"name":"MUST","pass":-1}],"requirements":[{"name":""}],"causes":[{"class":"c","ids":["a"]}]}`))
	f.Add([]byte(`{"suite_version":"","scores":[{}],"implementation":{"implementation":"../../x"}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Load(fstest.MapFS{"r.json": {Data: data}}, ".")
		if err != nil {
			var re *ReportError
			if !errors.As(err, &re) && !errors.Is(err, ErrNoReports) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		if err := Write(b, dir); err != nil {
			t.Fatalf("write: %v", err)
		}
	})
}

// TestInteropTableShown: an interop table file is shown on the index as
// it is, one row per client, and takes no part in any score; one without
// rows is refused.
func TestInteropTableShown(t *testing.T) {
	fsys := board(t)
	fsys["sdk-interop.json"] = &fstest.MapFile{Data: []byte(`{"kind":"sdk-interop","against":"retrykit serve","source":"docs/servers.md",
		"rows":[{"name":"Go <sdk>","works":"everything","fails":"— (no rate_limit)"},{"name":"Py","works":"errors","fails":"every answer unparsed"},{"name":"Java","works":"not tried","fails":"no JDK 21"}]}`)}
	b, err := Load(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Interop) != 1 || len(b.Implementations) != 2 {
		t.Fatalf("interop %d, implementations %d", len(b.Interop), len(b.Implementations))
	}
	dir := t.TempDir()
	if err := Write(b, dir); err != nil {
		t.Fatal(err)
	}
	index := read(t, dir, "index.html")
	for _, want := range []string{"Clients against retrykit serve", `<td class="cell ok">Go &lt;sdk&gt;</td>`,
		`<td class="cell bad">Py</td>`, `<td class="cell none">Java</td>`, "every answer unparsed"} {
		if !strings.Contains(index, want) {
			t.Errorf("index lacks %s", want)
		}
	}
	_, err = Load(fstest.MapFS{"i.json": {Data: []byte(`{"kind":"sdk-interop","rows":[]}`)}}, ".")
	var re *ReportError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "without rows") {
		t.Errorf("empty table: %v", err)
	}
}

// TestLoadKeepsEverySuiteVersionApart: whatever reports a directory holds,
// each history (Series) holds the reports of one suite version only, one
// series per version and implementation, and no report is lost or counted
// twice; live-1 and live-2 (or 0.1.0 and 0.2.0) of one implementation are
// two histories.
func TestLoadKeepsEverySuiteVersionApart(tt *testing.T) {
	suites := []string{"0.1.0", "0.2.0", "live-1", "live-2"}
	rapid.Check(tt, func(t *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(t, "n")
		fsys := fstest.MapFS{}
		for i := range n {
			name := rapid.SampledFrom([]string{"a", "b"}).Draw(t, "name")
			suite := rapid.SampledFrom(suites).Draw(t, "suite")
			// versions differ: byte-identical files are one report (a copy)
			fsys["r/"+string(rune('a'+i))+".json"] = &fstest.MapFile{Data: report(tt, name, "1."+string(rune('a'+i)), suite,
				map[string][]conformance.Status{"RET-01": {conformance.StatusPass}})}
		}
		b, err := Load(fsys, "r")
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, im := range b.Implementations {
			seen := map[string]bool{}
			for _, s := range im.Suites {
				if seen[s.Suite] {
					t.Fatalf("%s: two histories of suite %s", im.Name, s.Suite)
				}
				seen[s.Suite] = true
				for _, e := range s.Reports {
					if e.Report.SuiteVersion != s.Suite || e.Report.Implementation.Implementation != im.Name {
						t.Fatalf("%s: report %s (%s, suite %s) in the history of suite %s", im.Name, e.Path,
							e.Report.Implementation.Implementation, e.Report.SuiteVersion, s.Suite)
					}
					total++
				}
			}
		}
		if total != n {
			t.Fatalf("%d reports in the histories, %d written", total, n)
		}
	})
}

// TestLoadLeavesOutValidJSONOfAnotherShape: any valid JSON that is not a
// report (an array, a string, null, an object of another tool) is left
// out with the reason, whatever its shape; JSON cut short is an error
// naming the file.
func TestLoadLeavesOutValidJSONOfAnotherShape(t *testing.T) {
	fsys := board(t)
	for name, data := range map[string]string{"arr.json": `[1,2]`, "str.json": `"x"`, "null.json": `null`, "num.json": `3`} {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	b, err := Load(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	left := strings.Join(b.Skipped, "\n")
	for _, name := range []string{"arr.json: a JSON array", "str.json: a JSON string", "null.json: no suite_version", "num.json: a JSON number", "fuzz.json: no suite_version"} {
		if !strings.Contains(left, name) {
			t.Errorf("left out:\n%s\nlacks %s", left, name)
		}
	}
	fsys["cut.json"] = &fstest.MapFile{Data: report(t, "srv", "0.11.0", "live-1", map[string][]conformance.Status{"RET-01": {pass}})[:100]}
	_, err = Load(fsys, ".")
	var re *ReportError
	if !errors.As(err, &re) || re.Path != "cut.json" || !strings.Contains(re.Reason, "unexpected end of JSON input") {
		t.Errorf("a report cut short: %v", err)
	}
}

// TestLoadLeavesOutACopyOfAReport: the same report twice (a copy in a
// sub-directory, a symbolic link to it) is one run: it shows once in the
// history, the other path listed as left out; a symbolic link to a
// directory is not followed.
func TestLoadLeavesOutACopyOfAReport(t *testing.T) {
	dir := t.TempDir()
	data := report(t, "srv", "0.9.0", "live-1", map[string][]conformance.Status{"RET-01": {pass, fail}})
	other := report(t, "srv", "0.10.0", "live-1", map[string][]conformance.Status{"RET-01": {pass}})
	for name, b := range map[string][]byte{"a/0.9.0.json": data, "b/c/copy.json": data, "a/0.10.0.json": other} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a", "0.9.0.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	b, err := Load(os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Implementations) != 1 || len(b.Implementations[0].Suites) != 1 {
		t.Fatalf("board: %+v", b.Implementations)
	}
	var paths []string
	for _, e := range b.Implementations[0].Suites[0].Reports {
		paths = append(paths, e.Path)
	}
	if strings.Join(paths, " ") != "a/0.9.0.json a/0.10.0.json" {
		t.Errorf("history %v, want a/0.9.0.json a/0.10.0.json", paths)
	}
	left := strings.Join(b.Skipped, "\n")
	for _, w := range []string{"b/c/copy.json: the same bytes as a/0.9.0.json", "link.json: the same bytes as a/0.9.0.json"} {
		if !strings.Contains(left, w) {
			t.Errorf("left out:\n%s\nlacks %s", left, w)
		}
	}
}

// TestLoadRefusesScoresItsResultsDoNotGive: a report whose scores, totals
// or per-requirement counts were edited (or whose results were cut) is an
// error naming the file and the level, never shown with the score it
// claims.
func TestLoadRefusesScoresItsResultsDoNotGive(t *testing.T) {
	edit := func(f func(r *conformance.Report)) []byte {
		var r conformance.Report
		if err := json.Unmarshal(report(t, "srv", "1", "live-1", map[string][]conformance.Status{"RET-01": {pass, fail}, "RK-113": {pass}}), &r); err != nil {
			t.Fatal(err)
		}
		f(&r)
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"must-edited":      {edit(func(r *conformance.Report) { r.Scores[0].Pass, r.Scores[0].Fail = 2, 0 }), "its MUST score (pass 2, fail 0"},
		"results-cut":      {edit(func(r *conformance.Report) { r.Results = r.Results[:1] }), "score"},
		"negative":         {edit(func(r *conformance.Report) { r.Scores[2].Pass = -1 }), "its RK score (pass -1"},
		"totals-edited":    {edit(func(r *conformance.Report) { r.Totals.Fail = 0 }), "its totals"},
		"requirement":      {edit(func(r *conformance.Report) { r.Requirements[0].Fail = 0 }), "requirement \"RET-01\""},
		"requirement-gone": {edit(func(r *conformance.Report) { r.Requirements = r.Requirements[1:] }), "no row in requirements"},
	} {
		_, err := Load(fstest.MapFS{name + ".json": {Data: c.data}}, ".")
		var re *ReportError
		if !errors.As(err, &re) || re.Path != name+".json" || !strings.Contains(re.Reason, c.want) {
			t.Errorf("%s: %v, want an error naming the file and %q", name, err, c.want)
		}
	}
	if _, err := Load(fstest.MapFS{"ok.json": {Data: edit(func(*conformance.Report) {})}}, "."); err != nil {
		t.Errorf("an unedited report: %v", err)
	}
}

// TestBadgeIsWellFormedXMLForAnyName: whatever the implementation's name
// and suite version hold (tags, quotes, control characters, any Unicode),
// the badge parses as XML and its texts carry the scores.
func TestBadgeIsWellFormedXMLForAnyName(tt *testing.T) {
	rapid.Check(tt, func(t *rapid.T) {
		name := rapid.String().Draw(t, "name")
		suite := rapid.StringOf(rapid.RuneFrom(nil, unicode.Cc, unicode.L, unicode.P, unicode.S)).Draw(t, "suite")
		var r conformance.Report
		if err := json.Unmarshal(report(tt, name, "1", suite, map[string][]conformance.Status{"RET-01": {pass}}), &r); err != nil {
			t.Fatal(err)
		}
		im := &Implementation{Name: name, Suites: []*Series{{Suite: suite, Reports: []*Entry{{Path: "r.json", Report: &r}}}}}
		svg := Badge(im)
		dec := xml.NewDecoder(strings.NewReader(svg))
		var texts []string
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("badge of %q, suite %q: not XML: %v\n%s", name, suite, err, svg)
			}
			if c, ok := tok.(xml.CharData); ok {
				texts = append(texts, string(c))
			}
		}
		if !strings.Contains(strings.Join(texts, " "), "MUST 1/1") {
			t.Fatalf("badge texts %q lack MUST 1/1", texts)
		}
	})
}

// TestReleaseIsLatestAfterItsCandidate: reports of 1.0.0-rc.1 and 1.0.0
// (in either file order): the history runs rc.1 then 1.0.0, and the index
// row and the badge show the release's score, not the candidate's.
func TestReleaseIsLatestAfterItsCandidate(t *testing.T) {
	fsys := fstest.MapFS{
		"a.json": {Data: report(t, "srv", "1.0.0", "live-2", map[string][]conformance.Status{"RET-01": {pass, pass}})},
		"b.json": {Data: report(t, "srv", "1.0.0-rc.1", "live-2", map[string][]conformance.Status{"RET-01": {pass, fail}})},
	}
	b, err := Load(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	s := b.Implementations[0].Suites[0]
	if got := s.Latest().Report.Implementation.Version; got != "1.0.0" || s.Reports[0].Report.Implementation.Version != "1.0.0-rc.1" {
		t.Errorf("history %s then %s, want 1.0.0-rc.1 then 1.0.0", s.Reports[0].Report.Implementation.Version, got)
	}
	if badge := Badge(b.Implementations[0]); !strings.Contains(badge, "live-2 MUST 2/2") {
		t.Errorf("badge shows another report than 1.0.0's:\n%s", badge)
	}
}

// TestPartialRunIsMarkedPartial: a report of a run that selected part of
// the suite (--run, --requirement) shows as partial on the index, in the
// history and on the badge, so its MUST 2/2 does not read as the whole
// suite's; a spec-only run is not partial.
func TestPartialRunIsMarkedPartial(t *testing.T) {
	edit := func(notSelected int, specOnly bool) []byte {
		var r conformance.Report
		if err := json.Unmarshal(report(t, "srv", "1", "live-2", map[string][]conformance.Status{"RET-01": {pass, pass}}), &r); err != nil {
			t.Fatal(err)
		}
		r.NotSelected, r.SpecOnly = notSelected, specOnly
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		notSelected int
		specOnly    bool
		partial     bool
	}{{57, false, true}, {0, false, false}, {30, true, false}} {
		site := buildFrom(t, fstest.MapFS{"r.json": {Data: edit(c.notSelected, c.specOnly)}})
		index, page, badge := read(t, site, "index.html"), read(t, site, "impl/srv.html"), read(t, site, "badges/srv.svg")
		marked := strings.Contains(index, `title="partial: 57 vectors not selected`) &&
			strings.Count(page, `<span class="partial"`) == 1 && strings.Contains(page, "its scores are not those of the whole suite") &&
			strings.Contains(badge, "live-2 MUST 2/2 (partial)")
		if marked != c.partial || (!c.partial && (strings.Contains(index+page, `class="partial"`) || strings.Contains(badge, "(partial)"))) {
			t.Errorf("not_selected %d, spec_only %v: marked partial %v, want %v", c.notSelected, c.specOnly, marked, c.partial)
		}
	}
}

// TestWideBadgeFitsAPhone: a badge of four suite versions is wider than a
// phone (390 px); on the implementation's page it is scaled to the width
// (max-width 100%, height kept in proportion), not cut off.
func TestWideBadgeFitsAPhone(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, suite := range []string{"0.1.0", "0.2.0", "0.3.0", "live-2"} {
		fsys[suite+".json"] = &fstest.MapFile{Data: report(t, "srv", "1", suite, map[string][]conformance.Status{"RET-01": {pass}})}
	}
	site := buildFrom(t, fsys)
	m := regexp.MustCompile(`<svg [^>]*width="(\d+)"`).FindStringSubmatch(read(t, site, "badges/srv.svg"))
	if m == nil || len(m[1]) < 3 || m[1] < "390" {
		t.Fatalf("badge width %v, want above 390 px for this test", m)
	}
	page := read(t, site, "impl/srv.html")
	if !strings.Contains(page, `<p class="badges"><img`) || !strings.Contains(page, "p.badges img{max-width:100%;height:auto}") {
		t.Errorf("the page's badge is not scaled to the width")
	}
}

// TestBadgeSnippetKeepsAnyNameInItsAltText: the README snippet on an
// implementation's page stays one Markdown image whatever the name holds
// ("]", "[", "\\", a line break): the alt text is escaped.
func TestBadgeSnippetKeepsAnyNameInItsAltText(t *testing.T) {
	name := "a]b[c\\d\ne"
	site := buildFrom(t, fstest.MapFS{"r.json": {Data: report(t, name, "1", "0.2.0", map[string][]conformance.Status{"RET-01": {pass}})}})
	page := html.UnescapeString(read(t, site, "impl/a-b-c-d-e.html"))
	if want := `![OJS conformance: a\]b\[c\\d e](badges/a-b-c-d-e.svg)`; !strings.Contains(page, want) {
		t.Errorf("page lacks the snippet %s", want)
	}
}

// TestSitePublishesEachReportAsRead: the JSON the site links for a report
// is the file's bytes, with the fields of a later suite this build does
// not know, not a re-encoding of what it understood.
func TestSitePublishesEachReportAsRead(t *testing.T) {
	data := report(t, "srv", "1", "9.0.0", map[string][]conformance.Status{"RET-01": {pass}})
	data = append([]byte(`{"later_field":{"x":1},`), data[1:]...)
	site := buildFrom(t, fstest.MapFS{"r.json": {Data: data}})
	if got := read(t, site, "reports/srv/r.json"); got != string(data) {
		t.Errorf("the site's copy differs from the file:\n%.200s", got)
	}
}
