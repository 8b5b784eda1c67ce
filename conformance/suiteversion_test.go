package conformance_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
)

// suiteDigests holds, for every suite version since the version was pinned,
// the digest (suiteDigest) of what its vectors and scenarios ask and
// expect. An entry is never changed: a suite whose content changes gets a
// new suite_version (testdata/vectors/README.md, "Versions") and a new
// entry. "0.1.0" named every suite before the pin, so it has none.
var suiteDigests = map[string]string{
	"0.2.0": "5e57a0794bc416b46be34fc2a66e3f0252ed6dd558d31dfcd6a6fe29cf2809d4",
}

// suiteDigest is the SHA-256 of every vector and scenario as the runner
// uses it, in suite order: kind, id, requirement, section, flags, covered
// requirements, input and expected (JSON without insignificant
// whitespace). Descriptions, notes and the files' layout do not count.
func suiteDigest(t *testing.T, s *conformance.Suite) string {
	t.Helper()
	h := sha256.New()
	for _, v := range s.Vectors {
		var in, want bytes.Buffer
		if len(v.Input) > 0 {
			if err := json.Compact(&in, v.Input); err != nil {
				t.Fatalf("%s: input: %v", v.ID, err)
			}
		}
		if len(v.Expected) > 0 {
			if err := json.Compact(&want, v.Expected); err != nil {
				t.Fatalf("%s: expected: %v", v.ID, err)
			}
		}
		for _, field := range []string{v.Kind, v.ID, v.Requirement, v.Section, strings.Join(v.Flags, ","), strings.Join(v.Covers, ","), in.String(), want.String()} {
			h.Write([]byte(field))
			h.Write([]byte{0})
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// shippedVersion returns the suite_version of the shipped files (Load
// checks that they all carry the same).
func shippedVersion(t *testing.T) string {
	t.Helper()
	data, err := fs.ReadFile(retrykit.Vectors, "delay.json")
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Version string `json:"suite_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.Version == "" {
		t.Fatalf("delay.json: no suite_version (%v)", err)
	}
	return head.Version
}

// TestSuiteVersionPinsTheVectors fails when the vectors or scenarios
// change under a suite_version that was already given to other content:
// reports of different suites would then share one version and one
// history on the scoreboard.
func TestSuiteVersionPinsTheVectors(t *testing.T) {
	s, err := conformance.Load(retrykit.Vectors, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	version := shippedVersion(t)
	got := suiteDigest(t, s)
	want, ok := suiteDigests[version]
	switch {
	case !ok:
		t.Errorf("suite_version %q has no digest: record %q: %q in suiteDigests once the suite of that version is final", version, version, got)
	case got != want:
		t.Errorf("the vectors or scenarios changed under suite_version %s (digest %s, recorded %s): "+
			"raise SUITE_VERSION in testdata/vectors/generate.py and testdata/scenarios/generate.py "+
			"(README: minor for added vectors, patch for a corrected expectation), regenerate both, and add the new version's digest here; "+
			"a released version's digest never changes", version, got, want)
	}
}

// TestLoadRefusesMixedSuiteVersions checks that a suite whose files carry
// different suite versions is refused, naming the odd file, rather than
// reported under the version of whichever file came first.
func TestLoadRefusesMixedSuiteVersions(t *testing.T) {
	file := func(version string) []byte {
		return []byte(`{"schema_version":1,"suite_version":"` + version + `","spec_version":"1.0.0-rc.1","kind":"match","notes":{},"vectors":[` +
			`{"id":"m-1","requirement":"RET-18","section":"6.2","description":"exact","flags":[],"input":{"patterns":["a"],"error_type":"a"},"expected":{"match":true}}]}`)
	}
	v := shippedVersion(t)
	s, err := conformance.Load(mapFS{"match.json": file(v)}, retrykit.Scenarios)
	if err != nil {
		t.Fatalf("one version: %v", err)
	}
	if rep := conformance.NewRunner(s).Run(t.Context(), conformance.Reference()); rep.SuiteVersion != v {
		t.Errorf("report suite_version %q, want the files' %s", rep.SuiteVersion, v)
	}
	_, err = conformance.Load(mapFS{"match.json": file("0.0.1")}, retrykit.Scenarios)
	if !isInvalidVector(err) || !strings.Contains(err.Error(), `suite_version "`+v+`"`) || !strings.Contains(err.Error(), `"0.0.1"`) {
		t.Errorf("vectors of 0.0.1 with scenarios of %s: %v", v, err)
	}
	// Scenarios alone carry their version into the report too.
	s, err = conformance.Load(nil, retrykit.Scenarios)
	if err != nil {
		t.Fatal(err)
	}
	if rep := conformance.NewRunner(s, conformance.WithIDs("scn-core-0001")).Run(t.Context(), conformance.Reference()); rep.SuiteVersion != v {
		t.Errorf("scenarios only: report suite_version %q, want %s", rep.SuiteVersion, v)
	}
}
