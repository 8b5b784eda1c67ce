package scoreboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/retrykit/retrykit/conformance"
)

// MaxReportSize bounds one report file: the largest report the suite
// writes (every vector of the library suite, want and got each) is about
// 1 MB.
const MaxReportSize = 32 << 20

// ErrNoReports is matched by the error of [Load] when the directory holds
// no conformance report.
var ErrNoReports = errors.New("scoreboard: no conformance report found")

// ReportError is the error of [Load] for a file that is not a readable
// report: its path in the directory and why.
type ReportError struct {
	Path   string
	Reason string
}

func (e *ReportError) Error() string { return "scoreboard: " + e.Path + ": " + e.Reason }

// Board is what [Load] read: the implementations, each with its reports by
// suite version.
type Board struct {
	Implementations []*Implementation
	// Interop holds the interop tables found (files of kind
	// "sdk-interop"), in path order.
	Interop []*Interop
	// Skipped lists the JSON files that are neither conformance reports
	// (no suite_version or no scores) nor interop tables, with why; they
	// take no part.
	Skipped []string
}

// Interop is a table of how clients (the official SDKs) fared against a
// server, tried by hand: a JSON file {"kind": "sdk-interop", "against":
// …, "source": …, "rows": [{"name", "works", "fails"}]}. It has no score;
// the index shows it as it is.
type Interop struct {
	Path    string       `json:"-"`
	Kind    string       `json:"kind"`
	Against string       `json:"against"` // what they ran against: "retrykit serve"
	Source  string       `json:"source"`  // where the table comes from: "docs/servers.md"
	Date    string       `json:"date,omitempty"`
	Rows    []InteropRow `json:"rows"`
}

// InteropRow is one client: what works and what fails (empty, or
// beginning with "—", for nothing; "not tried" in Works for a client not
// tried).
type InteropRow struct {
	Name  string `json:"name"`
	Works string `json:"works"`
	Fails string `json:"fails"`
}

// Class returns "ok" when nothing failed, "none" when the client was not
// tried, else "bad".
func (r InteropRow) Class() string {
	switch {
	case strings.TrimSpace(r.Works) == "not tried":
		return "none"
	case strings.TrimSpace(r.Fails) == "" || strings.HasPrefix(strings.TrimSpace(r.Fails), "—"):
		return "ok"
	}
	return "bad"
}

// Implementation is every report of one implementation (the name in the
// reports' implementation.implementation), by suite version.
type Implementation struct {
	Name   string
	Slug   string    // file name stem of its pages, unique on the board
	Suites []*Series // by suite version, in [suiteLess] order
}

// Series is the history of one implementation under one suite version:
// its reports in history order (version, then file path).
type Series struct {
	Suite   string
	Reports []*Entry
}

// Latest returns the last report of the history.
func (s *Series) Latest() *Entry { return s.Reports[len(s.Reports)-1] }

// Entry is one report file.
type Entry struct {
	Path   string // slash-separated, relative to the directory read
	Stem   string // file name stem of its pages, unique within the implementation
	Report *conformance.Report
	raw    []byte // the file's bytes, which the site publishes as they are
}

// Label returns how history shows the entry: the implementation's version
// and the file's name.
func (e *Entry) Label() string {
	v := e.Report.Implementation.Version
	base := strings.TrimSuffix(path.Base(e.Path), ".json")
	if v == "" {
		return base
	}
	return v + " (" + base + ")"
}

// Partial returns why the entry's scores are not those of the whole suite
// ("partial: 981 vectors not selected"), or "" when every vector was
// selected. A spec-only run (--spec-only) leaves out the SHOULD and RK
// levels, which its scores show as not judged, and is not partial.
func (e *Entry) Partial() string {
	if e.Report.NotSelected <= 0 || e.Report.SpecOnly {
		return ""
	}
	return fmt.Sprintf("partial: %d vectors not selected (--run, --requirement or --flag)", e.Report.NotSelected)
}

// Load reads every file ending in ".json" under root (sub-directories
// included) of fsys. A file that decodes as a conformance report (it has
// suite_version and scores) joins its implementation's history; other
// valid JSON files, and a file with the same bytes as one read before (a
// copy, or a symbolic link to it), are listed in Board.Skipped. A file
// that cannot be read, is not valid JSON, or is a report whose scores are
// not those its results give is an error (*ReportError, naming the file),
// as is a directory with no report (ErrNoReports). Symbolic links to
// directories are not followed.
func Load(fsys fs.FS, root string) (*Board, error) {
	b := &Board{}
	byName := map[string]*Implementation{}
	seen := map[[sha256.Size]byte]string{}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		info, err := d.Info()
		if err != nil {
			return &ReportError{Path: rel, Reason: err.Error()}
		}
		if info.Size() > MaxReportSize {
			return &ReportError{Path: rel, Reason: fmt.Sprintf("%d bytes, more than the %d a report can have", info.Size(), MaxReportSize)}
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return &ReportError{Path: rel, Reason: err.Error()}
		}
		sum := sha256.Sum256(data)
		if first, ok := seen[sum]; ok {
			// A copy, or a symbolic link to a report already read: one
			// run, which would show twice in the history.
			b.Skipped = append(b.Skipped, rel+": the same bytes as "+first)
			return nil
		}
		seen[sum] = rel
		rep, why, err := decode(data)
		if err != nil {
			return &ReportError{Path: rel, Reason: err.Error()}
		}
		if why == interopKind {
			var t Interop
			if err := json.Unmarshal(data, &t); err != nil {
				return &ReportError{Path: rel, Reason: "not an interop table: " + err.Error()}
			}
			if len(t.Rows) == 0 {
				return &ReportError{Path: rel, Reason: "an interop table without rows"}
			}
			t.Path = rel
			b.Interop = append(b.Interop, &t)
			return nil
		}
		if rep == nil {
			b.Skipped = append(b.Skipped, rel+": "+why)
			return nil
		}
		name := rep.Implementation.Implementation
		if name == "" {
			name = "(unnamed)"
		}
		im := byName[name]
		if im == nil {
			im = &Implementation{Name: name}
			byName[name] = im
			b.Implementations = append(b.Implementations, im)
		}
		var s *Series
		for _, x := range im.Suites {
			if x.Suite == rep.SuiteVersion {
				s = x
			}
		}
		if s == nil {
			s = &Series{Suite: rep.SuiteVersion}
			im.Suites = append(im.Suites, s)
		}
		s.Reports = append(s.Reports, &Entry{Path: rel, Report: rep, raw: data})
		return nil
	})
	if err != nil {
		var re *ReportError
		if errors.As(err, &re) {
			return nil, err
		}
		return nil, fmt.Errorf("scoreboard: reading %s: %w", root, err)
	}
	if len(b.Implementations) == 0 && len(b.Interop) == 0 {
		return nil, fmt.Errorf("%w in %s (files of `retrykit conformance --format json`)", ErrNoReports, root)
	}
	sort.Slice(b.Implementations, func(i, j int) bool { return b.Implementations[i].Name < b.Implementations[j].Name })
	slugs := map[string]bool{}
	for _, im := range b.Implementations {
		im.Slug = unique(slug(im.Name), slugs)
		sort.Slice(im.Suites, func(i, j int) bool { return suiteLess(im.Suites[i].Suite, im.Suites[j].Suite) })
		stems := map[string]bool{}
		for _, s := range im.Suites {
			sort.SliceStable(s.Reports, func(i, j int) bool {
				a, c := s.Reports[i], s.Reports[j]
				if v := versionCompare(a.Report.Implementation.Version, c.Report.Implementation.Version); v != 0 {
					return v < 0
				}
				return a.Path < c.Path
			})
			for _, e := range s.Reports {
				e.Stem = unique(slug(strings.TrimSuffix(e.Path, ".json")), stems)
			}
		}
	}
	return b, nil
}

// interopKind is the kind of an interop table file.
const interopKind = "sdk-interop"

// decode returns the report in data (or, for an interop table, nil and
// interopKind), or nil and why data is JSON but no
// conformance report, or an error when data is not one JSON object.
func decode(data []byte) (*conformance.Report, string, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Valid JSON of another shape (an array, a string): some
			// other tool's file, left out as an object without
			// suite_version is.
			return nil, "a JSON " + te.Value + ", not a conformance report", nil
		}
		return nil, "", fmt.Errorf("not a JSON object: %v", err)
	}
	if k, ok := probe["kind"]; ok && string(k) == `"`+interopKind+`"` {
		return nil, interopKind, nil
	}
	if _, ok := probe["suite_version"]; !ok {
		return nil, "no suite_version: not a conformance report", nil
	}
	if _, ok := probe["scores"]; !ok {
		return nil, "no scores: not a conformance report", nil
	}
	var rep conformance.Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rep); err != nil {
		return nil, "", fmt.Errorf("not a conformance report: %v", err)
	}
	if len(rep.Scores) == 0 {
		return nil, "empty scores: not a conformance report", nil
	}
	if err := checkTally(&rep); err != nil {
		return nil, "", err
	}
	return &rep, "", nil
}

// checkTally returns an error when the scores, totals or per-requirement
// counts of rep are not those its results and not-run entries give
// (conformance's own tally, [conformance.Report.Tally], run on a copy): a
// report edited by hand or cut short, whose scores the board would
// otherwise show as they are.
func checkTally(rep *conformance.Report) error {
	c := *rep
	c.Results = append([]conformance.Result(nil), rep.Results...)
	c.NotRun = append([]conformance.Uncovered(nil), rep.NotRun...)
	c.Requirements = nil
	c.Tally(nil)
	for i, s := range c.Scores {
		if i >= len(rep.Scores) || rep.Scores[i] != s {
			got := "none"
			if i < len(rep.Scores) {
				got = countsText(rep.Scores[i].Counts)
			}
			return fmt.Errorf("its %s score (%s) is not what its %d results and %d not run give (%s)",
				s.Name, got, len(rep.Results), len(rep.NotRun), countsText(s.Counts))
		}
	}
	if len(rep.Scores) != len(c.Scores) {
		return fmt.Errorf("%d scores, want %d (MUST, SHOULD, RK)", len(rep.Scores), len(c.Scores))
	}
	if rep.Totals != c.Totals {
		return fmt.Errorf("its totals (%s) are not what its results give (%s)", countsText(rep.Totals), countsText(c.Totals))
	}
	want := map[string]conformance.Counts{}
	for _, s := range c.Requirements {
		want[s.Name] = s.Counts
	}
	for _, s := range rep.Requirements {
		w, ok := want[s.Name]
		if !ok || w != s.Counts {
			return fmt.Errorf("requirement %q: its counts (%s) are not what its results give (%s)", s.Name, countsText(s.Counts), countsText(w))
		}
		delete(want, s.Name)
	}
	for name := range want {
		return fmt.Errorf("requirement %q has results but no row in requirements", name)
	}
	return nil
}

func countsText(c conformance.Counts) string {
	return fmt.Sprintf("pass %d, fail %d, error %d, skip %d, not run %d", c.Pass, c.Fail, c.Error, c.Skip, c.NotRun)
}

// slug returns s in lower case with every run of characters other than
// letters and digits made one "-", at most 60 bytes: a file name on every
// system.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 60 {
				break
			}
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// unique returns s, or s with "-2", "-3", … when taken has it, and marks
// the result taken.
func unique(s string, taken map[string]bool) string {
	out := s
	for i := 2; taken[out]; i++ {
		out = s + "-" + strconv.Itoa(i)
	}
	taken[out] = true
	return out
}

// suiteLess orders suite versions: the library suite's (a release
// number) before the live checker's ("live-N"), each by version.
func suiteLess(a, b string) bool {
	la, lb := strings.HasPrefix(a, "live"), strings.HasPrefix(b, "live")
	if la != lb {
		return lb
	}
	if c := versionCompare(a, b); c != 0 {
		return c < 0
	}
	return a < b
}

// versionCompare compares two version strings by their runs of digits as
// numbers and everything else as text ("0.10.0" after "0.9.1", "v2" after
// "v1"), a pre-release before its release as SemVer has it: the text from
// the first "-" followed by a letter ("1.0.0-rc.1", "2.0.0-beta") is a
// pre-release, compared only between versions of equal release part, and a
// version without one comes after ("1.0.0" after "1.0.0-rc.1"). A "-"
// followed by a digit is no pre-release ("0.1.0-3-gabc" of git describe
// comes after "0.1.0"). Returns -1, 0 or +1.
func versionCompare(a, b string) int {
	ra, pa, hasA := splitPrerelease(a)
	rb, pb, hasB := splitPrerelease(b)
	if c := plainCompare(ra, rb); c != 0 {
		return c
	}
	switch {
	case hasA && !hasB:
		return -1
	case hasB && !hasA:
		return 1
	}
	return plainCompare(pa, pb)
}

// splitPrerelease splits v at its first "-" followed by an ASCII letter:
// the release part, the pre-release after the "-", and whether there was
// one.
func splitPrerelease(v string) (release, pre string, ok bool) {
	for i := 0; i+1 < len(v); i++ {
		if c := v[i+1] | 0x20; v[i] == '-' && c >= 'a' && c <= 'z' {
			return v[:i], v[i+1:], true
		}
	}
	return v, "", false
}

// plainCompare is versionCompare without pre-releases: runs of digits as
// numbers, the rest as text, a prefix first.
func plainCompare(a, b string) int {
	for a != "" && b != "" {
		da, ra := leadingDigits(a)
		db, rb := leadingDigits(b)
		switch {
		case da != "" && db != "":
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			if na != nb {
				return strings.Compare(na, nb)
			}
			a, b = ra, rb
		case da != "" || db != "":
			if da != "" {
				return -1
			}
			return 1
		default:
			if a[0] != b[0] {
				return cmpInt(int(a[0]), int(b[0]))
			}
			a, b = a[1:], b[1:]
		}
	}
	return cmpInt(len(a), len(b))
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
