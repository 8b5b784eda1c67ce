package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"github.com/retrykit/retrykit/internal/mdtext"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/internal/bounded"
)

// profileVectors is the part of a testdata/profiles file the runner needs.
type profileVectors struct {
	Profile string `json:"profile"`
	// Settings is the configured profile the vectors are for
	// (NAME:key=value,...), when not the bare name.
	Settings string `json:"settings"`
	Vectors  []struct {
		ID      string    `json:"id"`
		Kind    string    `json:"kind"`
		Attempt int64     `json:"attempt"`
		Rand    *float64  `json:"rand"`
		Rands   []float64 `json:"rands"`
		DelayNS *int64    `json:"delay_ns"`
		MinNS   *int64    `json:"min_ns"`
		MaxNS   *int64    `json:"max_ns"`
		Note    string    `json:"note"`
	} `json:"vectors"`
}

// topDraw is the largest float64 below 1, the draw that reaches a bound's
// top.
const topDraw = 0x1.fffffffffffffp-1

// opaqueSamples is how many undrawn answers a bounds vector checks when the
// adapter's jitter is opaque.
const opaqueSamples = 20

// profileTally counts one profile's vectors.
type profileTally struct {
	passed, failed, notRun int
}

// runProfileVectors sends the profile vectors of dir (the embedded suite
// when dir is "") to impl as delay requests with a profile (PROTOCOL.md
// 3.4.1) and writes a report in format (text, json, junit or markdown): per
// profile counts, then every failure.
// Vectors of profiles the adapter does not list, and schedule and decision
// vectors (which need no adapter), are counted as not run.
func runProfileVectors(ctx context.Context, impl protocol.Implementation, dir, format string, stdout, stderr io.Writer) int {
	fsys := retrykit.Profiles
	if dir != "" {
		if msg := checkDir("--profiles-dir", dir); msg != "" {
			return usageError(stderr, msg)
		}
		fsys = os.DirFS(dir)
	}
	h, err := impl.Hello(ctx)
	if err == nil {
		err = h.Check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrykit conformance: hello: %v\n", err)
		return 2
	}
	listed := map[string]bool{}
	for _, n := range h.Profiles {
		listed[n] = true
	}
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		fmt.Fprintf(stderr, "retrykit conformance: %v\n", err)
		return 2
	}
	if len(names) == 0 {
		// An empty report that passes would hide a wrong directory.
		return usageError(stderr, fmt.Sprintf("--profiles-dir: no profile vector files (*.json) in %s", dir))
	}
	sort.Strings(names)
	res := max(h.ResolutionNS, 1)
	var failures []profileFailure
	tallies := map[string]*profileTally{}
	var order []string
	var id int64
	ask := func(name string, attempt int64, r *float64) (int64, string) {
		id++
		resp, err := impl.Do(ctx, protocol.Request{ID: id, Op: protocol.OpDelay, Profile: name, Attempt: attempt, Rand: r})
		switch {
		case err != nil:
			return 0, err.Error()
		case resp.Error != nil:
			return 0, fmt.Sprintf("rejected: %s: %s", resp.Error.Type, resp.Error.Message)
		case resp.Unsupported:
			return 0, "answered unsupported"
		case resp.DelayNS == nil:
			return 0, "no delay_ns in the answer"
		}
		return *resp.DelayNS, ""
	}
	// near compares without overflow: delays are non-negative, so their
	// difference fits (want ± res did not, at a delay of MaxInt64).
	near := func(got, want int64) bool {
		if got >= want {
			return got-want < res
		}
		return want-got < res
	}
	for _, file := range names {
		if path.Base(file) == "profile.schema.json" {
			continue
		}
		data, err := bounded.ReadFile(fsys, file, bounded.MaxSuiteFile)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit conformance: %s: %v\n", file, err)
			return 2
		}
		var pv profileVectors
		if err := json.Unmarshal(data, &pv); err != nil || pv.Profile == "" {
			fmt.Fprintf(stderr, "retrykit conformance: %s: not a profile vector file (%v)\n", file, err)
			return 2
		}
		t := &profileTally{}
		tallies[pv.Profile] = t
		order = append(order, pv.Profile)
		spec := pv.Profile
		if pv.Settings != "" {
			spec = pv.Settings
		}
		for _, v := range pv.Vectors {
			fail := func(f string, a ...any) {
				t.failed++
				failures = append(failures, profileFailure{ID: v.ID, Profile: pv.Profile, Attempt: v.Attempt, Message: fmt.Sprintf(f, a...)})
			}
			if !listed[pv.Profile] {
				t.notRun++
				continue
			}
			switch {
			case v.Kind == "delay" && h.Jitter == protocol.JitterInjectable && v.DelayNS != nil:
				r, ok := singleDraw(v.Rand, v.Rands)
				if !ok {
					t.notRun++ // several different draws cannot be sent as one rand
					continue
				}
				got, msg := ask(spec, v.Attempt, &r)
				switch {
				case msg != "":
					fail("%s", msg)
				case !near(got, *v.DelayNS):
					fail("rand %v: delay_ns %d (%v), want %d (%v)%s", r, got, time.Duration(got), *v.DelayNS, time.Duration(*v.DelayNS), noteText(v.Note))
				default:
					t.passed++
				}
			case v.Kind == "bounds" && v.MinNS != nil && v.MaxNS != nil:
				lo, hi := *v.MinNS, *v.MaxNS
				ok := true
				if h.Jitter == protocol.JitterInjectable {
					for _, c := range []struct {
						r    float64
						want int64
					}{{0, lo}, {topDraw, hi}} {
						r := c.r
						got, msg := ask(spec, v.Attempt, &r)
						if msg != "" {
							fail("rand %v: %s", r, msg)
							ok = false
							break
						}
						if !near(got, c.want) {
							fail("rand %v: delay_ns %d (%v), want %d (%v), bounds [%d, %d]%s", r, got, time.Duration(got), c.want, time.Duration(c.want), lo, hi, noteText(v.Note))
							ok = false
							break
						}
					}
				} else {
					for range opaqueSamples {
						got, msg := ask(spec, v.Attempt, nil)
						if msg != "" {
							fail("%s", msg)
							ok = false
							break
						}
						if got <= lo-res || got >= hi+res {
							fail("delay_ns %d outside [%d, %d]", got, lo, hi)
							ok = false
							break
						}
					}
				}
				if ok {
					t.passed++
				}
			default:
				t.notRun++ // schedule and decision vectors, or delays an opaque adapter cannot pin
			}
		}
	}
	rep := profileReport{Implementation: h.Implementation, Version: h.Version, Listed: len(h.Profiles), Failures: failures}
	for _, n := range order {
		t := tallies[n]
		rep.Profiles = append(rep.Profiles, profileCount{Profile: n, Listed: listed[n], Passed: t.passed, Failed: t.failed, NotRun: t.notRun})
		rep.Passed, rep.Failed, rep.NotRun = rep.Passed+t.passed, rep.Failed+t.failed, rep.NotRun+t.notRun
	}
	if err := rep.write(stdout, format); err != nil {
		fmt.Fprintf(stderr, "retrykit conformance: writing report: %v\n", err)
		return 2
	}
	if len(failures) > 0 {
		return 1
	}
	return 0
}

// profileReport is the outcome of a profile vector run; its JSON form is
// the --format json report.
type profileReport struct {
	Implementation string           `json:"implementation"`
	Version        string           `json:"version"`
	Listed         int              `json:"profiles_listed"`
	Passed         int              `json:"passed"`
	Failed         int              `json:"failed"`
	NotRun         int              `json:"not_run"`
	Profiles       []profileCount   `json:"profiles"`
	Failures       []profileFailure `json:"failures"`
}

// profileCount is one profile's line of a profileReport.
type profileCount struct {
	Profile string `json:"profile"`
	Listed  bool   `json:"listed"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	NotRun  int    `json:"not_run"`
}

// profileFailure is one failed profile vector.
type profileFailure struct {
	ID      string `json:"id"`
	Profile string `json:"profile"`
	Attempt int64  `json:"attempt"`
	Message string `json:"message"`
}

func (f profileFailure) String() string {
	return fmt.Sprintf("%s (%s, attempt %d): %s", f.ID, f.Profile, f.Attempt, f.Message)
}

// write writes r in format: text, json, junit or markdown (the formats of
// the suite's report, conformance.Formats), and returns the first write
// error.
func (r profileReport) write(w io.Writer, format string) error {
	bw := bufio.NewWriter(w)
	switch format {
	case "json":
		if r.Profiles == nil {
			r.Profiles = []profileCount{}
		}
		if r.Failures == nil {
			r.Failures = []profileFailure{}
		}
		enc := json.NewEncoder(bw)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	case "junit":
		r.writeJUnit(bw)
	case "markdown":
		fmt.Fprintf(bw, "## Profile vectors against %s %s\n\n%d profiles listed in hello. Total: %d passed, %d failed, %d not run.\n\n",
			mdEscape(r.Implementation), mdEscape(r.Version), r.Listed, r.Passed, r.Failed, r.NotRun)
		fmt.Fprintln(bw, "| profile | passed | failed | not run | note |\n|---|---:|---:|---:|---|")
		for _, p := range r.Profiles {
			fmt.Fprintf(bw, "| %s | %d | %d | %d | %s |\n", mdEscape(p.Profile), p.Passed, p.Failed, p.NotRun, listedNote(p.Listed))
		}
		if len(r.Failures) > 0 {
			fmt.Fprint(bw, "\n### Failures\n\n")
			for _, f := range r.Failures {
				fmt.Fprintf(bw, "- %s\n", mdEscape(f.String()))
			}
		}
	default:
		fmt.Fprintf(bw, "profile vectors against %s (%d profiles listed)\n\n", strings.TrimSpace(r.Implementation+" "+r.Version), r.Listed)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "profile\tpassed\tfailed\tnot run\t")
		for _, p := range r.Profiles {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", p.Profile, p.Passed, p.Failed, p.NotRun, listedNote(p.Listed))
		}
		tw.Flush()
		fmt.Fprintf(bw, "\ntotal: %d passed, %d failed, %d not run (schedule and decision vectors need no adapter)\n", r.Passed, r.Failed, r.NotRun)
		if len(r.Failures) > 0 {
			fmt.Fprintf(bw, "\nfailures:\n")
			for _, f := range r.Failures {
				fmt.Fprintf(bw, "  %s\n", f)
			}
		}
	}
	return bw.Flush()
}

// writeJUnit writes one test suite, "profiles", with a test case per
// profile: failed with every failure of the profile, skipped when the
// implementation does not list it.
func (r profileReport) writeJUnit(w io.Writer) {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
	}
	type testsuite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName xml.Name    `xml:"testsuites"`
		Name    string      `xml:"name,attr"`
		Suites  []testsuite `xml:"testsuite"`
	}
	ts := testsuite{Name: "profiles", Tests: len(r.Profiles)}
	for _, p := range r.Profiles {
		c := testcase{Name: p.Profile, Classname: "profiles"}
		switch {
		case !p.Listed:
			c.Skipped = &skipped{Message: "not listed in hello"}
			ts.Skipped++
		case p.Failed > 0:
			var lines []string
			for _, f := range r.Failures {
				if f.Profile == p.Profile {
					lines = append(lines, f.String())
				}
			}
			c.Failure = &failure{Message: fmt.Sprintf("%d of %d vectors failed", p.Failed, p.Passed+p.Failed), Text: strings.Join(lines, "\n")}
			ts.Failures++
		}
		ts.Cases = append(ts.Cases, c)
	}
	fmt.Fprint(w, xml.Header)
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	_ = enc.Encode(testsuites{Name: "profile vectors against " + strings.TrimSpace(r.Implementation+" "+r.Version), Suites: []testsuite{ts}})
	fmt.Fprintln(w)
}

func listedNote(listed bool) string {
	if listed {
		return ""
	}
	return "not listed in hello"
}

// mdEscape keeps text as text in Markdown (see package mdtext).
func mdEscape(s string) string { return mdtext.Escape(s) }

// singleDraw returns the one draw a delay vector uses: rand, or rands when
// they are all the same value (the protocol sends one draw for all).
func singleDraw(r *float64, rs []float64) (float64, bool) {
	if r != nil {
		return *r, true
	}
	if len(rs) == 0 {
		return 0, true // no draw given: the profile has no jitter
	}
	for _, x := range rs[1:] {
		if x != rs[0] {
			return 0, false
		}
	}
	return rs[0], true
}

// noteText appends a vector's note to a failure line.
func noteText(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}
