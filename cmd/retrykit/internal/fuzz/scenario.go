package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
	"github.com/retrykit/retrykit/policytest"
)

// ScenarioFile is the name of the file [WriteScenario] writes in its
// directory.
const ScenarioFile = "fuzz-scenario.json"

// scenarioIDPrefix is the area of the scenario ids WriteScenario assigns
// (scn-fuzz-9001, scn-fuzz-9002, ...); no shipped scenario uses it.
const scenarioIDPrefix = "scn-fuzz-"

// WriteScenario writes the scenario disagreement d as an executor scenario
// to dir/fuzz-scenario.json, in the format of testdata/scenarios
// (scenario.schema.json), so that "retrykit conformance --scenarios-dir
// dir" runs it as is. The steps and config are d's request; the
// expectation after each step is what the reference executor observes
// (error class, fetched job, every job's state, attempt, times, dead-letter
// flag, error history without messages, the ids that must be absent, and
// the counts), as the fuzzer judges; a visibility-timeout error entry is
// written without its type, which is the implementation's own. The
// requirement, section and flags are derived from the steps, the
// reference's observations and the first step the implementation got
// wrong. An existing file of that name gets the scenario appended; the id
// is the next free scn-fuzz-NNNN (from scn-fuzz-9001) over every scenario
// file in dir. It returns the file path and the id.
//
// Nothing is written, and the error says why, when d is not a scenario
// disagreement, when the reference rejects the scenario, when the
// scenario's expectations would not fail d's recorded answer, or when dir
// would not load with the file ([conformance.Load]).
func WriteScenario(dir string, d *policytest.Disagreement, seed uint64) (path, id string, err error) {
	if d == nil || d.Request.Op != protocol.OpScenario {
		return "", "", errors.New("fuzz: WriteScenario needs a disagreement on the scenario op")
	}
	if d.Want.Error != nil {
		return "", "", fmt.Errorf("fuzz: the reference rejects the scenario (%s: %s): it has no expectations to write", d.Want.Error.Type, d.Want.Error.Message)
	}
	sc := scenario.Scenario{}
	if len(d.Request.Config) > 0 {
		if err := json.Unmarshal(d.Request.Config, &sc.Config); err != nil {
			return "", "", fmt.Errorf("fuzz: scenario config: %w", err)
		}
	}
	if err := json.Unmarshal(d.Request.Steps, &sc.Steps); err != nil || len(sc.Steps) == 0 {
		return "", "", fmt.Errorf("fuzz: scenario steps: want a non-empty array (%v)", err)
	}
	ref, err := scenario.Play(&sc)
	if err != nil {
		return "", "", fmt.Errorf("fuzz: the reference rejects the scenario: %w", err)
	}
	scenario.SetExpectations(&sc, ref)
	if ms := scenario.Check(&sc, ref); len(ms) > 0 {
		return "", "", fmt.Errorf("fuzz: the reference does not pass its own expectations: %v", ms[0])
	}
	// The file must fail what the implementation answered.
	first := -1
	var what string
	if d.Got.Error == nil {
		var got []scenario.Observation
		if err := json.Unmarshal(d.Got.Steps, &got); err == nil {
			if ms := scenario.Check(&sc, got); len(ms) > 0 {
				first, what = ms[0].Step, ms[0].What
			} else {
				return "", "", fmt.Errorf("fuzz: the scenario's expectations would not fail the implementation's answer (%s)", oneLine(d.Reason))
			}
		}
	}

	shipped, notes, err := shippedScenarios()
	if err != nil {
		return "", "", err
	}
	file := scenario.File{SchemaVersion: scenario.SchemaVersion, SuiteVersion: shipped.SuiteVersion,
		SpecVersion: shipped.SpecVersion, Kind: "scenario", Notes: map[string]string{"kind": notes["kind"]}}
	path = filepath.Join(dir, ScenarioFile)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		f, err := scenario.Decode(bytes.NewReader(old))
		if err != nil {
			return "", "", fmt.Errorf("fuzz: %s: %w", path, err)
		}
		file = *f
		if file.Notes == nil {
			file.Notes = map[string]string{}
		}
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	default:
		return "", "", err
	}
	// A fresh id over every scenario file of dir.
	n := firstID
	taken := map[string]bool{}
	if files, err := scenario.Load(os.DirFS(dir)); err == nil {
		for _, f := range files {
			for _, s := range f.Scenarios {
				taken[s.ID] = true
				if num, err := strconv.Atoi(strings.TrimPrefix(s.ID, scenarioIDPrefix)); err == nil && strings.HasPrefix(s.ID, scenarioIDPrefix) && num >= n {
					n = num + 1
				}
			}
		}
	} else if _, statErr := os.Stat(dir); statErr == nil {
		return "", "", fmt.Errorf("fuzz: %s does not load as a scenario directory (nothing written): %w", dir, err)
	}
	for ; n <= 9999 && taken[fmt.Sprintf("%s%04d", scenarioIDPrefix, n)]; n++ {
	}
	if n > 9999 {
		return "", "", fmt.Errorf("fuzz: %s holds the largest scenario id already", dir)
	}
	id = fmt.Sprintf("%s%04d", scenarioIDPrefix, n)

	sc.ID = id
	sc.Requirement = scenarioRequirement(&sc, ref, first, what)
	sc.Section = shippedSection(shipped, sc.Requirement)
	sc.Flags = scenarioFlags(&sc, ref)
	for _, f := range sc.Flags {
		file.Notes[f] = notes[f]
	}
	sc.Description = fmt.Sprintf("found by retrykit fuzz (seed %d) against an implementation: %s; expected observations from the retrykit reference executor",
		seed, oneLine(d.Reason))
	file.Scenarios = append(file.Scenarios, sc)

	if err := writeChecked(dir, path, old, &file, "scenario", func(fsys fs.FS) error {
		_, err := conformance.Load(nil, fsys)
		return err
	}); err != nil {
		return "", "", err
	}
	return path, id, nil
}

// shippedScenarios returns the first shipped scenario file (for its
// versions; files are read in name order) with every scenario of every
// shipped file in its Scenarios, and the notes of all of them.
func shippedScenarios() (*scenario.File, map[string]string, error) {
	files, err := scenario.Load(retrykit.Scenarios)
	if err != nil {
		return nil, nil, fmt.Errorf("fuzz: embedded scenarios: %w", err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, nil, errors.New("fuzz: embedded scenarios: none")
	}
	all := &scenario.File{SuiteVersion: files[names[0]].SuiteVersion, SpecVersion: files[names[0]].SpecVersion}
	notes := map[string]string{}
	for _, n := range names {
		for k, v := range files[n].Notes {
			notes[k] = v
		}
		all.Scenarios = append(all.Scenarios, files[n].Scenarios...)
	}
	return all, notes, nil
}

// shippedSection returns the section the shipped scenarios give req most
// often, or the section of its document's lifecycle table.
func shippedSection(shipped *scenario.File, req string) string {
	count := map[string]int{}
	best := ""
	for _, s := range shipped.Scenarios {
		if s.Requirement != req {
			continue
		}
		count[s.Section]++
		if best == "" || count[s.Section] > count[best] || (count[s.Section] == count[best] && s.Section < best) {
			best = s.Section
		}
	}
	if best != "" {
		return best
	}
	switch {
	case strings.HasPrefix(req, "RET-"):
		return "ojs-retry 9.2"
	case strings.HasPrefix(req, "DLQ-"):
		return "ojs-dead-letter 4"
	}
	return "ojs-core 6.3"
}

// transitions maps a state change of the ojs-core 6.3 table to its row.
var transitions = map[[2]string]string{
	{"", "scheduled"}: "CORE-T01", {"", "available"}: "CORE-T02", {"", "pending"}: "CORE-T03",
	{"scheduled", "available"}: "CORE-T04", {"pending", "available"}: "CORE-T05", {"available", "active"}: "CORE-T06",
	{"active", "completed"}: "CORE-T07", {"active", "retryable"}: "CORE-T08", {"active", "discarded"}: "CORE-T09",
	{"active", "cancelled"}: "CORE-T10", {"retryable", "available"}: "CORE-T12", {"scheduled", "cancelled"}: "CORE-T13",
	{"available", "cancelled"}: "CORE-T14", {"pending", "cancelled"}: "CORE-T15", {"retryable", "cancelled"}: "CORE-T16",
	{"discarded", "available"}: "CORE-T17",
}

// scenarioRequirement picks the requirement a scenario disagreement tests,
// from the first step the implementation got wrong (first, what: the
// step index and the path of its first mismatch; first < 0 when unknown,
// then the last step is used) and the reference's observations, in order:
//
//  1. the retry time a successful fail step set: RET-11;
//  2. unless the mismatch is the step's error, the job of the mismatch (or
//     the one fetched or named) changed state at that step: an expired
//     reservation RK-30, a dead letter DLQ-001, else the row of the
//     transition table (CORE-T01…T17), see transitionRequirement;
//  3. the step is rejected by the reference: validation RET-16, duplicate
//     id CORE-P01, unknown id CORE-I01, stale delivery RK-38, invalid
//     transition or another invalid request CORE-T00;
//  4. by the step's op: fetch CORE-F01, pause and resume RK-36, manual
//     retry RK-33, delete RK-42, fail RET-11 (the retry time), tick RK-31,
//     anything else CORE-T00.
func scenarioRequirement(sc *scenario.Scenario, ref []scenario.Observation, first int, what string) string {
	if first < 0 || first >= len(ref) {
		first = len(ref) - 1
	}
	st, o := sc.Steps[first], ref[first]
	if strings.HasSuffix(what, ".next_retry_at_ms") && st.Op == "fail" && o.Error == "" {
		return "RET-11"
	}
	if what != "error" {
		if r := transitionRequirement(sc, ref, first, what); r != "" {
			return r
		}
	}
	switch o.Error {
	case scenario.ClassInvalidPolicy:
		return "RET-16"
	case scenario.ClassDuplicateID:
		return "CORE-P01"
	case scenario.ClassNotFound:
		return "CORE-I01"
	case scenario.ClassStaleDelivery:
		return "RK-38"
	case scenario.ClassInvalidTransition, scenario.ClassInvalidRequest:
		return "CORE-T00"
	}
	switch st.Op {
	case "fetch":
		return "CORE-F01"
	case "pause", "resume":
		return "RK-36"
	case "retry":
		return "RK-33"
	case "delete":
		return "RK-42"
	case "fail":
		return "RET-11"
	case "tick":
		return "RK-31"
	}
	return "CORE-T00"
}

// transitionRequirement returns the requirement of the state change of the
// job a mismatch names (or the job the step fetched or names), or "" when
// that job did not change state at step i. A change from active that the
// step itself did not make (it is no successful fail, ack or cancel) is an
// expired reservation.
func transitionRequirement(sc *scenario.Scenario, ref []scenario.Observation, i int, what string) string {
	st, o := sc.Steps[i], ref[i]
	id := ""
	if rest, ok := strings.CutPrefix(what, "jobs["); ok {
		if q, _, ok := strings.Cut(rest, "]"); ok {
			id, _ = strconv.Unquote(q)
		}
	}
	if id == "" && o.Fetched != nil {
		id = *o.Fetched
	}
	if id == "" && st.Job != nil {
		id = st.Job.ID
	}
	if id == "" {
		id = st.ID
	}
	now, ok := o.Jobs[id]
	if !ok {
		return ""
	}
	var prev scenario.JobState
	if i > 0 {
		prev = ref[i-1].Jobs[id]
	}
	if prev.State == now.State {
		return ""
	}
	byStep := o.Error == "" && (st.Op == "fail" || st.Op == "ack" || st.Op == "cancel")
	switch {
	case prev.State == "active" && !byStep:
		return "RK-30"
	case now.DeadLetter && !prev.DeadLetter:
		return "DLQ-001"
	}
	return transitions[[2]string{prev.State, now.State}]
}

// scenarioFlags returns the scenario flags (testdata/scenarios notes) that
// apply to sc given the reference's observations, sorted.
func scenarioFlags(sc *scenario.Scenario, ref []scenario.Observation) []string {
	set := map[string]bool{}
	policies := [][]byte{}
	for _, st := range sc.Steps {
		if st.Job != nil {
			policies = append(policies, st.Job.Retry)
		}
		policies = append(policies, st.Retry)
	}
	for _, p := range policies {
		if bytes.Contains(p, []byte(`"backoff_strategy"`)) {
			set["extension:backoff_strategy"] = true
		}
		if bytes.Contains(p, []byte(`.*"`)) {
			set["should:prefix-match"] = true
		}
	}
	if sc.Config.Retention != nil || sc.Config.FinishedRetention != nil {
		set["implementation-defined:retention"] = true
	}
	// Instants at which a job of the scenario becomes due or its
	// reservation expires: a step at one of them is at a boundary.
	timers := map[int64]bool{}
	prevState := map[string]string{}
	for i, st := range sc.Steps {
		o := ref[i]
		if st.Op == "enqueue" && o.Error == "" && st.Job != nil && st.Job.ScheduledAtMs != nil {
			timers[*st.Job.ScheduledAtMs] = true
		}
		if timers[st.AtMs] {
			set["implementation-defined:boundary"] = true
		}
		switch st.Op {
		case "pause", "resume":
			set["implementation-defined:paused-queue"] = true
		case "delete":
			set["implementation-defined:delete"] = true
		case "retry":
			if o.Error == "" && len(o.Jobs[st.ID].Errors) > 0 {
				set["implementation-defined:manual-retry-errors"] = true
			}
		case "cancel":
			if s := prevState[st.ID]; o.Error == "" && (s == "completed" || s == "cancelled" || s == "discarded") {
				set["implementation-defined:cancel-terminal"] = true
			}
		}
		if st.Delivery != 0 || o.Error == scenario.ClassStaleDelivery {
			set["implementation-defined:delivery"] = true
		}
		switch o.Error {
		case scenario.ClassInvalidRequest, scenario.ClassDuplicateID, scenario.ClassNotFound:
			set["implementation-defined:error-classes"] = true
		}
		for id, j := range o.Jobs {
			for _, e := range j.Errors {
				if e.Timeout {
					set["implementation-defined:timeout-transition"] = true
				}
			}
			if sc.Config.ErrorHistory > 0 && len(j.Errors) >= sc.Config.ErrorHistory {
				set["implementation-defined:error-history-size"] = true
			}
			if j.NextRetryAtMs != nil {
				timers[*j.NextRetryAtMs] = true
			}
			if j.ReservedUntilMs != nil {
				timers[*j.ReservedUntilMs] = true
			}
			prevState[id] = j.State
		}
	}
	flags := make([]string, 0, len(set))
	for f := range set {
		flags = append(flags, f)
	}
	sort.Strings(flags)
	if len(flags) == 0 {
		return nil
	}
	return flags
}
