package asynqretry_test

import (
	"fmt"

	"github.com/hibiken/asynq"

	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
	"github.com/retrykit/retrykit/policy"
)

// The retry hook for fake tasks, without Redis. asynq's n is the number of
// retries done so far, so n = 0 is the delay after the first attempt.
// (RetryDelay, the hook itself, adds under a second so that the due time is
// a whole second, as asynq stores it.)
func Example() {
	rk, err := asynqretry.Parse([]byte(`{
		"max_attempts": 4,
		"initial_interval": "PT2S",
		"jitter": false
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	var cfg asynq.Config
	rk.Install(&cfg) // RetryDelayFunc; run the server with rk.Handler(mux)

	task := asynq.NewTask("email:send", []byte(`{"to":"a@example.com"}`))
	for n := 0; n < 3; n++ {
		fmt.Printf("n=%d (after attempt %d): retry in %v\n", n, n+1, rk.Delay(n, task))
	}
	fmt.Println("default policy max_attempts:", rk.Policy(task).Spec().MaxAttempts)

	// A task with its own policy: 2 attempts, so asynq's MaxRetry is 1.
	own, _ := policy.Parse([]byte(`{"max_attempts":2,"initial_interval":"PT10S","jitter":false}`))
	urgent := asynqretry.NewTask("email:send", nil, own)
	fmt.Println("per-task max_attempts:", rk.Policy(urgent).Spec().MaxAttempts)
	fmt.Println("MaxRetry for it:", asynqretry.MaxRetry(own).Value())
	// Output:
	// n=0 (after attempt 1): retry in 2s
	// n=1 (after attempt 2): retry in 4s
	// n=2 (after attempt 3): retry in 8s
	// default policy max_attempts: 4
	// per-task max_attempts: 2
	// MaxRetry for it: 1
}
