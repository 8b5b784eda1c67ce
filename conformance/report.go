package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/conformance/protocol"
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
	// Level is the level the verdict counts toward in [Report.Scores], by
	// these rules in order: "RK" (a retrykit decision) for requirement
	// RK-nn or flag "retrykit:decision"; "SHOULD" (a SHOULD-level or
	// optional feature) for a flag "should:…" or "extension:…"; else
	// "MUST", a requirement of the spec.
	Level string `json:"level"`
	// Random is set when the verdict depends on the implementation's own
	// random draws: a jittered delay it computed without the runner's rand
	// (opaque jitter), or the statistical jitter check. Another run can
	// judge it differently; [WithRepeat] runs such vectors several times.
	Random bool `json:"random,omitempty"`

	cause string // the symptom the runner derived, for [Report.Causes]
	// draws, for the jitter check, are the multipliers of its samples
	// (delay / PT100S), or the one out of range that stopped it.
	draws []float64
	probe *probe // the request and answer, for the diagnosis; nil if none
}

func resultFor(v *Vector) Result {
	return Result{ID: v.ID, Requirement: v.Requirement, Covers: v.Covers, Section: v.Section, Kind: v.Kind,
		Description: v.Description, Flags: v.Flags, Level: levelOf(v.Requirement, v.Flags)}
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
	Level       string   `json:"level"` // as in [Result]
}

func uncovered(v *Vector, reason string) Uncovered {
	return Uncovered{ID: v.ID, Requirement: v.Requirement, Covers: v.Covers, Kind: v.Kind, Reason: reason,
		Level: levelOf(v.Requirement, v.Flags)}
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

// Summary is a tally by name: in [Report.Scores] the name is a level, in
// [Report.Requirements] a requirement id (counting the results whose
// requirement it is and those of scenario vectors that list it in covers).
type Summary struct {
	Name string `json:"name"`
	Counts
}

// Report is the outcome of a run: plain data, written by [Runner.Run] and
// read by [Report.Write], whose formats all open with the scores, the
// spec-only command and the causes. Totals keeps the four result classes
// apart and counts coverage gaps (NotRun) separately, so that "100% pass"
// cannot hide untested areas. The zero Report has no results and is OK.
type Report struct {
	// Scores tallies the results by level, always in this order: "MUST"
	// (spec requirements), "SHOULD" (SHOULD-level and optional features)
	// and "RK" (retrykit decisions); the rules are those of [Result.Level].
	Scores []Summary `json:"scores"`
	// Causes groups every failed or errored result under one root cause,
	// the cause explaining the most results first.
	Causes []Cause `json:"causes"`

	Implementation protocol.Hello `json:"implementation"`
	SuiteVersion   string         `json:"suite_version"`
	SpecVersion    string         `json:"spec_version"`
	// Command is the command line that produced the report, when known
	// (the retrykit command sets it); the reports append --spec-only to it
	// to show the spec-only run. SpecOnly is set for a [WithSpecOnly] run.
	Command  string `json:"command,omitempty"`
	SpecOnly bool   `json:"spec_only,omitempty"`
	// Repeat is how many times draw-dependent vectors ([Result.Random])
	// were run ([WithRepeat]); Flipped lists those whose verdict changed.
	Repeat  int      `json:"repeat"`
	Flipped []string `json:"flipped,omitempty"`

	Totals       Counts      `json:"totals"`
	Requirements []Summary   `json:"requirements"`
	Results      []Result    `json:"results"`
	NotRun       []Uncovered `json:"not_run"`
	NotSelected  int         `json:"not_selected"`
	// ScenariosLeftOut counts the executor scenarios not run because the
	// implementation does not list the scenario op (a policy library):
	// they count neither in the scores nor in coverage.
	ScenariosLeftOut int      `json:"scenarios_left_out,omitempty"`
	Warnings         []string `json:"warnings,omitempty"`
	// Figures are measurements a run reports beside its verdicts (the live
	// server checker's promotion latency), one line each; every format
	// shows them after the scores and causes.
	Figures []string      `json:"figures,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`

	notes map[string]string // flag notes of the suite, for cause explanations
}

// OK reports whether nothing failed and nothing errored.
func (r *Report) OK() bool { return r.Totals.Fail == 0 && r.Totals.Error == 0 }

// filter returns the results with the given status. filter(StatusError)
// returns only results explicitly marked as errors, not those with an unset
// status, though [Counts] counts both as errors.
func (r *Report) filter(s Status) []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Status == s {
			out = append(out, res)
		}
	}
	return out
}

// Tally computes Totals, Scores, Causes and Requirements from Results and
// NotRun, for a report built outside a [Runner] (the live-server checker,
// package conformance/live). notes explains the "class:…" flags of the
// results, by flag, as a vector file's notes do ("Failure class: …"); a
// class without a note is listed as unexplained.
func (r *Report) Tally(notes map[string]string) {
	r.notes = notes
	r.finish()
}

// finish computes totals, scores, causes and the per-requirement summary.
func (r *Report) finish() {
	r.Totals = Counts{}
	r.Scores = make([]Summary, len(levels))
	lvl := map[string]*Counts{}
	for i, l := range levels {
		r.Scores[i].Name = l.name
		lvl[l.name] = &r.Scores[i].Counts
	}
	score := func(level, req string, flags []string) *Counts {
		if level == "" {
			level = levelOf(req, flags)
		}
		if c := lvl[level]; c != nil {
			return c
		}
		return lvl[levelMust]
	}
	by := map[string]*Summary{}
	get := func(req string) *Summary {
		s, ok := by[req]
		if !ok {
			s = &Summary{Name: req}
			by[req] = s
		}
		return s
	}
	for _, res := range r.Results {
		r.Totals.add(res.Status)
		score(res.Level, res.Requirement, res.Flags).add(res.Status)
		for _, req := range requirementsOf(res.Requirement, res.Covers) {
			get(req).add(res.Status)
		}
	}
	for _, u := range r.NotRun {
		r.Totals.NotRun++
		score(u.Level, u.Requirement, nil).NotRun++
		for _, req := range requirementsOf(u.Requirement, u.Covers) {
			get(req).NotRun++
		}
	}
	r.Causes = findCauses(r.Results, r.notes)
	r.Requirements = r.Requirements[:0]
	for _, s := range by {
		r.Requirements = append(r.Requirements, *s)
	}
	sort.Slice(r.Requirements, func(i, j int) bool {
		return requirementLess(r.Requirements[i].Name, r.Requirements[j].Name)
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
