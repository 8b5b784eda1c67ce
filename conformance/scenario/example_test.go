package scenario_test

import (
	"fmt"
	"strings"

	"github.com/retrykit/retrykit/conformance/scenario"
)

// Decode a scenario file, play it on the reference executor and check it.
func Example() {
	f, err := scenario.Decode(strings.NewReader(`{
	  "schema_version": 1, "suite_version": "0.1.0", "spec_version": "1.0.0-rc.1",
	  "kind": "scenario", "notes": {"kind": "example"},
	  "scenarios": [{
	    "id": "scn-demo-0001", "requirement": "RET-11", "section": "ojs-retry 9.1",
	    "description": "retryable until 0 + 1s, never before", "config": {},
	    "steps": [
	      {"at_ms": 0, "op": "enqueue", "job": {"id": "a", "type": "t", "retry": {"jitter": false}}, "expect": {}},
	      {"at_ms": 0, "op": "fetch", "queues": ["default"], "expect": {"fetched": "a"}},
	      {"at_ms": 0, "op": "fail", "id": "a", "error": {"type": "x", "message": "m"},
	       "expect": {"jobs": {"a": {"state": "retryable", "next_retry_at_ms": 1000}}}},
	      {"at_ms": 999, "op": "fetch", "queues": ["default"], "expect": {"fetched": null}},
	      {"at_ms": 1000, "op": "fetch", "queues": ["default"], "expect": {"fetched": "a", "jobs": {"a": {"attempt": 3}}}}
	    ]}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	sc := &f.Scenarios[0]
	obs, err := scenario.Play(sc)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range scenario.Check(sc, obs) {
		fmt.Println(m)
	}
	// Output:
	// step 4: jobs["a"].attempt: want 3, got 2
}
