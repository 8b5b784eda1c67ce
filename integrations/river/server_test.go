package riverretry_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	riverretry "github.com/retrykit/retrykit/integrations/river"
)

// The integration tests run against a real PostgreSQL named by this
// variable. Locally they skip without it; in CI (CI=true) they fail.
const envDatabaseURL = "RETRYKIT_TEST_DATABASE_URL"

// databaseURL returns the test server's URL or skips (fails in CI).
func databaseURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(envDatabaseURL)
	if url != "" {
		return url
	}
	msg := envDatabaseURL + " is not set: start a throwaway PostgreSQL with " +
		"`.ci/services.sh start && . .ci/services.env` from the repository root " +
		"(or point it at your own server)"
	if os.Getenv("CI") == "true" {
		t.Fatal("CI requires the integration servers: " + msg)
	}
	t.Skip(msg)
	return ""
}

// env is one test's River world: a pool and a fresh schema with River's
// tables in it.
type env struct {
	t      testing.TB
	pool   *pgxpool.Pool
	schema string
}

var schemaName = regexp.MustCompile(`[^a-z0-9_]+`)

// newEnv connects, creates a schema named after the test and migrates River
// into it. Everything is dropped at the end of the test.
func newEnv(t testing.TB) *env {
	t.Helper()
	url := databaseURL(t)
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("%s: %v", envDatabaseURL, err)
	}
	cfg.MaxConns = 40
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect to %s: %v", envDatabaseURL, err)
	}
	t.Cleanup(pool.Close)
	schema := "rk_" + schemaName.ReplaceAllString(strings.ToLower(t.Name()), "_")
	schema = schema[:min(len(schema), 60)]
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	})
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return &env{t: t, pool: pool, schema: schema}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// client builds a River client for queue "default" with workers, installs
// rk, starts it when workers is non-nil and stops it at the end of the test.
// Polling is tightened so that sub-second retries run on time.
func (e *env) client(rk *riverretry.Plugin, workers *river.Workers, maxWorkers int) *river.Client[pgx.Tx] {
	e.t.Helper()
	cfg := &river.Config{
		Schema:            e.schema,
		Logger:            quietLogger(),
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		JobTimeout:        30 * time.Second,
	}
	if workers != nil {
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}}
	}
	rk.Install(cfg)
	c, err := river.NewClient(riverpgxv5.New(e.pool), cfg)
	if err != nil {
		e.t.Fatalf("river.NewClient: %v", err)
	}
	if workers != nil {
		if err := c.Start(context.Background()); err != nil {
			e.t.Fatalf("start: %v", err)
		}
		e.t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = c.Stop(ctx)
		})
	}
	return c
}

// finalStates are the states a job ends in.
var finalStates = []rivertype.JobState{rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded}

// waitFinal polls the river_job table until no job is outside a final state,
// and fails after timeout.
func (e *env) waitFinal(timeout time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var open int
		err := e.pool.QueryRow(context.Background(),
			"SELECT count(*) FROM "+e.schema+".river_job WHERE state NOT IN ('completed','cancelled','discarded')").Scan(&open)
		if err != nil {
			e.t.Fatalf("count open jobs: %v", err)
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d jobs still open after %v: %v", open, timeout, e.stateCounts())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// stateCounts returns the number of jobs per state, from the table.
func (e *env) stateCounts() map[string]int {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), "SELECT state::text, count(*) FROM "+e.schema+".river_job GROUP BY state")
	if err != nil {
		e.t.Fatalf("count states: %v", err)
	}
	counts := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			e.t.Fatal(err)
		}
		counts[s] = n
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return counts
}

// run is what a scripted worker saw of one attempt: the job row as River
// fetched it from the table, and when the attempt failed.
type run struct {
	Attempt     int
	ScheduledAt time.Time
	FailedAt    time.Time
}

// journal records the runs of every job, by job ID.
type journal struct {
	mu   sync.Mutex
	runs map[int64][]run
}

func (j *journal) add(job *rivertype.JobRow, failedAt time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.runs == nil {
		j.runs = map[int64][]run{}
	}
	j.runs[job.ID] = append(j.runs[job.ID], run{Attempt: job.Attempt, ScheduledAt: job.ScheduledAt, FailedAt: failedAt})
}

func (j *journal) get(id int64) []run {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]run(nil), j.runs[id]...)
}

// ScriptArgs is a job whose worker follows Script: entry i is what attempt
// i+1 returns ("ok" succeeds; past the end the last entry repeats).
type ScriptArgs struct {
	Script []string `json:"script"`
}

func (ScriptArgs) Kind() string { return "script" }

// ScriptPolicyArgs is ScriptArgs carrying its own policy.
type ScriptPolicyArgs struct {
	Script []string `json:"script"`
	Policy string   `json:"policy"`
}

func (ScriptPolicyArgs) Kind() string { return "script_policy" }

func (a ScriptPolicyArgs) RetryPolicy() *policyPolicy { return mustPolicy(a.Policy) }

// scriptErr maps a script step to what the worker returns: "ok" is
// success, "fail" a plain error, "panic" panics, "TYPE" or "TYPE/CODE" an
// errmatch error.
func scriptErr(step string, attempt int) error {
	switch step {
	case "ok":
		return nil
	case "panic":
		panic(fmt.Sprintf("attempt %d panicked", attempt))
	}
	base := fmt.Errorf("attempt %d failed", attempt)
	if step == "fail" {
		return base
	}
	typ, code, _ := strings.Cut(step, "/")
	return wrap(base, typ, code)
}

func step(script []string, attempt int) string {
	if len(script) == 0 {
		return "fail"
	}
	return script[min(attempt, len(script))-1]
}

// scriptWorkers registers the two scripted kinds, recording into j.
func scriptWorkers(j *journal) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[ScriptArgs]) error {
		err := scriptErr(step(job.Args.Script, job.Attempt), job.Attempt)
		if err != nil && j != nil {
			j.add(job.JobRow, time.Now())
		}
		return err
	}))
	river.AddWorker(w, river.WorkFunc(func(ctx context.Context, job *river.Job[ScriptPolicyArgs]) error {
		err := scriptErr(step(job.Args.Script, job.Attempt), job.Attempt)
		if err != nil && j != nil {
			j.add(job.JobRow, time.Now())
		}
		return err
	}))
	return w
}

type pgxTx = pgx.Tx
