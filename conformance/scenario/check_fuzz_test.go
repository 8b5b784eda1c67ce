package scenario_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance/scenario"
)

// FuzzCheck judges arbitrary answers to the protocol's scenario op: the
// observations come from an adapter, decoded from the wire, so Check must
// never panic on them and must only report steps the scenario has. The seed
// corpus is the reference's own observations, which Check accepts in full
// after a trip through JSON.
func FuzzCheck(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "scenarios", "*.json"))
	var all []*scenario.Scenario
	for _, name := range files {
		if strings.HasSuffix(name, ".schema.json") {
			continue
		}
		fh, err := os.Open(name)
		if err != nil {
			f.Fatal(err)
		}
		file, err := scenario.Decode(fh)
		fh.Close()
		if err != nil {
			f.Fatalf("%s: %v", name, err)
		}
		for i := range file.Scenarios {
			all = append(all, &file.Scenarios[i])
		}
	}
	if len(all) == 0 {
		f.Fatal("no scenarios found")
	}
	for i, sc := range all {
		obs, err := scenario.Play(sc)
		if err != nil {
			f.Fatalf("%s: %v", sc.ID, err)
		}
		raw, err := json.Marshal(obs)
		if err != nil {
			f.Fatal(err)
		}
		var back []scenario.Observation
		if err := json.Unmarshal(raw, &back); err != nil {
			f.Fatalf("%s: observations do not decode: %v", sc.ID, err)
		}
		if ms := scenario.Check(sc, back); len(ms) != 0 {
			f.Fatalf("%s: the reference's observations, through JSON, fail: %v", sc.ID, ms[0])
		}
		if i%8 == 0 {
			f.Add(uint16(i), raw)
		}
	}
	f.Add(uint16(0), []byte(`[{"jobs":null,"counts":null},{"error":"x","fetched":"a","jobs":{"a":{"errors":[{"details":"{"}]}}}]`))
	f.Fuzz(func(t *testing.T, which uint16, answer []byte) {
		sc := all[int(which)%len(all)]
		var obs []scenario.Observation
		if json.Unmarshal(answer, &obs) != nil {
			return
		}
		for _, m := range scenario.Check(sc, obs) {
			if m.Step < 0 || m.Step >= len(sc.Steps) {
				t.Fatalf("scenario %s (%d steps): mismatch at step %d", sc.ID, len(sc.Steps), m.Step)
			}
		}
	})
}
