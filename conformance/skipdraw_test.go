package conformance_test

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// flaky draws its own jitter (opaque) and answers every jittered delay
// right in the first run (request ids up to first) and wrong in the
// repeats: its verdicts depend on the run.
type flaky struct{ first int64 }

func (f *flaky) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Jitter, h.Implementation = protocol.JitterOpaque, "flaky"
	h.Ops = []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpMatch, protocol.OpDecide}
	return h, err
}

func (f *flaky) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	resp, err := conformance.Reference().Do(ctx, req)
	if err != nil || resp.DelayNS == nil || req.Rand != nil || req.Profile != "" {
		return resp, err
	}
	if req.ID > f.first && *resp.DelayNS < 1<<61 {
		d := *resp.DelayNS*4 + 1000 // outside every jitter range
		resp.DelayNS = &d
	}
	return resp, nil
}

// Skip files understand verdicts that depend on the implementation's own
// draws: a vector that failed in any run stays failing (or skipped), the
// written skip file marks such vectors, and strict mode calls an entry
// stale only when it passed every run. A typo'd id fails strict mode.
func TestSkipFileDrawDependent(t *testing.T) {
	suite := loadSuite(t)
	ctx := context.Background()
	newFlaky := func() *flaky { return &flaky{first: int64(len(suite.Vectors))} }
	run := func(impl protocol.Implementation, opts ...conformance.Option) *conformance.Report {
		return conformance.NewRunner(suite, append([]conformance.Option{conformance.WithJitterSamples(0)}, opts...)...).Run(ctx, impl)
	}
	rep := run(newFlaky(), conformance.WithRepeat(2))
	if rep.OK() || len(rep.Flipped) == 0 {
		t.Fatalf("flaky passes: %+v, flipped %d", rep.Totals, len(rep.Flipped))
	}
	for _, r := range rep.Results {
		if r.Random && r.Status != conformance.StatusFail && slices.Contains(rep.Flipped, r.ID) {
			t.Errorf("%s failed in one of two runs but is %s", r.ID, r.Status)
		}
	}
	var buf bytes.Buffer
	if err := conformance.WriteSkipList(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "[draw-dependent]"); n != len(rep.Flipped) {
		t.Errorf("skip file marks %d entries draw-dependent, want %d:\n%s", n, len(rep.Flipped), buf.String())
	}
	skips, err := conformance.ParseSkipList(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// One run, strict: each entry passes on its first draw, which proves
	// nothing; it stays skipped.
	if r := run(newFlaky(), conformance.WithSkips(skips), conformance.WithStrict(true)); !r.OK() {
		t.Errorf("strict, one run: %+v: %v", r.Totals, r.Filter(conformance.StatusFail)[0].Reason)
	}
	// Three runs, strict: each fails in run 2, so it stays skipped; never
	// "passes now".
	r3 := run(newFlaky(), conformance.WithSkips(skips), conformance.WithStrict(true), conformance.WithRepeat(3))
	if !r3.OK() || r3.Totals.Skip != len(skips) {
		t.Errorf("strict, three runs: %+v", r3.Totals)
		for _, r := range r3.Filter(conformance.StatusFail) {
			t.Log(r.ID, r.Reason)
		}
	}
	// The fixed implementation passes every run: then the entries are stale.
	fixed := run(&flaky{first: math.MaxInt64}, conformance.WithSkips(skips), conformance.WithStrict(true), conformance.WithRepeat(3))
	stale := 0
	for _, r := range fixed.Filter(conformance.StatusFail) {
		if strings.Contains(r.Reason, "in every one of 3 runs") {
			stale++
		}
	}
	if stale != len(skips) {
		t.Errorf("fixed: %d stale of %d: %+v", stale, len(skips), fixed.Totals)
	}
	// A typo'd id fails strict mode (and only warns otherwise).
	typo := conformance.SkipList{"delay-00x1": ""}
	if r := run(conformance.Reference(), conformance.WithSkips(typo), conformance.WithStrict(true)); r.OK() || r.Causes[0].Class != "unknown-skip-entry" {
		t.Errorf("typo, strict: %+v %+v", r.Totals, r.Causes)
	}
	if r := run(conformance.Reference(), conformance.WithSkips(typo)); !r.OK() || len(r.Warnings) != 1 {
		t.Errorf("typo, lenient: %+v %v", r.Totals, r.Warnings)
	}
}

// With opaque jitter the expectation a failure shows is the bounds the
// answer was judged against, not the exact delay of the vector's draw.
func TestOpaqueFailureShowsBounds(t *testing.T) {
	suite := loadSuite(t)
	f := &flaky{first: -1} // wrong every time
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithIDs("delay-0118")).Run(context.Background(), f)
	res := rep.Filter(conformance.StatusFail)
	if len(res) != 1 || string(res[0].Want) != `{"min_ns":7,"max_ns":22}` {
		t.Fatalf("%+v", res)
	}
}
