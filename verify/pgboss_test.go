package verify_test

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/profile"
)

// pg-boss from npm (verify/node, pinned by its lock file) on a real
// PostgreSQL: verify/node/pgboss_driver.mjs sends jobs with pg-boss's own
// send, claims them with fetch and fails them with fail, and reads each
// failure's start_after and state back from pg-boss's job table.

// pgBossFailure is one failure the driver reports.
type pgBossFailure struct {
	Attempt    int     `json:"attempt"`
	RetryCount int     `json:"retry_count"`
	State      string  `json:"state"`
	DelayUS    *string `json:"delay_us"` // start_after - now(), microseconds (numeric text)
	R          *string `json:"r"`        // the seeded random(), as PostgreSQL printed it
}

type pgBossJob struct {
	Failures []pgBossFailure `json:"failures"`
}

// pgBossCase is one job: its send options, whether random() is seeded, and
// how often to fail it (at most; the driver stops once it is failed).
// With rands, the fail's random() is replaced by one returning rands[n-1].
type pgBossCase struct {
	queue map[string]any // createQueue options (nil: pg-boss's defaults)
	opts  map[string]any
	seed  bool
	rands []float64 // injected random(): rands[n-1] for attempt n, the last one after
	fails int
}

// pgBossEnv finds node, the pg-boss package and a PostgreSQL: a throwaway
// cluster (databaseURL) unless RETRYKIT_TEST_DATABASE_URL names one.
func pgBossEnv(t *testing.T) (bin, url string) {
	t.Helper()
	bin = node(t)
	if _, err := os.Stat("node/node_modules/pg-boss/package.json"); err != nil {
		missing(t, "the pg-boss npm package", "verify/node/node_modules/pg-boss is absent (npm ci in verify/node)")
	}
	return bin, databaseURL(t)
}

// runPgBoss runs the cases through the driver (pg-boss from dir, or the
// pinned one when dir is ""), in a schema of its own.
func runPgBoss(t *testing.T, bin, url, dir string, cs []pgBossCase) envelope[pgBossJob] {
	t.Helper()
	cases := make([]kase, len(cs))
	jobs := make([]map[string]any, len(cs))
	for i, c := range cs {
		cases[i] = kase{Op: "job", Attempt: c.fails}
		jobs[i] = map[string]any{"queue": c.queue, "opts": c.opts, "seed": c.seed}
		if c.rands != nil {
			jobs[i]["rands"] = c.rands
		}
	}
	var env []string
	if dir != "" {
		env = []string{"PGBOSS_DIR=" + dir}
	}
	schema := fmt.Sprintf("rk_pgboss_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	return runDriverWith[pgBossJob](t, "node", []string{bin, "pgboss_driver.mjs"}, cases,
		map[string]any{"url": url, "schema": schema, "jobs": jobs}, env)
}

// pgDelay converts the driver's start_after - now() in microseconds, which
// PostgreSQL prints as numeric text with six zero decimals, to a Duration.
func pgDelay(t *testing.T, s *string) time.Duration {
	t.Helper()
	if s == nil {
		t.Fatal("no delay reported for a retried job")
	}
	whole, frac, _ := strings.Cut(*s, ".")
	if strings.Trim(frac, "0") != "" {
		t.Fatalf("delay %s us: not a whole number of microseconds", *s)
	}
	us, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || us < 0 || us > math.MaxInt64/int64(time.Microsecond) {
		t.Fatalf("delay %s us: %v", *s, err)
	}
	return time.Duration(us) * time.Microsecond
}

// checkPgBossJob compares one job's failures with the profile: the state
// after attempt n is retry while n < MaxAttempts and failed at
// MaxAttempts; retry_count is n - 1; each retry's delay lies in Bounds(n)
// and, when random() was seeded or injected, is exactly DelayAt(n, r). It
// returns the delays by attempt.
func checkPgBossJob(t *testing.T, spec string, p profile.Profile, version string, c pgBossCase, job pgBossJob) map[int]time.Duration {
	t.Helper()
	want := min(c.fails, p.MaxAttempts())
	if len(job.Failures) != want {
		t.Errorf("%s: pg-boss %s: %d failures recorded, want %d (MaxAttempts %d)", spec, version, len(job.Failures), want, p.MaxAttempts())
	}
	out := map[int]time.Duration{}
	for _, f := range job.Failures {
		n := f.Attempt
		if f.RetryCount != n-1 {
			t.Errorf("%s: attempt %d: retry_count %d, want attempt - 1", spec, n, f.RetryCount)
		}
		wantState := "retry"
		if n >= p.MaxAttempts() {
			wantState = "failed"
		}
		if f.State != wantState {
			t.Errorf("%s: after attempt %d pg-boss %s set state %s, the profile says %s (MaxAttempts %d)", spec, n, version, f.State, wantState, p.MaxAttempts())
		}
		if f.State != "retry" {
			continue
		}
		d := pgDelay(t, f.DelayUS)
		out[n] = d
		if lo, hi := p.Bounds(n); d < lo || d > hi {
			t.Errorf("%s: attempt %d: pg-boss %s waits %v, outside the profile's [%v, %v]", spec, n, version, d, lo, hi)
		}
		if f.R != nil {
			r, err := strconv.ParseFloat(*f.R, 64)
			if err != nil {
				t.Fatalf("%s: random() %q: %v", spec, *f.R, err)
			}
			if w := p.DelayAt(n, r); d != w {
				t.Errorf("%s: attempt %d, random() = %s: pg-boss %s waits %v, the profile %v", spec, n, *f.R, version, d, w)
			}
		} else if !p.Jitter() {
			if w := p.DelayAt(n, 0.5); d != w {
				t.Errorf("%s: attempt %d: pg-boss %s waits %v, the profile %v", spec, n, version, d, w)
			}
		}
	}
	return out
}

// pgBossExact are configured profiles and the send options (or, with
// queue, the createQueue options, the send giving none) they stand for,
// checked with random() seeded: every delay exact.
var pgBossExact = []struct {
	spec  string
	opts  map[string]any
	jobs  int
	queue bool
}{
	{"pg_boss", map[string]any{}, 1, false},
	{"pg_boss:retryLimit=4,retryDelay=7", map[string]any{"retryLimit": 4, "retryDelay": 7}, 1, false},
	// 20 attempts: the exponent LEAST(16, retry_count + 1) stops at 16.
	{"pg_boss:retryBackoff=true,retryLimit=19,retryDelay=3", map[string]any{"retryBackoff": true, "retryLimit": 19, "retryDelay": 3}, 2, false},
	// retryDelay 0 with backoff: GREATEST(0, 1) = 1.
	{"pg_boss:retryBackoff=true,retryLimit=6", map[string]any{"retryBackoff": true, "retryLimit": 6}, 2, false},
	{"pg_boss:retryBackoff=true,retryLimit=12,retryDelay=5,retryDelayMax=300", map[string]any{"retryBackoff": true, "retryLimit": 12, "retryDelay": 5, "retryDelayMax": 300}, 2, false},
	{"pg_boss:retryBackoff=true,retryLimit=3,retryDelayMax=0", map[string]any{"retryBackoff": true, "retryLimit": 3, "retryDelayMax": 0}, 1, false},
	{"pg_boss:retryLimit=0", map[string]any{"retryLimit": 0}, 1, false},
	// The same settings on the queue: send takes them from it (COALESCE).
	{"pg_boss:retryBackoff=true,retryLimit=5,retryDelay=2,retryDelayMax=40", map[string]any{"retryBackoff": true, "retryLimit": 5, "retryDelay": 2, "retryDelayMax": 40}, 2, true},
}

// pgBossSampledSpec is the configuration sampled with the server's own
// random(): pgBossSamples jobs, each failed twice (both retried; the
// exhaustion is checked by the other cases).
const (
	pgBossSampledSpec = "pg_boss:retryBackoff=true,retryLimit=2,retryDelay=2"
	pgBossSamples     = 250
)

var pgBossSampledOpts = map[string]any{"retryBackoff": true, "retryLimit": 2, "retryDelay": 2}

// pgMaxRandom is the largest value PostgreSQL 15's random() returns (a
// multiple of 2^-52 below 1): the top of the grid of injected draws.
const pgMaxRandom = 1 - 0x1p-52

// pgBossGrid are the configurations whose every attempt runs at every draw
// of the grid, random() injected.
var pgBossGrid = []struct {
	spec string
	opts map[string]any
}{
	{"pg_boss:retryBackoff=true,retryLimit=17,retryDelay=3", map[string]any{"retryBackoff": true, "retryLimit": 17, "retryDelay": 3}},
	{"pg_boss:retryBackoff=true,retryLimit=8,retryDelay=1,retryDelayMax=100", map[string]any{"retryBackoff": true, "retryLimit": 8, "retryDelay": 1, "retryDelayMax": 100}},
}

// pgBossRun is one job of a run and what its answer is checked against.
type pgBossRun struct {
	spec string
	c    pgBossCase
	// check, when set, checks the job's delays by attempt and its last
	// state (the vector checks).
	check   func(t *testing.T, version string, delays map[int]time.Duration, last pgBossFailure)
	sampled bool
}

// pgBossVectorRuns are jobs for the vectors of testdata/profiles/pg_boss.json,
// each with the vector's draw injected: a delay vector fails its job
// attempt times at its r, a bounds vector at r = 0 and at the largest
// random(), a decision vector reads the state after its attempt.
func pgBossVectorRuns(t *testing.T) []pgBossRun {
	f := load(t, "pg_boss")
	p := vectorProfile(t, "pg_boss")
	opts := pgBossOpts(t, p)
	var runs []pgBossRun
	at := func(spec string, n int, r float64, check func(*testing.T, string, time.Duration)) {
		runs = append(runs, pgBossRun{spec: spec, c: pgBossCase{opts: opts, rands: []float64{r}, fails: n},
			check: func(t *testing.T, version string, delays map[int]time.Duration, _ pgBossFailure) {
				d, ok := delays[n]
				if !ok {
					t.Errorf("%s: pg-boss %s did not retry after attempt %d", spec, version, n)
					return
				}
				check(t, version, d)
			}})
	}
	for _, v := range f.Vectors {
		id, spec := v.ID, f.Spec()
		switch {
		case v.Kind == "decision":
			runs = append(runs, pgBossRun{spec: spec, c: pgBossCase{opts: opts, rands: []float64{0.5}, fails: v.Attempt},
				check: func(t *testing.T, version string, _ map[int]time.Duration, last pgBossFailure) {
					if last.Attempt != v.Attempt || (last.State == "retry") != v.Retry {
						t.Errorf("%s: %s: after attempt %d pg-boss %s state %s (attempt %d), the vector says retry=%t", spec, id, v.Attempt, version, last.State, last.Attempt, v.Retry)
					}
				}})
		case v.Attempt >= p.MaxAttempts():
			t.Logf("%s: %s: attempt %d is past the %d attempts pg-boss makes: formula only", spec, id, v.Attempt, p.MaxAttempts())
		case v.Kind == "delay" && v.Rand != nil:
			at(spec, v.Attempt, *v.Rand, func(t *testing.T, version string, d time.Duration) {
				if d != time.Duration(v.DelayNS) {
					t.Errorf("%s: %s: attempt %d, random() = %v: pg-boss %s waits %v, the vector %v", spec, id, v.Attempt, *v.Rand, version, d, time.Duration(v.DelayNS))
				}
			})
		case v.Kind == "bounds":
			for _, end := range []struct {
				r    float64
				want int64
			}{{0, v.MinNS}, {pgMaxRandom, v.MaxNS}} {
				at(spec, v.Attempt, end.r, func(t *testing.T, version string, d time.Duration) {
					if d != time.Duration(end.want) {
						t.Errorf("%s: %s: attempt %d, random() = %v: pg-boss %s waits %v, the vector's bound %v", spec, id, v.Attempt, end.r, version, d, time.Duration(end.want))
					}
				})
			}
		}
	}
	return runs
}

// pgBossOpts are the send options a pg_boss profile stands for, in
// pg-boss's own names (retryDelayMax only when set: pg-boss refuses it
// without retryBackoff).
func pgBossOpts(t *testing.T, p profile.Profile) map[string]any {
	t.Helper()
	opts := map[string]any{}
	for _, s := range p.Settings() {
		switch {
		case s.Value == "None":
		case s.Value == "true" || s.Value == "false":
			opts[s.Key] = s.Value == "true"
		default:
			v, err := strconv.Atoi(s.Value)
			if err != nil {
				t.Fatalf("%s: setting %s=%s", p.Name(), s.Key, s.Value)
			}
			opts[s.Key] = v
		}
	}
	return opts
}

// checkPgBoss runs the exact, injected, vector and sampled cases through
// pg-boss (from dir, or the pinned one) and compares them with the
// profiles.
func checkPgBoss(t *testing.T, bin, url, dir string) string {
	var runs []pgBossRun
	for _, c := range pgBossExact {
		for range c.jobs {
			pc := pgBossCase{opts: c.opts, seed: true, fails: 25}
			if c.queue {
				pc.queue, pc.opts = c.opts, map[string]any{}
			}
			runs = append(runs, pgBossRun{spec: c.spec, c: pc})
		}
	}
	for _, c := range pgBossGrid {
		for _, r := range drawGrid {
			runs = append(runs, pgBossRun{spec: c.spec, c: pgBossCase{opts: c.opts, rands: []float64{min(r, pgMaxRandom)}, fails: 25}})
		}
	}
	runs = append(runs, pgBossVectorRuns(t)...)
	for range pgBossSamples {
		runs = append(runs, pgBossRun{spec: pgBossSampledSpec, c: pgBossCase{opts: pgBossSampledOpts, fails: 2}, sampled: true})
	}
	cs := make([]pgBossCase, len(runs))
	for i, r := range runs {
		cs[i] = r.c
	}
	env := runPgBoss(t, bin, url, dir, cs)
	t.Logf("real implementation: %s (%s)", env.System, env.File)
	samples := map[int][]time.Duration{}
	for i, job := range env.Results {
		run := runs[i]
		p, err := profile.Parse(run.spec)
		if err != nil {
			t.Fatal(err)
		}
		got := checkPgBossJob(t, run.spec, p, env.Version, run.c, job)
		if run.check != nil && len(job.Failures) > 0 {
			run.check(t, env.Version, got, job.Failures[len(job.Failures)-1])
		}
		if run.sampled {
			for n, d := range got {
				samples[n] = append(samples[n], d)
			}
		}
	}
	// Sampled bounds: every sample inside Bounds (checked above), and the
	// smallest and largest within 5 % of the range's ends.
	p, err := profile.Parse(pgBossSampledSpec)
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n < p.MaxAttempts(); n++ {
		ds := samples[n]
		if len(ds) != pgBossSamples {
			t.Errorf("%s: attempt %d: %d samples, want %d", pgBossSampledSpec, n, len(ds), pgBossSamples)
			continue
		}
		lo, hi := p.Bounds(n)
		sLo, sHi := ds[0], ds[0]
		for _, d := range ds {
			sLo, sHi = min(sLo, d), max(sHi, d)
		}
		slack := (hi - lo) / 20
		if sLo > lo+slack || sHi < hi-slack {
			t.Errorf("%s: attempt %d: pg-boss %s sampled [%v, %v] over %d jobs, the profile's range [%v, %v]: an end not reached within 5 %%",
				pgBossSampledSpec, n, env.Version, sLo, sHi, len(ds), lo, hi)
		}
		t.Logf("%s: attempt %d: sampled [%v, %v], profile [%v, %v]", pgBossSampledSpec, n, sLo, sHi, lo, hi)
	}
	return env.Version
}

// TestPgBossReal: pg-boss's own send, fetch and fail on a real PostgreSQL,
// at pg-boss's defaults and configured, exactly with random() seeded and
// sampled with the server's own random().
func TestPgBossReal(t *testing.T) {
	bin, url := pgBossEnv(t)
	checkPgBoss(t, bin, url, "")
}
