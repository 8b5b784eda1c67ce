package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The line of a delay chart and the delay column of the text have one name,
// "middle (r = 0.5)", in every command: no "nominal",
// no "middle draw", no "r=0.5" beside it.
func TestMiddleHasOneName(t *testing.T) {
	dir := t.TempDir()
	svg := func(name string) string { return filepath.Join(dir, name) }
	runs := [][]string{
		{"schedule", "--svg", svg("s.svg")},
		{"schedule", "--profile", "sidekiq", "--limit", "3", "--svg", svg("p.svg")},
		{"compare", "--profile", "sidekiq", "--profile", "river", "--limit", "3", "--svg", svg("c.svg")},
	}
	var texts []string
	for _, args := range runs {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		if !strings.Contains(out, "middle (r = 0.5)") {
			t.Errorf("%q: the text does not name the middle column \"middle (r = 0.5)\":\n%s", args, out)
		}
		data, err := os.ReadFile(args[len(args)-1])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "line: middle (r = 0.5)") {
			t.Errorf("%q: the chart's legend does not name the line \"middle (r = 0.5)\"", args)
		}
		texts = append(texts, out, string(data))
	}
	for _, s := range texts {
		for _, old := range []string{"nominal", "middle draw", "r=0.5", "(r = 0.5) (r = 0.5)"} {
			if strings.Contains(s, old) {
				t.Errorf("%q still appears:\n%s", old, s)
			}
		}
	}
}
