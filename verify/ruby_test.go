package verify_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
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
