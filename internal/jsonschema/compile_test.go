package jsonschema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/internal/jsonschema"
)

func TestCompileRejects(t *testing.T) {
	for _, c := range []struct {
		schema string
		is     error
		want   string
	}{
		{`{"format":"date"}`, jsonschema.ErrUnsupported, `#: unsupported keyword "format"`},
		{`{"properties":{"a":{"anyOf":[]}}}`, jsonschema.ErrUnsupported, `#/properties/a: unsupported keyword "anyOf"`},
		{`{"items":{"exclusiveMinimum":0}}`, jsonschema.ErrUnsupported, `unsupported keyword "exclusiveMinimum"`},
		{`{"$ref":"other.json"}`, jsonschema.ErrUnsupported, `$ref "other.json"`},
		{`{"$ref":"#/properties/a"}`, jsonschema.ErrUnsupported, `$ref`},
		{`{"items":{"$defs":{}}}`, jsonschema.ErrUnsupported, `$defs below the root`},
		{`{"$ref":"#/$defs/missing"}`, jsonschema.ErrInvalidSchema, `no definition "missing"`},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"}}}`, jsonschema.ErrInvalidSchema, `#/$defs/a/$ref: invalid schema: no definition "b"`},
		{`{"type":"int"}`, jsonschema.ErrInvalidSchema, `unknown type int`},
		{`{"type":[]}`, jsonschema.ErrInvalidSchema, `empty list of types`},
		{`{"enum":"a"}`, jsonschema.ErrInvalidSchema, `#/enum`},
		{`{"required":[1]}`, jsonschema.ErrInvalidSchema, `want string`},
		{`{"properties":[]}`, jsonschema.ErrInvalidSchema, `#/properties`},
		{`{"additionalProperties":"no"}`, jsonschema.ErrInvalidSchema, `a schema must be an object`},
		{`{"items":true}`, jsonschema.ErrInvalidSchema, `a schema must be an object`},
		{`{"minItems":-1}`, jsonschema.ErrInvalidSchema, `non-negative integer, got -1`},
		{`{"minLength":1.5}`, jsonschema.ErrInvalidSchema, `non-negative integer`},
		{`{"minProperties":"1"}`, jsonschema.ErrInvalidSchema, `must be a number`},
		{`{"uniqueItems":1}`, jsonschema.ErrInvalidSchema, `must be a boolean`},
		{`{"pattern":"("}`, jsonschema.ErrInvalidSchema, `#/pattern`},
		{`{"maximum":"9"}`, jsonschema.ErrInvalidSchema, `must be a number`},
		{`{"minimum":1e999999999}`, jsonschema.ErrInvalidSchema, `out of range`},
		{`{"title":1}`, jsonschema.ErrInvalidSchema, `must be a string`},
		{`[]`, jsonschema.ErrInvalidSchema, `a schema must be an object`},
		{`{`, jsonschema.ErrInvalidSchema, `invalid schema`},
		{`{} {}`, jsonschema.ErrInvalidSchema, `data after the JSON value`},
	} {
		_, err := jsonschema.Compile([]byte(c.schema))
		if err == nil {
			t.Errorf("Compile(%s) succeeded", c.schema)
			continue
		}
		if !errors.Is(err, c.is) || !strings.HasPrefix(err.Error(), "jsonschema: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%s) = %v, want an error matching %v containing %q", c.schema, err, c.is, c.want)
		}
	}
}
