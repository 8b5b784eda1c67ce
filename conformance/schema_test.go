package conformance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
)

// A validator for the subset of JSON Schema (2020-12) that
// testdata/vectors/vector.schema.json declares it uses: type, const, enum,
// required, properties, additionalProperties, items, minItems, uniqueItems,
// minProperties, minLength, pattern, minimum, maximum, exclusiveMaximum and
// $ref to #/$defs. Any other keyword in the schema is an error, so the
// validator cannot silently ignore a constraint.

type schemaValidator struct {
	root map[string]any
	errs []string
}

var knownKeywords = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "const": true, "enum": true, "required": true, "properties": true,
	"additionalProperties": true, "items": true, "minItems": true, "uniqueItems": true,
	"minProperties": true, "minLength": true, "pattern": true, "minimum": true,
	"maximum": true, "exclusiveMaximum": true, "$ref": true,
}

func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func (sv *schemaValidator) fail(path, format string, args ...any) {
	sv.errs = append(sv.errs, path+": "+fmt.Sprintf(format, args...))
}

func rat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if r := rat(x); r != nil && r.IsInt() {
			return "integer"
		}
		return "number"
	}
	return "unknown"
}

func equalJSON(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		return rat(an).Cmp(rat(bn)) == 0
	}
	return reflect.DeepEqual(a, b)
}

func (sv *schemaValidator) validate(path string, schema any, v any) {
	s, ok := schema.(map[string]any)
	if !ok {
		sv.fail(path, "schema is not an object")
		return
	}
	for k := range s {
		if !knownKeywords[k] {
			sv.fail(path, "schema keyword %q not supported by this validator", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := sv.root["$defs"].(map[string]any)
		target, ok := defs[name]
		if !found || !ok {
			sv.fail(path, "unresolvable $ref %q", ref)
			return
		}
		sv.validate(path, target, v)
	}
	if t, ok := s["type"]; ok {
		got := jsonType(v)
		var allowed []any
		if ts, ok := t.([]any); ok {
			allowed = ts
		} else {
			allowed = []any{t}
		}
		match := false
		for _, a := range allowed {
			if a == got || (a == "number" && got == "integer") {
				match = true
			}
		}
		if !match {
			sv.fail(path, "type %s, want %v", got, t)
			return
		}
	}
	if c, ok := s["const"]; ok && !equalJSON(c, v) {
		sv.fail(path, "value %v, want const %v", v, c)
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if equalJSON(x, v) {
				found = true
			}
		}
		if !found {
			sv.fail(path, "value %v not in enum %v", v, e)
		}
	}
	switch x := v.(type) {
	case string:
		if n, ok := s["minLength"].(json.Number); ok {
			if min, _ := n.Int64(); int64(utf8.RuneCountInString(x)) < min {
				sv.fail(path, "string shorter than %d", min)
			}
		}
		if p, ok := s["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				sv.fail(path, "bad pattern %q: %v", p, err)
			} else if !re.MatchString(x) {
				sv.fail(path, "%q does not match %s", x, p)
			}
		}
	case json.Number:
		r := rat(x)
		if n, ok := s["minimum"].(json.Number); ok && r.Cmp(rat(n)) < 0 {
			sv.fail(path, "%s < minimum %s", x, n)
		}
		if n, ok := s["maximum"].(json.Number); ok && r.Cmp(rat(n)) > 0 {
			sv.fail(path, "%s > maximum %s", x, n)
		}
		if n, ok := s["exclusiveMaximum"].(json.Number); ok && r.Cmp(rat(n)) >= 0 {
			sv.fail(path, "%s ≥ exclusiveMaximum %s", x, n)
		}
	case []any:
		if n, ok := s["minItems"].(json.Number); ok {
			if min, _ := n.Int64(); int64(len(x)) < min {
				sv.fail(path, "%d items, want ≥ %d", len(x), min)
			}
		}
		if u, ok := s["uniqueItems"].(bool); ok && u {
			for i := range x {
				for j := i + 1; j < len(x); j++ {
					if equalJSON(x[i], x[j]) {
						sv.fail(path, "items %d and %d are equal", i, j)
					}
				}
			}
		}
		if it, ok := s["items"]; ok {
			for i, e := range x {
				sv.validate(fmt.Sprintf("%s[%d]", path, i), it, e)
			}
		}
	case map[string]any:
		if n, ok := s["minProperties"].(json.Number); ok {
			if min, _ := n.Int64(); int64(len(x)) < min {
				sv.fail(path, "%d properties, want ≥ %d", len(x), min)
			}
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					sv.fail(path, "missing required property %q", r)
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k]; ok {
				sv.validate(path+"."+k, ps, x[k])
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					sv.fail(path, "property %q not allowed", k)
				}
			case map[string]any:
				sv.validate(path+"."+k, ap, x[k])
			}
		}
	}
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	data, err := fs.ReadFile(retrykit.Vectors, "vector.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeNumbers(data)
	if err != nil {
		t.Fatal(err)
	}
	return s.(map[string]any)
}

func validateFile(schema map[string]any, data []byte) []string {
	v, err := decodeNumbers(data)
	if err != nil {
		return []string{err.Error()}
	}
	sv := &schemaValidator{root: schema}
	sv.validate("$", schema, v)
	return sv.errs
}

func vectorFiles(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(retrykit.Vectors, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".schema.json") {
			out = append(out, n)
		}
	}
	if len(out) != 5 {
		t.Errorf("vector files %v, want the five kinds", out)
	}
	return out
}

func TestVectorFilesMatchSchema(t *testing.T) {
	vectorFiles(t) // one file per kind
	for _, e := range schemaErrors(t, retrykit.Vectors) {
		t.Error(e)
	}
}

// schemaErrors checks every vector file of fsys against the schema file of
// the embedded suite, as TestVectorFilesMatchSchema does, and returns the
// problems found.
func schemaErrors(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	schema := loadSchema(t)
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, name := range names {
		if strings.HasSuffix(name, ".schema.json") {
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range validateFile(schema, data) {
			errs = append(errs, name+": "+e)
		}
	}
	return errs
}

// TestSchemaCheckFailsOnBrokenCopy copies the vector files to a temporary
// directory, breaks one vector of one file on disk, and makes sure the very
// check TestVectorFilesMatchSchema runs reports that file, and only it.
func TestSchemaCheckFailsOnBrokenCopy(t *testing.T) {
	dir := t.TempDir()
	names, err := fs.Glob(retrykit.Vectors, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		data, err := fs.ReadFile(retrykit.Vectors, name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "delay.json" {
			// The last vector loses its section: a required property.
			i := bytes.LastIndex(data, []byte(`"section": "`))
			if i < 0 {
				t.Fatal("no section in delay.json")
			}
			j := i + bytes.IndexByte(data[i:], '\n')
			data = append(data[:i:i], data[j+1:]...)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	errs := schemaErrors(t, os.DirFS(dir))
	if len(errs) == 0 {
		t.Fatal("the schema check accepted a vector file with a vector that has no section")
	}
	for _, e := range errs {
		if !strings.HasPrefix(e, "delay.json: ") || !strings.Contains(e, "section") {
			t.Errorf("unexpected problem: %s", e)
		}
	}
	if _, err := conformance.Load(os.DirFS(dir)); !isInvalidVector(err) {
		t.Errorf("Load of the broken copy: %v, want an error matching ErrInvalidVector", err)
	}
}

// TestSchemaValidatorRejectsMalformedVectors makes sure the two checks above
// (schema and Load) can fail: each edit breaks one rule.
func TestSchemaValidatorRejectsMalformedVectors(t *testing.T) {
	schema := loadSchema(t)
	data, err := fs.ReadFile(retrykit.Vectors, "duration.json")
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(f map[string]any, v map[string]any){
		"no section":          func(f, v map[string]any) { delete(v, "section") },
		"bad requirement":     func(f, v map[string]any) { v["requirement"] = "RET-21" },
		"unknown field":       func(f, v map[string]any) { v["comment"] = "x" },
		"unknown flag":        func(f, v map[string]any) { v["flags"] = []any{"class:made-up"} },
		"repeated flag":       func(f, v map[string]any) { v["flags"] = []any{"retrykit:decision", "retrykit:decision"} },
		"negative ns":         func(f, v map[string]any) { v["expected"] = map[string]any{"ns": json.Number("-1")} },
		"bad error type":      func(f, v map[string]any) { v["expected"] = map[string]any{"error": "oops"} },
		"empty expected":      func(f, v map[string]any) { v["expected"] = map[string]any{} },
		"rand out of range":   func(f, v map[string]any) { v["input"] = map[string]any{"rand": json.Number("1")} },
		"wrong schema":        func(f, v map[string]any) { f["schema_version"] = json.Number("2") },
		"no suite version":    func(f, v map[string]any) { delete(f, "suite_version") },
		"fractional attempt":  func(f, v map[string]any) { v["input"] = map[string]any{"attempt": json.Number("1.5")} },
		"multi-line describe": func(f, v map[string]any) { v["description"] = "a\nb" },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			f, err := decodeNumbers(data)
			if err != nil {
				t.Fatal(err)
			}
			fm := f.(map[string]any)
			v := fm["vectors"].([]any)[0].(map[string]any)
			edit(fm, v)
			out, err := json.Marshal(fm)
			if err != nil {
				t.Fatal(err)
			}
			if errs := validateFile(schema, out); len(errs) == 0 {
				t.Errorf("schema validator accepted a vector with %s", name)
			}
		})
	}
}

func TestLoadRejectsMalformedVectors(t *testing.T) {
	data, err := fs.ReadFile(retrykit.Vectors, "match.json")
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(f map[string]any, v map[string]any){
		"duplicate id":       func(f, v map[string]any) { f["vectors"] = append(f["vectors"].([]any), v) },
		"no description":     func(f, v map[string]any) { v["description"] = " " },
		"flag without note":  func(f, v map[string]any) { v["flags"] = []any{"float-tolerance"} },
		"wrong input":        func(f, v map[string]any) { v["input"] = map[string]any{"value": "PT1S"} },
		"missing error_type": func(f, v map[string]any) { delete(v["input"].(map[string]any), "error_type") },
		"mixed expected": func(f, v map[string]any) {
			v["expected"] = map[string]any{"match": true, "error": conformance.ErrorPatternInvalid}
		},
		"acceptable plus one": func(f, v map[string]any) { v["expected"] = map[string]any{"match": true, "acceptable": []any{}} },
		"schema version":      func(f, v map[string]any) { f["schema_version"] = 7 },
		"unknown kind":        func(f, v map[string]any) { f["kind"] = "scenario" },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			var f map[string]any
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			v := f["vectors"].([]any)[0].(map[string]any)
			edit(f, v)
			out, _ := json.Marshal(f)
			_, err := conformance.Load(mapFS{"match.json": out})
			if err == nil {
				t.Fatalf("Load accepted a file with %s", name)
			}
			if !isInvalidVector(err) {
				t.Errorf("error %v does not match ErrInvalidVector", err)
			}
		})
	}
}

func TestVectorsLoadAndAreConsistent(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors)
	if err != nil {
		t.Fatal(err)
	}
	if len(suite.Vectors) < 400 {
		t.Errorf("%d vectors, the suite promises at least 400", len(suite.Vectors))
	}
	seen := map[string]bool{}
	perReq := map[string]int{}
	for _, v := range suite.Vectors {
		if seen[v.ID] {
			t.Errorf("duplicate id %s", v.ID)
		}
		seen[v.ID] = true
		perReq[v.Requirement]++
	}
	for _, f := range suite.Files {
		if f.SchemaVersion != conformance.SchemaVersion || f.SuiteVersion == "" || f.SpecVersion == "" {
			t.Errorf("%s: schema_version %d suite %q spec %q", f.Name, f.SchemaVersion, f.SuiteVersion, f.SpecVersion)
		}
	}
	// Every library-level RET requirement (the executor-level ones, RET-11
	// to RET-15, belong to scenario vectors) has at least three vectors.
	for _, r := range []string{"RET-01", "RET-02", "RET-03", "RET-04", "RET-05", "RET-06", "RET-07", "RET-08",
		"RET-09", "RET-10", "RET-16", "RET-17", "RET-18", "RET-19", "RET-20"} {
		if perReq[r] < 3 {
			t.Errorf("%s has %d vectors, want ≥ 3", r, perReq[r])
		}
	}
	for i := 1; i <= 17; i++ {
		r := fmt.Sprintf("RK-%02d", i)
		if perReq[r] == 0 {
			t.Errorf("decision %s is not pinned by any vector", r)
		}
	}
}
