package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
)

// kindScenario is the kind of the executor scenario vectors
// (testdata/scenarios), answered by the optional op "scenario"
// (PROTOCOL.md section 3.7). [Load] reads them from its second file system.
const kindScenario = "scenario"

// loadScenarios reads the executor scenario files at the root of fsys and
// turns every scenario into a vector of kind kindScenario, checking ids
// against those already in byID. A scenario's Input is the request the
// runner sends (config and steps, expectations removed) and its Expected
// the list of per-step expectations.
func loadScenarios(fsys fs.FS, s *Suite) ([]*Vector, []error) {
	byID, notes := s.byID, s.notes
	if _, err := fs.ReadDir(fsys, "."); err != nil {
		return nil, []error{fmt.Errorf("conformance: list scenario files: %w", err)}
	}
	files, err := scenario.Load(fsys)
	if err != nil {
		return nil, []error{&VectorError{File: ".", Reason: err.Error()}}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var add []*Vector
	var errs []error
	seen := map[string]string{}
	for _, name := range names {
		f := files[name]
		errs = append(errs, s.sameVersion(name, f.SuiteVersion, f.SpecVersion)...)
		for k, n := range f.Notes {
			notes[k] = n
		}
		for i := range f.Scenarios {
			sc := &f.Scenarios[i]
			v, err := scenarioVector(name, f, sc)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev, ok := seen[v.ID]; ok {
				errs = append(errs, &VectorError{File: name, ID: v.ID, Reason: "duplicate id (also in " + prev + ")"})
				continue
			}
			if prev := byID[v.ID]; prev != nil {
				errs = append(errs, &VectorError{File: name, ID: v.ID, Reason: "duplicate id (also in " + prev.File + ")"})
				continue
			}
			seen[v.ID] = name
			add = append(add, v)
		}
	}
	if len(add) == 0 && len(errs) == 0 {
		errs = append(errs, &VectorError{File: ".", Reason: "no scenario files"})
	}
	return add, errs
}

// scenarioVector turns one scenario into a vector: the request with the
// expectations stripped, and the expectations for reports.
func scenarioVector(file string, f *scenario.File, sc *scenario.Scenario) (*Vector, error) {
	bad := func(format string, a ...any) error {
		return &VectorError{File: file, ID: sc.ID, Reason: fmt.Sprintf(format, a...)}
	}
	if sc.ID == "" {
		return nil, &VectorError{File: file, Reason: "scenario without id"}
	}
	if sc.Requirement == "" || sc.Section == "" || strings.TrimSpace(sc.Description) == "" || len(sc.Steps) == 0 {
		return nil, bad("requirement, section, description and steps are required")
	}
	for _, fl := range sc.Flags {
		if _, ok := f.Notes[fl]; !ok {
			return nil, bad("flag %q is not explained in notes", fl)
		}
	}
	config, err := json.Marshal(sc.Config)
	if err != nil {
		return nil, bad("config: %v", err)
	}
	steps := make([]json.RawMessage, len(sc.Steps))
	expects := make([]scenario.Expect, len(sc.Steps))
	for i := range sc.Steps {
		st := sc.Steps[i]
		expects[i] = st.Expect
		st.Expect = scenario.Expect{}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, bad("step %d: %v", i, err)
		}
		// Drop the (now empty) expectation: expectations never travel to
		// the adapter (PROTOCOL.md section 3.7).
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, bad("step %d: %v", i, err)
		}
		delete(m, "expect")
		if steps[i], err = json.Marshal(m); err != nil {
			return nil, bad("step %d: %v", i, err)
		}
	}
	stepsJSON, err := json.Marshal(steps)
	if err != nil {
		return nil, bad("steps: %v", err)
	}
	input, _ := json.Marshal(map[string]json.RawMessage{"config": config, "steps": stepsJSON})
	var exp bytes.Buffer
	enc := json.NewEncoder(&exp)
	if err := enc.Encode(expects); err != nil {
		return nil, bad("expectations: %v", err)
	}
	req := protocol.Request{Op: protocol.OpScenario, Config: config, Steps: stepsJSON}
	// Bounded scenarios (PROTOCOL.md 3.7): the request must fit one
	// protocol line, and the reference's answer half of one.
	if n := len(req.AppendJSON(nil)) + 1; n > protocol.MaxLineBytes {
		return nil, bad("the scenario request takes %d bytes, more than the protocol's line limit of %d (1 MiB); split the scenario", n, protocol.MaxLineBytes)
	}
	if _, err := scenario.Play(sc); errors.Is(err, scenario.ErrTooLarge) {
		return nil, bad("%v", err)
	}
	return &Vector{
		ID: sc.ID, Requirement: sc.Requirement, Covers: append([]string(nil), sc.Covers...),
		Section: sc.Section, Description: sc.Description, Flags: sc.Flags,
		Input: input, Expected: bytes.TrimSpace(exp.Bytes()),
		Kind: kindScenario, File: file,
		req: req,
		sc:  sc,
	}, nil
}

// maxScenarioMismatches bounds how many mismatches a failure reason lists.
const maxScenarioMismatches = 5

// judgeScenario compares the observations of an answer with the scenario's
// expectations. It returns a failure reason ("" when the scenario passes),
// and for a failure the expectation and the observation of the first step
// that differs, for reports. malformed is set when the observations cannot
// be read at all.
func judgeScenario(sc *scenario.Scenario, raw json.RawMessage) (reason string, want, got json.RawMessage, malformed error) {
	var obs []scenario.Observation
	if err := json.Unmarshal(raw, &obs); err != nil {
		return "", nil, nil, fmt.Errorf("steps: %v", err)
	}
	if obs == nil {
		return "", nil, nil, errors.New("steps is null")
	}
	if len(obs) > len(sc.Steps) {
		return "", nil, nil, fmt.Errorf("%d observations for %d steps", len(obs), len(sc.Steps))
	}
	ms := scenario.Check(sc, obs)
	if len(ms) == 0 {
		return "", nil, nil, nil
	}
	first := ms[0].Step
	want, _ = json.Marshal(sc.Steps[first].Expect)
	if first < len(obs) {
		got, _ = json.Marshal(obs[first])
	}
	parts := make([]string, 0, maxScenarioMismatches+1)
	for i, m := range ms {
		if i == maxScenarioMismatches {
			parts = append(parts, fmt.Sprintf("… %d more", len(ms)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", m, sc.Steps[m.Step].Op))
	}
	return strings.Join(parts, "; "), want, got, nil
}
