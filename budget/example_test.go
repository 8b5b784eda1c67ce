package budget_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/policy"
)

// A job allowed 60 seconds per attempt and 600 seconds in all, retried every
// minute: a failure at 480 s is retried (the retry ends exactly at the
// deadline), one at 481 s is not (§9.1).
func Example() {
	b, err := budget.Parse([]byte(`{"timeout": 60, "total_timeout": 600}`))
	if err != nil {
		panic(err)
	}
	p, err := policy.Parse([]byte(`{"max_attempts": 100, "initial_interval": "PT1M", "backoff_coefficient": 1, "jitter": false}`))
	if err != nil {
		panic(err)
	}
	created := time.Date(2026, 2, 19, 12, 0, 0, 0, time.UTC)
	for _, at := range []int{100, 480, 481, 601} {
		d, err := b.DecideAt(p, budget.Failure{
			Failure:   policy.Failure{Attempt: 2, ErrorType: budget.ErrorTypeTimeout},
			CreatedAt: created,
			At:        created.Add(time.Duration(at) * time.Second),
		}, 0)
		fmt.Println(at, d.Action, d.Delay, d.Reason, err)
	}
	e, _ := b.Execution(created, created.Add(91*time.Second+500*time.Millisecond))
	j, _ := e.MarshalJSON()
	fmt.Println(string(j))
	// Output:
	// 100 retry 1m0s policy <nil>
	// 480 retry 1m0s policy <nil>
	// 481 discard 0s no_time_left <nil>
	// 601 discard 0s total_timeout <nil>
	// {"type":"timeout","message":"Job execution exceeded timeout of 60 seconds","timeout_kind":"execution","limit_seconds":60,"elapsed_seconds":92}
}
