package scenario_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A validator for the JSON Schema subset that scenario.schema.json declares:
// type (name or list), const, enum, required, properties,
// additionalProperties, items, minItems, minLength, pattern, minimum,
// exclusiveMaximum and $ref to #/$defs. Unknown keywords are an error, so a
// constraint cannot be silently ignored.

var schemaKeywords = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "const": true, "enum": true, "required": true, "properties": true,
	"additionalProperties": true, "items": true, "minItems": true, "minLength": true,
	"pattern": true, "minimum": true, "exclusiveMaximum": true, "$ref": true,
}

type validator struct {
	root map[string]any
	errs []string
}

func (v *validator) failf(path, format string, args ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, args...))
}

func typeOf(x any) string {
	switch t := x.(type) {
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
		if !strings.ContainsAny(string(t), ".eE") {
			return "integer"
		}
		if f, err := t.Float64(); err == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	}
	return "unknown"
}

func num(x any) (float64, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func same(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func (v *validator) check(path string, schema map[string]any, x any) {
	for k := range schema {
		if !schemaKeywords[k] {
			v.failf(path, "schema uses unsupported keyword %q", k)
		}
	}
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		def, ok := v.root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok {
			v.failf(path, "unresolved $ref %q", ref)
			return
		}
		v.check(path, def, x)
	}
	if t, ok := schema["type"]; ok {
		got := typeOf(x)
		okType := false
		names := []any{t}
		if list, isList := t.([]any); isList {
			names = list
		}
		for _, n := range names {
			if n == got || (n == "number" && got == "integer") {
				okType = true
			}
		}
		if !okType {
			v.failf(path, "type %s, want %v", got, t)
			return
		}
	}
	if c, ok := schema["const"]; ok && !same(c, x) {
		v.failf(path, "want const %v", c)
	}
	if e, ok := schema["enum"].([]any); ok {
		found := false
		for _, c := range e {
			found = found || same(c, x)
		}
		if !found {
			v.failf(path, "%v not in enum", x)
		}
	}
	if f, ok := num(x); ok {
		if m, ok := num(schema["minimum"]); ok && f < m {
			v.failf(path, "%v < minimum %v", f, m)
		}
		if m, ok := num(schema["exclusiveMaximum"]); ok && f >= m {
			v.failf(path, "%v >= exclusiveMaximum %v", f, m)
		}
	}
	if s, ok := x.(string); ok {
		if m, ok := num(schema["minLength"]); ok && float64(len([]rune(s))) < m {
			v.failf(path, "shorter than %v", m)
		}
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(s) {
			v.failf(path, "%q does not match %s", s, p)
		}
	}
	if a, ok := x.([]any); ok {
		if m, ok := num(schema["minItems"]); ok && float64(len(a)) < m {
			v.failf(path, "fewer than %v items", m)
		}
		if it, ok := schema["items"].(map[string]any); ok {
			for i, el := range a {
				v.check(fmt.Sprintf("%s[%d]", path, i), it, el)
			}
		}
	}
	if o, ok := x.(map[string]any); ok {
		req, _ := schema["required"].([]any)
		for _, r := range req {
			if _, ok := o[r.(string)]; !ok {
				v.failf(path, "missing %q", r)
			}
		}
		props, _ := schema["properties"].(map[string]any)
		keys := make([]string, 0, len(o))
		for k := range o {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				v.check(path+"."+k, ps, o[k])
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					v.failf(path, "unexpected property %q", k)
				}
			case map[string]any:
				v.check(path+"."+k, ap, o[k])
			}
		}
	}
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	return x
}

func schemaRoot(t *testing.T) map[string]any {
	b, err := os.ReadFile(filepath.Join(dir, "scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, b).(map[string]any)
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
		v := &validator{root: root}
		v.check("$", root, decodeJSON(t, b))
		for _, e := range v.errs {
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
	v := &validator{root: root}
	v.check("$", root, decodeJSON(t, []byte(good)))
	if len(v.errs) != 0 {
		t.Fatalf("good file rejected: %v", v.errs)
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
		v := &validator{root: root}
		v.check("$", root, decodeJSON(t, []byte(doc)))
		if len(v.errs) == 0 {
			t.Errorf("%s -> %s: not rejected", bad.from, bad.to)
		}
	}
}
