package verify_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/verify"
)

// Load reads a profile's vectors; each delay vector pins the delay after an
// attempt for one draw r.
func ExampleLoad() {
	f, err := verify.Load("../testdata/profiles", "sidekiq6")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.System, f.Version)
	for _, v := range f.Of("delay")[:2] {
		fmt.Printf("attempt %d, r=%v: %v\n", v.Attempt, *v.Rand, time.Duration(v.DelayNS))
	}
	// Output:
	// Sidekiq 6 6.4.1
	// attempt 1, r=0: 15s
	// attempt 1, r=0.9999999999: 24s
}
