package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/profile"
)

// --list-profiles only lists: a flag it would drop is refused, naming the
// flag, and no file is written.
func TestListProfilesRefusesOtherFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"--list-profiles", "--svg", "FILE"}, "--svg"},
		{[]string{"--svg", "FILE", "--list-profiles"}, "--svg"},
		{[]string{"--list-profiles", "--profile", "river"}, "--profile"},
		{[]string{"--list-profiles", "--rand", "0.5"}, "--rand"},
		{[]string{"--list-profiles", "--limit", "3"}, "--limit"},
		{[]string{"--list-profiles", "p.json"}, "a policy file"},
	} {
		args := append([]string{"schedule"}, tc.args...)
		svg := filepath.Join(dir, "out.svg")
		for i, a := range args {
			if a == "FILE" {
				args[i] = svg
			}
		}
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", tc.args, code, out)
		}
		if !strings.Contains(errOut, "--list-profiles") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: error %q does not name --list-profiles and %s", tc.args, errOut, tc.want)
		}
		if _, err := os.Stat(svg); err == nil {
			t.Errorf("%q: wrote %s", tc.args, svg)
		}
	}
}

func TestListProfilesJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "", "schedule", "--json", "--list-profiles")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []struct{ Name, System, Summary string }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	names := profile.Names()
	if len(got) != len(names) {
		t.Fatalf("%d entries for %d profiles", len(got), len(names))
	}
	for i, n := range names {
		if got[i].Name != n || got[i].System == "" || got[i].Summary == "" {
			t.Errorf("entry %d = %+v, want profile %s with system and summary", i, got[i], n)
		}
	}
}
