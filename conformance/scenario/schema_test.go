package scenario_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schema is a compiled JSON Schema whose Validate returns each violation as
// "instance location: reason".
type schema struct{ s *jsonschema.Schema }

// schemaRoot compiles testdata/scenarios/scenario.schema.json.
func schemaRoot(t *testing.T) schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return schema{s}
}

// Validate returns the violations of the JSON document data.
func (s schema) Validate(data []byte) []string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []string{err.Error()}
	}
	var ve *jsonschema.ValidationError
	if err := s.s.Validate(doc); err == nil {
		return nil
	} else if !errors.As(err, &ve) {
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

// TestScenarioFilesMatchSchema validates every scenario file against
// scenario.schema.json.
func TestScenarioFilesMatchSchema(t *testing.T) {
	root := schemaRoot(t)
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".schema.json") {
			continue
		}
		n++
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range root.Validate(b) {
			t.Errorf("%s: %s", filepath.Base(name), e)
		}
	}
	if n == 0 {
		t.Fatal("no scenario files")
	}
}

// TestSchemaRejectsMalformed makes sure the validator and schema catch
// typical mistakes.
func TestSchemaRejectsMalformed(t *testing.T) {
	root := schemaRoot(t)
	good := `{"schema_version":1,"suite_version":"0.1.0","spec_version":"1.0.0-rc.1","kind":"scenario","notes":{"kind":"k"},
	"scenarios":[{"id":"scn-x-0001","requirement":"RET-11","section":"ojs-retry 9.1","description":"a description","config":{},
	"steps":[{"at_ms":0,"op":"tick","expect":{"jobs":{"a":{"state":"available","next_retry_at_ms":null}}}}]}]}`
	if errs := root.Validate([]byte(good)); len(errs) != 0 {
		t.Fatalf("good file rejected: %v", errs)
	}
	for _, bad := range []struct{ from, to string }{
		{`"schema_version":1`, `"schema_version":2`},
		{`"scn-x-0001"`, `"scenario-1"`},
		{`"RET-11"`, `"RET-21"`},
		{`"op":"tick"`, `"op":"nack"`},
		{`"state":"available"`, `"state":"failed"`},
		{`"at_ms":0`, `"at_ms":-1`},
		{`"config":{}`, `"config":{"rand":1}`},
		{`"next_retry_at_ms":null`, `"next_retry_at_ms":"soon"`},
		{`"expect":{`, `"expect":{"extra":1,`},
	} {
		doc := strings.Replace(good, bad.from, bad.to, 1)
		if errs := root.Validate([]byte(doc)); len(errs) == 0 {
			t.Errorf("%s -> %s: not rejected", bad.from, bad.to)
		}
	}
}
