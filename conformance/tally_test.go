package conformance_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
)

// TestTallyExternalReport: a report built outside a Runner (as the live
// checker builds one) gets scores, causes explained by the notes given,
// and its figures in every format.
func TestTallyExternalReport(t *testing.T) {
	rep := &conformance.Report{
		Results: []conformance.Result{
			{ID: "a", Requirement: "RET-01", Kind: "live", Status: conformance.StatusPass, Flags: []string{"class:x"}, Level: "MUST"},
			{ID: "b", Requirement: "RET-06", Kind: "live", Status: conformance.StatusFail, Reason: "too late", Flags: []string{"class:post-jitter-cap"}, Level: "MUST"},
			{ID: "c", Requirement: "RK-115", Kind: "live", Status: conformance.StatusFail, Flags: []string{"class:reading"}, Level: "RK"},
		},
		NotRun:  []conformance.Uncovered{{ID: "d", Requirement: "RET-08", Kind: "live", Reason: "no codes", Level: "MUST"}},
		Figures: []string{"promotion latency p50 1ms"},
	}
	rep.Tally(map[string]string{"class:post-jitter-cap": "Failure class: no cap after jitter. More.", "class:reading": "Failure class: a reading."})
	if rep.Totals != (conformance.Counts{Pass: 1, Fail: 2, NotRun: 1}) {
		t.Fatalf("totals %+v", rep.Totals)
	}
	if rep.Scores[0].Name != "MUST" || rep.Scores[0].Fail != 1 || rep.Scores[0].NotRun != 1 || rep.Scores[2].Fail != 1 {
		t.Fatalf("scores %+v", rep.Scores)
	}
	// Failures are grouped by what was observed (two wrong answers of
	// kind live), never by the class flags of their checks.
	if len(rep.Causes) != 1 || rep.Causes[0].Class != "wrong-delay" || len(rep.Causes[0].IDs) != 2 {
		t.Fatalf("causes %+v", rep.Causes)
	}
	for _, f := range conformance.Formats() {
		var buf bytes.Buffer
		if err := rep.Write(&buf, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "promotion latency p50 1ms") {
			t.Errorf("format %s lacks the figure:\n%s", f, buf.String())
		}
	}
}
