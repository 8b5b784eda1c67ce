package fuzz_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policytest"
)

// writtenVector writes the disagreement of got on req and returns the
// vector as written.
func writtenVector(t *testing.T, req protocol.Request, got protocol.Response) map[string]any {
	t.Helper()
	h, _ := conformance.Reference().Hello(t.Context())
	d := policytest.Judge(h, req, got)
	if d == nil {
		t.Fatalf("no disagreement for %+v", got)
	}
	dir := t.TempDir()
	path, id, err := fuzz.WriteVector(dir, d, fuzz.Explain(d, false), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Vectors []map[string]any `json:"vectors"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, v := range f.Vectors {
		if v["id"] == id {
			return v
		}
	}
	t.Fatalf("%s not in %s", id, data)
	return nil
}

func flagsOf(v map[string]any) []string {
	var out []string
	for _, f := range v["flags"].([]any) {
		out = append(out, f.(string))
	}
	return out
}

func ns(n int64) *int64 { return &n }

// A written vector carries the requirement, level and class flags of the
// rule the implementation broke, as the shipped suite files that rule.
func TestWriteVectorNamesTheBrokenRule(t *testing.T) {
	half, nearOne, high := 0.5, 0.9999999999999998, 0.75
	for _, tc := range []struct {
		name      string
		req       protocol.Request
		got       protocol.Response
		wantReq   string
		wantFlag  string // a flag the vector must carry ("" for none)
		forbidden string // a flag it must not carry
	}{
		{"P accepted as zero", protocol.Request{Op: protocol.OpParseDuration, Value: "P"},
			protocol.Response{NS: ns(0)}, "RET-19", "class:lenient-duration", "retrykit:decision"},
		{"delay rounded to ms", protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(`{"initial_interval":"PT1.0004S","jitter":false}`), Attempt: 1},
			protocol.Response{DelayNS: ns(1_000_000_000)}, "", "", ""},
		{"strategy ignored", protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(`{"backoff_strategy":"linear","jitter":false}`), Attempt: 3, Rand: &half},
			protocol.Response{DelayNS: ns(4_000_000_000)}, "", "class:strategy-field", ""},
		{"regex match", protocol.Request{Op: protocol.OpMatch, Patterns: []string{"auth.*"}, ErrorType: "authx"},
			protocol.Response{Match: ptrTrue()}, "", "class:regex-match", ""},
		// No cap after jitter is a spec MUST (section 5, RET-06), even
		// with r next to 1, where the nearest shipped vector is a
		// retrykit decision (RK-05): a MUST bug must not be filed under a
		// flag implementations may leave unclaimed.
		{"no cap after jitter, r near 1", protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(`{"initial_interval":"PT1S","max_interval":"PT1S"}`), Attempt: 1, Rand: &nearOne},
			protocol.Response{DelayNS: ns(1_499_999_999)}, "RET-06", "class:post-jitter-cap", "retrykit:decision"},
		{"no cap after jitter", protocol.Request{Op: protocol.OpDecide, Policy: json.RawMessage(`{"initial_interval":"PT2S","max_interval":"PT3S"}`), Attempt: 2, Rand: &high, Error: &protocol.FailureInput{Type: "x.y"}},
			protocol.Response{Action: "retry", DelayNS: ns(3_750_000_000)}, "RET-06", "class:post-jitter-cap", "retrykit:decision"},
		// The nearest shipped vector (a section 12.3 example) carries
		// extension:backoff_strategy; this policy does not: an
		// implementation without the extension must still run it.
		{"no cap after jitter, policy without the extension", protocol.Request{Op: protocol.OpDecide, Policy: json.RawMessage(`{"max_interval":"PT1S"}`), Attempt: 1, Rand: &high, Error: &protocol.FailureInput{}},
			protocol.Response{Action: "retry", DelayNS: ns(1_250_000_000)}, "RET-06", "class:post-jitter-cap", "extension:backoff_strategy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := writtenVector(t, tc.req, tc.got)
			req := v["requirement"].(string)
			if tc.wantReq != "" && req != tc.wantReq {
				t.Errorf("requirement %s, want %s", req, tc.wantReq)
			}
			if req == "RET-05" {
				t.Errorf("filed under RET-05 (jitter), though the policy has no jitter: %v", v)
			}
			fl := flagsOf(v)
			if tc.wantFlag != "" && !slices.Contains(fl, tc.wantFlag) {
				t.Errorf("flags %v lack %s", fl, tc.wantFlag)
			}
			if tc.forbidden != "" && slices.Contains(fl, tc.forbidden) {
				t.Errorf("flags %v carry %s", fl, tc.forbidden)
			}
		})
	}
}

// A policy with duplicate keys is written as policy_raw text, never as a
// "policy" object with duplicate keys.
func TestWriteVectorPolicyRaw(t *testing.T) {
	req := protocol.Request{Op: protocol.OpValidate, Policy: json.RawMessage(`{"max_attempts":3,"max_attempts":5}`)}
	eff := json.RawMessage(`{"max_attempts":5,"initial_interval":"PT1S","backoff_coefficient":2,"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"discard","backoff_strategy":"exponential"}`)
	v := writtenVector(t, req, protocol.Response{Effective: eff})
	in := v["input"].(map[string]any)
	if in["policy_raw"] != `{"max_attempts":3,"max_attempts":5}` || in["policy"] != nil {
		t.Errorf("input %v", in)
	}
	if v["requirement"] != "RK-08" {
		t.Errorf("requirement %v, want RK-08 (duplicate keys)", v["requirement"])
	}
}

func ptrTrue() *bool { b := true; return &b }

// Explain names the bug model behind a disagreement, and the rule: a
// missing cap after jitter with r next to 1 is the bug no-post-jitter-cap
// under the MUST of section 5 (RET-06), whether the implementation's
// 0.5 + r rounds or not (float-tolerance), never a retrykit decision.
func TestExplainNamesTheModel(t *testing.T) {
	h, _ := conformance.Reference().Hello(t.Context())
	nearOne, nearerOne := 0.9999999999999998, 0.9999999999999999
	for _, tc := range []struct {
		name string
		req  protocol.Request
		got  int64
	}{
		{"r near 1, max_interval PT1S", protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(`{"max_interval":"PT1S"}`), Attempt: 1, Rand: &nearOne}, 1_499_999_999},
		{"exact arithmetic, 0.5 + r below 1.5", protocol.Request{Op: protocol.OpDelay, Attempt: 9, Rand: &nearerOne}, 383_999_999_999},
		{"float arithmetic, 0.5 + r rounded to 1.5", protocol.Request{Op: protocol.OpDelay, Attempt: 9, Rand: &nearerOne}, 384_000_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := policytest.Judge(h, tc.req, protocol.Response{DelayNS: ns(tc.got)})
			if d == nil {
				t.Fatal("no disagreement")
			}
			c := fuzz.Explain(d, false)
			if !c.Found() || c.Model.Name != "no-post-jitter-cap" {
				t.Errorf("model %q (found %v), want no-post-jitter-cap", c.Model.Name, c.Found())
			}
			if c.Requirement != "RET-06" || slices.Contains(c.Flags, "retrykit:decision") || !slices.Contains(c.Flags, "class:post-jitter-cap") {
				t.Errorf("rule %s %v, want RET-06 with class:post-jitter-cap and no retrykit:decision", c.Requirement, c.Flags)
			}
		})
	}
}

// A rejected "P0M" fits two bug models: zero durations rejected, and no
// date components (Y, M). Explain, with the answer alone, takes the
// narrower; Confirm asks the implementation, which accepts "PT0S", and names
// the real gap. An implementation that rejects both zero durations and
// months stays explained by a model it does not contradict.
func TestConfirmAsksTheImplementation(t *testing.T) {
	ctx := t.Context()
	h, _ := conformance.Reference().Hello(ctx)
	model := func(name string) diagnose.Model {
		for _, m := range diagnose.Models() {
			if m.Name == name {
				return m
			}
		}
		t.Fatalf("no model %s", name)
		return diagnose.Model{}
	}
	noMonths := model("date-components-unsupported")
	impl := modelImpl{noMonths}
	req := protocol.Request{ID: 1, Op: protocol.OpParseDuration, Value: "P0M"}
	got, err := impl.Do(ctx, req)
	if err != nil || got.Error == nil {
		t.Fatalf("the planted implementation accepts P0M: %+v %v", got, err)
	}
	d := policytest.Judge(h, req, got)
	if d == nil {
		t.Fatal("no disagreement")
	}
	if c := fuzz.Explain(d, false); c.Found() && c.Model.Name == noMonths.Name {
		t.Logf("Explain alone already names %s", c.Model.Name)
	}
	c := fuzz.Confirm(ctx, impl, d, false)
	if !c.Found() || c.Model.Name != noMonths.Name {
		t.Errorf("Confirm names %q (found %v), want %s: the implementation accepts PT0S", c.Model.Name, c.Found(), noMonths.Name)
	}
	if c := fuzz.Confirm(ctx, modelImpl{model("zero-duration-rejected")}, d, false); !c.Found() || c.Model.Name != "zero-duration-rejected" {
		t.Errorf("an implementation that rejects every zero duration: Confirm names %q (found %v)", c.Model.Name, c.Found())
	}
}

// modelImpl answers as a bug model wherever the model says what it would
// answer, and as the reference elsewhere.
type modelImpl struct{ m diagnose.Model }

func (i modelImpl) Hello(ctx context.Context) (protocol.Hello, error) {
	return conformance.Reference().Hello(ctx)
}

func (i modelImpl) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if a, ok := i.m.Answer(req); ok && !diagnose.Drawn(a) {
		a.ID = req.ID
		return a, nil
	}
	return conformance.Reference().Do(ctx, req)
}
