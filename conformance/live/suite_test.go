package live

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var writeSuite = flag.Bool("write-suite", false, "write testdata/suite/SuiteVersion.txt when no list exists for that version yet (never overwrites one)")

// suiteList renders the checks as the lines of testdata/suite/VERSION.txt:
// id, level, requirement, section and flags, one check a line, in report
// order.
func suiteList(checks []Check) string {
	var b strings.Builder
	for _, k := range checks {
		b.WriteString(strings.Join([]string{k.ID, k.level(), k.Requirement, k.Section, strings.Join(k.Flags, ",")}, "\t"))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestSuiteVersionPinsTheChecks fails when the checks differ from the list
// recorded for SuiteVersion: adding, removing or remapping a check without
// a new version would put reports of different checks into one history.
func TestSuiteVersionPinsTheChecks(t *testing.T) {
	got := suiteList(Checks())
	file := filepath.Join("testdata", "suite", SuiteVersion+".txt")
	want, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) && *writeSuite {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", file)
		return
	}
	if err != nil {
		t.Fatalf("no list of checks for suite version %s: %v (a new version gets its list with go test -run TestSuiteVersionPinsTheChecks -write-suite)", SuiteVersion, err)
	}
	if listed := uncommented(string(want)); listed != got {
		t.Errorf("the checks differ from the list of suite version %s (%s):\n%s\n"+
			"Raise SuiteVersion in checks.go and record the new list with go test -run TestSuiteVersionPinsTheChecks -write-suite; "+
			"a released version's list never changes.", SuiteVersion, file, lineDiff(listed, got))
	}
}

// TestSuiteVersionsAreDistinct checks that no two recorded versions list the
// same checks, and that the current version is the latest: a version
// number is never reused for another list nor a list given a second
// number.
func TestSuiteVersionsAreDistinct(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "suite"))
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]string{}
	latest := 0
	for _, e := range entries {
		v := strings.TrimSuffix(e.Name(), ".txt")
		n, err := liveNumber(v)
		if err != nil {
			t.Errorf("%s: not live-N.txt", e.Name())
			continue
		}
		latest = max(latest, n)
		data, err := os.ReadFile(filepath.Join("testdata", "suite", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := lists[string(data)]; ok {
			t.Errorf("%s and %s list the same checks", prev, v)
		}
		lists[string(data)] = v
	}
	if cur, err := liveNumber(SuiteVersion); err != nil || cur != latest {
		t.Errorf("SuiteVersion %s is not the latest recorded version (live-%d)", SuiteVersion, latest)
	}
}

// uncommented returns list without its lines starting with "#": a version
// raised by hand for a check that judges differently under the same row
// says why in such a line, which also keeps its file distinct from the
// previous version's (TestSuiteVersionsAreDistinct).
func uncommented(list string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(list, "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// liveNumber returns N of "live-N".
func liveNumber(v string) (int, error) {
	rest, ok := strings.CutPrefix(v, "live-")
	if !ok {
		return 0, errors.New("no live- prefix")
	}
	return strconv.Atoi(rest)
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(the same lines in another order)"
	}
	return b.String()
}
