package conformance

import (
	"slices"
	"testing"

	"github.com/retrykit/retrykit/conformance/diagnose"
)

// TestJitterCheckJoinsNoGroupOfRefusals: the failed jitter check joins
// the largest unexplained group of delay values, never a group of
// refused (or accepted) requests that happen to be delay vectors: an
// implementation that refuses large delays and, apart from that, never
// jitters shows two deviations, and its jitter check's draws (all one
// multiplier) are the second one.
func TestJitterCheckJoinsNoGroupOfRefusals(t *testing.T) {
	results := []Result{
		{ID: "delay-1", Kind: kindDelay}, {ID: "delay-2", Kind: kindDelay},
		{ID: "delay-3", Kind: kindDelay}, {ID: JitterCheckID, Kind: kindDelay},
	}
	groups := []diagnose.Deviation{
		{Name: "rejects-valid(delay)", IDs: []string{"delay-1", "delay-2"}},
		{Name: "delay-ratio(×2)", IDs: []string{"delay-3"}},
	}
	joinJitterCheck(groups, results, 3)
	if slices.Contains(groups[0].IDs, JitterCheckID) {
		t.Errorf("the jitter check joined %s", groups[0].Name)
	}
	if !slices.Contains(groups[1].IDs, JitterCheckID) {
		t.Errorf("the jitter check did not join the group of delay values: %+v", groups)
	}
	only := []diagnose.Deviation{{Name: "rejects-valid(delay)", IDs: []string{"delay-1"}}}
	joinJitterCheck(only, results, 3)
	if slices.Contains(only[0].IDs, JitterCheckID) {
		t.Errorf("beside refusals alone the jitter check must stay apart: %+v", only)
	}
}
