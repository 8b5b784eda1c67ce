package fuzz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/conformance/scenario"
	"github.com/retrykit/retrykit/policytest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validScenarioFile reports the violations of scenario.schema.json in data.
func validScenarioFile(t *testing.T, data []byte) error {
	t.Helper()
	b, err := fs.ReadFile(retrykit.Scenarios, "scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// retryLate reports every retry time one millisecond late: a disagreement
// deep in a lifecycle (after a fetch and a fail), unlike pending-scheduled.
func retryLate(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpScenario || ref.Error != nil {
		return ref, false
	}
	var obs []scenario.Observation
	if json.Unmarshal(ref.Steps, &obs) != nil {
		return ref, false
	}
	changed := false
	for _, o := range obs {
		for id, j := range o.Jobs {
			if j.NextRetryAtMs != nil {
				late := *j.NextRetryAtMs + 1
				j.NextRetryAtMs, changed = &late, true
				o.Jobs[id] = j
			}
		}
	}
	if !changed {
		return ref, false
	}
	ref.Steps, _ = json.Marshal(obs)
	return ref, true
}

// TestWriteScenarioLifecycle: a disagreement after several steps is
// written with the reference's observations of every job as expectations;
// the file fails the bug, passes the reference, and a second write in the
// same directory takes the next id.
func TestWriteScenarioLifecycle(t *testing.T) {
	ctx := context.Background()
	bug := planted{"retry-late", retryLate}
	res, err := fuzz.Run(ctx, bug, fuzz.Config{Cases: 5000, Seed: 7, Ops: []string{protocol.OpScenario}})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Ops[0].Disagreement
	if d == nil {
		t.Fatal("the late retry time was not found")
	}
	dir := t.TempDir()
	path, id, err := fuzz.WriteScenario(dir, d, res.Seed)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"next_retry_at_ms"`) || !strings.Contains(string(data), `"errors"`) {
		t.Errorf("the expectations lack the retry time or the error history:\n%s", data)
	}
	if err := validScenarioFile(t, data); err != nil {
		t.Errorf("the written file does not match scenario.schema.json: %v\n%s", err, data)
	}
	_, id2, err := fuzz.WriteScenario(dir, d, res.Seed)
	if err != nil || id != "scn-fuzz-9001" || id2 != "scn-fuzz-9002" {
		t.Fatalf("ids %s, %s (%v), want scn-fuzz-9001, scn-fuzz-9002", id, id2, err)
	}
	written, err := conformance.Load(nil, os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	run := func(impl protocol.Implementation) conformance.Counts {
		return conformance.NewRunner(written, conformance.WithJitterSamples(0)).Run(ctx, impl).Totals
	}
	if c := run(bug); c.Fail != 2 {
		t.Errorf("replay against the bug: %+v, want 2 failures", c)
	}
	if c := run(conformance.Reference()); c.Pass != 2 || c.Fail+c.Error != 0 {
		t.Errorf("replay against the reference: %+v, want 2 passes", c)
	}
	for _, v := range written.Vectors {
		if v.Requirement == "" || v.Section == "" {
			t.Errorf("%s: requirement %q, section %q", v.ID, v.Requirement, v.Section)
		}
	}
}

// TestWriteScenarioRefuses: nothing is written for a scenario whose
// expectations would not fail the recorded answer, for another op, or into
// a directory that would not load (it holds a vector file).
func TestWriteScenarioRefuses(t *testing.T) {
	ctx := context.Background()
	req := protocol.Request{Op: protocol.OpScenario, Config: []byte(`{}`),
		Steps: []byte(`[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t"}},{"at_ms":5,"op":"fetch","queues":["default"]}]`)}
	ref, err := conformance.Reference().Do(ctx, req)
	if err != nil || ref.Error != nil {
		t.Fatalf("%v %v", ref.Error, err)
	}
	late := planted{"retry-late", func(protocol.Request, protocol.Response) (protocol.Response, bool) {
		bad := ref
		bad.Steps = json.RawMessage(strings.Replace(string(ref.Steps), `"fetched":"a"`, `"fetched":"b"`, 1))
		return bad, true
	}}
	d, err := policytest.Compare(ctx, protocol.Hello{Ops: []string{protocol.OpScenario}}, late, req)
	if err != nil || d == nil {
		t.Fatalf("no disagreement: %v", err)
	}
	empty := t.TempDir()
	agree := *d
	agree.Got = ref
	shipped, err := fs.ReadFile(retrykit.Vectors, "delay.json")
	if err != nil {
		t.Fatal(err)
	}
	withVectors := t.TempDir()
	if err := os.WriteFile(filepath.Join(withVectors, "delay.json"), shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	notScenario := *d
	notScenario.Request.Op = protocol.OpDelay
	for _, tc := range []struct {
		name string
		dir  string
		d    *policytest.Disagreement
		want string
	}{
		{"agreeing answer", empty, &agree, "would not fail"},
		{"other op", empty, &notScenario, "scenario op"},
		{"vector dir", withVectors, d, "nothing written"},
	} {
		if _, _, err := fuzz.WriteScenario(tc.dir, tc.d, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("%d files written", len(entries))
	}
	if entries, _ := os.ReadDir(withVectors); len(entries) != 1 {
		t.Errorf("%d files in the vector directory, want delay.json alone", len(entries))
	}
	// The scenario itself is fine: written to an empty directory, it
	// fails the answer that disagrees.
	if _, id, err := fuzz.WriteScenario(empty, d, 1); err != nil || id != "scn-fuzz-9001" {
		t.Errorf("id %q, err %v", id, err)
	}
}
