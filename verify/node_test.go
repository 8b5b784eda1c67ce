package verify_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// node finds node and the bullmq package npm ci installed in verify/node.
func node(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node (Debian nodejs)", "no node on PATH")
	}
	if _, err := os.Stat("node/node_modules/bullmq/package.json"); err != nil {
		missing(t, "the bullmq npm package", "verify/node/node_modules/bullmq is absent (npm ci in verify/node)")
	}
	return bin
}

type bullmqDelay struct {
	DelayMS     json.Number `json:"delay_ms"`
	RandomCalls int         `json:"random_calls"`
}

type bullmqDecision struct {
	Retry   bool        `json:"retry"`
	DelayMS json.Number `json:"delay_ms"`
}

// TestBullMQReal runs the bullmq vectors through Backoffs.calculate and
// Job#shouldRetryJob from the bullmq npm package, with Math.random injected.
func TestBullMQReal(t *testing.T) {
	bin := node(t)
	argv := []string{bin, "bullmq_driver.js"}
	injected{
		profile: "bullmq",
		upTo:    30,
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriver[bullmqDelay](t, "node", argv, cases)
			t.Logf("real implementation: BullMQ %s (%s)", env.Version, env.File)
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				if r.RandomCalls != 0 {
					t.Errorf("attempt %d: BullMQ called Math.random %d times; with jitter 0 the profile draws nothing", cases[i].Attempt, r.RandomCalls)
				}
				out[i] = millis(t, r.DelayMS)
			}
			return out
		},
	}.check(t)
	checkDecisions(t, "bullmq", upTo(4), func(t *testing.T, attempts []int) []bool {
		cases := make([]kase, len(attempts))
		for i, n := range attempts {
			cases[i] = kase{Op: "decision", Attempt: n}
		}
		env := runDriver[bullmqDecision](t, "node", argv, cases)
		out := make([]bool, len(attempts))
		for i, r := range env.Results {
			out[i] = r.Retry
		}
		return out
	})
}
