package ojshttp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/executor"
)

// FuzzParseRateLimit: parseRateLimit never panics; an error names a field
// under the one given; a limit it accepts the executor accepts too (one
// rule on both paths), and its view parses back to the same limit.
func FuzzParseRateLimit(f *testing.F) {
	for _, s := range []string{
		`{"key":"stripe-api","concurrency":5,"rate":{"limit":100,"period":"PT1M"},"throttle":{"limit":10,"period":"PT1S"},"on_limit":"wait"}`,
		`{"max_per_second":1}`, `{"key":"k","rate":1,"period":"second"}`, `{"key":"a:b.c-d","concurrency":0,"on_limit":"drop"}`,
		`{"key":"k","rate":{"limit":1,"period":"P1D"},"on_limit":"reschedule"}`, `{"key":null}`, `[]`, `{"key":"k","throttle":{"limit":3,"period":"PT0.000000001S"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, aerr := parseRateLimit("options.rate_limit", json.RawMessage(s), "q")
		if aerr != nil {
			if field, _ := aerr.details["field"].(string); !strings.HasPrefix(field, "options.rate_limit") {
				t.Fatalf("%s: error names field %q: %v", s, field, aerr)
			}
			return
		}
		e := executor.New()
		if _, err := e.Enqueue(executor.JobSpec{Type: "t", RateLimit: r}); err != nil {
			t.Fatalf("%s: parsed %+v, but the executor refuses it: %v", s, r, err)
		}
		view, _ := json.Marshal(rateLimitView(r))
		back, aerr := parseRateLimit("options.rate_limit", view, "q")
		if aerr != nil || !reflect.DeepEqual(back, r) {
			t.Fatalf("%s: view %s reads back as %+v (%v), want %+v", s, view, back, aerr, r)
		}
	})
}
