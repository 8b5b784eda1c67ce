package jsonschema_test

import (
	"testing"

	"github.com/retrykit/retrykit/internal/jsonschema"
)

// FuzzCompileValidate checks that Compile and Validate never panic, and that a
// document is either valid or has errors that all carry a path.
func FuzzCompileValidate(f *testing.F) {
	for _, c := range keywordCases {
		f.Add(c.schema, c.good)
		f.Add(c.schema, c.bad)
	}
	f.Fuzz(func(t *testing.T, schema, doc string) {
		s, err := jsonschema.Compile([]byte(schema))
		if err != nil {
			return
		}
		for _, e := range s.Validate([]byte(doc)) {
			if e.Path == "" || e.Path[0] != '$' || e.Reason == "" {
				t.Errorf("malformed error %#v", e)
			}
		}
	})
}
