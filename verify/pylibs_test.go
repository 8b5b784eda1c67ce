package verify_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/profile"
)

// tenacity, backoff and RQ from Debian's python3-tenacity, python3-backoff and
// python3-rq, driven by verify/python/pyretry_driver.py with the draw
// injected.

// libDelay is one delay a driver answers, in seconds or milliseconds.
type libDelay struct {
	DelayS  json.Number `json:"delay_s"`
	DelayMS json.Number `json:"delay_ms"`
}

func (d libDelay) ns(t *testing.T) int64 {
	t.Helper()
	if d.DelayMS != "" {
		return millis(t, d.DelayMS)
	}
	return seconds(t, d.DelayS)
}

// libDriver is a driver of several libraries: the directory it runs in and
// its command line.
type libDriver struct {
	dir  string
	argv []string
	// env is added to the driver's environment: the drift watch points
	// the driver at another installed release with it.
	env []string
	// who names the code that ran in mismatch messages when it is not the
	// pinned release (the drift watch: the system, the version probed and
	// the pinned one); "" names the system and the version the driver
	// reports.
	who string
}

type pyRuns struct {
	Runs int `json:"runs"`
}

// pyCase is one configuration of a Python library: the profile and the
// library's own arguments for it.
type pyCase struct {
	spec   string
	config map[string]any
}

// checkPyLib runs the vector file of name through the real library, then
// each configured case over a grid of attempts and draws, and compares the
// attempts the library's own loop makes with the profile's limit.
// Bare attempts past bareRetries (when not 0) are not compared: the library
// computes no wait there.
// decide is the configuration whose attempt limit the bare profile's
// decision vectors are checked against (nil: bare).
func checkPyLib(t *testing.T, name, module, pkg string, bare map[string]any, bareRetries int, decide map[string]any, configured []pyCase) {
	bin := python(t, module, pkg)
	checkLib(t, name, name, libDriver{dir: "python", argv: []string{bin, "pyretry_driver.py"}}, bare, bareRetries, decide, configured)
}

// checkLib is checkPyLib for any driver that takes {"system", "config",
// "cases"}: system is the driver's name for the library.
func checkLib(t *testing.T, name, system string, drv libDriver, bare map[string]any, bareRetries int, decide map[string]any, configured []pyCase) {
	t.Helper()
	argv := drv.argv
	extra := func(cfg map[string]any) map[string]any { return map[string]any{"system": system, "config": cfg} }
	var older func(int) bool
	upToN := 20
	if bareRetries > 0 {
		older, upToN = func(n int) bool { return n > bareRetries }, bareRetries
	}
	injected{
		profile: name,
		upTo:    upToN,
		older:   older,
		reason:  "the library computes a wait only while retries are left",
		who:     drv.who,
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriverWith[libDelay](t, drv.dir, argv, cases, extra(bare), drv.env)
			t.Logf("real implementation: %s %s (%s)", name, env.Version, env.File)
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				out[i] = r.ns(t)
			}
			return out
		},
	}.check(t)
	if decide == nil {
		decide = bare
	}
	runs := runDriverWith[pyRuns](t, drv.dir, argv, []kase{{Op: "runs"}}, extra(decide), drv.env).Results[0].Runs
	checkDecisionsOf(t, name, drv.who, upTo(4), func(t *testing.T, attempts []int) []bool {
		out := make([]bool, len(attempts))
		for i, n := range attempts {
			out[i] = n < runs
		}
		return out
	})
	for _, c := range configured {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		last := 14
		if p.MaxAttempts() > 0 {
			last = min(last, p.MaxAttempts()-1)
		}
		var cases []kase
		for n := 1; n <= last; n++ {
			for _, r := range drawGrid {
				cases = append(cases, delayCase(n, r))
			}
		}
		env := envelope[libDelay]{}
		if len(cases) > 0 { // a configuration that never retries has no wait to compare
			env = runDriverWith[libDelay](t, drv.dir, argv, cases, extra(c.config), drv.env)
		}
		who := drv.who
		if who == "" {
			who = strings.TrimSpace(name + " " + env.Version)
		}
		for i, k := range cases {
			if got, want := time.Duration(env.Results[i].ns(t)), p.DelayAt(k.Attempt, *k.Rand); got != want {
				t.Errorf("%s: attempt %d, r=%v: %s gives %v (%d ns), the profile %v (%d ns)", c.spec, k.Attempt, *k.Rand, who, got, int64(got), want, int64(want))
			}
		}
		runs := runDriverWith[pyRuns](t, drv.dir, argv, []kase{{Op: "runs"}}, extra(c.config), drv.env).Results[0].Runs
		if p.MaxAttempts() > 0 && runs != p.MaxAttempts() {
			t.Errorf("%s: %s ran an always-failing function %d times, the profile's MaxAttempts is %d", c.spec, who, runs, p.MaxAttempts())
		}
	}
}

// TestTenacityReal: tenacity's wait strategies and stop_after_attempt.
func TestTenacityReal(t *testing.T) {
	checkPyLib(t, "tenacity", "tenacity", "python3-tenacity", map[string]any{}, 0, nil, []pyCase{
		{"tenacity:wait=wait_exponential,multiplier=0.5,min=1,max=30,stop_after_attempt=9",
			map[string]any{"wait": "wait_exponential", "kwargs": map[string]any{"multiplier": 0.5, "min": 1, "max": 30}, "stop_after_attempt": 9}},
		{"tenacity:wait=wait_random_exponential,multiplier=1,max=60,stop_after_attempt=12",
			map[string]any{"wait": "wait_random_exponential", "kwargs": map[string]any{"multiplier": 1, "max": 60}, "stop_after_attempt": 12}},
		{"tenacity:wait=wait_exponential_jitter,initial=0.25,jitter=3,max=100,stop_after_attempt=5",
			map[string]any{"wait": "wait_exponential_jitter", "kwargs": map[string]any{"initial": 0.25, "jitter": 3, "max": 100}, "stop_after_attempt": 5}},
		{"tenacity:wait=wait_fixed,fixed=2.5,stop_after_attempt=3",
			map[string]any{"wait": "wait_fixed", "kwargs": map[string]any{"wait": 2.5}, "stop_after_attempt": 3}},
		{"tenacity:wait=wait_exponential,exp_base=3", map[string]any{"wait": "wait_exponential", "kwargs": map[string]any{"exp_base": 3}}},
	})
}

// TestBackoffReal: backoff's wait generators and jitters through a real
// decorated function.
func TestBackoffReal(t *testing.T) {
	checkPyLib(t, "backoff", "backoff", "python3-backoff", map[string]any{}, 0, nil, []pyCase{
		{"backoff:factor=0.5,max_value=20,max_tries=8", map[string]any{"wait_gen": "expo", "kwargs": map[string]any{"factor": 0.5, "max_value": 20}, "max_tries": 8}},
		{"backoff:wait_gen=fibo,max_value=13,jitter=None", map[string]any{"wait_gen": "fibo", "kwargs": map[string]any{"max_value": 13}, "jitter": "None"}},
		{"backoff:wait_gen=constant,interval=2,jitter=random_jitter,max_tries=4", map[string]any{"wait_gen": "constant", "kwargs": map[string]any{"interval": 2}, "jitter": "random_jitter", "max_tries": 4}},
		{"backoff:base=3,factor=2,jitter=None", map[string]any{"wait_gen": "expo", "kwargs": map[string]any{"base": 3, "factor": 2}, "jitter": "None"}},
	})
}

// TestRQReal: RQ's Retry intervals through the real Job.get_retry_interval
// and Job.retry.
func TestRQReal(t *testing.T) {
	// The bare profile has no Retry: its delays are Retry(max=1)'s, computed
	// for the one retry that Retry allows.
	checkPyLib(t, "rq", "rq", "python3-rq", map[string]any{"max": 1}, 1, map[string]any{}, []pyCase{
		{"rq:max=3,interval=10/30/60", map[string]any{"max": 3, "interval": []int{10, 30, 60}}},
		{"rq:max=5,interval=10/30", map[string]any{"max": 5, "interval": []int{10, 30}}},
		{"rq:max=2,interval=7", map[string]any{"max": 2, "interval": 7}},
		{"rq:max=4", map[string]any{"max": 4}},
	})
}
