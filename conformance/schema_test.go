package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// decodeNumbers decodes a JSON document keeping numbers as json.Number, so
// that edits to a vector file round-trip exactly.
func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// loadSchema compiles the schema file of the embedded suite,
// testdata/vectors/vector.schema.json.
func loadSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := fs.ReadFile(retrykit.Vectors, "vector.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return compileSchema(t, "vector.schema.json", data)
}

// compileSchema compiles a JSON Schema (draft 2020-12) document.
func compileSchema(t *testing.T, name string, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// validateFile returns the schema violations of one vector file, each as
// "instance location: reason", or the reason the file is not JSON.
func validateFile(schema *jsonschema.Schema, data []byte) []string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []string{err.Error()}
	}
	err = schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var errs []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		switch u.Error.Kind.(type) {
		case *kind.Group, *kind.Schema, *kind.Reference:
			continue // "validation failed" above the actual violations
		}
		errs = append(errs, u.InstanceLocation+": "+u.Error.String())
	}
	if len(errs) == 0 {
		errs = append(errs, ve.Error())
	}
	return errs
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
	if len(out) != 9 {
		t.Errorf("vector files %v, want the nine kinds (five of the retry policy, two of the timeouts extension, one of dead-letter replay, one of the retry extensions)", out)
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
	if _, err := conformance.Load(os.DirFS(dir), nil); !isInvalidVector(err) {
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
			v["expected"] = map[string]any{"match": true, "error": protocol.ErrorPatternInvalid}
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
			_, err := conformance.Load(mapFS{"match.json": out}, nil)
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
	suite, err := conformance.Load(retrykit.Vectors, nil)
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
	rep := conformance.NewRunner(suite, conformance.WithIDs("dur-0001")).Run(context.Background(), conformance.Reference())
	if rep.SuiteVersion == "" || rep.SpecVersion == "" {
		t.Errorf("suite %q spec %q: the versions of the files do not reach the report", rep.SuiteVersion, rep.SpecVersion)
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
