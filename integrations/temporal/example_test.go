package temporalretry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
)

// An activity run once by the SDK's in-process activity test environment
// (no server), with the interceptor installed as on a real worker. A plain
// error is retried after the OJS delay (2s, jitter drawn from a fixed
// source: 0.5 + 0.5 = 1.0); an error whose type matches a non_retryable
// pattern ends the activity.
func Example() {
	rk, err := temporalretry.Parse([]byte(`{
		"max_attempts": 5,
		"initial_interval": "PT2S",
		"non_retryable_errors": ["auth.*"]
	}`), temporalretry.WithSource(backoff.Fixed(0.5)))
	if err != nil {
		fmt.Println(err)
		return
	}
	charge := func(ctx context.Context, card string) error {
		if card == "expired" {
			return errmatch.Wrap(errors.New("token expired"), "auth.token_expired", "")
		}
		return errors.New("gateway timeout")
	}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rk}})
	env.RegisterActivity(charge)
	for _, card := range []string{"ok", "expired"} {
		_, err := env.ExecuteActivity(charge, card)
		o, _ := temporalretry.OutcomeOf(err)
		fmt.Printf("%s: %s (%s) after attempt %d, next in %v\n", card, o.Action, o.Reason, o.Attempt, o.Delay)
	}

	rp := temporalretry.RetryPolicy(nil) // the OJS default policy, for workflows without the interceptor
	fmt.Println("default MaximumAttempts:", rp.MaximumAttempts)
	fmt.Println("max_attempts 2^40 ->", temporalretry.MaximumAttempts(1<<40), "(unlimited)")
	// Output:
	// ok: retry (retry) after attempt 1, next in 2s
	// expired: discard (non_retryable) after attempt 1, next in 0s
	// default MaximumAttempts: 3
	// max_attempts 2^40 -> 0 (unlimited)
}
