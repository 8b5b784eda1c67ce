package live

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance"
)

// TestReplayCountsOnlyTheChecksObservedAgain: when a scenario is played
// again for one check whose pass was not resolved, a sibling check of the
// same scenario that the first play resolved keeps its pass; a wide
// window of the second play is not counted against it.
func TestReplayCountsOnlyTheChecksObservedAgain(t *testing.T) {
	e := &env{verdicts: map[string]*verdict{}}
	const d = 100 * time.Millisecond // must resolve d/2
	e.noteWindow("resolved", 5*time.Millisecond, d, d)
	e.pass("resolved", "")
	e.noteWindow("coarse", 80*time.Millisecond, d, d)
	e.pass("coarse", "")
	again := e.unresolved()
	if !again["coarse"] || again["resolved"] || len(again) != 1 {
		t.Fatalf("observed again: %v, want only coarse", again)
	}
	// the second play of the scenario: both checks observed, both wide
	e.noteWindow("resolved", 80*time.Millisecond, d, d)
	e.pass("resolved", "")
	e.noteWindow("coarse", 80*time.Millisecond, d, d)
	e.pass("coarse", "")
	e.judgeResolution()
	if v := e.verdicts["resolved"]; v == nil || v.status != conformance.StatusPass {
		t.Errorf("the sibling resolved in the first play: %+v, want a pass", v)
	}
	if v := e.verdicts["coarse"]; v == nil || v.status != conformance.StatusUnknown || v.notRun == "" {
		t.Errorf("the check still wide after its second play: %+v, want inconclusive", v)
	}
}

// TestUnresolvedPassWithoutReplayIsInconclusive: when the run ends
// without the second play (its budget spent), a pass judged through a
// window too wide is inconclusive, not an error for want of a verdict.
func TestUnresolvedPassWithoutReplayIsInconclusive(t *testing.T) {
	e := &env{verdicts: map[string]*verdict{}}
	e.noteWindow("coarse", 80*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond)
	e.pass("coarse", "")
	e.judgeResolution()
	if v := e.verdicts["coarse"]; v == nil || v.status != conformance.StatusUnknown || v.notRun == "" {
		t.Errorf("%+v, want inconclusive with its reason", v)
	}
}
