package diagnose_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// modelImpl serves a model over the protocol, as a buggy implementation
// would: injectable jitter, every op but scenario.
type modelImpl struct{ m diagnose.Model }

func (i modelImpl) Hello(context.Context) (protocol.Hello, error) {
	return protocol.Hello{Protocol: protocol.Version, Implementation: "model-" + i.m.Name, Version: "0",
		Ops: []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpMatch, protocol.OpDecide,
			protocol.OpTimeoutDecide, protocol.OpTimeoutExpiry, protocol.OpReplay, protocol.OpExtensionDecide},
		ResolutionNS: 1, Jitter: protocol.JitterInjectable}, nil
}

func (i modelImpl) Do(_ context.Context, req protocol.Request) (protocol.Response, error) {
	a, ok := i.m.Answer(req)
	if ok && diagnose.Drawn(a) {
		// its own draw: the middle of the jitter range
		half := 0.5
		req.Rand = &half
		a, ok = i.m.Answer(req)
	}
	if !ok {
		return protocol.Response{ID: req.ID, Unsupported: true}, nil
	}
	a.ID = req.ID
	return a, nil
}

func load(t *testing.T) *conformance.Suite {
	t.Helper()
	s, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The engine without a bug is the reference: it passes every vector, so a
// model's failures come from its one bug alone.
func TestBaselinePasses(t *testing.T) {
	rep := conformance.NewRunner(load(t), conformance.WithJitterSamples(0)).Run(context.Background(), modelImpl{diagnose.Baseline})
	if !rep.OK() || rep.Totals.NotRun != 0 {
		for _, r := range rep.Results {
			if r.Status != conformance.StatusPass {
				t.Errorf("%s: %s", r.ID, r.Reason)
			}
		}
		t.Fatalf("baseline: %+v", rep.Totals)
	}
}

// Each model, run as an implementation, is diagnosed as exactly itself:
// one cause, that model, explaining every failure, replayed on passes
// (which it passes too: no cause is contradicted by a pass).
func TestEachModelIsFoundAlone(t *testing.T) {
	suite := load(t)
	for _, m := range diagnose.Models() {
		t.Run(m.Name, func(t *testing.T) {
			rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), modelImpl{m})
			if rep.Totals.Fail == 0 {
				t.Fatalf("no vector catches model %s", m.Name)
			}
			var got []string
			for _, c := range rep.Causes {
				got = append(got, fmt.Sprintf("%s×%d", c.Class, len(c.IDs)))
			}
			fails := rep.Totals.Fail
			c := rep.Causes[0]
			name := c.Class == "bug:"+m.Name || slices.Contains(c.Equivalent, m.Name)
			if !name || !c.Reproduced || len(c.IDs) != fails || c.PassesReplayed == nil || *c.PassesReplayed == 0 {
				t.Errorf("causes %s, want bug:%s × all %d failures", strings.Join(got, ", "), m.Name, fails)
			}
			for _, c := range rep.Causes[1:] {
				if c.Reproduced {
					t.Errorf("second model %s", c.Class)
				}
			}
		})
	}
}

func TestBaselineNotRun(t *testing.T) {
	rep := conformance.NewRunner(load(t), conformance.WithJitterSamples(0)).Run(context.Background(), modelImpl{diagnose.Baseline})
	n := map[string]int{}
	for _, u := range rep.NotRun {
		n[u.Reason]++
	}
	t.Log(n)
}
