package scenario_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/conformance/scenario"
	"github.com/retrykit/retrykit/replay"
)

func decodeScenario(t *testing.T, s string) *scenario.Scenario {
	t.Helper()
	var sc scenario.Scenario
	if err := json.Unmarshal([]byte(s), &sc); err != nil {
		t.Fatal(err)
	}
	return &sc
}

// A budget limit passes 1 ns after it in the executor (RK-216); in the whole
// milliseconds of a scenario that instant reads as the next millisecond, so
// the reservation, the error entry and the retry all sit 1 ms past the
// limit, where an implementation counting milliseconds puts them too.
func TestBudgetExpiryObservedAtTheFirstMillisecondPastTheLimit(t *testing.T) {
	sc := decodeScenario(t, `{"id":"x","config":{},"steps":[
		{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","retry":{"jitter":false},"timeouts":{"timeout":600,"heartbeat_timeout":2}}},
		{"at_ms":0,"op":"fetch","queues":["default"]},
		{"at_ms":2000,"op":"tick"},
		{"at_ms":2001,"op":"tick"}]}`)
	obs, err := scenario.Play(sc)
	if err != nil {
		t.Fatal(err)
	}
	if ru := obs[1].Jobs["a"].ReservedUntilMs; ru == nil || *ru != 2001 {
		t.Fatalf("reserved_until_ms after the fetch = %v, want 2001", ru)
	}
	if got := obs[2].Jobs["a"].State; got != "active" {
		t.Fatalf("at the heartbeat timeout itself: %s, want active", got)
	}
	a := obs[3].Jobs["a"]
	if a.State != "retryable" || len(a.Errors) != 1 || a.Errors[0].AtMs != 2001 || a.Errors[0].Type != budget.ErrorTypeStalled || a.Errors[0].Timeout {
		t.Fatalf("after the stall: %+v", a)
	}
	if a.NextRetryAtMs == nil || *a.NextRetryAtMs != 3001 {
		t.Fatalf("next_retry_at_ms = %v, want 2001 + the default policy's 1 s", a.NextRetryAtMs)
	}
	// The expectation's timeout_kind is read from the entry's details.
	sc.Steps[3].Expect.Jobs = map[string]scenario.JobExpect{"a": {Errors: &[]scenario.ErrorExpect{{Attempt: 1, AtMs: 2001, TimeoutKind: "execution"}}}}
	ms := scenario.Check(sc, obs)
	if len(ms) != 1 || !strings.Contains(ms[0].What, "timeout_kind") || ms[0].Got != "stalled" {
		t.Fatalf("Check = %v, want one timeout_kind mismatch (got stalled)", ms)
	}
}

// A budget or replay rules that do not parse, or an enqueue TTL given both
// as enqueue_ttl_ms and in timeouts, make the scenario malformed, with the
// package's own error reachable.
func TestPlayRefusesBadBudgetsAndReplayRules(t *testing.T) {
	sc := decodeScenario(t, `{"id":"x","config":{},"steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","timeouts":{"timeout":0}}}]}`)
	if _, err := scenario.Play(sc); !errors.Is(err, scenario.ErrMalformedScenario) || !errors.Is(err, budget.ErrInvalidBudget) || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("timeouts 0: %v", err)
	}
	sc = decodeScenario(t, `{"id":"x","config":{},"steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","enqueue_ttl_ms":5000,"timeouts":{"enqueue_ttl":5}}}]}`)
	if _, err := scenario.Play(sc); !errors.Is(err, scenario.ErrMalformedScenario) || !strings.Contains(err.Error(), "enqueue TTL once") {
		t.Errorf("two enqueue TTLs: %v", err)
	}
	sc = decodeScenario(t, `{"id":"x","config":{"replay_rules":[{"name":"r","filter":{},"delay":"PT1M"}]},"steps":[{"at_ms":0,"op":"tick"}]}`)
	if _, err := scenario.Play(sc); !errors.Is(err, scenario.ErrMalformedScenario) || !errors.Is(err, replay.ErrInvalidRules) || !strings.Contains(err.Error(), "max_replays") {
		t.Errorf("rule without max_replays: %v", err)
	}
}
