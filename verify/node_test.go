package verify_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/retrykit/retrykit/profile"
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
	checkBullMQ(t, node(t), "", "")
}

// checkBullMQ runs the bullmq vectors, and package profile's delays and
// decisions for the configuration they are for, through BullMQ loaded from
// dir (the pinned one when dir is ""); who names the release in mismatch
// messages ("": the real code).
func checkBullMQ(t *testing.T, bin, dir, who string) {
	argv := []string{bin, "bullmq_driver.js"}
	var environ []string
	if dir != "" {
		environ = []string{"BULLMQ_DIR=" + dir}
	}
	injected{
		profile: "bullmq",
		upTo:    30,
		who:     who,
		delays: func(t *testing.T, cases []kase) []int64 {
			env := runDriverWith[bullmqDelay](t, "node", argv, cases, nil, environ)
			t.Logf("real implementation: BullMQ %s (%s)", env.Version, env.File)
			out := make([]int64, len(cases))
			for i, r := range env.Results {
				if r.RandomCalls != 0 {
					t.Errorf("attempt %d: BullMQ %s called Math.random %d times; with jitter 0 the profile draws nothing", cases[i].Attempt, env.Version, r.RandomCalls)
				}
				out[i] = millis(t, r.DelayMS)
			}
			return out
		},
	}.check(t)
	checkDecisionsOf(t, "bullmq", who, upTo(4), func(t *testing.T, attempts []int) []bool {
		cases := make([]kase, len(attempts))
		for i, n := range attempts {
			cases[i] = kase{Op: "decision", Attempt: n}
		}
		env := runDriverWith[bullmqDecision](t, "node", argv, cases, nil, environ)
		out := make([]bool, len(attempts))
		for i, r := range env.Results {
			out[i] = r.Retry
		}
		return out
	})
}

// bullmqConfigured are configured BullMQ profiles and the job options
// they stand for.
var bullmqConfigured = []struct {
	spec string
	opts map[string]any
}{
	{"bullmq:type=exponential,delay=3000,attempts=5", map[string]any{"attempts": 5, "backoff": map[string]any{"type": "exponential", "delay": 3000}}},
	{"bullmq:type=fixed,delay=1500,attempts=4", map[string]any{"attempts": 4, "backoff": map[string]any{"type": "fixed", "delay": 1500}}},
	{"bullmq:type=exponential,delay=777,attempts=9,jitter=0.5", map[string]any{"attempts": 9, "backoff": map[string]any{"type": "exponential", "delay": 777, "jitter": 0.5}}},
	{"bullmq:type=fixed,delay=10,jitter=1,attempts=3", map[string]any{"attempts": 3, "backoff": map[string]any{"type": "fixed", "delay": 10, "jitter": 1}}},
}

// checkBullMQConfigured runs every configured case through BullMQ's own
// Backoffs.calculate and Job#shouldRetryJob (bullmq loaded from dir, or the
// pinned one when dir is ""), at every attempt and draw of the grid. who
// names the release in mismatch messages ("": BullMQ and the version that
// ran).
func checkBullMQConfigured(t *testing.T, bin, dir, who string) {
	var env []string
	if dir != "" {
		env = []string{"BULLMQ_DIR=" + dir}
	}
	for _, c := range bullmqConfigured {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		var cases []kase
		for n := 1; n <= 12; n++ {
			for _, r := range drawGrid {
				cases = append(cases, delayCase(n, r))
			}
			cases = append(cases, kase{Op: "decision", Attempt: n})
		}
		type answer struct {
			DelayMS json.Number `json:"delay_ms"`
			Retry   *bool       `json:"retry"`
		}
		ans := runDriverWith[answer](t, "node", []string{bin, "bullmq_driver.js"}, cases, map[string]any{"opts": c.opts}, env)
		who := who
		if who == "" {
			who = "BullMQ " + ans.Version
		}
		for i, k := range cases {
			a := ans.Results[i]
			if k.Op == "decision" {
				if want := k.Attempt < p.MaxAttempts(); a.Retry == nil || *a.Retry != want {
					t.Errorf("%s: after attempt %d %s retries=%v, the profile says %v", c.spec, k.Attempt, who, a.Retry, want)
				}
				continue
			}
			if got, want := millis(t, a.DelayMS), int64(p.DelayAt(k.Attempt, *k.Rand)); got != want {
				t.Errorf("%s: attempt %d, r=%v: %s gives %v, the profile %v", c.spec, k.Attempt, *k.Rand, who, time.Duration(got), time.Duration(want))
			}
		}
	}
}

// TestBullMQConfigured: configured BullMQ profiles through the real code.
func TestBullMQConfigured(t *testing.T) {
	checkBullMQConfigured(t, node(t), "", "")
}

// TestBullMQDefaults: a job added with BullMQ's own defaults (attempts 1,
// no backoff) is not retried; with attempts 3 and no backoff it is retried at
// once (0 ms); and the jitter's top, at V8's largest Math.random() 1 - 2^-52,
// is 999 ms for a 1000 ms delay with jitter 0.5. The profiles say the same.
func TestBullMQDefaults(t *testing.T) {
	bin := node(t)
	argv := []string{bin, "bullmq_driver.js"}
	for _, c := range []struct {
		spec string
		opts map[string]any
	}{{"bullmq", map[string]any{}}, {"bullmq:attempts=3", map[string]any{"attempts": 3}}} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		cases := []kase{{Op: "decision", Attempt: 1}, {Op: "decision", Attempt: 2}, {Op: "decision", Attempt: 3}}
		ans := runDriverWith[bullmqDecision](t, "node", argv, cases, map[string]any{"opts": c.opts}, nil)
		for i, k := range cases {
			a := ans.Results[i]
			want := p.DecideAt(k.Attempt, 0.5)
			if wantRetry := k.Attempt < p.MaxAttempts(); a.Retry != wantRetry {
				t.Errorf("%s: after attempt %d BullMQ %s retries=%v, the profile %v", c.spec, k.Attempt, ans.Version, a.Retry, wantRetry)
			}
			if a.Retry {
				// No backoff: shouldRetryJob answers no delay at all, and
				// the job goes straight back to the wait list (job.js 493).
				got := int64(0)
				if a.DelayMS != "" {
					got = millis(t, a.DelayMS)
				}
				if got != int64(want.Delay) {
					t.Errorf("%s: after attempt %d BullMQ %s waits %v, the profile %v", c.spec, k.Attempt, ans.Version, time.Duration(got), want.Delay)
				}
			}
		}
	}
	p, err := profile.Parse("bullmq:type=fixed,delay=1000,jitter=0.5")
	if err != nil {
		t.Fatal(err)
	}
	top := 1 - 0x1p-52 // V8: (random 52 bits) / 2^52 at most
	ans := runDriverWith[bullmqDelay](t, "node", argv, []kase{delayCase(1, top)}, map[string]any{"opts": map[string]any{"backoff": map[string]any{"type": "fixed", "delay": 1000, "jitter": 0.5}}}, nil)
	_, hi := p.Bounds(1)
	if got := millis(t, ans.Results[0].DelayMS); got != int64(hi) || hi != 999*time.Millisecond {
		t.Errorf("jitter top: BullMQ %s gives %v at Math.random() = 1 - 2^-52, the profile's top %v (want 999ms)", ans.Version, time.Duration(got), hi)
	}
}
