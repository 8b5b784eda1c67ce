package asynqretry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/retrykit/retrykit/errmatch"
	asynqretry "github.com/retrykit/retrykit/integrations/asynq"
	"github.com/retrykit/retrykit/policy"
)

// The integration tests run against a real Redis named by this variable.
// Locally they skip without it; in CI (CI=true) they fail.
const envRedisAddr = "RETRYKIT_TEST_REDIS_ADDR"

// redisAddr returns the test server's host:port or skips (fails in CI).
func redisAddr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv(envRedisAddr)
	if addr != "" {
		return addr
	}
	msg := envRedisAddr + " is not set: start a throwaway Redis with " +
		"`.ci/services.sh start && . .ci/services.env` from the repository root " +
		"(or point it at your own server, host:port)"
	if os.Getenv("CI") == "true" {
		t.Fatal("CI requires the integration servers: " + msg)
	}
	t.Skip(msg)
	return ""
}

const queue = "default"

// env is one test's asynq world: its own Redis database, emptied first.
type env struct {
	t     testing.TB
	opt   asynq.RedisClientOpt
	rdb   *redis.Client
	insp  *asynq.Inspector
	cli   *asynq.Client
	runs  journal
	watch *retryWatch
}

// newEnv takes Redis database db (each test its own), flushes it, and
// starts watching the retry set.
func newEnv(t testing.TB, db int) *env {
	t.Helper()
	addr := redisAddr(t)
	e := &env{t: t, opt: asynq.RedisClientOpt{Addr: addr, DB: db}}
	e.rdb = redis.NewClient(&redis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { _ = e.rdb.Close() })
	if err := e.rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("flush redis db %d at %s: %v", db, addr, err)
	}
	e.insp = asynq.NewInspector(e.opt)
	t.Cleanup(func() { _ = e.insp.Close() })
	e.cli = asynq.NewClient(e.opt)
	t.Cleanup(func() { _ = e.cli.Close() })
	e.watch = watchRetries(t, e.rdb)
	return e
}

// server starts an asynq server with rk installed (RetryDelayFunc and the
// handler middleware) around the scripted handler, and shuts it down at the
// end of the test. Due retries are moved every 50ms instead of 5s, and an
// idle worker polls every 20ms instead of 1s.
func (e *env) server(rk *asynqretry.Plugin, concurrency int) {
	e.t.Helper()
	cfg := asynq.Config{
		Concurrency:              concurrency,
		Queues:                   map[string]int{queue: 1},
		DelayedTaskCheckInterval: 50 * time.Millisecond,
		TaskCheckInterval:        20 * time.Millisecond,
		LogLevel:                 asynq.FatalLevel,
		ShutdownTimeout:          5 * time.Second,
	}
	rk.Install(&cfg)
	srv := asynq.NewServer(e.opt, cfg)
	if err := srv.Start(rk.Handler(asynq.HandlerFunc(e.handle))); err != nil {
		e.t.Fatalf("start asynq server: %v", err)
	}
	e.t.Cleanup(srv.Shutdown)
}

// script is a task payload: entry i is what attempt i+1 returns ("ok"
// succeeds, "fail" is a plain error, "TYPE" or "TYPE/CODE" an errmatch
// error; past the end the last entry repeats).
type script struct {
	Steps []string `json:"steps"`
}

func payload(steps ...string) []byte {
	b, err := json.Marshal(script{Steps: steps})
	if err != nil {
		panic(err)
	}
	return b
}

func step(steps []string, attempt int) string {
	if len(steps) == 0 {
		return "fail"
	}
	return steps[min(attempt, len(steps))-1]
}

// handle is the scripted handler; it records every run.
func (e *env) handle(ctx context.Context, t *asynq.Task) error {
	start := time.Now()
	var s script
	if err := json.Unmarshal(t.Payload(), &s); err != nil {
		return fmt.Errorf("bad payload: %w", err)
	}
	id, _ := asynq.GetTaskID(ctx)
	retried, _ := asynq.GetRetryCount(ctx)
	attempt := retried + 1
	var err error
	if st := step(s.Steps, attempt); st != "ok" {
		err = fmt.Errorf("attempt %d failed", attempt)
		if st != "fail" {
			typ, code, _ := strings.Cut(st, "/")
			err = errmatch.Wrap(err, typ, errmatch.Code(code))
		}
	}
	e.runs.add(id, run{Retried: retried, Start: start, End: time.Now(), Failed: err != nil})
	return err
}

// run is one execution of a task as the handler saw it.
type run struct {
	Retried    int
	Start, End time.Time
	Failed     bool
}

type journal struct {
	mu   sync.Mutex
	runs map[string][]run
}

func (j *journal) add(id string, r run) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.runs == nil {
		j.runs = map[string][]run{}
	}
	j.runs[id] = append(j.runs[id], r)
}

func (j *journal) get(id string) []run {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]run(nil), j.runs[id]...)
}

// retryWatch polls asynq's retry sorted set (member: task ID, score: the
// Unix second the retry is due) and records every score a task gets.
type retryWatch struct {
	mu     sync.Mutex
	scores map[string][]int64
}

func watchRetries(t testing.TB, rdb *redis.Client) *retryWatch {
	w := &retryWatch{scores: map[string][]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A task can leave the set and come back (run, fail, retry) between
		// two polls, so a new retry shows as a changed score, not only as a
		// task that was absent: every retry's due second is later than the
		// last one's, since each delay is positive.
		present := map[string]int64{}
		for ctx.Err() == nil {
			zs, err := rdb.ZRangeWithScores(ctx, "asynq:{"+queue+"}:retry", 0, -1).Result()
			if err == nil {
				now := map[string]int64{}
				w.mu.Lock()
				for _, z := range zs {
					id, score := z.Member.(string), int64(z.Score)
					now[id] = score
					if last, ok := present[id]; !ok || last != score {
						w.scores[id] = append(w.scores[id], score)
					}
				}
				w.mu.Unlock()
				present = now
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func (w *retryWatch) get(id string) []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int64(nil), w.scores[id]...)
}

// enqueue enqueues t, keeping completed tasks for an hour so that the test
// can read them back.
func (e *env) enqueue(t *asynq.Task, opts ...asynq.Option) string {
	e.t.Helper()
	info, err := e.cli.Enqueue(t, append([]asynq.Option{asynq.Retention(time.Hour), asynq.Queue(queue)}, opts...)...)
	if err != nil {
		e.t.Fatalf("enqueue: %v", err)
	}
	return info.ID
}

// waitDone polls the queue until n tasks are completed or archived and none
// is pending, active, scheduled or waiting for a retry.
func (e *env) waitDone(n int, timeout time.Duration) *asynq.QueueInfo {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		qi, err := e.insp.GetQueueInfo(queue)
		if err == nil && qi.Completed+qi.Archived == n && qi.Pending+qi.Active+qi.Scheduled+qi.Retry == 0 {
			return qi
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("queue not done after %v: %+v (err %v)", timeout, qi, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (e *env) info(id string) *asynq.TaskInfo {
	e.t.Helper()
	ti, err := e.insp.GetTaskInfo(queue, id)
	if err != nil {
		e.t.Fatalf("task %s: %v", id, err)
	}
	return ti
}

func mustPolicy(js string) *policy.Policy {
	p, err := policy.Parse([]byte(js))
	if err != nil {
		panic(err)
	}
	return p
}
