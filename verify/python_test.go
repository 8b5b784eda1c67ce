package verify_test

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// python finds a python3 that can import celery. Debian's python3-celery
// installs for Debian's /usr/bin/python3, which a python3 earlier on PATH
// (pyenv, a virtualenv) does not see, so that one is tried first.
func python(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	var last string
	for _, bin := range candidates {
		ok, out := probe(bin, "-c", "import celery")
		if ok {
			return bin
		}
		last = bin + ": " + tail(out, 300)
	}
	missing(t, "Celery (Debian python3-celery)", "no python3 can import celery: "+last)
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
	bin := python(t)
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
