package ojshttp

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// FuzzDeadLetterQuery: any query string either is refused with a 400
// naming a field, or gives a page of 1 to 100 jobs at a non-negative
// offset; parsePriority accepts only -100..100.
func FuzzDeadLetterQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5&offset=10", "page=2&per_page=20", "queue=q&type=a.*&error_type=e&since=2026-01-01T00:00:00Z",
		"until=x", "limit=1&page=1", "page=99999999999999999999", "colour=red", "queue=a&queue=b"} {
		f.Add(s, []byte(`"HIGH"`))
	}
	f.Add("", []byte(`-100`))
	f.Add("", []byte(`1e2`))
	f.Fuzz(func(t *testing.T, raw string, prio []byte) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		limit, offset, aerr := paging(q, defaultDLLimit)
		if aerr == nil {
			if limit < 1 || limit > maxDLLimit || offset < 0 {
				t.Fatalf("%q: limit %d offset %d", raw, limit, offset)
			}
		} else if aerr.status != 400 || aerr.details["field"] == nil {
			t.Fatalf("%q: %+v", raw, aerr)
		}
		if _, aerr := filterFromQuery(q); aerr != nil && (aerr.status != 400 || aerr.details["field"] == nil) {
			t.Fatalf("%q: %+v", raw, aerr)
		}
		if n, aerr := parsePriority("p", prio); aerr == nil && (n < -maxPriority || n > maxPriority) {
			t.Fatalf("priority %q accepted as %d", prio, n)
		}
	})
}

// FuzzDecodeOverride: any override is refused with a 4xx naming it, or
// gives options the executor accepts and a valid merged policy.
func FuzzDecodeOverride(f *testing.F) {
	for _, s := range []string{`{"queue":"b","meta":{"k":1},"retry":{"max_attempts":1},"args":[1],"priority":"low"}`,
		`{"retry":{"initial_interval_ms":5,"backoff_type":"linear"}}`, `{"meta":{}}`, `{"args":{}}`, `{"x":1}`, `null`, `[]`, `{"retry":{"max_attempts":-1}}`} {
		f.Add([]byte(s))
	}
	s := New(executor.New())
	pol, _ := policy.Parse([]byte(`{"max_attempts":1,"initial_interval":"PT7S","on_exhaustion":"dead_letter"}`))
	j := executor.Job{ID: "j", Type: "t", Queue: "q", Args: json.RawMessage(`[]`), Policy: pol}
	x := &extra{meta: json.RawMessage(`{"a":1}`)}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, aerr := s.decodeOverride(raw, j, x)
		if aerr != nil {
			if aerr.status < 400 || aerr.status >= 500 {
				t.Fatalf("%q: %+v", raw, aerr)
			}
			return
		}
		if c.meta != nil && !json.Valid(c.meta) {
			t.Fatalf("%q: merged meta %q", raw, c.meta)
		}
		if c.opts.Args != nil && !json.Valid(c.opts.Args) {
			t.Fatalf("%q: args %q", raw, c.opts.Args)
		}
	})
}
