package scenario_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/retrykit/retrykit/conformance/scenario"
)

// FuzzDecodePlay feeds arbitrary bytes to Decode and plays whatever decodes:
// scenario files come from other implementations' authors and, through the
// protocol's scenario op, from the wire, so neither step may panic, and
// Check must accept whatever Play observed.
func FuzzDecodePlay(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "scenarios", "*.json"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil && !bytes.HasSuffix([]byte(name), []byte(".schema.json")) {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"schema_version":1,"kind":"scenario","scenarios":[{"id":"x","steps":[{"at_ms":0,"op":"tick"}]}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"scenario","scenarios":[{"id":"x","config":{"error_history":1000000000},"steps":[{"at_ms":-5,"op":"fetch"}]}]}`))
	f.Add([]byte(`{"schema_version":1,"kind":"scenario","scenarios":[{"id":"x","steps":[{"at_ms":9223372036854775807,"op":"enqueue","job":{"id":"a","type":"t","queue":"q","retry":{"max_attempts":1}}},{"at_ms":9223372036854775807,"op":"fetch","queues":["q"]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := scenario.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := range file.Scenarios {
			sc := &file.Scenarios[i]
			if len(sc.Steps) > 64 {
				continue // keep each input cheap; length is not what is fuzzed
			}
			obs, err := scenario.Play(sc)
			if err != nil {
				continue
			}
			if len(obs) != len(sc.Steps) {
				t.Fatalf("scenario %q: %d observations for %d steps", sc.ID, len(obs), len(sc.Steps))
			}
			_ = scenario.Check(sc, obs)
		}
	})
}
