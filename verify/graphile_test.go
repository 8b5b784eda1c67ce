package verify_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// graphile-worker from npm (verify/node, pinned by its lock file), run on a
// throwaway PostgreSQL: its own migrations, addJob and worker loop make the
// jobs fail, and its failJob SQL computes each run_at.

// graphileJob is the driver's answer for one job.
type graphileJob struct {
	MaxAttempts int `json:"max_attempts"`
	Runs        int `json:"runs"`
	Failures    []struct {
		Attempt int   `json:"attempt"`
		DelayUS int64 `json:"delay_us"`
		Retry   bool  `json:"retry"`
	} `json:"failures"`
	Attempts          int    `json:"attempts"`
	PermanentlyFailed bool   `json:"permanently_failed"`
	IsAvailable       bool   `json:"is_available"`
	LastError         string `json:"last_error"`
}

// graphileCases are the jobs every check adds: the profile they are checked
// against and the maxAttempts given to addJob (nil: none, so graphile-worker's
// default applies). 12 attempts run past least(attempts, 10).
var graphileCases = []struct {
	spec string
	max  any
}{
	{"graphile_worker", nil},
	{"graphile_worker:maxAttempts=1", 1},
	{"graphile_worker:maxAttempts=3", 3},
	{"graphile_worker:maxAttempts=12", 12},
}

// TestGraphileWorkerReal: graphile-worker 0.18.0's own worker loop fails
// jobs with the default and three maxAttempts on a real PostgreSQL; each
// failure's run_at - now() of the failing transaction must be the
// profile's delay to the microsecond, the job must be available again
// exactly while the profile retries, and after the last attempt it must be
// kept, permanently failed and never run again.
func TestGraphileWorkerReal(t *testing.T) {
	if _, err := os.Stat("node/node_modules/graphile-worker/package.json"); err != nil {
		missing(t, "the graphile-worker npm package", "verify/node/node_modules/graphile-worker is absent (npm ci in verify/node)")
	}
	p, err := profile.Parse("graphile_worker")
	if err != nil {
		t.Fatal(err)
	}
	checkGraphileWorker(t, "", p.Release(), "")
}

// checkGraphileWorker runs the checks against the graphile-worker installed
// under dir (GRAPHILE_DIR; "" is verify/node's), which must report version;
// who names it in mismatch messages ("" names the pinned release).
func checkGraphileWorker(t *testing.T, dir, version, who string) {
	t.Helper()
	bin := node(t)
	url := databaseURL(t)
	var environ []string
	if dir != "" {
		environ = append(environ, "GRAPHILE_DIR="+dir)
	}
	cases := make([]kase, len(graphileCases))
	maxes := make([]any, len(graphileCases))
	for i, c := range graphileCases {
		cases[i], maxes[i] = kase{Op: "job"}, c.max
	}
	start := time.Now()
	env := runDriverWith[graphileJob](t, "node", []string{bin, "graphile_driver.mjs"}, cases,
		map[string]any{"database_url": url, "max_attempts": maxes}, environ)
	t.Logf("graphile-worker %s (%s): %d jobs failed through runOnce in %v", env.Version, env.File, len(cases), time.Since(start).Round(time.Millisecond))
	if env.Version != version {
		t.Fatalf("the driver ran graphile-worker %s, want %s", env.Version, version)
	}
	if who == "" {
		who = "graphile-worker " + env.Version
	}
	// The vectors are for the bare profile: the first job, added without
	// maxAttempts, failed at every attempt they name.
	if graphileCases[0].max != nil {
		t.Fatal("the first job must take graphile-worker's default maxAttempts")
	}
	def := env.Results[0]
	f := load(t, "graphile_worker")
	for _, v := range f.Of("delay") {
		if v.Attempt > len(def.Failures) {
			t.Errorf("%s: attempt %d: %s failed the default job only %d times", v.ID, v.Attempt, who, len(def.Failures))
		} else if got := def.Failures[v.Attempt-1].DelayUS * 1000; got != v.DelayNS {
			t.Errorf("%s: attempt %d: %s sets run_at = now() + %d ns, the vector %d ns", v.ID, v.Attempt, who, got, v.DelayNS)
		}
	}
	for _, v := range f.Of("decision") {
		if v.Attempt <= len(def.Failures) && def.Failures[v.Attempt-1].Retry != v.Retry {
			t.Errorf("%s: attempt %d: %s leaves the job available %v, the vector says retry %v", v.ID, v.Attempt, who, def.Failures[v.Attempt-1].Retry, v.Retry)
		}
	}
	if f.MaxAttempts == nil || *f.MaxAttempts != def.MaxAttempts {
		t.Errorf("the vectors' max_attempts %v, %s's default %d", f.MaxAttempts, who, def.MaxAttempts)
	}
	for i, c := range graphileCases {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, ma := env.Results[i], p.MaxAttempts()
		if got.MaxAttempts != ma || got.Runs != ma || len(got.Failures) != ma {
			t.Errorf("%s: %s stored max_attempts %d, ran the task %d times and failed it %d times; the profile allows %d attempts",
				c.spec, who, got.MaxAttempts, got.Runs, len(got.Failures), ma)
		}
		for k, f := range got.Failures {
			n := k + 1
			if f.Attempt != n {
				t.Errorf("%s: failure %d: %s counts attempts %d, want %d", c.spec, n, who, f.Attempt, n)
				continue
			}
			d := p.DecideAt(n, 0.5)
			if want := p.DelayAt(n, 0.5); time.Duration(f.DelayUS)*time.Microsecond != want {
				t.Errorf("%s: attempt %d: %s sets run_at = now() + %v (%d us), the profile %v", c.spec, n, who,
					time.Duration(f.DelayUS)*time.Microsecond, f.DelayUS, want)
			}
			if f.Retry != (d.Action == policy.Retry) {
				t.Errorf("%s: attempt %d: %s leaves the job available %v, the profile decides %s", c.spec, n, who, f.Retry, d.Action)
			}
		}
		if !got.PermanentlyFailed || got.IsAvailable || got.Attempts != ma || got.LastError == "" {
			t.Errorf("%s: after the last attempt %s has attempts %d of %d, is_available %v, last_error %q; the profile: %s (%s)",
				c.spec, who, got.Attempts, got.MaxAttempts, got.IsAvailable, got.LastError, p.Terminal(), p.OnExhaustion())
		}
		if p.OnExhaustion() != policy.DeadLetter {
			t.Errorf("%s: the profile's terminal action is %s; graphile-worker keeps the job: %s", c.spec, p.OnExhaustion(), fmt.Sprint(policy.DeadLetter))
		}
	}
}
