package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

func loadWithScenarios(t testing.TB) *conformance.Suite {
	t.Helper()
	s, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func scenarioVectors(s *conformance.Suite) []*conformance.Vector {
	var out []*conformance.Vector
	for _, v := range s.Vectors {
		if v.Kind == conformance.KindScenario {
			out = append(out, v)
		}
	}
	return out
}

// TestReferencePassesScenarios runs vectors and scenarios in process: all
// pass, nothing is left uncovered, and the whole run stays fast.
func TestReferencePassesScenarios(t *testing.T) {
	suite := loadWithScenarios(t)
	n := len(scenarioVectors(suite))
	if n < 60 {
		t.Fatalf("%d scenario vectors, want at least 60", n)
	}
	start := time.Now()
	rep := conformance.NewRunner(suite).Run(context.Background(), conformance.Reference())
	elapsed := time.Since(start)
	for _, r := range rep.Results {
		if r.Status != conformance.StatusPass {
			t.Errorf("%s %s: %s", r.Status, r.ID, r.Reason)
		}
	}
	if rep.Totals.NotRun != 0 || rep.Totals.Pass != len(suite.Vectors)+1 {
		t.Errorf("totals %+v for %d vectors (%d scenarios) + the jitter check", rep.Totals, len(suite.Vectors), n)
	}
	// Scenario requirement ids and their covers count in the summary:
	// CORE-T17 (manual retry) is the main requirement of one scenario and
	// covered by three more.
	for _, s := range rep.Requirements {
		if s.Name == "CORE-T17" && s.Pass < 4 {
			t.Errorf("CORE-T17 summary %+v", s)
		}
	}
	t.Logf("in-process run of %d vectors and scenarios: %v", len(rep.Results), elapsed)
}

// recording wraps the reference, remembers scenario requests and lets a
// test tamper with the answers.
type recording struct {
	mu      sync.Mutex
	reqs    []protocol.Request
	ops     []string
	tamper  func(id int64, resp *protocol.Response)
	respond func(req protocol.Request) (protocol.Response, bool)
}

func (r *recording) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	if r.ops != nil {
		h.Ops = r.ops
	}
	return h, err
}

func (r *recording) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if req.Op == protocol.OpScenario {
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		r.mu.Unlock()
		if r.respond != nil {
			if resp, ok := r.respond(req); ok {
				return resp, nil
			}
		}
	}
	resp, err := conformance.Reference().Do(ctx, req)
	if r.tamper != nil && req.Op == protocol.OpScenario {
		r.tamper(req.ID, &resp)
	}
	return resp, err
}

func runScenarios(t *testing.T, impl protocol.Implementation, opts ...conformance.Option) *conformance.Report {
	t.Helper()
	suite := loadWithScenarios(t)
	var ids []string
	for _, v := range scenarioVectors(suite) {
		ids = append(ids, v.ID)
	}
	opts = append([]conformance.Option{conformance.WithIDs(ids...), conformance.WithJitterSamples(0)}, opts...)
	return conformance.NewRunner(suite, opts...).Run(context.Background(), impl)
}

// The request carries config and steps and never the expectations.
func TestScenarioRequestHasNoExpectations(t *testing.T) {
	rec := &recording{}
	rep := runScenarios(t, rec)
	if !rep.OK() || len(rec.reqs) != len(rep.Results) || len(rec.reqs) < 60 {
		t.Fatalf("%d requests, %d results, totals %+v", len(rec.reqs), len(rep.Results), rep.Totals)
	}
	for _, req := range rec.reqs {
		line := string(req.AppendJSON(nil))
		if strings.Contains(line, `"expect"`) || strings.Contains(line, `"fetched"`) || strings.Contains(line, `"absent"`) {
			t.Fatalf("expectations sent to the adapter: %.300s", line)
		}
		if !strings.Contains(line, `"op":"scenario"`) || !strings.Contains(line, `"config":{`) || !strings.Contains(line, `"steps":[{"at_ms":`) {
			t.Fatalf("request %.300s", line)
		}
		var back protocol.Request
		if err := json.Unmarshal([]byte(line), &back); err != nil || !bytes.Equal(back.Steps, req.Steps) || !bytes.Equal(back.Config, req.Config) {
			t.Fatalf("request does not round-trip (%v): %.200s", err, line)
		}
	}
}

// A wrong executor fails the scenarios that notice, with a reason naming
// the step and field, and want/got of that step.
func TestScenarioWrongAnswersFail(t *testing.T) {
	// An executor that makes retryable jobs due 1 ms early.
	early := &recording{tamper: func(_ int64, resp *protocol.Response) {
		var obs []map[string]any
		if err := json.Unmarshal(resp.Steps, &obs); err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			for _, j := range o["jobs"].(map[string]any) {
				if n, ok := j.(map[string]any)["next_retry_at_ms"].(float64); ok {
					j.(map[string]any)["next_retry_at_ms"] = n - 1
				}
			}
		}
		resp.Steps, _ = json.Marshal(obs)
	}}
	rep := runScenarios(t, early)
	fails := rep.Filter(conformance.StatusFail)
	if len(fails) < 20 || rep.Totals.Error != 0 {
		t.Fatalf("early retries: %d failures, totals %+v", len(fails), rep.Totals)
	}
	var f *conformance.Result
	for i := range fails {
		if fails[i].ID == "scn-core-0007" {
			f = &fails[i]
		}
	}
	if f == nil {
		t.Fatal("scn-core-0007 (next_retry_at 1500) did not fail")
	}
	if !strings.Contains(f.Reason, `step 2: jobs["a"].next_retry_at_ms: want 1500, got 1499`) ||
		!strings.Contains(string(f.Want), `"next_retry_at_ms":1500`) || !strings.Contains(string(f.Got), `"next_retry_at_ms":1499`) {
		t.Errorf("reason %q\nwant %s\ngot  %s", f.Reason, f.Want, f.Got)
	}
}

// Counts are optional in an answer: the runner recomputes them from jobs.
func TestScenarioCountsOptional(t *testing.T) {
	noCounts := &recording{tamper: func(_ int64, resp *protocol.Response) {
		var obs []map[string]any
		json.Unmarshal(resp.Steps, &obs)
		for _, o := range obs {
			delete(o, "counts")
		}
		resp.Steps, _ = json.Marshal(obs)
	}}
	if rep := runScenarios(t, noCounts); !rep.OK() || rep.Totals.Pass < 60 {
		t.Errorf("without counts: %+v", rep.Totals)
	}
	// ... but counts that are given are checked.
	wrongCounts := &recording{tamper: func(_ int64, resp *protocol.Response) {
		var obs []map[string]any
		json.Unmarshal(resp.Steps, &obs)
		for _, o := range obs {
			o["counts"] = map[string]int{}
		}
		resp.Steps, _ = json.Marshal(obs)
	}}
	if rep := runScenarios(t, wrongCounts); rep.Totals.Fail < 10 {
		t.Errorf("wrong counts: %+v", rep.Totals)
	}
}

// Unsupported and missing ops are coverage; rejections and unreadable
// observations are errors, never passes or failures.
func TestScenarioOutcomeClasses(t *testing.T) {
	noOp := &recording{ops: []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpMatch, protocol.OpDecide}}
	rep := runScenarios(t, noOp)
	if len(rep.Results) != 0 || rep.Totals.NotRun != 0 || rep.ScenariosLeftOut < 60 || len(noOp.reqs) != 0 {
		t.Errorf("op not listed: %+v, %d requests", rep.Totals, len(noOp.reqs))
	}

	unsupported := &recording{respond: func(protocol.Request) (protocol.Response, bool) {
		return protocol.Response{Unsupported: true}, true
	}}
	rep = runScenarios(t, unsupported)
	if len(rep.Results) != 0 || rep.Totals.NotRun < 60 || !rep.OK() {
		t.Errorf("unsupported: %+v", rep.Totals)
	}

	rejecting := &recording{respond: func(protocol.Request) (protocol.Response, bool) {
		return protocol.Response{Error: &protocol.ErrorResult{Type: protocol.ErrorInvalidRequest, Message: "no executor"}}, true
	}}
	rep = runScenarios(t, rejecting)
	if rep.Totals.Error < 60 || rep.Totals.Fail != 0 || !strings.Contains(rep.Results[0].Reason, "no executor") {
		t.Errorf("rejecting: %+v %q", rep.Totals, rep.Results[0].Reason)
	}

	garbled := &recording{respond: func(protocol.Request) (protocol.Response, bool) {
		return protocol.Response{Steps: json.RawMessage(`{"not":"an array"}`)}, true
	}}
	rep = runScenarios(t, garbled)
	if rep.Totals.Error < 60 || rep.Totals.Fail != 0 || !strings.Contains(rep.Results[0].Reason, "malformed answer") {
		t.Errorf("garbled: %+v %q", rep.Totals, rep.Results[0].Reason)
	}

	// Fewer observations than steps: the missing ones are mismatches.
	short := &recording{tamper: func(_ int64, resp *protocol.Response) {
		var obs []json.RawMessage
		json.Unmarshal(resp.Steps, &obs)
		resp.Steps, _ = json.Marshal(obs[:len(obs)-1])
	}}
	rep = runScenarios(t, short)
	if rep.Totals.Fail < 60 || !strings.Contains(rep.Filter(conformance.StatusFail)[0].Reason, "observation: want present, got missing") {
		t.Errorf("short: %+v", rep.Totals)
	}
}

// Skip lists, selection by a covered requirement and the reference's
// malformed-request handling.
func TestScenarioSelectionAndSkips(t *testing.T) {
	suite := loadWithScenarios(t)
	ctx := context.Background()
	// RK-30 is the requirement of scn-tmo-0010 and covered by two more.
	rep := conformance.NewRunner(suite, conformance.WithRequirements("RK-30"), conformance.WithJitterSamples(0)).Run(ctx, conformance.Reference())
	got := map[string]bool{}
	for _, r := range rep.Results {
		got[r.ID] = true
	}
	for _, id := range []string{"scn-tmo-0001", "scn-tmo-0002", "scn-tmo-0010"} {
		if !got[id] {
			t.Errorf("--requirement RK-30 did not run %s (ran %v)", id, got)
		}
	}
	rep = conformance.NewRunner(suite, conformance.WithIDs("scn-core-0001"), conformance.WithSkips(conformance.SkipList{"scn-core-0001": "known"})).Run(ctx, conformance.Reference())
	if len(rep.Results) != 1 || rep.Results[0].Status != conformance.StatusSkip {
		t.Errorf("skip: %+v", rep.Results)
	}
	clash := `{"schema_version":1,"suite_version":"0.0.1","spec_version":"1.0.0-rc.1","kind":"match","notes":{},"vectors":[` +
		`{"id":"scn-core-0001","requirement":"RET-18","section":"6.2","description":"same id as a scenario","flags":[],"input":{"patterns":["a"],"error_type":"a"},"expected":{"match":true}}]}`
	if _, err := conformance.Load(mapFS{"match.json": []byte(clash)}, retrykit.Scenarios); !isInvalidVector(err) || !strings.Contains(err.Error(), "duplicate id") {
		t.Errorf("a vector and a scenario with one id: %v", err)
	}

	for _, req := range []protocol.Request{
		{Op: protocol.OpScenario},
		{Op: protocol.OpScenario, Steps: json.RawMessage(`{}`)},
		{Op: protocol.OpScenario, Steps: json.RawMessage(`[{"at_ms":0,"op":"frobnicate"}]`)},
		{Op: protocol.OpScenario, Steps: json.RawMessage(`[{"at_ms":5,"op":"tick"},{"at_ms":4,"op":"tick"}]`)},
		{Op: protocol.OpScenario, Config: json.RawMessage(`[]`), Steps: json.RawMessage(`[]`)},
	} {
		resp, err := conformance.Reference().Do(ctx, req)
		if err != nil || resp.Error == nil || resp.Error.Type != protocol.ErrorInvalidRequest {
			t.Errorf("%s %s: %+v %v", req.Config, req.Steps, resp, err)
		}
	}
	// Unknown keys inside steps are ignored (PROTOCOL.md 3.7).
	resp, _ := conformance.Reference().Do(ctx, protocol.Request{Op: protocol.OpScenario,
		Steps: json.RawMessage(`[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","color":"red"},"note":"x"},{"at_ms":0,"op":"fetch","queues":["default"]}]`)})
	if resp.Error != nil || !strings.Contains(string(resp.Steps), `"fetched":"a"`) {
		t.Errorf("unknown keys: %s %+v", resp.Steps, resp.Error)
	}
}
