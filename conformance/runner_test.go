package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

func loadSuite(t testing.TB) *conformance.Suite {
	t.Helper()
	s, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReferencePasses is the suite's own acceptance test: retrykit passes
// every vector, and nothing is left uncovered.
func TestReferencePasses(t *testing.T) {
	suite := loadSuite(t)
	rep := conformance.NewRunner(suite).Run(context.Background(), conformance.Reference())
	for _, r := range rep.Results {
		if r.Status != conformance.StatusPass {
			t.Errorf("%s %s [%s]: %s\n  want %s\n  got  %s", r.Status, r.ID, r.Requirement, r.Reason, r.Want, r.Got)
		}
	}
	if rep.Totals.NotRun != 0 || rep.Totals.Pass != len(suite.Vectors)+1 {
		t.Errorf("totals %+v for %d vectors + the jitter check", rep.Totals, len(suite.Vectors))
	}
}

// biased is the reference with its own randomness replaced by a skewed one.
type biased struct{ draw func(i int64) float64 }

func (b biased) Hello(ctx context.Context) (protocol.Hello, error) {
	return conformance.Reference().Hello(ctx)
}

func (b biased) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if req.Op == protocol.OpDelay && req.Rand == nil {
		r := b.draw(req.ID)
		req.Rand = &r
	}
	return conformance.Reference().Do(ctx, req)
}

func TestJitterCheck(t *testing.T) {
	suite := loadSuite(t)
	run := func(impl protocol.Implementation) conformance.Result {
		rep := conformance.NewRunner(suite, conformance.WithIDs(conformance.JitterCheckID)).Run(context.Background(), impl)
		if len(rep.Results) != 1 {
			t.Fatalf("results %+v", rep.Results)
		}
		return rep.Results[0]
	}
	if r := run(conformance.Reference()); r.Status != conformance.StatusPass {
		t.Errorf("reference: %s %s", r.Status, r.Reason)
	}
	// A uniform grid is as uniform as it gets.
	if r := run(biased{func(i int64) float64 { return float64(i%1000) / 1000 }}); r.Status != conformance.StatusPass {
		t.Errorf("grid: %s %s", r.Status, r.Reason)
	}
	for name, draw := range map[string]func(int64) float64{
		"constant":   func(int64) float64 { return 0.5 },
		"low half":   func(i int64) float64 { return float64(i%1000) / 2000 },
		"squared":    func(i int64) float64 { x := float64(i%1000) / 1000; return x * x },
		"three vals": func(i int64) float64 { return float64(i%3) / 3 },
	} {
		if r := run(biased{draw}); r.Status != conformance.StatusFail {
			t.Errorf("%s: jitter check says %s (%s), want fail", name, r.Status, r.Reason)
		}
	}
}

func TestSelection(t *testing.T) {
	suite := loadSuite(t)
	ctx := context.Background()
	first := suite.Vectors[0]
	rep := conformance.NewRunner(suite, conformance.WithIDs(first.ID)).Run(ctx, conformance.Reference())
	if len(rep.Results) != 1 || rep.Results[0].ID != first.ID || rep.NotSelected != len(suite.Vectors)-1 {
		t.Errorf("by id: %d results, %d not selected", len(rep.Results), rep.NotSelected)
	}
	rep = conformance.NewRunner(suite, conformance.WithRequirements("RET-06"), conformance.WithJitterSamples(0)).Run(ctx, conformance.Reference())
	for _, r := range rep.Results {
		if r.Requirement != "RET-06" {
			t.Errorf("requirement selection ran %s (%s)", r.ID, r.Requirement)
		}
	}
	if len(rep.Results) < 3 {
		t.Errorf("RET-06 selected %d vectors", len(rep.Results))
	}
	rep = conformance.NewRunner(suite, conformance.WithFlags("class:overflow")).Run(ctx, conformance.Reference())
	for _, r := range rep.Results {
		if !strings.Contains(strings.Join(r.Flags, " "), "class:overflow") {
			t.Errorf("flag selection ran %s %v", r.ID, r.Flags)
		}
	}
}

// partial is the reference without the match op and without claiming the
// backoff_strategy extension.
type partial struct{}

func (partial) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Ops = []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpDecide}
	h.UnclaimedFlags = []string{"extension:backoff_strategy"}
	return h, err
}

func (partial) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if req.Op == protocol.OpDecide && req.Attempt == 1 {
		return protocol.Response{Unsupported: true}, nil
	}
	return conformance.Reference().Do(ctx, req)
}

func TestCoverageIsReportedApart(t *testing.T) {
	suite := loadSuite(t)
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), partial{})
	reasons := map[string]int{}
	for _, u := range rep.NotRun {
		reasons[u.Reason]++
		v := suite.Vector(u.ID)
		if v == nil {
			t.Fatalf("unknown id %s", u.ID)
		}
	}
	for _, r := range rep.Results {
		v := suite.Vector(r.ID)
		if v.Kind == "match" || v.HasFlag("extension:backoff_strategy") {
			t.Errorf("%s was run, but the implementation lacks its op or flag", r.ID)
		}
	}
	if reasons["op match not supported"] == 0 || reasons["flag extension:backoff_strategy not claimed"] == 0 || reasons["op decide answered unsupported"] == 0 {
		t.Errorf("coverage reasons %v", reasons)
	}
	if rep.Totals.NotRun != len(rep.NotRun) || rep.Totals.Pass+rep.Totals.NotRun+rep.Totals.Fail != len(suite.Vectors) {
		t.Errorf("totals %+v do not add up to %d vectors", rep.Totals, len(suite.Vectors))
	}
}

func TestSkipFileAndStrictMode(t *testing.T) {
	suite := loadSuite(t)
	ctx := context.Background()
	// A mutant that fails some vectors: no cap after jitter.
	bad := mutant{"no-post-jitter-cap", noPostJitterCap}
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(ctx, bad)
	if rep.OK() {
		t.Fatal("mutant passes")
	}
	var buf bytes.Buffer
	if err := conformance.WriteSkipList(&buf, rep); err != nil {
		t.Fatal(err)
	}
	skips, err := conformance.ParseSkipList(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(skips) != rep.Totals.Fail+rep.Totals.Error {
		t.Fatalf("skip list has %d entries for %d failures", len(skips), rep.Totals.Fail+rep.Totals.Error)
	}
	// With the list, the mutant's run is clean; the skips carry reasons.
	rep2 := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithSkips(skips)).Run(ctx, bad)
	if !rep2.OK() || rep2.Totals.Skip != len(skips) {
		t.Fatalf("with skip list: %+v", rep2.Totals)
	}
	for _, r := range rep2.Filter(conformance.StatusSkip) {
		if !strings.HasPrefix(r.Reason, "listed in skip file") {
			t.Errorf("skip reason %q", r.Reason)
		}
	}
	// Strict mode with the same list: still clean for the mutant...
	rep3 := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithSkips(skips), conformance.WithStrict(true)).Run(ctx, bad)
	if !rep3.OK() {
		t.Fatalf("strict, still failing: %+v", rep3.Totals)
	}
	// ...but the fixed implementation fails every stale entry.
	rep4 := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithSkips(skips), conformance.WithStrict(true)).Run(ctx, conformance.Reference())
	baseline := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(ctx, conformance.Reference())
	stale := 0
	for _, r := range rep4.Filter(conformance.StatusFail) {
		if strings.Contains(r.Reason, "passes now") {
			stale++
		}
	}
	if want := len(skips) - baseline.Totals.Fail; stale != want {
		t.Errorf("strict mode flagged %d stale entries, want %d", stale, want)
	}
	// Non-strict, the same list is harmless for the fixed implementation.
	rep5 := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithSkips(skips)).Run(ctx, conformance.Reference())
	if rep5.Totals.Skip != len(skips) {
		t.Errorf("non-strict skips %d", rep5.Totals.Skip)
	}
	// Unknown ids are warned about.
	rep6 := conformance.NewRunner(suite, conformance.WithJitterSamples(0), conformance.WithSkips(conformance.SkipList{"no-such-vector": ""})).Run(ctx, conformance.Reference())
	if len(rep6.Warnings) != 1 {
		t.Errorf("warnings %v", rep6.Warnings)
	}
}

func TestParseSkipList(t *testing.T) {
	in := "# comment\n\nval-0001  # RET-10: reason here\ndelay-0002\tbecause\n  dur-0003\n"
	s, err := conformance.ParseSkipList(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := conformance.SkipList{"val-0001": "RET-10: reason here", "delay-0002": "because", "dur-0003": ""}
	if len(s) != len(want) {
		t.Fatalf("got %v", s)
	}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("%s: got %q, want %q", k, s[k], v)
		}
	}
	if _, err := conformance.ParseSkipList(strings.NewReader("a\na\n")); err == nil {
		t.Error("duplicate id accepted")
	}
}

func TestReportFormats(t *testing.T) {
	suite := loadSuite(t)
	bad := mutant{"overflow", overflow}
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(0)).Run(context.Background(), bad)
	failed := rep.Filter(conformance.StatusFail)
	if len(failed) == 0 {
		t.Fatal("no failures to report")
	}
	write := func(format string) string {
		var b bytes.Buffer
		if err := rep.Write(&b, format); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	text := write("text")
	for _, want := range []string{"FAIL  " + failed[0].ID, "reason:", "want:", "got:", "RK-17", "requirement", "FAIL  pass"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}

	var decoded conformance.Report
	if err := json.Unmarshal([]byte(write("json")), &decoded); err != nil {
		t.Fatalf("json report does not parse: %v", err)
	}
	if decoded.Totals != rep.Totals || len(decoded.Results) != len(rep.Results) || decoded.Results[0].Status != rep.Results[0].Status {
		t.Errorf("json round trip: %+v vs %+v", decoded.Totals, rep.Totals)
	}

	var junit struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(strings.NewReader(write("junit")))
	if err := dec.Decode(&junit); err != nil {
		t.Fatalf("junit is not valid XML: %v", err)
	}
	if junit.Tests != len(rep.Results) || junit.Failures != len(failed) {
		t.Errorf("junit counts tests %d failures %d, want %d and %d", junit.Tests, junit.Failures, len(rep.Results), len(failed))
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || strings.TrimSpace(string(cd)) != "" {
			t.Fatalf("trailing content after </testsuites>: %v %v", tok, err)
		}
	}

	md := write("markdown")
	if !strings.Contains(md, "| requirement | section | pass | fail | error | skip | not run |") || !strings.Contains(md, "`"+failed[0].ID+"`") {
		t.Errorf("markdown report:\n%s", md)
	}
	if err := rep.Write(io.Discard, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}
