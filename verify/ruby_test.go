package verify_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// ruby finds a ruby that can load the gem, or reports it missing.
func ruby(t *testing.T, gem, pkg string) string {
	t.Helper()
	bin, err := exec.LookPath("ruby")
	if err != nil {
		missing(t, "ruby with the "+gem+" gem (Debian "+pkg+")", "no ruby on PATH")
	}
	if ok, out := probe(bin, "-e", "require '"+gem+"'"); !ok {
		missing(t, "the "+gem+" gem (Debian "+pkg+")", "ruby cannot require it: "+tail(out, 300))
	}
	return bin
}

type rubyDelay struct {
	DelayS    json.Number `json:"delay_s"`
	Rand      []int       `json:"rand"`
	RandCalls int         `json:"rand_calls"`
}

type rubyDecision struct {
	Retry      bool   `json:"retry"`
	Dead       bool   `json:"dead"`
	Outcome    string `json:"outcome"`
	RetryCount *int   `json:"retry_count"`
	Executions int    `json:"executions"`
}

// TestSidekiqReal runs the sidekiq6 vectors through Sidekiq::JobRetry from
// Debian's ruby-sidekiq, with Kernel#rand injected.
func TestSidekiqReal(t *testing.T) {
	bin := ruby(t, "sidekiq", "ruby-sidekiq")
	argv := []string{bin, "sidekiq_driver.rb"}
	var version string
	injected{
		profile: "sidekiq6",
		upTo:    30,
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriver[rubyDelay](t, "ruby", argv, cases)
			version = env.Version
			t.Logf("real implementation: Sidekiq %s (%s)", env.Version, env.File)
			if !strings.HasPrefix(env.Version, "6.") {
				t.Fatalf("installed Sidekiq is %s: the driver calls JobRetry#delay_for as Sidekiq 6 defines it; the sidekiq6 profile is 6.x", env.Version)
			}
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				if len(r.Rand) != 1 || r.Rand[0] != 10 {
					t.Errorf("attempt %d: Sidekiq drew rand%v, the profile says one rand(10)", cases[i].Attempt, r.Rand)
				}
				out[i] = seconds(t, r.DelayS)
			}
			return out
		},
	}.check(t)
	checkDecisions(t, "sidekiq6", upTo(27), func(t *testing.T, attempts []int) []bool {
		cases := make([]kase, len(attempts))
		for i, n := range attempts {
			cases[i] = kase{Op: "decision", Attempt: n}
		}
		env := runDriver[rubyDecision](t, "ruby", argv, cases)
		out := make([]bool, len(attempts))
		for i, r := range env.Results {
			if r.Retry == r.Dead {
				t.Errorf("attempt %d: Sidekiq wrote retry=%v and dead=%v to Redis; want exactly one", attempts[i], r.Retry, r.Dead)
			}
			if r.RetryCount == nil || *r.RetryCount != attempts[i]-1 {
				t.Errorf("attempt %d: Sidekiq's retry_count after it is %v, the profile's count is attempt-1 = %d", attempts[i], r.RetryCount, attempts[i]-1)
			}
			out[i] = r.Retry
		}
		return out
	})
	if version != "" {
		t.Logf("verified: sidekiq6 profile against Sidekiq %s", version)
	}
}

// TestActiveJobReal runs the activejob vectors through Active Job's retry_on
// from Debian's ruby-activejob, with Kernel.rand injected.
func TestActiveJobReal(t *testing.T) {
	bin := ruby(t, "active_job", "ruby-activejob")
	argv := []string{bin, "activejob_driver.rb"}
	injected{
		profile: "activejob",
		upTo:    20,
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriver[rubyDelay](t, "ruby", argv, cases)
			t.Logf("real implementation: Active Job %s, wait: :%s (%s)", env.Version, env.Algorithm, env.File)
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				if r.RandCalls != 1 {
					t.Errorf("attempt %d: Active Job called Kernel.rand %d times, the profile draws once", cases[i].Attempt, r.RandCalls)
				}
				out[i] = seconds(t, r.DelayS)
			}
			return out
		},
	}.check(t)
	checkDecisions(t, "activejob", upTo(6), func(t *testing.T, attempts []int) []bool {
		cases := make([]kase, len(attempts))
		for i, n := range attempts {
			cases[i] = kase{Op: "decision", Attempt: n}
		}
		env := runDriver[rubyDecision](t, "ruby", argv, cases)
		out := make([]bool, len(attempts))
		for i, r := range env.Results {
			if r.Outcome != "retry" && r.Outcome != "raised" {
				t.Errorf("attempt %d: Active Job neither re-enqueued nor re-raised (%q)", attempts[i], r.Outcome)
			}
			out[i] = r.Retry
		}
		return out
	})
}

// TestActiveJobAttempts: retry_on attempts: N through Active Job's own
// handler (executions < attempts): the runs until it re-raises match the
// profile's attempts, for 0 and negative values too, which Active Job takes
// and which retry nothing.
func TestActiveJobAttempts(t *testing.T) {
	bin := ruby(t, "active_job", "ruby-activejob")
	type answer struct {
		Runs int `json:"runs"`
	}
	var cases []kase
	var specs []string
	for _, n := range []int{-4, 0, 1, 2, 7} {
		cases = append(cases, kase{Op: "attempts_runs", Attempts: &n, Cap: 50})
		specs = append(specs, fmt.Sprintf("activejob:attempts=%d", n))
	}
	env := runDriver[answer](t, "ruby", []string{bin, "activejob_driver.rb"}, cases)
	for i, spec := range specs {
		p, err := profile.Parse(spec)
		if err != nil {
			t.Errorf("%s: %v (Active Job %s takes it and runs the job %d times)", spec, err, env.Version, env.Results[i].Runs)
			continue
		}
		if got := env.Results[i].Runs; got != p.MaxAttempts() {
			t.Errorf("%s: Active Job %s ran the job %d times, the profile allows %d attempts", spec, env.Version, got, p.MaxAttempts())
		}
	}
}

// TestSidekiq8Source runs Sidekiq 8's own retry scheduling
// (JobRetry#process_retry, from a source checkout given in
// RETRYKIT_SIDEKIQ8_SRC, e.g. github.com/sidekiq/sidekiq at v8.1.7) with
// Debian's ruby, the draw injected, against the sidekiq profile: the delay
// after each attempt and where the retries run out, by default and with
// retry: 2. Sidekiq 8 cannot be installed from a registry reachable here
// (no rubygems; Debian ships 6.4.1; the module proxy refuses the
// repository), so without a checkout this skips, even in CI, and the
// audit vectors stand in (testdata/profiles/sidekiq.json).
func TestSidekiq8Source(t *testing.T) {
	src := os.Getenv("RETRYKIT_SIDEKIQ8_SRC")
	if src == "" {
		t.Skip("RETRYKIT_SIDEKIQ8_SRC is not set: no Sidekiq 8 source to run (no registry here serves it)")
	}
	rb, err := exec.LookPath("ruby")
	if err != nil {
		missing(t, "ruby (Debian ruby)", "no ruby on PATH")
	}
	type answer struct {
		Retry     bool        `json:"retry"`
		Exhausted bool        `json:"exhausted"`
		MinS      json.Number `json:"min_s"`
		MaxS      json.Number `json:"max_s"`
	}
	for _, spec := range []string{"sidekiq", "sidekiq:retry=2"} {
		p, err := profile.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		var cases []map[string]any
		for n := 1; n <= p.MaxAttempts()+1; n++ {
			for _, r := range []float64{0, 0.5, maxDraw} {
				c := map[string]any{"attempt": n, "rand": r}
				if spec != "sidekiq" {
					c["retry"] = 2
				}
				cases = append(cases, c)
			}
		}
		req, _ := json.Marshal(map[string]any{"cases": cases})
		cmd := exec.Command(rb, "-I", filepath.Join(src, "lib"), "sidekiq8_driver.rb")
		cmd.Dir = "ruby"
		cmd.Stdin = bytes.NewReader(req)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sidekiq8_driver.rb: %v", err)
		}
		var env envelope[answer]
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&env); err != nil || len(env.Results) != len(cases) {
			t.Fatalf("answer %q: %v", out, err)
		}
		for i, c := range cases {
			n, r, a := c["attempt"].(int), c["rand"].(float64), env.Results[i]
			d := p.DecideAt(n, r)
			if a.Retry != (d.Action == policy.Retry) {
				t.Errorf("%s: after attempt %d Sidekiq %s retries=%v (exhausted %v), the profile says %v", spec, n, env.Version, a.Retry, a.Exhausted, d.Action)
				continue
			}
			if !a.Retry {
				continue
			}
			// The real delay lies between the ZADD score minus the clock after
			// and minus the clock before the call: a few milliseconds wide.
			lo, hi := time.Duration(seconds(t, a.MinS)), time.Duration(seconds(t, a.MaxS))
			if d.Delay < lo-time.Millisecond || d.Delay > hi+time.Millisecond {
				t.Errorf("%s: attempt %d, r=%v: Sidekiq %s scheduled in [%v, %v], the profile says %v", spec, n, r, env.Version, lo, hi, d.Delay)
			}
		}
		t.Logf("%s: Sidekiq %s (%s) agrees at %d cases", spec, env.Version, env.File, len(cases))
	}
}

// TestResqueRetrySource runs resque-retry's own ExponentialBackoff plugin
// (retry_delay, retry_limit_reached?, before_perform_retry and
// on_failure_retry, from a source checkout given in
// RETRYKIT_RESQUE_RETRY_SRC, e.g. github.com/lantins/resque-retry at
// f75421a, 1.8.1) with Debian's ruby, Resque and Redis stood in for, against
// the resque_retry profile under its defaults and its settings: the delay
// after each attempt at injected draws, the ranges rand was called with,
// and where the retries run out (never, for any negative retry_limit).
// No registry here serves resque-retry (no rubygems, not in Debian), so
// without a checkout this skips, even in CI, like TestSidekiq8Source.
func TestResqueRetrySource(t *testing.T) {
	src := os.Getenv("RETRYKIT_RESQUE_RETRY_SRC")
	if src == "" {
		t.Skip("RETRYKIT_RESQUE_RETRY_SRC is not set: no resque-retry source to run (no registry here serves it)")
	}
	rb, err := exec.LookPath("ruby")
	if err != nil {
		missing(t, "ruby (Debian ruby)", "no ruby on PATH")
	}
	type answer struct {
		Retry     bool         `json:"retry"`
		DelayS    *json.Number `json:"delay_s"`
		RandCalls [][]any      `json:"rand_calls"`
		Runs      int          `json:"runs"`
		GaveUp    bool         `json:"gave_up"`
	}
	const runCap = 60 // failures a "runs" case makes before it calls a limit unlimited
	for _, c := range []struct {
		spec   string
		config map[string]any
	}{
		{"resque_retry", map[string]any{}},
		{"resque_retry:retry_limit=2", map[string]any{"retry_limit": 2}},
		{"resque_retry:retry_limit=0", map[string]any{"retry_limit": 0}},
		{"resque_retry:retry_limit=-1", map[string]any{"retry_limit": -1}},
		{"resque_retry:retry_limit=-7", map[string]any{"retry_limit": -7}},
		{"resque_retry:backoff_strategy=5/30", map[string]any{"backoff_strategy": []int{5, 30}}},
		{"resque_retry:backoff_strategy=10/20/45,retry_limit=6", map[string]any{"backoff_strategy": []int{10, 20, 45}, "retry_limit": 6}},
		{"resque_retry:retry_delay_multiplicand_min=0.5,retry_delay_multiplicand_max=1.5", map[string]any{"retry_delay_multiplicand_min": 0.5, "retry_delay_multiplicand_max": 1.5}},
		{"resque_retry:retry_delay_multiplicand_min=2.5,retry_delay_multiplicand_max=2.5,backoff_strategy=3/7", map[string]any{"retry_delay_multiplicand_min": 2.5, "retry_delay_multiplicand_max": 2.5, "backoff_strategy": []int{3, 7}}},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		last := 12
		if p.MaxAttempts() > 0 {
			last = p.MaxAttempts()
		}
		var cases []map[string]any
		var draws []float64
		for n := 1; n <= last; n++ {
			for _, r := range []float64{0, 0.25, 0.5, 0.9, maxDraw} {
				// Ruby's rand(a..b) on floats includes b; the profile reads
				// its top draw 1 - 2^-53 as b, so the driver gets r / maxDraw.
				cases = append(cases, map[string]any{"op": "delay", "attempt": n, "rand": min(1, r/maxDraw)})
				draws = append(draws, r)
			}
		}
		cases = append(cases, map[string]any{"op": "runs", "cap": runCap})
		req, _ := json.Marshal(map[string]any{"config": c.config, "cases": cases})
		cmd := exec.Command(rb, "-I", filepath.Join(src, "lib"), "resque_retry_driver.rb")
		cmd.Dir = "ruby"
		cmd.Stdin = bytes.NewReader(req)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("resque_retry_driver.rb: %v: %s", err, tail(stderr.String(), 2000))
		}
		var env envelope[answer]
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&env); err != nil || len(env.Results) != len(cases) {
			t.Fatalf("answer %q: %v", out, err)
		}
		for i, k := range cases[:len(cases)-1] {
			n, r, a := k["attempt"].(int), draws[i], env.Results[i]
			d := p.DecideAt(n, r)
			if a.Retry != (d.Action == policy.Retry) {
				t.Errorf("%s: after attempt %d resque-retry %s retries=%v, the profile says %v", c.spec, n, env.Version, a.Retry, d.Action)
				continue
			}
			if !a.Retry {
				continue
			}
			if got := time.Duration(seconds(t, *a.DelayS)); got != d.Delay {
				t.Errorf("%s: attempt %d, r=%v: resque-retry %s enqueued in %v, the profile says %v", c.spec, n, r, env.Version, got, d.Delay)
			}
			if p.Jitter() != (len(a.RandCalls) > 0) {
				t.Errorf("%s: attempt %d: resque-retry called rand %d times; the profile's jitter is %v", c.spec, n, len(a.RandCalls), p.Jitter())
			}
			for _, call := range a.RandCalls {
				if len(call) != 3 || call[2] != false {
					t.Errorf("%s: attempt %d: rand called with %v, want an inclusive float range", c.spec, n, call)
				}
			}
		}
		runs := env.Results[len(cases)-1]
		if want := p.MaxAttempts(); (want == 0 && (runs.Runs != runCap || runs.GaveUp)) || (want > 0 && (runs.Runs != want || !runs.GaveUp)) {
			t.Errorf("%s: resque-retry %s ran %d times (gave up %v); the profile's attempts are %d (0: unlimited, so %d runs without giving up)", c.spec, env.Version, runs.Runs, runs.GaveUp, want, runCap)
		}
		t.Logf("%s: resque-retry %s (%s) agrees at %d cases", c.spec, env.Version, env.File, len(cases))
	}
}

// TestSidekiqConfigured runs configured Sidekiq profiles (the job's retry
// option) through Sidekiq 6's own JobRetry#attempt_retry: where it stops
// retrying, and whether it then moves the job to the Dead set.
func TestSidekiqConfigured(t *testing.T) {
	bin := ruby(t, "sidekiq", "ruby-sidekiq")
	argv := []string{bin, "sidekiq_driver.rb"}
	for _, c := range []struct {
		spec string
		opt  any
	}{{"sidekiq6:retry=2", 2}, {"sidekiq6:retry=0", 0}, {"sidekiq6:retry=false", false}, {"sidekiq6:retry=5", 5},
		// count < max_retry_attempts: a negative retry exhausts at once, to the Dead set, as 0.
		{"sidekiq6:retry=-1", -1}} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		var cases []kase
		for n := 1; n <= p.MaxAttempts()+1; n++ {
			cases = append(cases, kase{Op: "decision", Attempt: n, Retry: c.opt})
		}
		env := runDriver[rubyDecision](t, "ruby", argv, cases)
		for i, k := range cases {
			d := p.DecideAt(k.Attempt, 0)
			got := env.Results[i]
			if got.Retry != (d.Action == policy.Retry) {
				t.Errorf("%s: after attempt %d Sidekiq %s retries=%v, the profile says %v", c.spec, k.Attempt, env.Version, got.Retry, d.Action)
			}
			if k.Attempt == p.MaxAttempts() && got.Dead != (d.Action == policy.DeadLetter) {
				t.Errorf("%s: after the last attempt Sidekiq %s dead=%v, the profile says %v", c.spec, env.Version, got.Dead, d.Action)
			}
		}
	}
}

// TestActiveJobRetryOnDefaults: a job whose retry_on gives neither wait nor
// jitter waits retry_on's own 3.seconds with the bare class's retry_jitter
// 0.0, as the bare activejob profile does; a wait of 2.5.seconds is
// truncated with .to_i (2 + rand * 2 * jitter) and a plain Float wait
// raises.
func TestActiveJobRetryOnDefaults(t *testing.T) {
	bin := ruby(t, "active_job", "ruby-activejob")
	argv := []string{bin, "activejob_driver.rb"}
	type answer struct {
		WaitMin     float64 `json:"wait_min_s"`
		WaitMax     float64 `json:"wait_max_s"`
		RetryJitter float64 `json:"retry_jitter"`
		DelayS      float64 `json:"delay_s"`
		Raised      bool    `json:"raised"`
	}
	wait, jit, r := 2.5, 0.15, 0.5
	cases := []kase{{Op: "default_wait"}, {Op: "wait_delay", Attempt: 1, Rand: &r, Wait: &wait, Jitter: &jit}, {Op: "float_wait", Wait: &wait}}
	env := runDriverWith[answer](t, "ruby", argv, cases, nil, nil)
	p, err := profile.Lookup("activejob")
	if err != nil {
		t.Fatal(err)
	}
	a := env.Results[0]
	d := p.DelayAt(1, 0.5)
	t.Logf("Active Job %s: retry_on with its defaults enqueued the retry %.6f..%.6f s ahead, retry_jitter %v; the profile %v",
		env.Version, a.WaitMin, a.WaitMax, a.RetryJitter, d)
	if a.RetryJitter != 0 || p.Jitter() {
		t.Errorf("retry_jitter %v, profile jitter %v: both should be none", a.RetryJitter, p.Jitter())
	}
	// The scheduled time is a float of seconds: allow its rounding (1 ms).
	if s := d.Seconds(); s < a.WaitMin-1e-3 || s > a.WaitMax+1e-3 {
		t.Errorf("default wait: Active Job %.6f..%.6f s, the profile %v", a.WaitMin, a.WaitMax, d)
	}
	cp, err := profile.Parse("activejob:wait=2.5,load_defaults=8.1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := time.Duration(env.Results[1].DelayS*1e9), cp.DelayAt(1, r); got != want {
		t.Errorf("wait 2.5.seconds, jitter 0.15, r 0.5: Active Job %v, the profile %v", got, want)
	}
	if !env.Results[2].Raised {
		t.Errorf("a plain Float wait did not raise in Active Job %s", env.Version)
	}
}
