package scenario_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance/scenario"
)

// hugeScenario is a hostile scenario: 2 000 jobs enqueued, then 2 000
// fetches, 4 000 steps. Before the bound, playing it took 4.4 GB and its
// answer was 734 MB, since every observation lists every job.
func hugeScenario() *scenario.Scenario {
	sc := &scenario.Scenario{ID: "huge"}
	for i := 0; i < 2000; i++ {
		sc.Steps = append(sc.Steps, scenario.Step{AtMs: int64(i), Op: "enqueue",
			Job: &scenario.JobInput{ID: fmt.Sprintf("j%04d", i), Type: "t", Queue: "q"}})
	}
	for i := 0; i < 2000; i++ {
		sc.Steps = append(sc.Steps, scenario.Step{AtMs: int64(2000 + i), Op: "fetch", Queues: []string{"q"}})
	}
	return sc
}

func TestPlayBoundedObservations(t *testing.T) {
	sc := hugeScenario()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	obs, err := scenario.Play(sc)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, scenario.ErrTooLarge) || !errors.Is(err, scenario.ErrMalformedScenario) {
		t.Fatalf("Play: %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"scenario huge", "524288 bytes", "split the scenario"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// Play stops at the bound: the steps before it are returned, and the
	// work done is in proportion to the bound, not to steps × jobs.
	if len(obs) == 0 || len(obs) >= 200 {
		t.Errorf("%d observations before the bound", len(obs))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("Play allocated %d bytes", alloc)
	} else {
		t.Logf("Play stopped after %d of %d steps, %d bytes allocated", len(obs), len(sc.Steps), alloc)
	}
}

func TestPlayUnderTheBound(t *testing.T) {
	// 50 jobs enqueued one by one (1 275 job observations) play fully.
	sc := &scenario.Scenario{ID: "small"}
	for i := 0; i < 50; i++ {
		sc.Steps = append(sc.Steps, scenario.Step{Op: "enqueue", Job: &scenario.JobInput{ID: fmt.Sprint(i), Type: "t"}})
	}
	obs, err := scenario.Play(sc)
	if err != nil || len(obs) != len(sc.Steps) {
		t.Fatalf("%d observations, %v", len(obs), err)
	}
}
