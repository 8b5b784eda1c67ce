package scoreboard_test

import (
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/scoreboard"
)

// A directory with one report: one implementation, one suite version, a
// badge with its MUST score.
func ExampleLoad() {
	fsys := fstest.MapFS{"reports/demo-1.json": {Data: []byte(`{
		"implementation": {"implementation": "demo", "version": "1.0"},
		"suite_version": "live-1", "spec_version": "1.0",
		"scores": [{"name": "MUST", "pass": 30, "fail": 5}, {"name": "SHOULD"}, {"name": "RK"}],
		"requirements": [{"name": "RET-01", "pass": 3}, {"name": "RET-08", "pass": 1, "fail": 2}]}`)}}
	b, err := scoreboard.Load(fsys, "reports")
	if err != nil {
		fmt.Println(err)
		return
	}
	im := b.Implementations[0]
	fmt.Println(im.Name, im.Slug, im.Suites[0].Suite, im.Suites[0].Latest().Path)
	badge := scoreboard.Badge(im)
	fmt.Println(strings.Contains(badge, "live-1 MUST 30/35"), strings.Contains(badge, "#c62828"))
	// Output:
	// demo demo live-1 demo-1.json
	// true true
}
