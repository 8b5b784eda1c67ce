package live

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit/conformance"
)

func TestNoMergeCausesJoinIntoOne(t *testing.T) {
	other := conformance.Cause{Class: "bug:regex-match", Reproduced: true, IDs: []string{"http-match-glob"}}
	maxAtt := conformance.Cause{Class: "bug:no-merge-max-attempts", Explanation: "fix A", Reproduced: true,
		IDs: []string{"http-partial-max-attempts", "http-shared"}, Equivalent: []string{"no-merge-jitter", "x"}}
	jitter := conformance.Cause{Class: "bug:no-merge-jitter", Explanation: "fix B", Reproduced: true,
		IDs: []string{"http-partial-jitter", "http-shared"}, Contradicted: []string{"http-cap"}}
	unexplained := conformance.Cause{Class: "unexplained:no-merge-lookalike", IDs: []string{"http-y"}}

	got := joinNoMerge([]conformance.Cause{other, maxAtt, unexplained, jitter})
	want := []conformance.Cause{other, {
		Class:        "bug:no-defaults-merge(max_attempts,jitter)",
		Explanation:  "a partial policy is stored without the defaults, in 2 fields: fix A; fix B",
		IDs:          []string{"http-partial-max-attempts", "http-shared", "http-partial-jitter"},
		Reproduced:   true,
		Contradicted: []string{"http-cap"},
		Equivalent:   []string{"x"},
	}, unexplained}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("joined (-want +got):\n%s", d)
	}

	alone := []conformance.Cause{other, maxAtt}
	if d := cmp.Diff(alone, joinNoMerge(alone)); d != "" {
		t.Errorf("one no-merge cause changed (-want +got):\n%s", d)
	}
}
