package scoreboard_test

import (
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/scoreboard"
)

// A directory with one report: one implementation, one suite version, a
// badge with its MUST score. The scores are those its results give (a
// report whose scores were edited is refused).
func ExampleLoad() {
	fsys := fstest.MapFS{"reports/demo-1.json": {Data: []byte(`{
		"implementation": {"implementation": "demo", "version": "1.0"},
		"suite_version": "live-1", "spec_version": "1.0",
		"scores": [{"name": "MUST", "pass": 1, "fail": 1}, {"name": "SHOULD"}, {"name": "RK"}],
		"totals": {"pass": 1, "fail": 1},
		"requirements": [{"name": "RET-01", "pass": 1}, {"name": "RET-08", "fail": 1}],
		"results": [{"id": "a", "requirement": "RET-01", "status": "pass"}, {"id": "b", "requirement": "RET-08", "status": "fail"}]}`)}}
	b, err := scoreboard.Load(fsys, "reports")
	if err != nil {
		fmt.Println(err)
		return
	}
	im := b.Implementations[0]
	fmt.Println(im.Name, im.Slug, im.Suites[0].Suite, im.Suites[0].Latest().Path)
	badge := scoreboard.Badge(im)
	fmt.Println(strings.Contains(badge, "live-1 MUST 1/2"), strings.Contains(badge, "#c62828"))
	// Output:
	// demo demo live-1 demo-1.json
	// true true
}
