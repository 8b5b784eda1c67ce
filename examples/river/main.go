// Command river runs a River client whose retries follow an OJS retry
// policy (retrykit's integrations/river): a job that fails twice and then
// succeeds, and one whose handler gives up with a DEAD_LETTER code.
//
// It needs a PostgreSQL database in DATABASE_URL, for example the throwaway
// server of the repository's .ci/services.sh:
//
//	.ci/services.sh start && . .ci/services.env
//	DATABASE_URL=$RETRYKIT_TEST_DATABASE_URL go run .
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/errmatch"
	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// The retry policy, in OJS JSON: three attempts, 200ms then 400ms.
const policyJSON = `{"max_attempts":3,"initial_interval":"PT0.2S","jitter":false,
	"non_retryable_errors":["validation.*"],"on_exhaustion":"dead_letter"}`

// ChargeArgs is the example job.
type ChargeArgs struct {
	OrderID  int  `json:"order_id"`
	Declined bool `json:"declined"`
}

// Kind names the job kind for River.
func (ChargeArgs) Kind() string { return "charge" }

// ChargeWorker fails its first two attempts with a plain error; a declined
// card is a permanent failure, reported with a DEAD_LETTER code.
type ChargeWorker struct {
	river.WorkerDefaults[ChargeArgs]
}

// Work charges the order.
func (ChargeWorker) Work(ctx context.Context, job *river.Job[ChargeArgs]) error {
	if job.Args.Declined {
		return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
	}
	if job.Attempt < 3 {
		return fmt.Errorf("gateway timeout on attempt %d", job.Attempt)
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// errNoDatabase is run's error when DATABASE_URL is not set.
var errNoDatabase = errors.New("DATABASE_URL is not set: this example needs a PostgreSQL database URL " +
	"(postgres://user@host:port/db). From the repository root: " +
	".ci/services.sh start && . .ci/services.env && (cd examples/river && DATABASE_URL=$RETRYKIT_TEST_DATABASE_URL go run .)")

func run() error {
	ctx := context.Background()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return errNoDatabase
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("DATABASE_URL: not a usable PostgreSQL URL: %w", err)
	}
	defer pool.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		return fmt.Errorf("cannot reach the PostgreSQL server of DATABASE_URL (is it running?): %w", err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return err
	}

	workers := river.NewWorkers()
	river.AddWorker(workers, &ChargeWorker{})
	config := &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}},
		Workers:           workers,
		Logger:            quiet,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond,
	}

	// The retrykit lines:
	rk, err := riverretry.Parse([]byte(policyJSON))
	if err != nil {
		return err
	}
	rk.Install(config)

	client, err := river.NewClient(riverpgxv5.New(pool), config)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(ctx)

	ok, err := client.Insert(ctx, ChargeArgs{OrderID: 1}, nil)
	if err != nil {
		return err
	}
	declined, err := client.Insert(ctx, ChargeArgs{OrderID: 2, Declined: true}, nil)
	if err != nil {
		return err
	}
	for _, id := range []int64{ok.Job.ID, declined.Job.ID} {
		job, err := waitFinal(ctx, client, id)
		if err != nil {
			return err
		}
		fmt.Printf("job %d: %s after %d attempt(s), max_attempts %d\n", job.ID, job.State, job.Attempt, job.MaxAttempts)
		for _, e := range job.Errors {
			fmt.Printf("  attempt %d: %s\n", e.Attempt, e.Error)
		}
	}
	return nil
}

// waitFinal polls the job until it is completed, cancelled or discarded.
func waitFinal(ctx context.Context, client *river.Client[pgx.Tx], id int64) (*rivertype.JobRow, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		job, err := client.JobGet(ctx, id)
		if err != nil {
			return nil, err
		}
		switch job.State {
		case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
			return job, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("job %d still %s after 30s", id, job.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
