package live

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/conformance"
)

// The joined cause is replayed on the passing checks any of its parts
// was replayed on, each counted once: here http-cap and http-jitter-range
// (both parts), http-partial-retry and http-default (one each).
func TestNoMergeCausesJoinIntoOne(t *testing.T) {
	count := func(n int) *int { return &n }
	other := conformance.Cause{Class: "bug:regex-match", Reproduced: true, IDs: []string{"http-match-glob"}, PassesReplayed: count(9)}
	maxAtt := conformance.Cause{Class: "bug:no-merge-max-attempts", Explanation: "fix A", Reproduced: true,
		IDs: []string{"http-partial-max-attempts", "http-shared"}, Equivalent: []string{"no-merge-jitter", "x"}, PassesReplayed: count(3)}
	jitter := conformance.Cause{Class: "bug:no-merge-jitter", Explanation: "fix B", Reproduced: true,
		IDs: []string{"http-partial-jitter", "http-shared"}, PassesReplayed: count(3)}
	unexplained := conformance.Cause{Class: "unexplained:no-merge-lookalike", IDs: []string{"http-y"}}
	passes := map[string][]string{
		"bug:regex-match":           {"http-a", "http-b"},
		"bug:no-merge-max-attempts": {"http-cap", "http-partial-retry", "http-jitter-range"},
		"bug:no-merge-jitter":       {"http-jitter-range", "http-default", "http-cap"},
	}

	got := joinNoMerge([]conformance.Cause{other, maxAtt, unexplained, jitter}, passes)
	want := []conformance.Cause{other, {
		Class:          "bug:no-defaults-merge(max_attempts,jitter)",
		Explanation:    "a partial policy is stored without the defaults, in 2 fields: fix A; fix B",
		IDs:            []string{"http-partial-max-attempts", "http-shared", "http-partial-jitter"},
		Reproduced:     true,
		PassesReplayed: count(4),
		Equivalent:     []string{"x"},
	}, unexplained}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("joined (-want +got):\n%s", d)
	}

	alone := []conformance.Cause{other, maxAtt}
	if d := cmp.Diff(alone, joinNoMerge(alone, passes)); d != "" {
		t.Errorf("one no-merge cause changed (-want +got):\n%s", d)
	}
}
