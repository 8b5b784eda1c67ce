package scenario_test

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance/scenario"
)

const dir = "../../testdata/scenarios"

func load(t *testing.T) map[string]*scenario.File {
	t.Helper()
	files, err := scenario.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario files")
	}
	return files
}

func all(t *testing.T) []*scenario.Scenario {
	var out []*scenario.Scenario
	files := load(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for i := range files[n].Scenarios {
			out = append(out, &files[n].Scenarios[i])
		}
	}
	return out
}

// TestScenarios plays every scenario vector against the reference executor.
func TestScenarios(t *testing.T) {
	for _, sc := range all(t) {
		t.Run(sc.ID, func(t *testing.T) {
			obs, err := scenario.Play(sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range scenario.Check(sc, obs) {
				t.Errorf("%s (%s)", m, sc.Steps[m.Step].Op)
			}
		})
	}
}

var (
	idRe  = regexp.MustCompile(`^scn-[a-z]+-[0-9]{4}$`)
	reqRe = regexp.MustCompile(`^(RET-(0[1-9]|1[0-9]|20)|DLQ-(00[1-6]|R00[1-5])|CORE-[A-Z][0-9]{2}|TMO-0[1-8]|RL-(00[1-6]|R00[1-5])|RK-[0-9]{2,3})$`)
)

// TestScenarioMetadata checks the versioning discipline: header fields,
// unique well-formed ids, requirement ids, sections, descriptions, flags
// explained in notes, non-decreasing times, and the 60-scenario floor.
func TestScenarioMetadata(t *testing.T) {
	seen := map[string]bool{}
	n := 0
	for name, f := range load(t) {
		if f.SchemaVersion != 1 || f.SuiteVersion == "" || f.SpecVersion != "1.0.0-rc.1" {
			t.Errorf("%s: header %d %q %q", name, f.SchemaVersion, f.SuiteVersion, f.SpecVersion)
		}
		for _, sc := range f.Scenarios {
			n++
			if !idRe.MatchString(sc.ID) || seen[sc.ID] {
				t.Errorf("%s: bad or duplicate id %q", name, sc.ID)
			}
			seen[sc.ID] = true
			for _, r := range append([]string{sc.Requirement}, sc.Covers...) {
				if !reqRe.MatchString(r) {
					t.Errorf("%s: requirement %q", sc.ID, r)
				}
			}
			if !strings.HasPrefix(sc.Section, "ojs-") || sc.Description == "" || len(sc.Steps) == 0 {
				t.Errorf("%s: section/description/steps missing", sc.ID)
			}
			for _, fl := range sc.Flags {
				if _, ok := f.Notes[fl]; !ok {
					t.Errorf("%s: flag %q not explained in %s notes", sc.ID, fl, name)
				}
			}
			var last int64
			for i, st := range sc.Steps {
				if st.AtMs < last {
					t.Errorf("%s: step %d goes back in time", sc.ID, i)
				}
				last = st.AtMs
			}
		}
	}
	if n < 60 {
		t.Errorf("%d scenarios, want at least 60", n)
	}
}

// TestScenarioCoverage checks that the vectors cover every transition of
// ojs-core §6.3 that the executor takes, every handler code, both
// exhaustion actions, and the retry and dead-letter requirements of ojs-retry
// and ojs-dead-letter.
func TestScenarioCoverage(t *testing.T) {
	covered := map[string]bool{}
	codes := map[string]bool{}
	for _, sc := range all(t) {
		covered[sc.Requirement] = true
		for _, c := range sc.Covers {
			covered[c] = true
		}
		for _, st := range sc.Steps {
			if st.Op == "fail" && st.Error != nil {
				codes[st.Error.Code] = true
			}
		}
	}
	want := []string{"RET-01", "RET-05", "RET-06", "RET-07", "RET-08", "RET-11", "RET-12", "RET-13", "RET-14", "RET-15", "RET-16", "RET-17", "RET-18",
		"DLQ-001", "DLQ-002", "DLQ-003", "DLQ-004", "DLQ-005", "CORE-T00"}
	for i := 1; i <= 17; i++ {
		if i == 11 { // active -> available on timeout: RK-30 takes the FAIL transitions instead
			continue
		}
		want = append(want, "CORE-T"+twoDigits(i))
	}
	for _, w := range want {
		if !covered[w] {
			t.Errorf("no scenario covers %s", w)
		}
	}
	for _, c := range []string{"", "RETRY", "DISCARD", "DEAD_LETTER", "FAIL"} {
		if !codes[c] {
			t.Errorf("no fail step with code %q", c)
		}
	}
}

func twoDigits(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }
