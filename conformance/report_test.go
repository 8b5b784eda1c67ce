package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

func write(t *testing.T, rep *conformance.Report, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := rep.Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// before fails the test unless every one of first occurs in s, and all of
// them before then.
func before(t *testing.T, format, s string, first []string, then string) {
	t.Helper()
	end := strings.Index(s, then)
	if end < 0 {
		t.Errorf("%s report lacks %q:\n%s", format, then, s)
		return
	}
	for _, f := range first {
		if i := strings.Index(s, f); i < 0 || i > end {
			t.Errorf("%s report: %q is not before %q (at %d, %d)", format, f, then, i, end)
		}
	}
}

// TestReportGroupsOneRootCause runs the Python example adapter in a
// deliberately broken variant (testdata/nonvalidating_adapter.py: it merges
// policies with the defaults but never validates them). The ~135 vectors
// that expect a rejection all fail for that one reason, and every report
// format must say so once, before the per-vector list, instead of showing
// a wall of unrelated failures.
func TestReportGroupsOneRootCause(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Python adapter")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	suite, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	p := protocol.NewProcess([]string{py, filepath.Join("testdata", "nonvalidating_adapter.py")}, protocol.WithTimeout(30*time.Second))
	defer p.Close()
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), p)
	rep.Command = "retrykit conformance --impl 'python3 conformance/testdata/nonvalidating_adapter.py'"

	if rep.Implementation.Implementation != "ojs-retry-python-nonvalidating" {
		t.Fatalf("not the variant: %+v", rep.Implementation)
	}
	if rep.Totals.Error != 0 || rep.Totals.Fail < 100 {
		t.Fatalf("the variant should fail the ~135 rejection vectors, and nothing else: %+v", rep.Totals)
	}
	// The leading cause is the bug model "invalid-fields-defaulted", reproducing
	// all but a few answers (the variant keeps the last of two duplicate
	// keys and checks max_interval against the default only sometimes).
	c := rep.Causes[0]
	if c.Class != "bug:invalid-fields-defaulted" || !c.Reproduced || len(c.IDs) < rep.Totals.Fail-5 || c.PassesReplayed == nil {
		t.Errorf("cause %s ×%d (%s), want bug:invalid-fields-defaulted × nearly every failure (%d)", c.Class, len(c.IDs), c.Explanation, rep.Totals.Fail)
	}
	for _, c := range rep.Causes[1:] {
		if c.Reproduced {
			t.Errorf("second bug model %s", c.Class)
		}
	}
	// Each failure really is an expected rejection answered with a result.
	for _, res := range rep.Results {
		if res.Status == conformance.StatusFail && !strings.HasPrefix(res.Reason, "want error ") {
			t.Errorf("%s: %s", res.ID, res.Reason)
		}
	}

	md := write(t, rep, "markdown")
	before(t, "markdown", md, []string{
		"| spec requirements (MUST) |", "| SHOULD-level and optional features |", "| retrykit decisions (RK-nn) |",
		"Spec-only run (MUST level only): `" + rep.Command + " --spec-only`",
		"#### Failures by cause (",
		"| " + itoa(len(c.IDs)) + " | `bug:invalid-fields-defaulted` |",
	}, "| vector | requirement | result | reason |")
	if n := strings.Count(md, "bug:invalid-fields-defaulted"); n != 1 {
		t.Errorf("markdown names the cause %d times, want once", n)
	}

	text := write(t, rep, "text")
	before(t, "text", text, []string{"scores", "spec-only run (MUST level only): " + rep.Command + " --spec-only",
		"failures by cause: " + itoa(rep.Totals.Fail) + " failed or errored", "bug:invalid-fields-defaulted"}, "\nFAIL  ")

	junit := write(t, rep, "junit")
	before(t, "junit", junit, []string{`<testsuite name="summary"`, `name="score.MUST"`, `name="spec_only_command"`,
		`name="cause.1" value="` + itoa(len(c.IDs)) + ` bug:invalid-fields-defaulted`}, "<testcase")

	js := write(t, rep, "json")
	before(t, "json", js, []string{`"scores"`, `"spec_only_command"`, `"causes"`}, `"results"`)
	var back conformance.Report
	if err := json.Unmarshal([]byte(js), &back); err != nil || len(back.Causes) != len(rep.Causes) || len(back.Causes[0].IDs) != len(c.IDs) || !back.Causes[0].Reproduced {
		t.Errorf("json causes do not round-trip: %v %+v", err, back.Causes)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestScoresByLevel(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), conformance.Reference())
	if len(rep.Scores) != 3 || rep.Scores[0].Name != "MUST" || rep.Scores[1].Name != "SHOULD" || rep.Scores[2].Name != "RK" {
		t.Fatalf("scores %+v", rep.Scores)
	}
	sum := conformance.Counts{}
	for _, s := range rep.Scores {
		sum.Pass += s.Pass
		sum.Fail += s.Fail
		sum.Error += s.Error
		sum.Skip += s.Skip
		sum.NotRun += s.NotRun
		if s.Pass == 0 {
			t.Errorf("level %s has no vectors", s.Name)
		}
	}
	if sum != rep.Totals {
		t.Errorf("scores %+v do not add up to the totals %+v", sum, rep.Totals)
	}
	// The level rules of Result.Level, on vectors that show each rule.
	for _, r := range rep.Results {
		v := suite.Vector(r.ID)
		if v == nil {
			continue // the statistical check
		}
		switch {
		case strings.HasPrefix(r.Requirement, "RK-") || v.HasFlag("retrykit:decision"):
			if r.Level != "RK" {
				t.Errorf("%s (%s %v): level %s, want RK", r.ID, r.Requirement, r.Flags, r.Level)
			}
		case strings.Contains(strings.Join(r.Flags, " "), "should:") || strings.Contains(strings.Join(r.Flags, " "), "extension:"):
			if r.Level != "SHOULD" {
				t.Errorf("%s (%s %v): level %s, want SHOULD", r.ID, r.Requirement, r.Flags, r.Level)
			}
		default:
			if r.Level != "MUST" {
				t.Errorf("%s (%s %v): level %s, want MUST", r.ID, r.Requirement, r.Flags, r.Level)
			}
		}
	}

	// The spec-only run selects the MUST level alone, and says so.
	spec := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithSpecOnly()).Run(context.Background(), conformance.Reference())
	if !spec.SpecOnly || spec.Scores[0] != rep.Scores[0] || spec.Scores[1].Pass+spec.Scores[2].Pass != 0 {
		t.Errorf("spec-only scores %+v, full run %+v", spec.Scores, rep.Scores)
	}
	if spec.NotSelected != rep.Scores[1].Pass+rep.Scores[2].Pass {
		t.Errorf("spec-only run: %d not selected, want %d", spec.NotSelected, rep.Scores[1].Pass+rep.Scores[2].Pass)
	}
	for _, r := range spec.Results {
		if r.Level != "MUST" {
			t.Errorf("spec-only run judged %s (level %s)", r.ID, r.Level)
		}
	}
	if text := write(t, spec, "text"); !strings.Contains(text, "this is the spec-only run") || strings.Contains(text, "--spec-only") {
		t.Errorf("spec-only text report:\n%s", text)
	}
}

// opaqueFlaky is the reference with opaque jitter whose own draw for the
// second request with one policy and attempt 1 is out of bounds: that
// vector's verdict flips when it is run again.
type opaqueFlaky struct {
	target string // policy text of the flaky vector's request
	n      *atomic.Int64
}

func (o opaqueFlaky) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation, h.Jitter = "opaque-flaky", protocol.JitterOpaque
	return h, err
}

func (o opaqueFlaky) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if req.Rand != nil {
		panic("the runner sent rand to an opaque-jitter implementation")
	}
	resp, err := conformance.Reference().Do(ctx, req)
	if req.Op == protocol.OpDelay && string(req.Policy) == o.target && req.Attempt == 1 && resp.DelayNS != nil {
		if o.n.Add(1) == 2 {
			d := *resp.DelayNS * 3 // beyond 1.5× the base: out of the jitter bounds
			resp.DelayNS = &d
		}
	}
	return resp, err
}

func TestOpaqueJitterVerdictsAndRepeat(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A delay vector with jitter and an injected rand: for an opaque
	// implementation the runner drops rand and checks the jitter bounds.
	// Its policy and attempt are shared by other vectors: with one request
	// in flight, the second of them in suite order is the one that flips.
	target := suite.Vector("delay-0031")
	if target == nil || target.Request().Rand == nil || target.Request().Attempt != 1 {
		t.Fatalf("delay-0031 is not a jittered attempt-1 delay with rand: %+v", target)
	}
	impl := opaqueFlaky{target: string(target.Request().Policy), n: new(atomic.Int64)}
	run := func(opts ...conformance.Option) *conformance.Report {
		impl.n.Store(0)
		opts = append(opts, conformance.WithRequirements(target.Requirement), conformance.WithJitterSamples(50), conformance.WithParallelism(1))
		return conformance.NewRunner(suite, opts...).Run(context.Background(), impl)
	}

	once := run()
	random := 0
	for _, r := range once.Results {
		if r.Random {
			random++
		}
	}
	if random < 2 {
		t.Fatalf("%d draw-dependent results under opaque jitter, want the jittered delays and the statistical check", random)
	}
	if len(once.Flipped) != 0 || once.Repeat != 1 {
		t.Errorf("a single run cannot flip: %v", once.Flipped)
	}
	text := write(t, once, "text")
	before(t, "text", text, []string{"draw-dependent verdicts: ", "--repeat K runs them K times"}, "requirement ")

	rep := run(conformance.WithRepeat(4))
	if rep.Repeat != 4 || len(rep.Flipped) != 1 {
		t.Fatalf("repeat 4: flipped %v, want one vector", rep.Flipped)
	}
	flipped := map[string]bool{}
	for _, id := range rep.Flipped {
		flipped[id] = true
		if v := suite.Vector(id); v == nil || string(v.Request().Policy) != impl.target || v.Request().Attempt != 1 {
			t.Errorf("%s flipped, but the implementation is stable on it", id)
		}
	}
	for _, r := range rep.Results {
		if flipped[r.ID] && (r.Status != conformance.StatusFail || !strings.Contains(r.Reason, "verdict flips") || !r.Random) {
			t.Errorf("flipped vector %s reported as %s: %s", r.ID, r.Status, r.Reason)
		}
		if !flipped[r.ID] && r.Status != conformance.StatusPass {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
	text = write(t, rep, "text")
	before(t, "text", text, []string{"run 4 times each: " + itoa(len(rep.Flipped)) + " flipped: "}, "\nFAIL  ")
	md := write(t, rep, "markdown")
	if !strings.Contains(md, "Run 4 times each, "+itoa(len(rep.Flipped))+" flipped: ") {
		t.Errorf("markdown does not name the flips:\n%s", md)
	}

	// The reference with injectable jitter: only vectors without rand that
	// bound a delay, and the statistical check, depend on its draws, and
	// none flips.
	ref := conformance.NewRunner(suite, conformance.WithRepeat(3), conformance.WithJitterSamples(200)).Run(context.Background(), conformance.Reference())
	if !ref.OK() || len(ref.Flipped) != 0 {
		t.Errorf("reference flipped %v", ref.Flipped)
	}
	for _, r := range ref.Results {
		if r.Random && r.ID != conformance.JitterCheckID && suite.Vector(r.ID).Request().Rand != nil {
			t.Errorf("%s has an injected rand but is marked draw-dependent", r.ID)
		}
	}
}

// The spec-only hint repeats the command with every file it writes renamed
// (.spec-only before the extension), so that it writes the same formats
// without overwriting the first run's files, and the text report opens with
// the verdict.
func TestSpecOnlyHintRenamesOutputFiles(t *testing.T) {
	for cmd, want := range map[string]string{
		"retrykit conformance --impl 'python3 a.py' -o out.txt --format json":                             "retrykit conformance --impl 'python3 a.py' -o out.spec-only.txt --format json --spec-only",
		"retrykit conformance --impl 'python3 a.py' --o=out.txt --format json":                            "retrykit conformance --impl 'python3 a.py' --o=out.spec-only.txt --format json --spec-only",
		"retrykit conformance --server URL --format text -o a.txt --format junit -o dir/a.xml":            "retrykit conformance --server URL --format text -o a.spec-only.txt --format junit -o dir/a.spec-only.xml --spec-only",
		"retrykit conformance --write-skip-file known --format markdown -o 'my report.md'":                "retrykit conformance --write-skip-file known.spec-only --format markdown -o 'my report.spec-only.md' --spec-only",
		"go run ./cmd/retrykit conformance --skip-file known.txt --strict -o ./out/.hidden --format text": "go run ./cmd/retrykit conformance --skip-file known.txt --strict -o ./out/.hidden.spec-only --format text --spec-only",
	} {
		rep := &conformance.Report{Command: cmd}
		var b strings.Builder
		if err := rep.Write(&b, "text"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "spec-only run (MUST level only): "+want+"\n") || !strings.HasPrefix(b.String(), "PASS") {
			t.Errorf("%s: want the hint %s in\n%s", cmd, want, b.String())
		}
	}
}
