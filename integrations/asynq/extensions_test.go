package asynqretry_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/errmatch"
	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
)

// extServer starts an asynq server like env.server, around a handler that
// follows its steps by run, not by retry count (which a snooze keeps):
// "ok", "snooze:D", "after:D:TYPE" (a requested delay on an error of
// TYPE), or "TYPE" (an error of TYPE).
func (e *env) extServer(rk *asynqretry.Plugin) {
	e.t.Helper()
	cfg := asynq.Config{
		Concurrency: 2, Queues: map[string]int{queue: 1},
		DelayedTaskCheckInterval: 50 * time.Millisecond, TaskCheckInterval: 20 * time.Millisecond,
		LogLevel: asynq.FatalLevel, ShutdownTimeout: 5 * time.Second,
	}
	rk.Install(&cfg)
	srv := asynq.NewServer(e.opt, cfg)
	h := asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		start := time.Now()
		var s script
		if err := json.Unmarshal(t.Payload(), &s); err != nil {
			return err
		}
		id, _ := asynq.GetTaskID(ctx)
		retried, _ := asynq.GetRetryCount(ctx)
		st := s.Steps[min(len(e.runs.get(id)), len(s.Steps)-1)]
		kind, rest, _ := strings.Cut(st, ":")
		var err error
		switch kind {
		case "ok":
		case "snooze":
			d, _ := time.ParseDuration(rest)
			err = errmatch.Snoozed(d)
		case "after":
			ds, typ, _ := strings.Cut(rest, ":")
			d, _ := time.ParseDuration(ds)
			err = errmatch.WithRetryAfter(errmatch.Wrap(errors.New("busy"), typ, ""), d)
		default:
			err = errmatch.Wrap(errors.New("failed"), st, "")
		}
		e.runs.add(id, run{Retried: retried, Start: start, End: time.Now(), Failed: err != nil})
		return err
	})
	if err := srv.Start(rk.Handler(h)); err != nil {
		e.t.Fatalf("start asynq server: %v", err)
	}
	e.t.Cleanup(srv.Shutdown)
}

// waits checks that run k+1 started between want[k] after run k ended and
// that plus asynq's whole-second rounding and slack.
func waits(t *testing.T, runs []run, want []time.Duration) {
	t.Helper()
	if len(runs) != len(want)+1 {
		t.Fatalf("%d runs, want %d: %+v", len(runs), len(want)+1, runs)
	}
	for k, w := range want {
		got := runs[k+1].Start.Sub(runs[k].End)
		if got < w || got > w+time.Second+slack {
			t.Errorf("run %d started %v after run %d ended, want %v (+1s rounding +%v)", k+2, got, k+1, w, slack)
		}
	}
}

// A granted snooze is a retry asynq does not count (IsFailure false): the
// task runs again after min(snooze, max_snooze) with its retry count
// unchanged, and completes.
func TestSnoozeCountsNoRetry(t *testing.T) {
	e := newEnv(t, 9)
	rk, err := asynqretry.Parse([]byte(`{"max_attempts": 2, "initial_interval": "PT0.1S", "jitter": false, "max_snoozes": 5, "max_snooze": "PT1S"}`))
	if err != nil {
		t.Fatal(err)
	}
	e.extServer(rk)
	id := e.enqueue(asynqretry.NewTask("ext", payload("snooze:3s", "snooze:1s", "ok"), rk.Policy(nil)))
	e.waitDone(1, 20*time.Second)
	runs := e.runs.get(id)
	waits(t, runs, []time.Duration{time.Second, time.Second})
	for i, r := range runs {
		if r.Retried != 0 {
			t.Errorf("run %d: retry count %d after snoozes, want 0", i+1, r.Retried)
		}
	}
	if ti := e.info(id); ti.State != asynq.TaskStateCompleted || ti.Retried != 0 {
		t.Fatalf("task: state %v retried %d, want completed with 0 retries counted", ti.State, ti.Retried)
	}
}

// A requested delay reaches RetryDelayFunc with the error, bounded by
// max_retry_after; an error rule's backoff and attempt limit apply to its
// type, past the policy's max_attempts (NewTask gives asynq the rule's
// MaxRetry).
func TestRequestedDelayAndErrorRules(t *testing.T) {
	e := newEnv(t, 10)
	pol := mustPolicy(`{"max_attempts": 2, "initial_interval": "PT0.1S", "jitter": false, "max_retry_after": "PT2S",
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 4, "initial_interval": "PT1S", "backoff_strategy": "none", "jitter": false}]}`)
	rk := asynqretry.New(pol)
	e.extServer(rk)
	id := e.enqueue(asynqretry.NewTask("ext", payload("after:10s:upstream.busy", "rate_limit.exceeded", "rate_limit.exceeded", "ok"), pol))
	e.waitDone(1, 30*time.Second)
	runs := e.runs.get(id)
	waits(t, runs, []time.Duration{2 * time.Second, time.Second, time.Second})
	ti := e.info(id)
	if ti.State != asynq.TaskStateCompleted || ti.Retried != 3 || ti.MaxRetry != 3 {
		t.Fatalf("task: state %v retried %d max_retry %d, want completed after 3 retries of the rule's 4 attempts", ti.State, ti.Retried, ti.MaxRetry)
	}
}
