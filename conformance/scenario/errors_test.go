package scenario_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/retrykit/retrykit/conformance/scenario"
)

func TestDecodeErrors(t *testing.T) {
	for _, in := range []string{
		``,
		`{`,
		`[]`,
		`{"schema_version":2,"kind":"scenario","scenarios":[]}`,
		`{"schema_version":1,"kind":"vector","scenarios":[]}`,
		`{"schema_version":1,"kind":"scenario","bogus":1}`,
		`{"schema_version":1,"kind":"scenario","scenarios":[{"id":"x","steps":[{"at_ms":0,"op":"fetch","expect":{"fetched":3}}]}]}`,
	} {
		f, err := scenario.Decode(strings.NewReader(in))
		if f != nil || !errors.Is(err, scenario.ErrInvalidFile) {
			t.Errorf("Decode(%q) = %v, %v; want an error wrapping ErrInvalidFile", in, f, err)
		}
	}
	_, err := scenario.Decode(strings.NewReader(`{"schema_version":"1"}`))
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Errorf("the encoding/json error is not reachable with errors.As: %v", err)
	}
	// Also through the optional fields' own decoders.
	for _, in := range []string{
		`{"schema_version":1,"kind":"scenario","scenarios":[{"id":"x","steps":[{"at_ms":0,"op":"fetch","expect":{"fetched":3}}]}]}`,
		`{"schema_version":1,"kind":"scenario","scenarios":[{"id":"x","steps":[{"at_ms":0,"op":"tick","expect":{"jobs":{"a":{"next_retry_at_ms":"soon"}}}}]}]}`,
	} {
		_, err := scenario.Decode(strings.NewReader(in))
		te = nil
		if !errors.Is(err, scenario.ErrInvalidFile) || !errors.As(err, &te) {
			t.Errorf("Decode(%q) = %v; want ErrInvalidFile with the encoding/json error reachable", in, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good := `{"schema_version":1,"kind":"scenario","scenarios":[]}`
	files, err := scenario.Load(fstest.MapFS{
		"a.json": {Data: []byte(good)}, "x.schema.json": {Data: []byte(`{}`)}, "b.txt": {Data: []byte(`{`)},
	})
	if err != nil || len(files) != 1 || files["a.json"] == nil {
		t.Fatalf("Load = %v, %v", files, err)
	}
	_, err = scenario.Load(fstest.MapFS{"a.json": {Data: []byte(good)}, "bad.json": {Data: []byte(`{"kind":"scenario"}`)}})
	if !errors.Is(err, scenario.ErrInvalidFile) || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad file: %v", err)
	}
	_, err = scenario.Load(unreadable{})
	if !errors.Is(err, fs.ErrPermission) || errors.Is(err, scenario.ErrInvalidFile) || !strings.Contains(err.Error(), "a.json") {
		t.Errorf("unreadable file: %v", err)
	}
}

// unreadable lists a.json but cannot open it.
type unreadable struct{}

func (unreadable) Open(name string) (fs.File, error) {
	if name == "." {
		return fstest.MapFS{"a.json": {}}.Open(".")
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
}

func TestPlayErrors(t *testing.T) {
	if _, err := scenario.Play(nil); !errors.Is(err, scenario.ErrMalformedScenario) {
		t.Errorf("Play(nil): %v", err)
	}
	for name, steps := range map[string][]scenario.Step{
		"unknown op":          {{AtMs: 0, Op: "explode"}},
		"enqueue without job": {{AtMs: 0, Op: "enqueue"}},
		"negative at_ms":      {{AtMs: -1, Op: "tick"}},
		"time going back":     {{AtMs: 10, Op: "tick"}, {AtMs: 9, Op: "tick"}},
		"after 2262":          {{AtMs: scenario.MaxAtMs + 1, Op: "tick"}},
		"max int64 at_ms":     {{AtMs: math.MaxInt64, Op: "tick"}},
	} {
		obs, err := scenario.Play(&scenario.Scenario{ID: "x", Steps: steps})
		if !errors.Is(err, scenario.ErrMalformedScenario) {
			t.Errorf("%s: %v", name, err)
		}
		if len(obs) != len(steps)-1 {
			t.Errorf("%s: %d observations, want those of the %d good steps", name, len(obs), len(steps)-1)
		}
	}
	if _, err := scenario.Play(&scenario.Scenario{ID: "x", Steps: []scenario.Step{{AtMs: scenario.MaxAtMs, Op: "tick"}}}); err != nil {
		t.Errorf("at_ms MaxAtMs: %v", err)
	}
}

// TestPlayFarTimes checks that times beyond what the executor represents
// neither wrap nor panic: a scheduled_at_ms past 2262 is rejected by the
// executor as an invalid request, and huge millisecond durations saturate.
func TestPlayFarTimes(t *testing.T) {
	far := int64(math.MaxInt64)
	past := int64(math.MinInt64)
	sc := &scenario.Scenario{ID: "x", Config: scenario.Config{VisibilityTimeoutMs: far, Retention: &scenario.Retention{MaxAgeMs: far}}, Steps: []scenario.Step{
		{AtMs: 0, Op: "enqueue", Job: &scenario.JobInput{ID: "a", Type: "t", ScheduledAtMs: &far}},
		{AtMs: 0, Op: "enqueue", Job: &scenario.JobInput{ID: "b", Type: "t", ScheduledAtMs: &past}},
		{AtMs: 0, Op: "enqueue", Job: &scenario.JobInput{ID: "c", Type: "t", VisibilityTimeoutMs: far}},
		{AtMs: 0, Op: "fetch", Queues: []string{"default"}},
		{AtMs: scenario.MaxAtMs, Op: "tick"},
	}}
	obs, err := scenario.Play(sc)
	if err != nil {
		t.Fatal(err)
	}
	if obs[0].Error != scenario.ClassInvalidRequest || obs[1].Error != scenario.ClassInvalidRequest {
		t.Errorf("far scheduled_at_ms: errors %q %q, want %q", obs[0].Error, obs[1].Error, scenario.ClassInvalidRequest)
	}
	if obs[3].Fetched == nil || *obs[3].Fetched != "c" {
		t.Fatalf("fetch: %+v", obs[3])
	}
	if ru := obs[3].Jobs["c"].ReservedUntilMs; ru == nil || *ru != scenario.MaxAtMs {
		t.Errorf("reserved_until_ms = %v, want the reservation saturated at %d", ru, scenario.MaxAtMs)
	}
	// The saturated deadline is the last representable nanosecond, a
	// fraction of a millisecond after MaxAtMs: still reserved then.
	if j := obs[4].Jobs["c"]; j.State != "active" || len(j.Errors) != 0 {
		t.Errorf("at MaxAtMs: %+v, want still active", j)
	}
}

func TestOpsAndEpoch(t *testing.T) {
	ops := scenario.Ops()
	if len(ops) != 12 || ops[0] != "enqueue" || ops[10] != "tick" || ops[11] != "delete" {
		t.Errorf("Ops() = %v", ops)
	}
	ops[0] = "changed"
	if scenario.Ops()[0] != "enqueue" {
		t.Error("Ops() shares its slice with callers")
	}
	if e := scenario.Epoch(); !e.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || e.Location() != time.UTC {
		t.Errorf("Epoch() = %v", e)
	}
	if want := (int64(math.MaxInt64) - scenario.Epoch().UnixNano()) / 1e6; scenario.MaxAtMs != want {
		t.Errorf("MaxAtMs = %d, want %d", scenario.MaxAtMs, want)
	}
	// Every op Ops lists is one Play knows.
	for _, op := range scenario.Ops() {
		st := scenario.Step{Op: op, ID: "a", Queue: "q", Job: &scenario.JobInput{ID: "a", Type: "t"}}
		if _, err := scenario.Play(&scenario.Scenario{ID: "x", Steps: []scenario.Step{st}}); err != nil {
			t.Errorf("op %s: %v", op, err)
		}
	}
}

// A delivery naming a fetch that has not happened, or given on a step that
// does not answer a fetch, makes the scenario malformed; a delivery naming
// an earlier fetch of a job fetched again is the stale_delivery class.
func TestPlayDelivery(t *testing.T) {
	enq := scenario.Step{Op: "enqueue", Job: &scenario.JobInput{ID: "a", Type: "t", VisibilityTimeoutMs: 1000}}
	fetch := scenario.Step{Op: "fetch"}
	for _, tc := range []struct {
		name  string
		steps []scenario.Step
		want  string
	}{
		{"delivery 1 before any fetch", []scenario.Step{enq, {Op: "ack", ID: "a", Delivery: 1}}, "fetched 0 times"},
		{"delivery 2 after one fetch", []scenario.Step{enq, fetch, {Op: "heartbeat", ID: "a", Delivery: 2}}, "fetched 1 times"},
		{"negative delivery", []scenario.Step{enq, fetch, {Op: "fail", ID: "a", Delivery: -1}}, "delivery -1"},
		{"delivery on cancel", []scenario.Step{enq, {Op: "cancel", ID: "a", Delivery: 1}}, "delivery on a cancel step"},
	} {
		obs, err := scenario.Play(&scenario.Scenario{ID: "x", Steps: tc.steps})
		if !errors.Is(err, scenario.ErrMalformedScenario) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a malformed scenario saying %q", tc.name, err, tc.want)
		}
		if len(obs) != len(tc.steps)-1 {
			t.Errorf("%s: %d observations before the bad step", tc.name, len(obs))
		}
	}
	// fetched at 0 (1), expired at 1000, fetched again at 2000 (2)
	obs, err := scenario.Play(&scenario.Scenario{ID: "x", Steps: []scenario.Step{
		enq, fetch, {AtMs: 2000, Op: "fetch"},
		{AtMs: 2000, Op: "ack", ID: "a", Delivery: 1},
		{AtMs: 2000, Op: "ack", ID: "a", Delivery: 2},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if obs[3].Error != scenario.ClassStaleDelivery || obs[3].Jobs["a"].State != "active" {
		t.Errorf("stale ack: %+v", obs[3])
	}
	if obs[4].Error != "" || obs[4].Jobs["a"].State != "completed" || obs[4].Jobs["a"].Attempt != 2 {
		t.Errorf("latest ack: %+v", obs[4])
	}
}
