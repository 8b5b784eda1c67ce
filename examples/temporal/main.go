// Command temporal runs Temporal activities under an OJS retry policy
// (retrykit's integrations/temporal): one that fails twice and then
// succeeds, and one whose handler gives up with a DEAD_LETTER code, which
// the dead-letter hook publishes elsewhere before the activity fails.
//
// It starts a Temporal server in process (go.temporal.io/server/temporaltest,
// SQLite in memory, loopback), so it needs nothing else:
//
//	go run .
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/dynamicconfig"
	server "go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/retrykit/retrykit/errmatch"
	temporalretry "github.com/retrykit/retrykit/integrations/temporal"
)

// The retry policy, in OJS JSON: three attempts, 200ms then 400ms.
const policyJSON = `{"max_attempts":3,"initial_interval":"PT0.2S","jitter":false,
	"non_retryable_errors":["validation.*"],"on_exhaustion":"dead_letter"}`

// Charge fails its first two attempts with a plain error; a declined card
// is a permanent failure, reported with a DEAD_LETTER code.
func Charge(ctx context.Context, order int, declined bool) (string, error) {
	if declined {
		return "", errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
	}
	if n := activity.GetInfo(ctx).Attempt; n < 3 {
		return "", fmt.Errorf("gateway timeout on attempt %d", n)
	}
	return fmt.Sprintf("order %d charged", order), nil
}

// Checkout charges one order and reports how the activity ended.
func Checkout(ctx workflow.Context, order int, declined bool) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var res string
	err := workflow.ExecuteActivity(ctx, Charge, order, declined).Get(ctx, &res)
	if o, ok := temporalretry.OutcomeOf(err); ok {
		return fmt.Sprintf("failed: %s (%s) at attempt %d", o.Action, o.Reason, o.Attempt), nil
	}
	return res, err
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	quiet := sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ts := temporaltest.NewServer(
		// Timers under a second are honoured only with a short timer shift
		// (the default 1s rounds them up).
		temporaltest.WithBaseServerOptions(server.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.TimerProcessorMaxTimeShift.Key(): []dynamicconfig.ConstrainedValue{{Value: 10 * time.Millisecond}},
		})),
		temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}),
	)
	defer ts.Stop()
	c := ts.GetDefaultClient()

	// The retrykit lines:
	rk, err := temporalretry.Parse([]byte(policyJSON), temporalretry.WithDeadLetter(
		func(_ context.Context, dl temporalretry.DeadLetter) error {
			fmt.Printf("dead letter: %s %v: %v (published elsewhere)\n", dl.Info.ActivityType.Name, dl.Args, dl.Err)
			return nil
		}))
	if err != nil {
		return err
	}
	w := worker.New(c, "checkout", worker.Options{Interceptors: []interceptor.WorkerInterceptor{rk}})

	w.RegisterWorkflow(Checkout)
	w.RegisterActivity(Charge)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, o := range []struct {
		order    int
		declined bool
	}{{1, false}, {2, true}} {
		id := fmt.Sprintf("checkout-%d", o.order)
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "checkout"}, Checkout, o.order, o.declined)
		if err != nil {
			return err
		}
		var res string
		if err := run.Get(ctx, &res); err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", id, res)
		if err := printHistory(ctx, c, id); err != nil {
			return err
		}
	}
	return nil
}

// printHistory shows what the workflow history records of the activity:
// the attempt that ran last, the delay it was asked to wait before, and how
// it closed.
func printHistory(ctx context.Context, c client.Client, id string) error {
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return err
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := ev.GetActivityTaskStartedEventAttributes()
			fmt.Printf("  history: attempt %d started", a.GetAttempt())
			if d := a.GetLastFailure().GetApplicationFailureInfo().GetNextRetryDelay(); d != nil {
				fmt.Printf(", %v after attempt %d failed with %q", d.AsDuration(), a.GetAttempt()-1, a.GetLastFailure().GetCause().GetMessage())
			}
			fmt.Println()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			f := ev.GetActivityTaskFailedEventAttributes().GetFailure()
			fmt.Printf("  history: failed: %s: %s\n", f.GetMessage(), f.GetCause().GetMessage())
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			fmt.Println("  history: completed")
		}
	}
	return nil
}
