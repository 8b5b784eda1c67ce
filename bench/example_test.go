package bench_test

import (
	"fmt"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// The schedule every library in the benchmark is driven on, as retrykit
// computes it from the OJS policy JSON without jitter.
func Example() {
	p, err := policy.Parse([]byte(`{"initial_interval":"PT1S","backoff_coefficient":2.0,"max_interval":"PT5M","jitter":false}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	bo := p.Backoff()
	for n := 1; n <= 12; n++ {
		fmt.Print(bo.Delay(n, backoff.Fixed(0)), " ")
	}
	fmt.Println()
	// Output:
	// 1s 2s 4s 8s 16s 32s 1m4s 2m8s 4m16s 5m0s 5m0s 5m0s
}
