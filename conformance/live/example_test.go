package live_test

import (
	"fmt"

	"github.com/retrykit/retrykit/conformance/live"
)

// The checks a run judges, with the requirement each one tests. Running
// them needs a server: live.Run(ctx, "http://127.0.0.1:8080").
func ExampleChecks() {
	for _, c := range live.Checks()[:6] {
		fmt.Printf("%-22s %s\n", c.ID, c.Requirement)
	}
	// Output:
	// http-attempts          RET-01
	// http-attempt-absolute  RET-01
	// http-next-attempt-at   RET-14
	// http-cap               RET-04
	// http-cap-before-jitter RET-04
	// http-coefficient-fraction RET-04
}
