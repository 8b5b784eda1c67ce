package riverretry_test

import (
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/errmatch"
	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// The retry hook and the decision for fake job rows, without a database.
// River's job.Attempt is the attempt that just failed.
func Example() {
	rk, err := riverretry.Parse([]byte(`{
		"max_attempts": 4,
		"initial_interval": "PT2S",
		"jitter": false,
		"non_retryable_errors": ["validation.*"]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	var cfg river.Config
	rk.Install(&cfg) // RetryPolicy and Plugins; then river.NewClient(driver, &cfg)

	for attempt := 1; attempt <= 3; attempt++ {
		fmt.Printf("after attempt %d: retry in %v\n", attempt, rk.Delay(&rivertype.JobRow{Attempt: attempt}))
	}
	boom := errors.New("boom")
	for _, err := range []error{
		boom,
		errmatch.Wrap(boom, "validation.bad_email", ""),
		errmatch.Wrap(boom, "payment.declined", errmatch.CodeDeadLetter),
	} {
		d, _ := rk.Decide(&rivertype.JobRow{Attempt: 1}, err)
		fmt.Printf("%-32q %v (%v)\n", err.Error(), d.Action, d.Reason)
	}
	d, _ := rk.Decide(&rivertype.JobRow{Attempt: 4}, boom)
	fmt.Printf("%-32q %v (%v) at attempt 4\n", boom.Error(), d.Action, d.Reason)
	// Output:
	// after attempt 1: retry in 2s
	// after attempt 2: retry in 4s
	// after attempt 3: retry in 8s
	// "boom"                           retry (retry)
	// "validation.bad_email: boom"     discard (non_retryable)
	// "payment.declined: boom"         dead_letter (handler_code)
	// "boom"                           discard (exhausted) at attempt 4
}
