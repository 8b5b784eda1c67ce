// Command asynq runs an asynq server whose retries follow an OJS retry
// policy (retrykit's integrations/asynq): a task that fails twice and then
// succeeds, and one whose handler gives up with a DEAD_LETTER code.
//
// It needs a Redis server in REDIS_ADDR (host:port), for example the
// throwaway server of the repository's .ci/services.sh:
//
//	.ci/services.sh start && . .ci/services.env
//	REDIS_ADDR=$RETRYKIT_TEST_REDIS_ADDR go run .
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/errmatch"
	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
)

// The retry policy, in OJS JSON: three attempts, 1s then 2s.
const policyJSON = `{"max_attempts":3,"initial_interval":"PT1S","jitter":false,
	"non_retryable_errors":["validation.*"],"on_exhaustion":"dead_letter"}`

type charge struct {
	OrderID  int  `json:"order_id"`
	Declined bool `json:"declined"`
}

// handleCharge fails its first two attempts with a plain error; a declined
// card is a permanent failure, reported with a DEAD_LETTER code.
func handleCharge(ctx context.Context, t *asynq.Task) error {
	var c charge
	if err := json.Unmarshal(t.Payload(), &c); err != nil {
		return errmatch.Wrap(err, "validation.payload", errmatch.CodeDiscard)
	}
	if c.Declined {
		return errmatch.Wrap(errors.New("card declined"), "payment.declined", errmatch.CodeDeadLetter)
	}
	if n, _ := asynq.GetRetryCount(ctx); n < 2 {
		return fmt.Errorf("gateway timeout on attempt %d", n+1)
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// errNoRedis is run's error when REDIS_ADDR is not set.
var errNoRedis = errors.New("REDIS_ADDR is not set: this example needs a Redis server (host:port). " +
	"From the repository root: .ci/services.sh start && . .ci/services.env && " +
	"(cd examples/asynq && REDIS_ADDR=$RETRYKIT_TEST_REDIS_ADDR go run .)")

func run() error {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		return errNoRedis
	}
	redisOpt := asynq.RedisClientOpt{Addr: addr}
	if err := ping(redisOpt); err != nil {
		return fmt.Errorf("cannot reach the Redis server at REDIS_ADDR=%s (is it running?): %w", addr, err)
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc("charge", handleCharge)
	cfg := asynq.Config{
		Concurrency:              4,
		DelayedTaskCheckInterval: 100 * time.Millisecond,
		TaskCheckInterval:        50 * time.Millisecond,
		LogLevel:                 asynq.FatalLevel,
	}

	// The retrykit lines:
	rk, err := asynqretry.Parse([]byte(policyJSON))
	if err != nil {
		return err
	}
	rk.Install(&cfg)
	srv := asynq.NewServer(redisOpt, cfg)
	if err := srv.Start(rk.Handler(mux)); err != nil {
		return err
	}
	defer srv.Shutdown()

	client := asynq.NewClient(redisOpt)
	defer client.Close()
	inspector := asynq.NewInspector(redisOpt)
	defer inspector.Close()
	var ids []string
	for _, c := range []charge{{OrderID: 1}, {OrderID: 2, Declined: true}} {
		payload, _ := json.Marshal(c)
		// asynq.Retention keeps the completed task for this demo to read.
		info, err := client.Enqueue(asynq.NewTask("charge", payload), asynqretry.MaxRetry(rk.Policy(nil)), asynq.Retention(time.Hour))
		if err != nil {
			return err
		}
		ids = append(ids, info.ID)
	}
	for _, id := range ids {
		ti, err := waitFinal(inspector, id)
		if err != nil {
			return err
		}
		fmt.Printf("task %s: %s after %d attempt(s), MaxRetry %d\n", id, ti.State, ti.Retried+1, ti.MaxRetry)
		if ti.LastErr != "" {
			fmt.Printf("  last error: %s\n", ti.LastErr)
		}
	}
	return nil
}

// waitFinal polls the task until it is completed or archived.
func waitFinal(inspector *asynq.Inspector, id string) (*asynq.TaskInfo, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ti, err := inspector.GetTaskInfo("default", id)
		if err != nil {
			return nil, err
		}
		if ti.State == asynq.TaskStateCompleted || ti.State == asynq.TaskStateArchived {
			return ti, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("task %s still %s after 30s", id, ti.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ping checks that the Redis server answers, within five seconds.
func ping(opt asynq.RedisClientOpt) error {
	insp := asynq.NewInspector(opt)
	defer insp.Close()
	done := make(chan error, 1)
	go func() { _, err := insp.Queues(); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		return errors.New("no answer within 5s")
	}
}
