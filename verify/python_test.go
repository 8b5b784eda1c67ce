package verify_test

import (
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/retrykit/retrykit/profile"
)

// python finds a python3 that can import module (from the Debian package
// pkg). Debian's python3-* packages install for Debian's /usr/bin/python3,
// which a python3 earlier on PATH (pyenv, a virtualenv) does not see, so that
// one is tried first.
func python(t *testing.T, module, pkg string) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	var last string
	for _, bin := range candidates {
		ok, out := probe(bin, "-c", "import "+module)
		if ok {
			return bin
		}
		last = bin + ": " + tail(out, 300)
	}
	missing(t, module+" (Debian "+pkg+")", "no python3 can import "+module+": "+last)
	return ""
}

type celeryDelay struct {
	DelayS    json.Number `json:"delay_s"`
	Randrange []int64     `json:"randrange"`
}

type celeryRuns struct {
	Runs         int    `json:"runs"`
	State        string `json:"state"`
	MaxRetries   int    `json:"max_retries"`
	BackoffCalls []struct {
		Factor     json.Number `json:"factor"`
		Retries    int         `json:"retries"`
		Maximum    json.Number `json:"maximum"`
		FullJitter bool        `json:"full_jitter"`
	} `json:"backoff_calls"`
}

// TestCeleryReal runs the celery vectors through Celery's
// get_exponential_backoff_interval with the arguments its autoretry passes,
// from Debian's python3-celery, with random.randrange injected; and counts
// the runs of an always-failing autoretry task through Celery's eager loop.
func TestCeleryReal(t *testing.T) {
	bin := python(t, "celery", "python3-celery")
	argv := []string{bin, "celery_driver.py"}
	injected{
		profile: "celery",
		upTo:    40,
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriver[celeryDelay](t, "python", argv, cases)
			t.Logf("real implementation: Celery %s (%s)", env.Version, env.File)
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				if len(r.Randrange) != 1 {
					t.Errorf("attempt %d: Celery called randrange %d times, the profile draws once", cases[i].Attempt, len(r.Randrange))
				}
				out[i] = seconds(t, r.DelayS)
			}
			return out
		},
	}.check(t)

	env := runDriver[celeryRuns](t, "python", argv, []kase{{Op: "runs"}})
	runs := env.Results[0]
	t.Logf("Celery %s: an always-failing autoretry task ran %d times, final state %s, max_retries %d",
		env.Version, runs.Runs, runs.State, runs.MaxRetries)
	if runs.State != "FAILURE" {
		t.Errorf("final state %s, want FAILURE", runs.State)
	}
	for i, c := range runs.BackoffCalls {
		if c.Retries != i {
			t.Errorf("backoff call %d (after attempt %d) passed retries=%d; the profile passes attempt-1 = %d", i, i+1, c.Retries, i)
		}
	}
	checkDecisions(t, "celery", upTo(5), func(t *testing.T, attempts []int) []bool {
		out := make([]bool, len(attempts))
		for i, n := range attempts {
			out[i] = n < runs.Runs
		}
		return out
	})
}

type botocoreDelay struct {
	DelayS      json.Number `json:"delay_s"`
	RandomCalls int         `json:"random_calls"`
}

type botocoreDecision struct {
	Retry       bool `json:"retry"`
	MaxAttempts int  `json:"max_attempts"`
}

// TestBotocoreReal runs the aws vectors through botocore's standard retry
// mode (ExponentialBackoff with its random parameter set to the draw, and
// MaxAttemptsChecker) from Debian's python3-botocore.
func TestBotocoreReal(t *testing.T) {
	bin := python(t, "botocore", "python3-botocore")
	argv := []string{bin, "botocore_driver.py"}
	injected{
		profile: "aws",
		upTo:    5,
		// Debian's botocore 1.29 computes min(r * 2^(n-1), 20); current
		// botocore, which the profile follows, r * min(2^(n-1), 20). Both
		// are r * 2^(n-1) while 2^(n-1) <= 20, that is up to attempt 5.
		older:  func(n int) bool { return n > 5 },
		reason: "the installed botocore caps after the draw, min(r*2^(n-1), 20); the profile follows current botocore, r*min(2^(n-1), 20); they agree through attempt 5 (RK-75)",
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriver[botocoreDelay](t, "python", argv, cases)
			t.Logf("real implementation: botocore %s (%s)", env.Version, env.File)
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				if r.RandomCalls != 1 {
					t.Errorf("attempt %d: botocore drew %d times, the profile draws once", cases[i].Attempt, r.RandomCalls)
				}
				out[i] = seconds(t, r.DelayS)
			}
			return out
		},
	}.check(t)
	checkDecisions(t, "aws", upTo(4), func(t *testing.T, attempts []int) []bool {
		cases := make([]kase, len(attempts))
		for i, n := range attempts {
			cases[i] = kase{Op: "decision", Attempt: n}
		}
		env := runDriver[botocoreDecision](t, "python", argv, cases)
		out := make([]bool, len(attempts))
		for i, r := range env.Results {
			out[i] = r.Retry
		}
		return out
	})
}

// TestCeleryConfigured runs configured Celery profiles through Celery's own
// autoretry (the task declared with the profile's options, run eagerly) and
// get_exponential_backoff_interval with the keyword arguments autoretry
// passed, the draw injected.
func TestCeleryConfigured(t *testing.T) {
	bin := python(t, "celery", "python3-celery")
	argv := []string{bin, "celery_driver.py"}
	for _, c := range []struct {
		spec string
		opts map[string]any
	}{
		{"celery:retry_backoff=5,retry_backoff_max=300,max_retries=7", map[string]any{"retry_backoff": 5, "retry_backoff_max": 300, "max_retries": 7}},
		{"celery:retry_backoff=2,retry_jitter=false,max_retries=12", map[string]any{"retry_backoff": 2, "retry_jitter": false, "max_retries": 12}},
		{"celery:retry_backoff=true,retry_backoff_max=10,max_retries=0", map[string]any{"retry_backoff": true, "retry_backoff_max": 10, "max_retries": 0}},
		// retries > max_retries: a negative max_retries retries nothing, as 0.
		{"celery:retry_backoff=true,max_retries=-2", map[string]any{"retry_backoff": true, "max_retries": -2}},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		var cases []kase
		for n := 1; n <= 14; n++ {
			for _, r := range drawGrid {
				cases = append(cases, delayCase(n, r))
			}
		}
		env := runDriverWith[celeryDelay](t, "python", argv, cases, map[string]any{"opts": c.opts}, nil)
		for i, k := range cases {
			if got, want := seconds(t, env.Results[i].DelayS), int64(p.DelayAt(k.Attempt, *k.Rand)); got != want {
				t.Errorf("%s: attempt %d, r=%v: Celery %s %v, the profile %v", c.spec, k.Attempt, *k.Rand, env.Version, time.Duration(got), time.Duration(want))
			}
		}
		runs := runDriverWith[celeryRuns](t, "python", argv, []kase{{Op: "runs"}}, map[string]any{"opts": c.opts}, nil)
		if got := runs.Results[0].Runs; got != p.MaxAttempts() {
			t.Errorf("%s: Celery ran the task %d times, the profile allows %d attempts", c.spec, got, p.MaxAttempts())
		}
	}
}

// TestCeleryDefaultWaitsDefaultRetryDelay: an autoretry task with Celery's
// own defaults (retry_backoff False) waits default_retry_delay, 180 s, before
// every retry, and runs max_retries + 1 = 4 times; the bare celery profile
// says the same.
func TestCeleryDefaultWaitsDefaultRetryDelay(t *testing.T) {
	bin := python(t, "celery", "python3-celery")
	type answer struct {
		Runs       int           `json:"runs"`
		State      string        `json:"state"`
		Countdowns []json.Number `json:"countdowns"`
	}
	env := runDriverWith[answer](t, "python", []string{bin, "celery_driver.py"}, []kase{{Op: "countdowns"}}, map[string]any{"opts": map[string]any{}}, nil)
	a := env.Results[0]
	p, err := profile.Lookup("celery")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Celery %s with its defaults: %d runs, countdowns %v, state %s", env.Version, a.Runs, a.Countdowns, a.State)
	// Task.retry builds the retry's signature (and so its countdown) before
	// it checks max_retries: the last failure computes one it never uses.
	if a.Runs != p.MaxAttempts() || len(a.Countdowns) < a.Runs-1 {
		t.Fatalf("Celery ran %d times with %d countdowns; the profile makes %d attempts", a.Runs, len(a.Countdowns), p.MaxAttempts())
	}
	for i, c := range a.Countdowns[:a.Runs-1] {
		if got, want := seconds(t, c), int64(p.DelayAt(i+1, 0.5)); got != want {
			t.Errorf("retry after attempt %d: Celery's countdown %v, the profile %v", i+1, time.Duration(got), time.Duration(want))
		}
	}
}
