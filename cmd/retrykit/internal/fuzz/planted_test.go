package fuzz_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/policytest"
)

// The proof that fuzzing finds what the vectors miss: each planted bug is a
// variant of the reference with one realistic defect that passes every
// shipped vector. The fuzzer must find it within a fixed budget, shrink it
// to the exact minimal case, and write a vector that the bug fails on
// replay and the reference passes.

// planted is the reference with one answer changed.
type planted struct {
	name   string
	change func(req protocol.Request, ref protocol.Response) (protocol.Response, bool)
}

func (p planted) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation = "planted-" + p.name
	return h, err
}

func (p planted) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	ref, err := conformance.Reference().Do(ctx, req)
	if err != nil {
		return ref, err
	}
	if resp, ok := p.change(req, ref); ok {
		resp.ID = req.ID
		return resp, nil
	}
	return ref, nil
}

func refDo(req protocol.Request) protocol.Response {
	resp, _ := conformance.Reference().Do(context.Background(), req)
	return resp
}

// int32Attempt: the attempt is kept in an int32, so attempts from 2^31 to
// 2^32 − 1 wrap to negative numbers, which the implementation clamps to 1.
// The vectors test 2^31 − 1 and 2^32, both fine.
func int32Attempt(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpDelay || req.Attempt < 1<<31 || req.Attempt >= 1<<32 || ref.DelayNS == nil {
		return ref, false
	}
	req.Attempt = 1
	return refDo(req), true
}

// int32MaxAttempts: a ten-digit max_attempts is read through an int32, so
// 2^31 … 9 999 999 999 wrap, and a negative limit exhausts at once. The
// vectors' largest max_attempts (2^63 − 1, 19 digits) takes another path.
func int32MaxAttempts(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpDecide || ref.Action != "retry" {
		return ref, false
	}
	p, err := policy.Parse(req.Policy)
	if err != nil {
		return ref, false
	}
	ma := p.Spec().MaxAttempts
	if len(strconv.Itoa(ma)) != 10 || int32(ma) > 0 {
		return ref, false
	}
	return protocol.Response{Action: p.Spec().OnExhaustion.String()}, true
}

// fourSegments: error types are compared on their first four segments
// only (a fixed-size array of segments), so "a.b.c.d.e" equals "a.b.c.d".
// The vectors' error types have at most three dots.
func fourSegments(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpMatch || ref.Match == nil || *ref.Match {
		return ref, false
	}
	cut := func(s string) string {
		parts := strings.SplitN(s, ".", 5)
		return strings.Join(parts[:min(len(parts), 4)], ".")
	}
	for _, p := range req.Patterns {
		if !strings.HasSuffix(p, ".*") && strings.Count(req.ErrorType, ".") >= 4 && cut(p) == cut(req.ErrorType) {
			ok := true
			return protocol.Response{Match: &ok}, true
		}
	}
	return ref, false
}

var leadingZero = regexp.MustCompile(`([PTYMDH])0([0-9]+)`)

// octalComponents: duration components are read with strconv.ParseInt(s,
// 0, 64), which takes a leading zero as octal: "PT010S" is 8 seconds and
// "PT08S" an error. The vectors' only leading zeros ("PT00001S", "P0D")
// read the same in octal.
func octalComponents(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpParseDuration || !leadingZero.MatchString(req.Value) {
		return ref, false
	}
	bad := false
	v := leadingZero.ReplaceAllStringFunc(req.Value, func(m string) string {
		n, err := strconv.ParseInt(m[1:], 0, 64)
		if err != nil {
			bad = true
			return m
		}
		return m[:1] + strconv.FormatInt(n, 10)
	})
	if bad {
		return protocol.Response{Error: &protocol.ErrorResult{Type: protocol.ErrorPolicyInvalid, Message: "octal"}}, true
	}
	return refDo(protocol.Request{Op: protocol.OpParseDuration, Value: v}), true
}

// dedupPatterns: non_retryable_errors is kept in a set, so the effective
// policy reports ["a"] for ["a", "a"]. No vector has a duplicate entry.
func dedupPatterns(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpValidate || ref.Effective == nil {
		return ref, false
	}
	var eff map[string]json.RawMessage
	var pats []string
	if json.Unmarshal(ref.Effective, &eff) != nil || json.Unmarshal(eff["non_retryable_errors"], &pats) != nil {
		return ref, false
	}
	seen := map[string]bool{}
	var set []string
	for _, p := range pats {
		if !seen[p] {
			seen[p] = true
			set = append(set, p)
		}
	}
	if len(set) == len(pats) {
		return ref, false
	}
	b, _ := json.Marshal(set)
	eff["non_retryable_errors"] = b
	out, _ := json.Marshal(eff)
	return protocol.Response{Effective: out}, true
}

// pendingScheduled: an executor that takes "pending" and
// "scheduled_at_ms" together, ignoring the time, instead of rejecting the
// combination. No shipped scenario enqueues a pending job with a time.
func pendingScheduled(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
	if req.Op != protocol.OpScenario {
		return ref, false
	}
	var steps []map[string]any
	if json.Unmarshal(req.Steps, &steps) != nil {
		return ref, false
	}
	changed := false
	for _, st := range steps {
		if j, ok := st["job"].(map[string]any); ok && j["pending"] == true {
			if _, ok := j["scheduled_at_ms"]; ok {
				delete(j, "scheduled_at_ms")
				changed = true
			}
		}
	}
	if !changed {
		return ref, false
	}
	req.Steps, _ = json.Marshal(steps)
	return refDo(req), true
}

func TestPlantedBugs(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 20000 // cases per bug, all on the bug's op
	tests := []struct {
		bug  planted
		op   string
		want func(t *testing.T, req protocol.Request) // the exact shrunk request
	}{
		{planted{"int32-attempt", int32Attempt}, protocol.OpDelay, func(t *testing.T, req protocol.Request) {
			if req.Attempt != 1<<31 {
				t.Errorf("attempt shrunk to %d, want exactly 2^31 = %d", req.Attempt, int64(1)<<31)
			}
			if req.Policy != nil && string(req.Policy) != "{}" {
				t.Errorf("policy shrunk to %s, want {} or none", req.Policy)
			}
		}},
		{planted{"int32-max-attempts", int32MaxAttempts}, protocol.OpDecide, func(t *testing.T, req protocol.Request) {
			if string(req.Policy) != `{"max_attempts":2147483648}` || req.Attempt != 1 {
				t.Errorf("shrunk to policy %s, attempt %d; want {\"max_attempts\":2147483648}, attempt 1", req.Policy, req.Attempt)
			}
		}},
		{planted{"four-segments", fourSegments}, protocol.OpMatch, func(t *testing.T, req protocol.Request) {
			// One exact entry that differs from the type only past the
			// fourth segment.
			if len(req.Patterns) != 1 || strings.HasSuffix(req.Patterns[0], ".*") || req.Patterns[0] == req.ErrorType ||
				strings.Count(req.Patterns[0], ".")+strings.Count(req.ErrorType, ".") < 7 {
				t.Errorf("shrunk to %q vs %q, want one exact entry that shares its first four segments with the type", req.Patterns, req.ErrorType)
			}
		}},
		{planted{"octal-components", octalComponents}, protocol.OpParseDuration, func(t *testing.T, req protocol.Request) {
			if !regexp.MustCompile(`^PT?0[0-9]{1,2}[YMDHS]$`).MatchString(req.Value) {
				t.Errorf("shrunk to %q, want one component with a leading zero, such as \"PT08S\"", req.Value)
			}
		}},
		{planted{"dedup-patterns", dedupPatterns}, protocol.OpValidate, func(t *testing.T, req protocol.Request) {
			var m map[string][]string
			if json.Unmarshal(req.Policy, &m) != nil || len(m) != 1 || len(m["non_retryable_errors"]) != 2 ||
				m["non_retryable_errors"][0] != m["non_retryable_errors"][1] {
				t.Errorf("shrunk to %s, want only non_retryable_errors, with two equal entries", req.Policy)
			}
		}},
		{planted{"pending-scheduled", pendingScheduled}, protocol.OpScenario, func(t *testing.T, req protocol.Request) {
			var steps []map[string]any
			_ = json.Unmarshal(req.Steps, &steps)
			if len(steps) != 1 || steps[0]["op"] != "enqueue" {
				t.Errorf("shrunk to %s, want the one enqueue step", req.Steps)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.bug.name, func(t *testing.T) {
			ctx := context.Background()
			// The premise: the shipped vectors do not catch the bug.
			if rep := conformance.NewRunner(suite).Run(ctx, tc.bug); !rep.OK() {
				t.Fatalf("the shipped vectors already catch %s: %+v", tc.bug.name, rep.Totals)
			}
			// Three seeds one request at a time, and one in pipelined
			// batches (search, then a second search that shrinks).
			for _, run := range []struct {
				seed     uint64
				parallel int
			}{{1, 1}, {2, 1}, {3, 1}, {1, 16}} {
				seed := run.seed
				start := time.Now()
				res, err := fuzz.Run(ctx, tc.bug, fuzz.Config{Cases: budget, Seed: seed, Ops: []string{tc.op}, Parallel: run.parallel})
				if err != nil {
					t.Fatal(err)
				}
				o := res.Ops[0]
				if o.Disagreement == nil {
					t.Fatalf("seed %d: not found in %d cases (failure: %v)", seed, o.Cases, o.Failure)
				}
				d := o.Disagreement
				t.Logf("seed %d, parallel %d: found after %d cases, in %v (shrinking %v):\n%s", seed, run.parallel, o.Cases, time.Since(start), o.Shrink, d.Error())
				tc.want(t, d.Request)

				if tc.op == protocol.OpScenario {
					// A scenario is written as a scenario file
					// (testdata/scenarios), replayed as the runner does.
					dir := t.TempDir()
					path, id, err := fuzz.WriteScenario(dir, d, res.Seed)
					if err != nil {
						t.Fatal(err)
					}
					if filepath.Base(path) != fuzz.ScenarioFile || id != "scn-fuzz-9001" {
						t.Errorf("wrote %s in %s, want scn-fuzz-9001 in %s", id, path, fuzz.ScenarioFile)
					}
					if data, err := os.ReadFile(path); err != nil {
						t.Fatal(err)
					} else if err := validScenarioFile(t, data); err != nil {
						t.Errorf("the written file does not match scenario.schema.json: %v", err)
					}
					written, err := conformance.Load(nil, os.DirFS(dir))
					if err != nil {
						t.Fatal(err)
					}
					if len(written.Vectors) != 1 || written.Vectors[0].ID != id {
						t.Fatalf("the written file holds %d scenarios, want %s alone", len(written.Vectors), id)
					}
					if rep := conformance.NewRunner(written, conformance.WithJitterSamples(0)).Run(ctx, tc.bug); rep.Totals.Fail != 1 {
						t.Errorf("the written scenario does not fail the bug on replay: %+v", rep.Totals)
					}
					if rep := conformance.NewRunner(written, conformance.WithJitterSamples(0)).Run(ctx, conformance.Reference()); !rep.OK() || rep.Totals.Pass != 1 {
						t.Errorf("the written scenario does not pass the reference: %+v", rep.Totals)
					}
					continue
				}
				dir := t.TempDir()
				if _, _, err := fuzz.WriteVector(dir, d, fuzz.Explain(d, false), res.Seed, false); err != nil {
					t.Fatal(err)
				}
				written, err := conformance.Load(os.DirFS(dir), nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(written.Vectors) != 1 {
					t.Fatalf("wrote %d vectors, want 1", len(written.Vectors))
				}
				if rep := conformance.NewRunner(written, conformance.WithJitterSamples(0)).Run(ctx, tc.bug); rep.Totals.Fail != 1 {
					t.Errorf("the written vector does not fail the bug on replay: %+v", rep.Totals)
				}
				if rep := conformance.NewRunner(written, conformance.WithJitterSamples(0)).Run(ctx, conformance.Reference()); !rep.OK() || rep.Totals.Pass != 1 {
					t.Errorf("the written vector does not pass the reference: %+v", rep.Totals)
				}
			}
		})
	}
}

// opaqueNoCap declares opaque jitter and answers every jittered delay with
// its largest value, 1.5 times the capped delay, without the cap after
// jitter. The fuzzer checks opaque delays against the jitter bounds.
type opaqueNoCap struct{}

func (opaqueNoCap) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation, h.Jitter = "opaque-no-cap", protocol.JitterOpaque
	return h, err
}

func (opaqueNoCap) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	resp, err := conformance.Reference().Do(ctx, req)
	if req.Op != protocol.OpDelay || resp.DelayNS == nil {
		return resp, err
	}
	p, perr := policy.Parse(req.Policy)
	if perr != nil || !p.Spec().Jitter {
		return resp, err
	}
	d := int64(min(float64(p.Backoff().Base(int(min(req.Attempt, math.MaxInt))))*1.5, math.MaxInt64))
	resp.DelayNS = &d
	return resp, err
}

func TestOpaqueJitterBounds(t *testing.T) {
	ctx := context.Background()
	res, err := fuzz.Run(ctx, opaqueNoCap{}, fuzz.Config{Cases: 5000, Seed: 1, Ops: []string{protocol.OpDelay}})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Ops[0].Disagreement
	if d == nil {
		t.Fatal("the missing cap after jitter was not found")
	}
	if d.Request.Rand != nil || !strings.Contains(d.Reason, "jitter bounds") {
		t.Errorf("want a bounds check without rand, got %s", d.Error())
	}
	dir := t.TempDir()
	path, _, err := fuzz.WriteVector(dir, d, fuzz.Explain(d, true), res.Seed, true)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"min_ns"`) || !strings.Contains(string(data), `"max_ns"`) {
		t.Errorf("an opaque disagreement is written with bounds:\n%s", data)
	}
	written, err := conformance.Load(os.DirFS(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(impl protocol.Implementation) conformance.Counts {
		return conformance.NewRunner(written, conformance.WithJitterSamples(0)).Run(ctx, impl).Totals
	}
	if c := run(opaqueNoCap{}); c.Fail != 1 {
		t.Errorf("replay against the bug: %+v", c)
	}
	if c := run(conformance.Reference()); c.Pass != 1 {
		t.Errorf("replay against the reference: %+v", c)
	}
}

// TestUnsupportedIsCounted: an implementation that lists an op but answers
// "unsupported" (as an opaque-jitter executor does for scenarios with
// jitter) is neither failed nor passed: the answers are counted apart.
func TestUnsupportedIsCounted(t *testing.T) {
	declines := planted{"declines-scenarios", func(req protocol.Request, ref protocol.Response) (protocol.Response, bool) {
		return protocol.Response{Unsupported: true}, req.Op == protocol.OpScenario
	}}
	res, err := fuzz.Run(context.Background(), declines, fuzz.Config{Cases: 100, Seed: 1, Ops: []string{protocol.OpScenario, protocol.OpMatch}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Ops[0].Unsupported != 50 || res.Ops[1].Unsupported != 0 {
		t.Errorf("ok %v, ops %+v", res.OK(), res.Ops)
	}
}

// TestWriteVectorLeavesABadDirAlone: a directory that would not load with
// the new file (here, the shipped delay file is already there) is left as
// it was.
func TestWriteVectorLeavesABadDirAlone(t *testing.T) {
	dir := t.TempDir()
	shipped, err := fs.ReadFile(retrykit.Vectors, "delay.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "delay.json"), shipped, 0o644); err != nil {
		t.Fatal(err)
	}
	want := int64(1)
	d := &policytest.Disagreement{Request: protocol.Request{Op: protocol.OpDelay, Policy: []byte(`{}`), Attempt: 1},
		Want: protocol.Response{DelayNS: &want}, Reason: "x"}
	if _, _, err := fuzz.WriteVector(dir, d, fuzz.Explain(d, false), 1, false); err == nil || !strings.Contains(err.Error(), "not written") {
		t.Fatalf("err = %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left, want only delay.json", len(entries))
	}
}
