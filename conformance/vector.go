package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
	"github.com/retrykit/retrykit/internal/bounded"
)

// schemaVersion is the version of the vector file format this package reads.
// Files with another schema_version are rejected by [Load].
const schemaVersion = 1

// The vector kinds, one file per kind. Each kind is answered by one protocol
// op (see opFor).
const (
	kindDuration = "duration"
	kindValidate = "validate"
	kindDelay    = "delay"
	kindMatch    = "match"
	kindDecide   = "decide"
	// The kinds of the timeouts and dead-letter extensions, answered by the
	// ops of the same names with a case object in and a result object out.
	kindTimeoutDecide = "timeout_decide"
	kindTimeoutExpiry = "timeout_expiry"
	kindReplay        = "replay"
	// kindExtensionDecide is the kind of the retry extensions
	// (docs/extensions.md), answered the same way.
	kindExtensionDecide = "extension_decide"
	// kindScenario is declared in scenario.go.
)

// opFor returns the protocol op that answers vectors of the given kind, or ""
// for an unknown kind.
func opFor(kind string) string {
	switch kind {
	case kindDuration:
		return protocol.OpParseDuration
	case kindValidate, kindDelay, kindMatch, kindDecide, kindScenario, kindTimeoutDecide, kindTimeoutExpiry, kindReplay, kindExtensionDecide:
		return kind
	}
	return ""
}

// ErrInvalidVector is matched (with errors.Is) by every error [Load] returns
// for a malformed vector file.
var ErrInvalidVector = errors.New("conformance: invalid vector")

// VectorError describes one problem in one vector file. It matches
// [ErrInvalidVector].
type VectorError struct {
	File   string // file name inside the fs.FS
	ID     string // vector id, "" for a file-level problem
	Reason string
}

// Error implements error.
func (e *VectorError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("conformance: %s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("conformance: %s: vector %s: %s", e.File, e.ID, e.Reason)
}

// Is reports whether target is [ErrInvalidVector].
func (e *VectorError) Is(target error) bool { return target == ErrInvalidVector }

// vectorFile is one vector file (testdata/vectors/KIND.json), immutable
// after [Load].
type vectorFile struct {
	Name          string            `json:"-"` // file name inside the fs.FS
	SchemaVersion int               `json:"schema_version"`
	SuiteVersion  string            `json:"suite_version"`
	SpecVersion   string            `json:"spec_version"`
	Kind          string            `json:"kind"`
	Notes         map[string]string `json:"notes"` // flag name -> what it means
	Vectors       []*Vector         `json:"vectors"`
}

// Vector is one test case. Input and Expected keep the file's JSON; [Load]
// checks them and derives the [protocol.Request] the runner sends and the
// outcome it expects.
type Vector struct {
	ID          string          `json:"id"`
	Requirement string          `json:"requirement"`
	Section     string          `json:"section"`
	Description string          `json:"description"`
	Flags       []string        `json:"flags"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`

	Kind string `json:"-"` // the kind of the file the vector is in
	File string `json:"-"` // the name of that file
	// Covers lists further requirement ids a scenario vector tests;
	// vector files have none.
	Covers []string `json:"-"`

	sc       *scenario.Scenario // set for kindScenario
	req      protocol.Request
	want     outcome
	wantJSON json.RawMessage // Expected without whitespace, for reports
}

// request returns the protocol request for the vector, with ID 0 (the
// runner assigns ids).
func (v *Vector) request() protocol.Request { return v.req }

// hasFlag reports whether the vector carries flag f.
func (v *Vector) hasFlag(f string) bool {
	for _, g := range v.Flags {
		if g == f {
			return true
		}
	}
	return false
}

// outcome is the decoded "expected" object of a vector. Exactly one group
// of fields is set, depending on the kind: NS (duration), Effective
// (validate), DelayNS or MinNS+MaxNS (delay), Match (match), Action with
// DelayNS or MinNS+MaxNS for a retry (decide), or Error (any kind, with
// ErrorFields naming fields the message must mention).
type outcome struct {
	NS          *int64          `json:"ns,omitempty"`
	Effective   json.RawMessage `json:"effective,omitempty"`
	DelayNS     *int64          `json:"delay_ns,omitempty"`
	MinNS       *int64          `json:"min_ns,omitempty"`
	MaxNS       *int64          `json:"max_ns,omitempty"`
	Match       *bool           `json:"match,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"` // timeout_decide, timeout_expiry, replay
	Action      string          `json:"action,omitempty"`
	Error       string          `json:"error,omitempty"`
	ErrorFields []string        `json:"error_fields,omitempty"`

	// Acceptable, for an implementation-defined vector, lists the outcomes
	// of which any one passes; no other field is set then. For a duration,
	// an entry may give MinNS and MaxNS (inclusive bounds on the answer's
	// ns) instead of NS.
	Acceptable []outcome `json:"acceptable,omitempty"`
}

// Suite is a loaded, validated set of vectors: create it with [Load]. It is
// read-only after Load and safe for concurrent use; the zero Suite has no
// vectors.
type Suite struct {
	Vectors []*Vector // vector files in name order, then scenario files

	files []*vectorFile // sorted by name
	// suite and spec are the suite_version and spec_version every file
	// (vector and scenario) carries; Load refuses files that disagree.
	suite, spec string
	notes       map[string]string  // flag -> note, from every file
	byID        map[string]*Vector // Vectors by id
}

// Vector returns the vector with the given id, or nil.
func (s *Suite) Vector(id string) *Vector { return s.byID[id] }

var (
	requirementRE = regexp.MustCompile(`^(RET-(0[1-9]|1[0-9]|20)|RK-[0-9]{2,3}|TMO-0[1-9]|DLQ-R003)$`)
	effectiveKeys = []string{"max_attempts", "initial_interval", "backoff_coefficient", "max_interval",
		"jitter", "non_retryable_errors", "on_exhaustion", "backoff_strategy"}
)

// Load reads a suite in one step: the vector files at the root of vectors
// and the executor scenario files at the root of scenarios (retrykit embeds
// its own as [github.com/retrykit/retrykit.Vectors] and
// [github.com/retrykit/retrykit.Scenarios]). Either may be nil to leave
// that part out, not both. Every problem found is returned, joined: each
// problem in a file matches [ErrInvalidVector]; a file system that cannot
// be read gives its error, wrapped (errors.Is(err, fs.ErrNotExist) for a
// missing directory). A file over 16 MiB is an error without being read
// whole.
//
// Vector files are the *.json files (JSON Schema files, *.schema.json, are
// ignored). Checks: schema_version is 1; suite_version,
// spec_version and a known kind are present, and the kind appears once;
// every file, scenario files included, has the same suite_version and
// spec_version (the report's);
// each vector has a non-empty id unique across all files, a requirement
// RET-01..RET-20 or RK-nn, a section, a description; every flag is
// explained in the file's notes; input and expected have exactly the
// fields of the kind, with the right JSON types.
//
// Each scenario becomes one vector of kind "scenario" with a unique id;
// selection, skip lists, flags and coverage work for them as for the other
// vectors, and a scenario's requirement and its covers ids all count in
// the per-requirement summary.
func Load(vectors, scenarios fs.FS) (*Suite, error) {
	if vectors == nil && scenarios == nil {
		return nil, &VectorError{File: ".", Reason: "Load needs a vector or a scenario file system"}
	}
	s := &Suite{byID: map[string]*Vector{}, notes: map[string]string{}}
	var errs []error
	if vectors != nil {
		errs = s.loadVectors(vectors)
	}
	for _, f := range s.files {
		errs = append(errs, s.sameVersion(f.Name, f.SuiteVersion, f.SpecVersion)...)
	}
	if scenarios != nil {
		add, serrs := loadScenarios(scenarios, s)
		errs = append(errs, serrs...)
		for _, v := range add {
			s.byID[v.ID] = v
			s.Vectors = append(s.Vectors, v)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// sameVersion records the versions of the first file and returns an error
// for a later file (name) whose suite_version or spec_version differs: one
// suite, one version, which every report of it carries.
func (s *Suite) sameVersion(name, suite, spec string) []error {
	if s.suite == "" && s.spec == "" {
		s.suite, s.spec = suite, spec
		return nil
	}
	if suite != s.suite || spec != s.spec {
		return []error{&VectorError{File: name, Reason: fmt.Sprintf("suite_version %q, spec_version %q: the other files have %q, %q", suite, spec, s.suite, s.spec)}}
	}
	return nil
}

// loadVectors adds the vector files at the root of fsys to s.
func (s *Suite) loadVectors(fsys fs.FS) []error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return []error{fmt.Errorf("conformance: list vector files: %w", err)}
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var errs []error
	kinds := map[string]string{}
	for _, name := range names {
		if strings.HasSuffix(name, ".schema.json") {
			continue
		}
		data, err := bounded.ReadFile(fsys, name, bounded.MaxSuiteFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("conformance: read %s: %w", name, err))
			continue
		}
		f, ferrs := parseFile(name, data)
		errs = append(errs, ferrs...)
		if f == nil {
			continue
		}
		if prev, ok := kinds[f.Kind]; ok {
			errs = append(errs, &VectorError{File: name, Reason: fmt.Sprintf("kind %q already used by %s", f.Kind, prev)})
		}
		kinds[f.Kind] = name
		s.files = append(s.files, f)
		for k, n := range f.Notes {
			s.notes[k] = n
		}
		for _, v := range f.Vectors {
			if v.ID == "" {
				continue
			}
			if prev, ok := s.byID[v.ID]; ok {
				errs = append(errs, &VectorError{File: name, ID: v.ID, Reason: "duplicate id (also in " + prev.File + ")"})
				continue
			}
			s.byID[v.ID] = v
			s.Vectors = append(s.Vectors, v)
		}
	}
	if len(s.files) == 0 && len(errs) == 0 {
		errs = append(errs, &VectorError{File: ".", Reason: "no vector files"})
	}
	return errs
}

func parseFile(name string, data []byte) (*vectorFile, []error) {
	bad := func(id, format string, args ...any) error {
		return &VectorError{File: name, ID: id, Reason: fmt.Sprintf(format, args...)}
	}
	var f vectorFile
	if err := strictUnmarshal(data, &f); err != nil {
		return nil, []error{bad("", "%v", err)}
	}
	f.Name = path.Base(name)
	var errs []error
	if f.SchemaVersion != schemaVersion {
		errs = append(errs, bad("", "schema_version %d, this runner reads %d", f.SchemaVersion, schemaVersion))
	}
	if f.SuiteVersion == "" || f.SpecVersion == "" {
		errs = append(errs, bad("", "suite_version and spec_version are required"))
	}
	if opFor(f.Kind) == "" || f.Kind == kindScenario { // scenarios have their own format (Load)
		errs = append(errs, bad("", "unknown kind %q", f.Kind))
		return nil, errs
	}
	if len(f.Vectors) == 0 {
		errs = append(errs, bad("", "no vectors"))
	}
	for i, v := range f.Vectors {
		if v == nil {
			errs = append(errs, bad("", "vector %d is null", i))
			continue
		}
		v.Kind, v.File = f.Kind, f.Name
		id := v.ID
		if id == "" {
			errs = append(errs, bad("", "vector %d has no id", i))
			id = fmt.Sprintf("#%d", i)
		}
		if !requirementRE.MatchString(v.Requirement) {
			errs = append(errs, bad(id, "requirement %q is not RET-01..RET-20, TMO-01..TMO-09, DLQ-R003 or RK-nn", v.Requirement))
		}
		if v.Section == "" {
			errs = append(errs, bad(id, "no section"))
		}
		if strings.TrimSpace(v.Description) == "" {
			errs = append(errs, bad(id, "no description"))
		}
		seen := map[string]bool{}
		for _, fl := range v.Flags {
			if fl == "" || seen[fl] {
				errs = append(errs, bad(id, "empty or repeated flag %q", fl))
			}
			seen[fl] = true
			if _, ok := f.Notes[fl]; !ok {
				errs = append(errs, bad(id, "flag %q is not explained in notes", fl))
			}
		}
		if err := v.decode(); err != nil {
			errs = append(errs, bad(id, "%v", err))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &f, nil
}

// strictUnmarshal decodes exactly one JSON value, rejecting unknown fields.
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// vectorInput is the union of the input fields of all kinds.
type vectorInput struct {
	Value     *string         `json:"value"`
	Policy    json.RawMessage `json:"policy"`
	PolicyRaw *string         `json:"policy_raw"`
	Attempt   *json.Number    `json:"attempt"`
	Rand      *float64        `json:"rand"`
	Patterns  *[]string       `json:"patterns"`
	ErrorType *string         `json:"error_type"`
	Error     *struct {
		Type *string `json:"type"`
		Code *string `json:"code"`
	} `json:"error"`
	Case json.RawMessage `json:"case"`
}

// checkOutcome checks an expected object, or each entry of its acceptable
// list.
func checkOutcome(kind string, w *outcome, hasRand bool) error {
	if w.Acceptable == nil {
		return checkExpected(kind, w, hasRand)
	}
	if w.NS != nil || w.Effective != nil || w.DelayNS != nil || w.MinNS != nil || w.MaxNS != nil ||
		w.Match != nil || w.Result != nil || w.Action != "" || w.Error != "" || w.ErrorFields != nil {
		return errors.New("acceptable excludes every other field")
	}
	if len(w.Acceptable) < 2 {
		return errors.New("acceptable needs at least two outcomes")
	}
	for i := range w.Acceptable {
		if w.Acceptable[i].Acceptable != nil {
			return errors.New("acceptable entries cannot nest")
		}
		if err := checkExpected(kind, &w.Acceptable[i], hasRand); err != nil {
			return fmt.Errorf("acceptable[%d]: %v", i, err)
		}
	}
	return nil
}

// decode fills v.req and v.want from Input and Expected, checking the shape.
func (v *Vector) decode() error {
	if len(v.Input) == 0 || len(v.Expected) == 0 {
		return errors.New("input and expected are required")
	}
	var in vectorInput
	if err := strictUnmarshal(v.Input, &in); err != nil {
		return fmt.Errorf("input: %v", err)
	}
	var want outcome
	if err := strictUnmarshal(v.Expected, &want); err != nil {
		return fmt.Errorf("expected: %v", err)
	}
	req := protocol.Request{Op: opFor(v.Kind)}
	allowed := map[string]bool{}
	has := map[string]bool{
		"value": in.Value != nil, "policy": in.Policy != nil || in.PolicyRaw != nil, "attempt": in.Attempt != nil,
		"rand": in.Rand != nil, "patterns": in.Patterns != nil, "error_type": in.ErrorType != nil, "error": in.Error != nil,
		"case": in.Case != nil,
	}
	require := func(names ...string) error {
		for _, n := range names {
			if !has[n] {
				return fmt.Errorf("input: %s is required for kind %s", n, v.Kind)
			}
		}
		return nil
	}
	if in.Policy != nil && in.PolicyRaw != nil {
		return errors.New("input: policy and policy_raw are exclusive")
	}
	if in.PolicyRaw != nil {
		raw := []byte(*in.PolicyRaw)
		if !json.Valid(raw) {
			return errors.New("input: policy_raw is not valid JSON text")
		}
		req.Policy = json.RawMessage(raw)
	} else if in.Policy != nil {
		req.Policy = in.Policy
	}
	if in.Attempt != nil {
		n, err := in.Attempt.Int64()
		if err != nil {
			return fmt.Errorf("input: attempt %s is not a 64-bit integer", *in.Attempt)
		}
		req.Attempt = n
	}
	if in.Rand != nil {
		if !(*in.Rand >= 0 && *in.Rand < 1) {
			return fmt.Errorf("input: rand %v is outside [0, 1)", *in.Rand)
		}
		r := *in.Rand
		req.Rand = &r
	}
	switch v.Kind {
	case kindDuration:
		allowed["value"] = true
		if err := require("value"); err != nil {
			return err
		}
		req.Value = *in.Value
	case kindValidate:
		allowed["policy"] = true
	case kindDelay:
		allowed["policy"], allowed["attempt"], allowed["rand"] = true, true, true
		if err := require("attempt"); err != nil {
			return err
		}
	case kindMatch:
		allowed["patterns"], allowed["error_type"] = true, true
		if err := require("patterns", "error_type"); err != nil {
			return err
		}
		req.Patterns = append([]string{}, (*in.Patterns)...)
		req.ErrorType = *in.ErrorType
	case kindDecide:
		allowed["policy"], allowed["attempt"], allowed["rand"], allowed["error"] = true, true, true, true
		if err := require("attempt", "error"); err != nil {
			return err
		}
		fi := &protocol.FailureInput{}
		if in.Error.Type != nil {
			fi.Type = *in.Error.Type
		}
		if in.Error.Code != nil {
			fi.Code = *in.Error.Code
		}
		req.Error = fi
	case kindTimeoutDecide, kindTimeoutExpiry, kindReplay, kindExtensionDecide:
		allowed["case"] = true
		if err := require("case"); err != nil {
			return err
		}
		if len(in.Case) == 0 || in.Case[0] != '{' {
			return errors.New("input: case must be an object")
		}
		req.Case = in.Case
	}
	for name, ok := range has {
		if ok && !allowed[name] {
			return fmt.Errorf("input: field %s does not belong to kind %s", name, v.Kind)
		}
	}
	if err := checkOutcome(v.Kind, &want, req.Rand != nil); err != nil {
		return fmt.Errorf("expected: %v", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v.Expected); err != nil {
		return fmt.Errorf("expected: %v", err)
	}
	v.req, v.want, v.wantJSON = req, want, buf.Bytes()
	return nil
}

func checkExpected(kind string, w *outcome, hasRand bool) error {
	set := []string{}
	add := func(ok bool, name string) {
		if ok {
			set = append(set, name)
		}
	}
	add(w.NS != nil, "ns")
	add(w.Effective != nil, "effective")
	add(w.DelayNS != nil, "delay_ns")
	add(w.MinNS != nil, "min_ns")
	add(w.MaxNS != nil, "max_ns")
	add(w.Match != nil, "match")
	add(w.Result != nil, "result")
	add(w.Action != "", "action")
	add(w.Error != "", "error")
	add(w.ErrorFields != nil, "error_fields")
	is := func(names ...string) bool {
		if len(set) != len(names) {
			return false
		}
		for i := range names {
			if set[i] != names[i] {
				return false
			}
		}
		return true
	}
	if w.Error != "" {
		switch w.Error {
		case protocol.ErrorPolicyInvalid, protocol.ErrorPatternInvalid, protocol.ErrorInvalidRequest:
		default:
			return fmt.Errorf("unknown error type %q", w.Error)
		}
		if is("error") || is("error", "error_fields") {
			return nil
		}
		return fmt.Errorf("error excludes %v", set)
	}
	bounds := func() error {
		if *w.MinNS < 0 || *w.MaxNS < *w.MinNS {
			return fmt.Errorf("bounds [%d, %d] are empty or negative", *w.MinNS, *w.MaxNS)
		}
		return nil
	}
	switch kind {
	case kindDuration:
		if is("ns") {
			return nil
		}
		if is("min_ns", "max_ns") {
			return bounds()
		}
	case kindValidate:
		if is("effective") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(w.Effective, &m); err != nil {
				return fmt.Errorf("effective: %v", err)
			}
			for _, k := range effectiveKeys {
				if _, ok := m[k]; !ok {
					return fmt.Errorf("effective lacks %s", k)
				}
			}
			if len(m) != len(effectiveKeys) {
				return fmt.Errorf("effective has %d fields, want the %d of the format", len(m), len(effectiveKeys))
			}
			return nil
		}
	case kindDelay:
		if is("delay_ns") {
			if *w.DelayNS < 0 {
				return errors.New("negative delay_ns")
			}
			return nil
		}
		if is("min_ns", "max_ns") && !hasRand {
			return bounds()
		}
	case kindMatch:
		if is("match") {
			return nil
		}
	case kindTimeoutDecide, kindTimeoutExpiry, kindReplay, kindExtensionDecide:
		if is("result") {
			if len(w.Result) == 0 || w.Result[0] != '{' {
				return errors.New("result must be an object")
			}
			return nil
		}
	case kindDecide:
		switch w.Action {
		case "retry":
			if is("delay_ns", "action") {
				if *w.DelayNS < 0 {
					return errors.New("negative delay_ns")
				}
				return nil
			}
			if is("min_ns", "max_ns", "action") && !hasRand {
				return bounds()
			}
		case "discard", "dead_letter":
			if is("action") {
				return nil
			}
		default:
			return fmt.Errorf("unknown action %q", w.Action)
		}
	}
	return fmt.Errorf("fields %v do not form an outcome of kind %s (rand given: %v)", set, kind, hasRand)
}
