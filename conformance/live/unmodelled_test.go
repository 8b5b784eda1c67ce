package live_test

import (
	"context"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// The server bugs below are written apart from the diagnosis's models and
// families: a proxy in front of a correct server rewrites its answers the
// way a plausible implementation bug would. No model or family describes
// any of them, so the diagnosis must report them unexplained (grouped by
// what it observed), never under a bug name.

// unmodelled is one such bug: edit rewrites a decoded JSON answer to the
// request r (the answer of POST .../workers/nack is a FAIL answer; of GET
// .../jobs/{id} an INFO).
type unmodelled struct {
	name  string
	group string // a cause must be unexplained:group (the deviation observed; "a|b": either)
	edit  func(r *http.Request, v map[string]any)
}

// isFail and isInfo tell the FAIL and INFO answers apart.
func isFail(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/workers/nack") }
func isInfo(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/ojs/v1/jobs/")
}

// jobHash is a random-looking but fixed number for a job id.
func jobHash(id string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()
}

// retimed rewrites the next_attempt_at of a retryable FAIL answer (and
// of its job view) by f(delay from the answer's own time, attempt, job).
func retimed(f func(d time.Duration, attempt int, id string) time.Duration) func(*http.Request, map[string]any) {
	return func(r *http.Request, v map[string]any) {
		if !isFail(r) || v["state"] != "retryable" {
			return
		}
		next, err := time.Parse(time.RFC3339Nano, str(v["next_attempt_at"]))
		if err != nil {
			return
		}
		now := time.Now()
		if job, ok := v["job"].(map[string]any); ok {
			if t, err := time.Parse(time.RFC3339Nano, str(job["server_time"])); err == nil {
				now = t
			}
		}
		n, _ := v["attempt"].(float64)
		at := now.Add(f(next.Sub(now), int(n), str(v["job_id"]))).UTC().Format(time.RFC3339Nano)
		v["next_attempt_at"] = at
		if job, ok := v["job"].(map[string]any); ok && job["next_attempt_at"] != nil {
			job["next_attempt_at"] = at
		}
	}
}

func str(v any) string { s, _ := v.(string); return s }

var unmodelledBugs = []unmodelled{
	// next_attempt_at pulled earlier by a per-job amount (5 to 24 ms),
	// as a server that stamps the retry from a stale clock read does
	{"per-job-clock-skew", "delay-differs", retimed(func(d time.Duration, _ int, id string) time.Duration {
		return d - time.Duration(5+jobHash(id)%20)*time.Millisecond
	})},
	// the delay rounded to whole seconds, as a store with second
	// resolution does
	{"delay-rounded-to-seconds", "delay-whole-seconds", retimed(func(d time.Duration, _ int, _ string) time.Duration {
		return d.Round(time.Second)
	})},
	// a delay from another base above attempt 2: 0.6 of it (two checks
	// fail attempt 3, http-cap and http-coefficient-fraction: the ratio
	// they show, when their windows give it to two digits alike)
	{"other-base-above-attempt-2", "delay-differs|delay-ratio(×0.6)", retimed(func(d time.Duration, n int, _ string) time.Duration {
		if n > 2 {
			return d * 3 / 5
		}
		return d
	})},
	// INFO shows the attempt one too high, only after attempt 3
	{"info-attempt-high-after-3", "attempt-offset(+1)", func(r *http.Request, v map[string]any) {
		if n, ok := v["attempt"].(float64); ok && isInfo(r) && n > 3 {
			v["attempt"] = n + 1
		}
		if job, ok := v["job"].(map[string]any); ok && isInfo(r) {
			if n, ok := job["attempt"].(float64); ok && n > 3 {
				job["attempt"] = n + 1
			}
		}
	}},
	// the error history truncated to its last 5 entries
	{"history-truncated-to-5", "own-observation", func(r *http.Request, v map[string]any) {
		job, ok := v["job"].(map[string]any)
		if !ok || !isInfo(r) {
			return
		}
		for _, k := range []string{"errors", "error_history"} {
			if l, ok := job[k].([]any); ok && len(l) > 5 {
				job[k] = l[len(l)-5:]
			}
		}
	}},
	// "retryable" spelled as another state name in FAIL answers
	{"retryable-spelled-retry-scheduled", "state(retry_scheduled≠retryable)", func(r *http.Request, v map[string]any) {
		if isFail(r) && v["state"] == "retryable" {
			v["state"] = "retry_scheduled"
		}
	}},
	// max_attempts echoed two higher than the policy's in FAIL answers
	{"max-attempts-echoed-wrong", "max-attempts-shown", func(r *http.Request, v map[string]any) {
		if n, ok := v["max_attempts"].(float64); ok && isFail(r) {
			v["max_attempts"] = n + 2
		}
	}},
}

// proxy serves h with every JSON object answer passed through edit.
func proxy(h http.Handler, edit func(*http.Request, map[string]any)) http.Handler {
	return statefulProxy(h, func(r *http.Request, v map[string]any, _ func(string) map[string]any) { edit(r, v) })
}

// TestUnmodelledBugsAreNotNamed: each bug outside every model and family
// is caught, and no cause of its report is a reproduced bug model: every
// failure comes out unexplained, grouped by the deviation observed (the
// group named in the table among them), in one cause or two at most.
func TestUnmodelledBugsAreNotNamed(t *testing.T) {
	for _, b := range unmodelledBugs {
		t.Run(b.name, func(t *testing.T) {
			hs := httptest.NewServer(proxy(ojshttp.New(executor.New()), b.edit))
			defer hs.Close()
			rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0))
			if err == nil && rep.OK() {
				// a delay judged through a slow round trip's window can hide
				// a difference of 20 ms: a loaded host gets a second run
				t.Logf("not caught in a first run; played again")
				rep, err = live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0))
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.OK() {
				t.Fatalf("not caught: the report is OK")
			}
			grouped := false
			for _, c := range rep.Causes {
				t.Logf("cause %s (reproduced %v): %q; %s", c.Class, c.Reproduced, c.IDs, c.Reproduction)
				if c.Reproduced || strings.HasPrefix(c.Class, "bug:") {
					t.Errorf("misnamed as %s: %q", c.Class, c.IDs)
				}
				for _, g := range strings.Split(b.group, "|") {
					grouped = grouped || c.Class == "unexplained:"+g
				}
			}
			if !grouped {
				t.Errorf("no cause unexplained:%s", b.group)
			}
			if len(rep.Causes) > 2 {
				t.Errorf("%d causes: one bug must come out as one cause, two at most", len(rep.Causes))
			}
			for _, r := range rep.Results {
				if r.Status == conformance.StatusFail {
					t.Logf("failed %s: %.200s", r.ID, r.Reason)
				}
			}
		})
	}
}
