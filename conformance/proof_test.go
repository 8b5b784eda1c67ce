package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/diagnose"
)

// A bug model's cause says how many passes its model was replayed on:
// the passing vectors whose request the model answers with a value of its
// own. Counted here from the model's answers to the vectors' requests,
// apart from the diagnosis. The scenarios and the jitter check pass too,
// but no model answers them, so the count is below the passes; every
// format says the same sentence, and JSON carries the count back.
func TestCauseCountsThePassesItsModelWasReplayedOn(t *testing.T) {
	suite, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	rep := conformance.NewRunner(suite, conformance.WithJitterSamples(200)).Run(context.Background(), mutant{"no-post-jitter-cap", noPostJitterCap})
	var model diagnose.Model
	for _, m := range diagnose.Models() {
		if m.Name == "no-post-jitter-cap" {
			model = m
		}
	}
	passes, want := 0, 0
	for _, r := range rep.Results {
		if r.Status != conformance.StatusPass {
			continue
		}
		passes++
		v := suite.Vector(r.ID)
		if v == nil || v.Kind == conformance.KindScenario || r.Random {
			continue // the jitter check, a scenario, a draw of the implementation's own
		}
		if a, ok := model.Answer(v.Request()); ok && !diagnose.Drawn(a) {
			want++
		}
	}
	if want == 0 || want >= passes {
		t.Fatalf("%d passes, %d the model answers: the run does not tell a count of replays from a count of passes", passes, want)
	}
	var c *conformance.Cause
	for i := range rep.Causes {
		if rep.Causes[i].Class == "bug:no-post-jitter-cap" {
			c = &rep.Causes[i]
		}
	}
	if c == nil {
		t.Fatalf("no cause bug:no-post-jitter-cap: %s", causes(rep))
	}
	if c.PassesReplayed == nil || *c.PassesReplayed != want {
		t.Fatalf("passes replayed %v, want %d (of %d passes)", c.PassesReplayed, want, passes)
	}

	sentence := fmt.Sprintf("reproduces %d failures; replayed on %d passes, contradicts none", len(c.IDs), want)
	for format, s := range map[string]string{
		"text":     "bug:no-post-jitter-cap: " + sentence,
		"html":     "Bug model: " + sentence + ".",
		"markdown": "| " + sentence + " |",
		"junit":    `value="` + sentence + `"`,
	} {
		if out := write(t, rep, format); !strings.Contains(out, s) {
			t.Errorf("%s report lacks %q", format, s)
		}
	}

	js := write(t, rep, "json")
	if !strings.Contains(js, fmt.Sprintf(`"passes_replayed": %d`, want)) {
		t.Errorf("json lacks passes_replayed %d", want)
	}
	var back conformance.Report
	if err := json.Unmarshal([]byte(js), &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rep.Causes, back.Causes); d != "" {
		t.Errorf("causes after a JSON round trip (-before +after):\n%s", d)
	}
	if a, b := write(t, rep, "html"), write(t, &back, "html"); a != b {
		t.Errorf("the report read back from JSON renders another HTML page")
	}
}

// A report written before the count was recorded has no passes_replayed:
// its causes say what they reproduce and nothing about passes, rather than
// "0". A count of 0 says that no pass could contradict the model.
func TestUnknownPassesReplayedRenderNothing(t *testing.T) {
	old := `{"totals":{"fail":2},"results":[{"id":"a","status":"fail"},{"id":"b","status":"fail"}],
	"causes":[{"class":"bug:no-post-jitter-cap","explanation":"cap again","ids":["a","b"],"reproduced":true}]}`
	var rep conformance.Report
	if err := json.Unmarshal([]byte(old), &rep); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "html", "markdown", "junit"} {
		out := write(t, &rep, format)
		if !strings.Contains(out, "reproduces 2 failures") || strings.Contains(out, "replayed on") || strings.Contains(out, "contradict") {
			t.Errorf("%s report of an old cause:\n%s", format, out)
		}
	}
	zero := 0
	rep.Causes[0].PassesReplayed = &zero
	var b bytes.Buffer
	if err := rep.Write(&b, "text"); err != nil {
		t.Fatal(err)
	}
	if s := "reproduces 2 failures; replayed on no pass, so no pass could contradict it"; !strings.Contains(b.String(), s) {
		t.Errorf("text lacks %q:\n%s", s, b.String())
	}
	js, err := json.Marshal(rep.Causes[0])
	if err != nil || !strings.Contains(string(js), `"passes_replayed":0`) {
		t.Errorf("a count of 0 is not written: %s %v", js, err)
	}
}
