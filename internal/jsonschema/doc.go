// Package jsonschema validates JSON documents against the small subset of
// JSON Schema (draft 2020-12) that retrykit's test-data schemas use.
//
// It exists so that the conformance vectors (testdata/vectors) and the
// executor scenarios (testdata/scenarios) are checked against their schema
// files by one implementation. It is intended to be used in tests: clear
// messages matter, performance is not a goal.
//
// # Model
//
// [Compile] parses a schema once and rejects anything it would not enforce;
// [Schema.Validate] decodes a document and returns every violation as an
// [Error] carrying the JSON path of the offending value ("$", "$.vectors[3]",
// "$.notes[\"a b\"]") and a reason.
//
// Numbers are never converted to float64: both schema and document are decoded
// with [encoding/json.Decoder.UseNumber] and compared as [math/big.Rat], so
// bounds such as 9223372036854775807 (2^63-1) are exact, 1.0 is an integer,
// and const/enum consider 1 and 1.0 equal.
//
// # Keywords
//
// A schema is a JSON object. These keywords are enforced:
//
//	type                  a type name or a list of them: null, boolean, object,
//	                      array, number, string, integer ("number" admits integers)
//	const, enum           equality with a value / with one of a list of values
//	$ref                  "#/$defs/<name>", resolved against the root's $defs
//	minimum, maximum      inclusive bounds on numbers
//	exclusiveMaximum      exclusive upper bound on numbers
//	minLength             minimum length of strings, in Unicode code points
//	pattern               a Go [regexp] (RE2) that must match somewhere in strings
//	minItems              minimum length of arrays
//	uniqueItems           true: no two array items are equal
//	items                 a schema every array item must satisfy
//	minProperties         minimum number of members of objects
//	required              names that objects must have
//	properties            a schema per member name
//	additionalProperties  false, true or a schema, for members not in properties
//
// and these are accepted as annotations: $schema, $id, title, description,
// and $defs (at the root only). Any other keyword makes [Compile] fail with an
// error matching [ErrUnsupported], so no constraint is ever silently ignored.
// Keywords that apply to one type (minLength, minItems, …) ignore values of
// other types, as in JSON Schema.
//
// # Validation rules
//
// For each value and the schema that applies to it, [Schema.Validate] applies
// the following rules in the given order:
//
//  1. $ref: the referenced definition is applied to the same value first.
//  2. type: if the value has none of the listed types, that is reported and
//     the remaining keywords of this schema are skipped (they would only
//     repeat the mistake).
//  3. const, then enum.
//  4. The keywords for the value's type: for strings minLength then pattern;
//     for numbers minimum, maximum, exclusiveMaximum; for arrays minItems,
//     uniqueItems, then items for each item in order; for objects
//     minProperties, required (in schema order), then each member in sorted
//     name order against properties or else additionalProperties.
//
// So the errors come out in a deterministic order. A worked example, for the
// schema {"type":"object","required":["id"],"additionalProperties":false,
// "properties":{"id":{},"n":{"type":"integer","minimum":0}}}:
//
//	document             errors
//	{"id":1}             (none)
//	{"id":1,"n":1.0}     (none: 1.0 is an integer)
//	{"n":-1}             $: missing required property "id"
//	                     $.n: -1 < minimum 0
//	{"id":1,"x":true}    $: property "x" not allowed
//	[]                   $: type array, want object
//
// # Non-goals
//
// Everything else in JSON Schema: boolean schemas other than
// additionalProperties, combinators (allOf, anyOf, oneOf, not, if/then/else),
// formats, remote or JSON-pointer references other than #/$defs/<name>,
// $defs below the root, vocabularies and output formats. pattern uses Go's
// RE2 syntax rather than ECMA-262; the patterns of retrykit's schemas mean the
// same in both.
package jsonschema
