package verify_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/profile"
)

// databaseURL returns RETRYKIT_TEST_DATABASE_URL, or starts a throwaway
// PostgreSQL (initdb and pg_ctl on PATH; as the postgres user when run as
// root, since the server refuses root) on a free loopback port, stopped
// when the test ends.
func databaseURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("RETRYKIT_TEST_DATABASE_URL"); u != "" {
		return u
	}
	initdb, pgCtl := pgBin(t, "initdb"), pgBin(t, "pg_ctl")
	dir, err := os.MkdirTemp("", "rk-verify-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	asPG := func(args ...string) *exec.Cmd {
		if os.Geteuid() == 0 {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
		}
		return exec.Command(args[0], args[1:]...)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "postgres:", dir).CombinedOutput(); err != nil {
			missing(t, "the postgres user", string(out))
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := asPG(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, tail(string(out), 2000))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", port, dir)
	if out, err := asPG(pgCtl, "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-o", opts, "start").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, tail(string(out), 2000))
	}
	t.Cleanup(func() { asPG(pgCtl, "-D", data, "-m", "immediate", "-w", "stop").Run() })
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// pgBin finds a PostgreSQL server program: on PATH, else in Debian's
// /usr/lib/postgresql/VERSION/bin (the newest version there), where the
// postgresql-15 package puts it without linking it onto PATH.
func pgBin(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(found) == 0 {
		missing(t, "PostgreSQL ("+name+")", "not on PATH nor in /usr/lib/postgresql/*/bin, and RETRYKIT_TEST_DATABASE_URL unset")
	}
	sort.Slice(found, func(i, j int) bool { return pgVersion(found[i]) < pgVersion(found[j]) })
	return found[len(found)-1]
}

// pgVersion is the VERSION of /usr/lib/postgresql/VERSION/bin/NAME.
func pgVersion(path string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return v
}

type alwaysFailsArgs struct{}

func (alwaysFailsArgs) Kind() string { return "retrykit_verify_always_fails" }

type alwaysFails struct {
	river.WorkerDefaults[alwaysFailsArgs]
	runs *atomic.Int64
}

func (w *alwaysFails) Work(context.Context, *river.Job[alwaysFailsArgs]) error {
	w.runs.Add(1)
	return fmt.Errorf("retrykit verify: always fails")
}

// immediately is a retry policy that retries at once, so that the runs
// follow each other; the delays are checked elsewhere.
type immediately struct{}

func (immediately) NextRetry(*rivertype.JobRow) time.Time { return time.Now() }

// TestRiverExhaustion runs an always-failing job through River's own
// client and executor on a real PostgreSQL and counts its runs until River
// discards it: River's default MaxAttempts and configured ones, against the
// profile's MaxAttempts.
func TestRiverExhaustion(t *testing.T) {
	url := databaseURL(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	const schema = "rk_verify_exhaustion"
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	var runs atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, &alwaysFails{runs: &runs})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Schema: schema, Logger: quiet, Workers: workers, RetryPolicy: immediately{},
		FetchCooldown: 5 * time.Millisecond, FetchPollInterval: 20 * time.Millisecond,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		client.Stop(sctx)
	}()
	for _, c := range []struct {
		spec string
		max  int // InsertOpts.MaxAttempts; 0 leaves River's default
	}{{"river", 0}, {"river:MaxAttempts=3", 3}, {"river:MaxAttempts=1", 1}} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		runs.Store(0)
		res, err := client.Insert(ctx, alwaysFailsArgs{}, &river.InsertOpts{MaxAttempts: c.max})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			job, err := client.JobGet(ctx, res.Job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if job.State == rivertype.JobStateDiscarded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not discarded after %d runs (state %s)", c.spec, runs.Load(), job.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := runs.Load(); got != int64(p.MaxAttempts()) {
			t.Errorf("%s: River ran the job %d times before discarding it, the profile says %d attempts", c.spec, got, p.MaxAttempts())
		} else {
			t.Logf("%s: River discarded the job after %d runs, as the profile says", c.spec, got)
		}
	}
}
