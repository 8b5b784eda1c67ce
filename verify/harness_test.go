package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/profile"
	"github.com/retrykit/retrykit/verify"
)

const vectorsDir = "../testdata/profiles"

// installHint is what to run when a real implementation is missing.
const installHint = "run `bash verify/install.sh` from the repository root (as root: apt-get installs python3-celery, python3-botocore, ruby-sidekiq, ruby-activejob; npm installs bullmq, p-retry, bee-queue, exponential-backoff, pg-boss and graphile-worker; PostgreSQL comes from Debian's postgresql, or set RETRYKIT_TEST_DATABASE_URL)"

// maxDraw is the largest float64 below 1: the top of every draw range.
var maxDraw = math.Nextafter(1, 0)

// drawGrid is the set of draws every injected implementation is evaluated at,
// beside the vectors' own draws: both ends and points in between.
var drawGrid = []float64{0, 1e-9, 0.1, 0.2, 0.25, 1.0 / 3, 0.5, 0.6180339887, 0.75, 0.9, 0.9999999999, maxDraw}

// missing reports a real implementation that cannot be found: a failure when
// CI=true (CI must prove the profiles), a skip with the install command
// otherwise.
func missing(t *testing.T, what string, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not available (CI=true, so this fails): %s; %s", what, why, installHint)
	}
	t.Skipf("%s not available: %s; %s", what, why, installHint)
}

func load(t *testing.T, profile string) *verify.File {
	t.Helper()
	f, err := verify.Load(vectorsDir, profile)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// vectorProfile is the profile that the named vector file's vectors are
// for: the bare profile (the system's own defaults), or the configured one
// the file's settings name.
func vectorProfile(t *testing.T, name string) profile.Profile {
	t.Helper()
	spec := load(t, name).Spec()
	p, err := profile.Parse(spec)
	if err != nil {
		t.Fatalf("package profile has no %q: %v", spec, err)
	}
	return p
}

// probe runs argv and reports whether it exits 0, with its combined output.
func probe(argv ...string) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	return err == nil, strings.TrimSpace(string(out))
}

// envelope is the answer every driver writes: which system and version ran,
// where its code was loaded from, and one result per case.
type envelope[R any] struct {
	System    string `json:"system"`
	Version   string `json:"version"`
	File      string `json:"file"`
	Algorithm string `json:"algorithm"`
	Results   []R    `json:"results"`
}

// kase is one request to a driver.
type kase struct {
	Op      string   `json:"op"`
	Attempt int      `json:"attempt,omitempty"`
	Rand    *float64 `json:"rand,omitempty"`
	// Retry is a configured job's retry option, for drivers that take one
	// (Sidekiq: an integer, true or false); nil leaves the default.
	Retry any `json:"retry,omitempty"`
	// Wait and Jitter are Active Job's retry_on wait (seconds) and jitter,
	// for the wait_delay and float_wait ops.
	Wait   *float64 `json:"wait,omitempty"`
	Jitter *float64 `json:"jitter,omitempty"`
	// Attempts and Cap are Active Job's retry_on attempts and the most runs
	// to make, for the attempts_runs op.
	Attempts *int `json:"attempts,omitempty"`
	Cap      int  `json:"cap,omitempty"`
}

func delayCase(attempt int, r float64) kase {
	return kase{Op: "delay", Attempt: attempt, Rand: &r}
}

// runDriver sends cases to the driver argv (run in dir) as one JSON request on
// stdin and decodes its one JSON answer from stdout.
func runDriver[R any](t *testing.T, dir string, argv []string, cases []kase) envelope[R] {
	t.Helper()
	return runDriverWith[R](t, dir, argv, cases, nil, nil)
}

// runDriverWith is [runDriver] with more request fields (a configured
// profile's options) and more environment variables.
func runDriverWith[R any](t *testing.T, dir string, argv []string, cases []kase, extra map[string]any, environ []string) envelope[R] {
	t.Helper()
	body := map[string]any{"cases": cases}
	for k, v := range extra {
		body[k] = v
	}
	req, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), environ...)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s", strings.Join(argv, " "), err, tail(stderr.String(), 4000))
	}
	var env envelope[R]
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("%s: answer is not JSON: %v\nstderr:\n%s", strings.Join(argv, " "), err, tail(stderr.String(), 4000))
	}
	if len(env.Results) != len(cases) {
		t.Fatalf("%s: %d results for %d cases", strings.Join(argv, " "), len(env.Results), len(cases))
	}
	return env
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// seconds converts a whole or fractional number of seconds, as a driver
// printed it, to nanoseconds: exact for integers, truncated toward zero for
// floats (the profiles' rounding rule), saturating at the largest Duration.
func seconds(t *testing.T, n json.Number) int64 {
	t.Helper()
	return scaled(t, n, 1e9)
}

// millis is [seconds] for milliseconds.
func millis(t *testing.T, n json.Number) int64 {
	t.Helper()
	return scaled(t, n, 1e6)
}

func scaled(t *testing.T, n json.Number, unit int64) int64 {
	t.Helper()
	if i, err := n.Int64(); err == nil {
		if i < 0 {
			t.Fatalf("negative delay %s", n)
		}
		if i > math.MaxInt64/unit {
			return math.MaxInt64
		}
		return i * unit
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || f < 0 {
		t.Fatalf("delay %q is not a non-negative number", n)
	}
	ns := f * float64(unit)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(ns)
}

// repoFile is a path inside the repository, from this module's directory.
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{".."}, parts...)...)
}
