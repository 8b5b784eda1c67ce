package jsonschema_test

import (
	"strings"
	"testing"

	"github.com/retrykit/retrykit/internal/jsonschema"
)

// keywordCases gives, for each keyword, a schema, a document it accepts and
// one it rejects, with a fragment of the expected error.
var keywordCases = []struct {
	name, schema, good, bad, want string
}{
	{"type name", `{"type":"string"}`, `"a"`, `1`, `$: type integer, want string`},
	{"type list", `{"type":["integer","null"]}`, `null`, `"1"`, `$: type string, want one of integer, null`},
	{"type number admits integer", `{"type":"number"}`, `3`, `true`, `$: type boolean, want number`},
	{"type integer with zero fraction", `{"type":"integer"}`, `1.0`, `1.5`, `$: type number, want integer`},
	{"type object", `{"type":"object"}`, `{}`, `[]`, `$: type array, want object`},
	{"type array", `{"type":"array"}`, `[]`, `{}`, `$: type object, want array`},
	{"type boolean", `{"type":"boolean"}`, `false`, `null`, `$: type null, want boolean`},
	{"type mismatch skips the rest", `{"type":"string","minLength":5}`, `"abcde"`, `7`, `$: type integer, want string`},
	{"const", `{"const":1}`, `1.0`, `2`, `$: value 2, want const 1`},
	{"const object", `{"const":{"a":[1,"x"]}}`, `{"a":[1.0,"x"]}`, `{"a":[1,"y"]}`, `want const {"a":[1,"x"]}`},
	{"enum", `{"enum":["a",null,2]}`, `null`, `"b"`, `$: value "b" not in enum ["a",null,2]`},
	{"required", `{"required":["id"]}`, `{"id":0}`, `{"ID":0}`, `$: missing required property "id"`},
	{"required ignores non-objects", `{"required":["id"]}`, `"id"`, `{}`, `missing required property "id"`},
	{"properties", `{"properties":{"n":{"type":"integer"}}}`, `{"n":1,"m":"x"}`, `{"n":"1"}`, `$.n: type string, want integer`},
	{"properties bracket path", `{"properties":{"a b":{"type":"integer"}}}`, `{"a b":1}`, `{"a b":"1"}`, `$["a b"]: type string, want integer`},
	{"additionalProperties false", `{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, `{"a":1,"b":2}`, `$: property "b" not allowed`},
	{"additionalProperties true", `{"additionalProperties":true,"minProperties":1}`, `{"b":2}`, `{}`, `0 properties, want ≥ 1`},
	{"additionalProperties schema", `{"additionalProperties":{"type":"string","minLength":1}}`, `{"k":"v"}`, `{"k":""}`, `$.k: string shorter than 1`},
	{"items", `{"items":{"type":"integer"}}`, `[1,2]`, `[1,"2"]`, `$[1]: type string, want integer`},
	{"minItems", `{"minItems":2}`, `[1,1]`, `[1]`, `$: 1 items, want ≥ 2`},
	{"uniqueItems", `{"uniqueItems":true}`, `[1,"1",[1]]`, `[1,2,1.0]`, `$: items 0 and 2 are equal`},
	{"uniqueItems false", `{"uniqueItems":false,"minItems":3}`, `[1,1,1]`, `[1,1]`, `2 items, want ≥ 3`},
	{"minProperties", `{"minProperties":1}`, `{"a":null}`, `{}`, `$: 0 properties, want ≥ 1`},
	{"minLength counts code points", `{"minLength":2}`, `"éé"`, `"é"`, `$: string shorter than 2`},
	{"pattern is unanchored", `{"pattern":"[0-9]{2}"}`, `"a12b"`, `"a1b2"`, `$: "a1b2" does not match [0-9]{2}`},
	{"minimum", `{"minimum":0}`, `0`, `-0.5`, `$: -0.5 < minimum 0`},
	{"maximum 2^63-1", `{"maximum":9223372036854775807}`, `9223372036854775807`, `9223372036854775808`, `$: 9223372036854775808 > maximum 9223372036854775807`},
	{"exclusiveMaximum", `{"exclusiveMaximum":1}`, `0.9999999999999999999`, `1.0`, `$: 1.0 ≥ exclusiveMaximum 1`},
	{"$ref", `{"$defs":{"ms":{"type":"integer","minimum":0}},"properties":{"at":{"$ref":"#/$defs/ms"}}}`, `{"at":5}`, `{"at":-5}`, `$.at: -5 < minimum 0`},
	{"$ref recursive", `{"$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"$ref":"#/$defs/t"}`, `[[],[[]]]`, `[[1]]`, `$[0][0]: type integer, want array`},
	{"$ref with sibling keywords", `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","minLength":2}`, `"ab"`, `"a"`, `$: string shorter than 2`},
	{"annotations", `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","title":"t","description":"d","type":"null"}`, `null`, `0`, `$: type integer, want null`},
	{"empty schema accepts anything but invalid JSON", `{}`, `{"any":[1,"thing"]}`, `{"a":}`, `$: invalid JSON: `},
	{"one value only", `{}`, ` 1 `, `1 2`, `$: invalid JSON: data after the JSON value`},
}

func TestKeywords(t *testing.T) {
	for _, c := range keywordCases {
		t.Run(c.name, func(t *testing.T) {
			s, err := jsonschema.Compile([]byte(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			if errs := s.Validate([]byte(c.good)); errs != nil {
				t.Errorf("Validate(%s) = %v, want no errors", c.good, errs)
			}
			errs := s.Validate([]byte(c.bad))
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
				t.Errorf("Validate(%s) = %q, want one error containing %q", c.bad, errs, c.want)
			}
		})
	}
}

// TestOrder checks the documented order of errors, using the worked table of
// the package documentation.
func TestOrder(t *testing.T) {
	s, err := jsonschema.Compile([]byte(`{"type":"object","required":["id"],"additionalProperties":false,
		"properties":{"id":{},"n":{"type":"integer","minimum":0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for doc, want := range map[string]string{
		`{"id":1}`:          ``,
		`{"id":1,"n":1.0}`:  ``,
		`{"n":-1}`:          `$: missing required property "id"|$.n: -1 < minimum 0`,
		`{"id":1,"x":true}`: `$: property "x" not allowed`,
		`[]`:                `$: type array, want object`,
		`{"z":1,"a":2,"n":"x"}`: `$: missing required property "id"|$: property "a" not allowed|` +
			`$.n: type string, want integer|$: property "z" not allowed`,
	} {
		var got []string
		for _, e := range s.Validate([]byte(doc)) {
			got = append(got, e.Error())
		}
		if strings.Join(got, "|") != want {
			t.Errorf("Validate(%s) = %q, want %q", doc, got, want)
		}
	}
}

func TestErrorFields(t *testing.T) {
	s, err := jsonschema.Compile([]byte(`{"items":{"required":["id"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	errs := s.Validate([]byte(`[{"id":1},{}]`))
	want := jsonschema.Error{Path: "$[1]", Reason: `missing required property "id"`}
	if len(errs) != 1 || errs[0] != want {
		t.Errorf("Validate = %#v, want [%#v]", errs, want)
	}
}
