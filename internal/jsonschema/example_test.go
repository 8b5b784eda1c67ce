package jsonschema_test

import (
	"fmt"

	"github.com/retrykit/retrykit/internal/jsonschema"
)

func Example() {
	schema, err := jsonschema.Compile([]byte(`{
		"type": "object",
		"required": ["id", "delay_ns"],
		"additionalProperties": false,
		"properties": {
			"id": {"type": "string", "pattern": "^delay-[0-9]{4}$"},
			"delay_ns": {"type": "integer", "minimum": 0, "maximum": 9223372036854775807}
		}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(schema.Validate([]byte(`{"id": "delay-0001", "delay_ns": 9223372036854775807}`)))
	for _, e := range schema.Validate([]byte(`{"id": "delay-1", "delay_ns": 9223372036854775808, "note": ""}`)) {
		fmt.Println(e)
	}
	// Output:
	// []
	// $.delay_ns: 9223372036854775808 > maximum 9223372036854775807
	// $.id: "delay-1" does not match ^delay-[0-9]{4}$
	// $: property "note" not allowed
}
