package conformance_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// An expired reservation's error entry carries a type of the
// implementation's choosing (testdata/scenarios/README.md), so Judge does not
// compare it; every other field of the entry still counts.
func TestJudgeScenarioTimeoutType(t *testing.T) {
	req := protocol.Request{Op: protocol.OpScenario, Config: json.RawMessage(`{}`), Steps: json.RawMessage(`[
		{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"email.send","retry":{"max_attempts":3,"initial_interval":"PT1S","jitter":false},"visibility_timeout_ms":10000}},
		{"at_ms":0,"op":"fetch","queues":["default"]},
		{"at_ms":10000,"op":"tick"}]`)}
	ref := conformance.Reference()
	h, err := ref.Hello(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(want.Steps), `"timeout":true`) {
		t.Fatalf("the reference recorded no timeout entry: %s", want.Steps)
	}
	retype := func(from, to string) protocol.Response {
		got := want
		got.Steps = json.RawMessage(strings.Replace(string(want.Steps), from, to, 1))
		if string(got.Steps) == string(want.Steps) {
			t.Fatalf("%q not found in %s", from, want.Steps)
		}
		return got
	}
	var entry struct {
		Jobs map[string]struct {
			Errors []struct{ Type string }
		}
	}
	var obs []json.RawMessage
	if err := json.Unmarshal(want.Steps, &obs); err != nil || json.Unmarshal(obs[2], &entry) != nil || len(entry.Jobs["a"].Errors) != 1 {
		t.Fatalf("unexpected observations %s", want.Steps)
	}
	typ := entry.Jobs["a"].Errors[0].Type
	if r := conformance.Judge(h, req, want, retype(`"type":"`+typ+`"`, `"type":"my.own.timeout"`)); r != "" {
		t.Errorf("a different timeout error type was judged wrong: %s", r)
	}
	if r := conformance.Judge(h, req, want, retype(`"at_ms":10000`, `"at_ms":10001`)); r == "" {
		t.Error("a timeout entry at the wrong time was judged right")
	}
}
