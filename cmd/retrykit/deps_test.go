package main

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// TestDependencies pins what the README says about run-time dependencies:
// the command needs the standard library, this module
// and pgregory.net/rapid (for "retrykit fuzz", through policytest and
// cmd/retrykit/internal/fuzz) and nothing else; every other package of the module needs
// the standard library alone.
func TestDependencies(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs the go command")
	}
	const mod = "github.com/retrykit/retrykit"
	// nonStd lists the imports of pkgs (transitively, tests excluded) that
	// are neither in the standard library nor in this module.
	nonStd := func(pkgs ...string) []string {
		t.Helper()
		args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
		out, err := exec.Command("go", args...).Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		var got []string
		for _, p := range strings.Fields(string(out)) {
			if p != mod && !strings.HasPrefix(p, mod+"/") {
				got = append(got, p)
			}
		}
		sort.Strings(got)
		return got
	}
	if got := strings.Join(nonStd("."), " "); got != "pgregory.net/rapid" {
		t.Errorf("cmd/retrykit depends on %q, want pgregory.net/rapid alone (the README says so)", got)
	}
	out, err := exec.Command("go", "list", mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var lib []string
	for _, p := range strings.Fields(string(out)) {
		switch p {
		case mod + "/policytest", mod + "/cmd/retrykit/internal/fuzz", mod + "/cmd/retrykit":
			// rapid's users, by design
		default:
			lib = append(lib, p)
		}
	}
	if got := nonStd(lib...); len(got) > 0 {
		t.Errorf("library packages depend on %v outside the standard library", got)
	}
}
