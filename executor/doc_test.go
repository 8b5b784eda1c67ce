package executor

import (
	"os"
	"strings"
	"testing"
)

// The package doc's non-goals name nothing the package does: a reader who
// needs priorities or dead-letter replay must not be sent elsewhere. Each
// feature below is provided (the composite literal and the call compile
// only while it is), and the first paragraph of "# Non-goals", the list
// itself, must not name it.
func TestNonGoalsNameNothingProvided(t *testing.T) {
	provided := map[string]any{
		"priorit":     JobSpec{Priority: 1},
		"replay":      WithReplayRules,
		"dead letter": Filter{DeadLetter: true},
		"heartbeat":   (*Executor).Heartbeat,
	}
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "// # Non-goals\n//\n")
	if !ok {
		t.Fatal("doc.go has no # Non-goals section")
	}
	list, _, _ := strings.Cut(section, "\n//\n")
	list = strings.ToLower(strings.ReplaceAll(list, "//", ""))
	for feature := range provided {
		if strings.Contains(list, feature) {
			t.Errorf("the non-goals %q name %q, which the package provides", strings.Join(strings.Fields(list), " "), feature)
		}
	}
}
