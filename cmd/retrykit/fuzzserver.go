package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/retrykit/retrykit/conformance/live"
)

// runServerFuzz is "retrykit fuzz --server URL": live.FuzzServer bounded
// by jobs and budget, each answer compared with the reference executor run
// in process, or live.ReplayCase of one case file. Exit status: 0 no
// disagreement; 1 a disagreement (written to out/fuzz-server-case.json
// when out is set); 2 bad usage or a server that cannot be reached.
func runServerFuzz(url string, jobs int, seedStr string, budget, timeout time.Duration, out, replay string, all bool, stdout, stderr io.Writer) int {
	ctx := context.Background()
	opts := []live.Option{live.WithTimeout(timeout), live.WithFuzzAll(all)}
	if replay != "" {
		data, err := os.ReadFile(replay)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit fuzz: --replay: %v\n", err)
			return 2
		}
		var c live.FuzzCase
		if err := json.Unmarshal(data, &c); err != nil || c.Policy == nil || len(c.Failures) == 0 || len(c.Failures) > live.MaxCaseFailures {
			fmt.Fprintf(stderr, "retrykit fuzz: --replay %s: not a case file (a policy object and 1 to %d failures required): %v\n", replay, live.MaxCaseFailures, err)
			return 2
		}
		// The replay is bounded by --time as a run is.
		rctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		bad, left, err := live.ReplayCase(rctx, url, &c, opts...)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit fuzz: %v\n", err)
			return 2
		}
		if left != "" {
			fmt.Fprintln(stdout, left)
		}
		if bad {
			fmt.Fprintf(stdout, "still disagrees at delivery %d: %s\n", c.Step, c.Got)
			return 1
		}
		fmt.Fprintln(stdout, "the server now agrees with the reference executor on this case")
		return 0
	}
	seed, msg := parseSeed(seedStr)
	if msg != "" {
		fmt.Fprintf(stderr, "retrykit fuzz: %s\n", msg)
		return 2
	}
	res, err := live.FuzzServer(ctx, url, jobs, seed, budget, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fuzz: %v\n", err)
		return 2
	}
	rate := 0.0
	if res.Elapsed > 0 {
		rate = float64(res.Jobs) / res.Elapsed.Seconds()
	}
	fmt.Fprintf(stdout, "fuzz --server %s: %d jobs (at most %d) in %v, %.1f jobs/s, seed %d; oracle: the reference executor, in process\n",
		url, res.Jobs, jobs, res.Elapsed.Round(time.Millisecond), rate, seed)
	if res.Stopped != "" {
		fmt.Fprintf(stdout, "stopped early: %s\n", res.Stopped)
	}
	if res.Left != "" {
		fmt.Fprintln(stdout, res.Left)
	}
	if res.Found == nil {
		fmt.Fprintln(stdout, "no disagreement with the reference executor")
		return 0
	}
	fmt.Fprintf(stdout, "%d disagreements, shrunk in %d replays in all\n", 1+len(res.More), res.Shrinks)
	for i, c := range append([]*live.FuzzCase{res.Found}, res.More...) {
		fmt.Fprintf(stdout, "disagreement %d, %s, at delivery %d:\n  %s\n", i+1, c.Kind, c.Step, c.Got)
		b, _ := json.MarshalIndent(c, "", "  ")
		fmt.Fprintf(stdout, "case:\n%s\n", b)
		if out == "" {
			continue
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			fmt.Fprintf(stderr, "retrykit fuzz: --out: %v\n", err)
			return 1
		}
		name := "fuzz-server-case.json"
		if i > 0 {
			name = fmt.Sprintf("fuzz-server-case-%d.json", i+1)
		}
		f := filepath.Join(out, name)
		if err := os.WriteFile(f, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "retrykit fuzz: --out: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "written to %s; replay: retrykit fuzz --server URL --replay %s\n", f, f)
	}
	return 1
}
