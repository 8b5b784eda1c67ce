package profile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// vectorFile is one testdata/profiles/<name>.json, as profile.schema.json
// describes it.
type vectorFile struct {
	Profile     *string  `json:"profile"`
	System      *string  `json:"system"`
	Version     *string  `json:"version"`
	Source      *string  `json:"source"`
	Docs        *string  `json:"docs"`
	Formula     *string  `json:"formula"`
	Draw        *string  `json:"draw"`
	Defaults    *string  `json:"defaults"`
	Settings    *string  `json:"settings"`
	Exhaustion  *string  `json:"exhaustion"`
	Terminal    *string  `json:"terminal"`
	MaxAttempts *int     `json:"max_attempts"`
	Comment     *string  `json:"comment"`
	Vectors     []vector `json:"vectors"`
	hasMax      bool     // max_attempts was present (it may be null)
}

type vector struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Attempt  *int      `json:"attempt"`
	Rand     *float64  `json:"rand"`
	Rands    []float64 `json:"rands"`
	DelayNS  *int64    `json:"delay_ns"`
	DelaysNS []int64   `json:"delays_ns"`
	MinNS    *int64    `json:"min_ns"`
	MaxNS    *int64    `json:"max_ns"`
	Retry    *bool     `json:"retry"`
	Note     *string   `json:"note"`
	raw      map[string]json.RawMessage
}

var (
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	idRE   = regexp.MustCompile(`^prof-[a-z][a-z0-9_]*-[0-9]{4}$`)
)

// kindFields lists, per kind, the required and the allowed fields of a
// vector, as the schema's $defs say.
var kindFields = map[string]struct{ required, allowed []string }{
	"delay":    {[]string{"id", "kind", "attempt", "delay_ns"}, []string{"rand", "rands", "note"}},
	"bounds":   {[]string{"id", "kind", "attempt", "min_ns", "max_ns"}, []string{"note"}},
	"schedule": {[]string{"id", "kind", "rands", "delays_ns"}, []string{"note"}},
	"decision": {[]string{"id", "kind", "attempt", "retry"}, []string{"note"}},
}

// checkFile validates one file against the rules of profile.schema.json (a
// direct check, kept beside the schema: required and allowed fields, types,
// patterns and ranges). It returns every problem found.
func checkFile(name string, data []byte) (*vectorFile, []string) {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, []string{"not a JSON object: " + err.Error()}
	}
	var f vectorFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, []string{err.Error()}
	}
	_, f.hasMax = top["max_attempts"]
	for _, k := range []string{"profile", "system", "version", "source", "formula", "draw", "exhaustion", "terminal", "max_attempts", "vectors"} {
		if _, ok := top[k]; !ok {
			bad("missing %s", k)
		}
	}
	for k, v := range map[string]*string{"profile": f.Profile, "system": f.System, "version": f.Version, "source": f.Source,
		"docs": f.Docs, "formula": f.Formula, "draw": f.Draw, "defaults": f.Defaults, "settings": f.Settings, "exhaustion": f.Exhaustion,
		"terminal": f.Terminal, "comment": f.Comment} {
		if _, present := top[k]; present && (v == nil || *v == "") {
			bad("%s: must be a non-empty string", k)
		}
	}
	if f.Profile != nil && !nameRE.MatchString(*f.Profile) {
		bad("profile: %q does not match %s", *f.Profile, nameRE)
	}
	if f.Profile != nil && *f.Profile+".json" != name {
		bad("profile %q in file %s", *f.Profile, name)
	}
	if f.Settings != nil && f.Profile != nil && !strings.HasPrefix(*f.Settings, *f.Profile+":") && !strings.HasPrefix(*f.Settings, *f.Profile+"@") {
		bad("settings %q: must be %s:key=value,...", *f.Settings, *f.Profile)
	}
	if f.MaxAttempts != nil && *f.MaxAttempts < 1 {
		bad("max_attempts: must be null or at least 1, got %d", *f.MaxAttempts)
	}
	if len(f.Vectors) < 5 {
		bad("vectors: at least 5, got %d", len(f.Vectors))
	}
	var raws struct {
		Vectors []map[string]json.RawMessage `json:"vectors"`
	}
	_ = json.Unmarshal(data, &raws)
	seen := map[string]bool{}
	for i := range f.Vectors {
		v := &f.Vectors[i]
		if i < len(raws.Vectors) {
			v.raw = raws.Vectors[i]
		}
		where := fmt.Sprintf("vectors[%d] (%s)", i, v.ID)
		if !idRE.MatchString(v.ID) {
			bad("%s: id does not match %s", where, idRE)
		}
		if seen[v.ID] {
			bad("%s: duplicate id", where)
		}
		seen[v.ID] = true
		kf, ok := kindFields[v.Kind]
		if !ok {
			bad("%s: kind %q is not delay, bounds, schedule or decision", where, v.Kind)
			continue
		}
		for _, k := range kf.required {
			if raw, ok := v.raw[k]; !ok || string(raw) == "null" {
				bad("%s: missing %s", where, k)
			}
		}
		for k := range v.raw {
			if !slices.Contains(kf.required, k) && !slices.Contains(kf.allowed, k) {
				bad("%s: field %s not allowed in a %s vector", where, k, v.Kind)
			}
		}
		if v.Rand != nil && v.Rands != nil {
			bad("%s: rand and rands together", where)
		}
		if v.Attempt != nil && *v.Attempt < 1 {
			bad("%s: attempt must be at least 1", where)
		}
		if v.Rands != nil && len(v.Rands) == 0 {
			bad("%s: rands must not be empty", where)
		}
		for _, r := range append(slices.Clone(v.Rands), derefOr(v.Rand, 0)) {
			if !(r >= 0 && r < 1) {
				bad("%s: draw %v outside [0, 1)", where, r)
			}
		}
		for _, ns := range append(slices.Clone(v.DelaysNS), derefOr(v.DelayNS, 0), derefOr(v.MinNS, 0), derefOr(v.MaxNS, 0)) {
			if ns < 0 {
				bad("%s: negative duration %d", where, ns)
			}
		}
		if v.Kind == "schedule" && len(v.DelaysNS) == 0 {
			bad("%s: delays_ns must not be empty", where)
		}
		if v.Note != nil && *v.Note == "" {
			bad("%s: note must not be empty", where)
		}
	}
	return &f, errs
}

func derefOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// seq is a Source returning the given draws in order, then failing the test
// if more are asked for.
type seq struct {
	t     *testing.T
	id    string
	draws []float64
	i     int
}

func (s *seq) Float64() float64 {
	if s.i >= len(s.draws) {
		s.t.Errorf("%s: the profile took more draws than the vector gives (%d)", s.id, len(s.draws))
		return 0
	}
	s.i++
	return s.draws[s.i-1]
}

func loadFiles(t *testing.T) map[string]*vectorFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "profiles", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*vectorFile{}
	for _, p := range paths {
		name := filepath.Base(p)
		if name == "profile.schema.json" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, errs := checkFile(name, data)
		for _, e := range errs {
			t.Errorf("%s: %s", name, e)
		}
		if f != nil && len(errs) == 0 {
			files[strings.TrimSuffix(name, ".json")] = f
		}
	}
	return files
}

// TestSchemaFile keeps the Go check and the published schema in step: the
// schema must name the same top-level and per-kind fields.
func TestSchemaFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "profiles", "profile.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	want := []string{"profile", "system", "version", "source", "formula", "draw", "exhaustion", "terminal", "max_attempts", "vectors"}
	if !slices.Equal(s.Required, want) {
		t.Errorf("schema required = %v, the Go check requires %v", s.Required, want)
	}
	for kind, kf := range kindFields {
		d := s.Defs[kind]
		if !slices.Equal(d.Required, kf.required) {
			t.Errorf("schema %s required = %v, the Go check requires %v", kind, d.Required, kf.required)
		}
		var props []string
		for k := range d.Properties {
			props = append(props, k)
		}
		all := append(slices.Clone(kf.required), kf.allowed...)
		slices.Sort(props)
		slices.Sort(all)
		if !slices.Equal(props, all) {
			t.Errorf("schema %s properties = %v, the Go check allows %v", kind, props, all)
		}
	}
}

// TestCheckFileRejects shows that the check catches the faults it exists
// for.
func TestCheckFileRejects(t *testing.T) {
	good := `{"profile":"x","system":"s","version":"v","source":"u","formula":"f","draw":"d","exhaustion":"e","terminal":"t","max_attempts":3,"vectors":[` +
		strings.Repeat(`{"id":"prof-x-0001","kind":"decision","attempt":1,"retry":true},`, 4) +
		`{"id":"prof-x-0005","kind":"delay","attempt":1,"rand":0.5,"delay_ns":1}]}`
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", `"draw":"d"`, `"draw":"d","extra":1`, "unknown field"},
		{"rand 1", `"rand":0.5`, `"rand":1`, "outside [0, 1)"},
		{"bad kind", `"kind":"delay"`, `"kind":"pause"`, "kind"},
		{"missing delay", `,"delay_ns":1`, ``, "missing delay_ns"},
		{"field of another kind", `"delay_ns":1`, `"delay_ns":1,"retry":true`, "not allowed"},
		{"file name", `"profile":"x"`, `"profile":"y"`, "in file"},
		{"max_attempts 0", `"max_attempts":3`, `"max_attempts":0`, "max_attempts"},
		{"duplicate id", `"prof-x-0002"`, `"prof-x-0001"`, "duplicate"},
		{"bad id", `"prof-x-0005"`, `"x-5"`, "id does not match"},
	} {
		doc := strings.ReplaceAll(good, `"id":"prof-x-0001"`, `"id":"prof-x-000X"`)
		for i := 1; i <= 4; i++ {
			doc = strings.Replace(doc, "prof-x-000X", fmt.Sprintf("prof-x-%04d", i), 1)
		}
		if _, errs := checkFile("x.json", []byte(doc)); len(errs) != 0 {
			t.Fatalf("%s: the base document is rejected: %v", tc.name, errs)
		}
		doc = strings.Replace(doc, tc.from, tc.to, 1)
		_, errs := checkFile("x.json", []byte(doc))
		if !strings.Contains(strings.Join(errs, "; "), tc.want) {
			t.Errorf("%s: errors %v do not mention %q", tc.name, errs, tc.want)
		}
	}
}

// TestVectors runs every vector in testdata/profiles against the package.
func TestVectors(t *testing.T) {
	files := loadFiles(t)
	if len(files) == 0 {
		t.Fatal("no vector files")
	}
	for _, name := range profile.Names() {
		if files[name] == nil {
			t.Errorf("profile %s has no vector file", name)
		}
	}
	for name, f := range files {
		p, err := profile.Lookup(derefOr(f.Settings, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		wantMax := 0
		if f.MaxAttempts != nil {
			wantMax = *f.MaxAttempts
		}
		if p.MaxAttempts() != wantMax {
			t.Errorf("%s: MaxAttempts() = %d, file says %d", name, p.MaxAttempts(), wantMax)
		}
		for _, v := range f.Vectors {
			runVector(t, p, v)
		}
	}
}

func runVector(t *testing.T, p profile.Profile, v vector) {
	t.Helper()
	n := derefOr(v.Attempt, 0)
	switch v.Kind {
	case "delay":
		want := time.Duration(*v.DelayNS)
		var got time.Duration
		if v.Rands != nil {
			got = p.Delay(n, &seq{t: t, id: v.ID, draws: v.Rands})
		} else {
			got = p.DelayAt(n, derefOr(v.Rand, 0))
			if !p.Stateful() {
				if d := p.Delay(n, backoff.Fixed(derefOr(v.Rand, 0))); d != got {
					t.Errorf("%s: Delay %v differs from DelayAt %v", v.ID, d, got)
				}
			}
		}
		if got != want {
			t.Errorf("%s: attempt %d: delay %v (%d ns), want %v (%d ns); note: %s", v.ID, n, got, int64(got), want, int64(want), derefOr(v.Note, ""))
		}
	case "bounds":
		lo, hi := p.Bounds(n)
		if lo != time.Duration(*v.MinNS) || hi != time.Duration(*v.MaxNS) {
			t.Errorf("%s: attempt %d: bounds [%d, %d] ns, want [%d, %d]; note: %s", v.ID, n, lo, hi, *v.MinNS, *v.MaxNS, derefOr(v.Note, ""))
		}
	case "schedule":
		src := &seq{t: t, id: v.ID, draws: v.Rands}
		var got []int64
		for _, d := range p.Schedule(len(v.DelaysNS), src) {
			got = append(got, int64(d))
		}
		if !slices.Equal(got, v.DelaysNS) {
			t.Errorf("%s: schedule %v, want %v; note: %s", v.ID, got, v.DelaysNS, derefOr(v.Note, ""))
		}
	case "decision":
		d := p.DecideAt(n, 0.5)
		if (d.Action == policy.Retry) != *v.Retry {
			t.Errorf("%s: attempt %d: decision %v, want retry=%t", v.ID, n, d.Action, *v.Retry)
		}
		if !*v.Retry && (d.Action != p.OnExhaustion() || d.Reason != policy.ReasonExhausted) {
			t.Errorf("%s: exhausted decision %+v, want %v/exhausted", v.ID, d, p.OnExhaustion())
		}
	}
}
