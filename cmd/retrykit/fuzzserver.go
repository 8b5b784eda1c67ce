package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/retrykit/retrykit/conformance/live"
)

// serverFuzz is the flags of "retrykit fuzz --server URL".
type serverFuzz struct {
	url, seed, out, replay string
	jobs                   int
	budget, timeout, late  time.Duration
	all                    bool
	// formats are the reports to write, each to outputs[i], the last to
	// standard output when outputs has one fewer; command is the command
	// line, for the HTML report.
	formats, outputs []string
	command          string
}

// serverFuzzReport is the JSON report of a fuzz --server run.
type serverFuzzReport struct {
	Server   string  `json:"server"`
	Seed     uint64  `json:"seed"`
	Jobs     int     `json:"jobs"`
	MaxJobs  int     `json:"max_jobs"`
	Seconds  float64 `json:"seconds"`
	JobsPerS float64 `json:"jobs_per_second"`
	// LateBound is --late-bound, in seconds.
	LateBound    float64          `json:"late_bound_seconds"`
	Stopped      string           `json:"stopped,omitempty"`
	Inconclusive int              `json:"inconclusive"`
	Reasons      []string         `json:"inconclusive_reasons,omitempty"`
	Reobserved   int              `json:"reobserved"`
	Shrinks      int              `json:"shrink_replays"`
	Cleanup      string           `json:"cleanup,omitempty"`
	Cases        []*live.FuzzCase `json:"disagreements"`
	Written      []string         `json:"written,omitempty"`
	// caseFiles holds, per case, the file it was written to ("": none).
	caseFiles []string
}

// runServerFuzz is "retrykit fuzz --server URL": live.FuzzServer bounded
// by jobs and budget, each answer compared with the reference executor run
// in process, or live.ReplayCase of one case file. Exit status: 0 no
// disagreement (inconclusive cases are counted, not failed); 1 a
// disagreement (written to out/fuzz-server-case.json when out is set); 2
// bad usage, a server that cannot be reached, or a replay that could not
// observe the case in time.
func runServerFuzz(f serverFuzz, stdout, stderr io.Writer) int {
	ctx := context.Background()
	opts := []live.Option{live.WithTimeout(f.timeout), live.WithLateBound(f.late), live.WithFuzzAll(f.all)}
	if f.replay != "" {
		return replayServerCase(ctx, f, opts, stdout, stderr)
	}
	seed, msg := parseSeed(f.seed)
	if msg != "" {
		fmt.Fprintf(stderr, "retrykit fuzz: %s\n", msg)
		return 2
	}
	res, err := live.FuzzServer(ctx, f.url, f.jobs, seed, f.budget, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fuzz: %v\n", err)
		return 2
	}
	rep := serverFuzzReport{Server: f.url, Seed: seed, Jobs: res.Jobs, MaxJobs: f.jobs, Seconds: res.Elapsed.Seconds(),
		LateBound: f.late.Seconds(), Stopped: res.Stopped, Inconclusive: res.Inconclusive, Reasons: res.Reasons,
		Reobserved: res.Reobserved, Shrinks: res.Shrinks, Cleanup: res.Left, Cases: []*live.FuzzCase{}}
	if res.Elapsed > 0 {
		rep.JobsPerS = float64(res.Jobs) / res.Elapsed.Seconds()
	}
	if res.Found != nil {
		rep.Cases = append([]*live.FuzzCase{res.Found}, res.More...)
	}
	rep.caseFiles = make([]string, len(rep.Cases))
	var text strings.Builder
	fmt.Fprintf(&text, "fuzz --server %s: %d jobs (at most %d) in %v, %.1f jobs/s, seed %d, late bound %v; oracle: the reference executor, in process\n",
		f.url, res.Jobs, f.jobs, res.Elapsed.Round(time.Millisecond), rep.JobsPerS, seed, f.late)
	if res.Stopped != "" {
		fmt.Fprintf(&text, "stopped early: %s\n", res.Stopped)
	}
	if res.Left != "" {
		fmt.Fprintln(&text, res.Left)
	}
	if res.Inconclusive > 0 || res.Reobserved > 0 {
		fmt.Fprintf(&text, "inconclusive: %d cases could not be observed in time, even when played again (%d plays repeated in all); neither agreement nor disagreement:\n", res.Inconclusive, res.Reobserved)
		for _, r := range res.Reasons {
			fmt.Fprintf(&text, "  %s\n", r)
		}
	}
	if len(rep.Cases) == 0 {
		fmt.Fprintln(&text, "no disagreement with the reference executor")
	} else {
		fmt.Fprintf(&text, "%d disagreements, shrunk in %d replays in all\n", len(rep.Cases), res.Shrinks)
	}
	code := 0
	for i, c := range rep.Cases {
		code = 1
		fmt.Fprintf(&text, "disagreement %d, %s, at delivery %d:\n  %s\n", i+1, c.Kind, c.Step, c.Got)
		b, _ := json.MarshalIndent(c, "", "  ")
		fmt.Fprintf(&text, "case:\n%s\n", b)
		if f.out == "" {
			continue
		}
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			// the report below still prints every case
			fmt.Fprintf(stderr, "retrykit fuzz: --out: %v\n", err)
			continue
		}
		name := "fuzz-server-case.json"
		if i > 0 {
			name = fmt.Sprintf("fuzz-server-case-%d.json", i+1)
		}
		file := filepath.Join(f.out, name)
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "retrykit fuzz: --out: %v\n", err)
			continue
		}
		rep.Written = append(rep.Written, file)
		rep.caseFiles[i] = file
		fmt.Fprintf(&text, "written to %s; replay: retrykit fuzz --server URL --replay %s\n", file, file)
	}
	for i, format := range f.formats {
		write := func(w io.Writer) error {
			switch format {
			case "json":
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			case "html":
				return writeServerFuzzHTML(w, &rep, f)
			}
			_, err := io.WriteString(w, text.String())
			return err
		}
		var err error
		if i < len(f.outputs) {
			err = writeFile(f.outputs[i], write)
		} else {
			err = write(stdout)
		}
		if err != nil {
			fmt.Fprintf(stderr, "retrykit fuzz: writing the %s report: %v\n", format, err)
			code = 2
		}
	}
	return code
}

// replayServerCase is "retrykit fuzz --server URL --replay FILE".
func replayServerCase(ctx context.Context, f serverFuzz, opts []live.Option, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(f.replay)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fuzz: --replay: %v\n", err)
		return 2
	}
	var c live.FuzzCase
	if err := json.Unmarshal(data, &c); err != nil || c.Policy == nil || len(c.Failures) == 0 || len(c.Failures) > live.MaxCaseFailures {
		fmt.Fprintf(stderr, "retrykit fuzz: --replay %s: not a case file (a policy object and 1 to %d failures required): %v\n", f.replay, live.MaxCaseFailures, err)
		return 2
	}
	// The replay is bounded by --time as a run is.
	rctx, cancel := context.WithTimeout(ctx, f.budget)
	defer cancel()
	bad, left, err := live.ReplayCase(rctx, f.url, &c, opts...)
	if left != "" {
		fmt.Fprintln(stdout, left)
	}
	switch {
	case errors.Is(err, live.ErrInconclusive):
		fmt.Fprintf(stdout, "inconclusive: the case could not be observed in time (late bound %v), not a disagreement: %v\n", f.late, err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "retrykit fuzz: %v\n", err)
		return 2
	case bad:
		fmt.Fprintf(stdout, "still disagrees at delivery %d, %s: %s\n", c.Step, c.Kind, c.Got)
		return 1
	}
	fmt.Fprintln(stdout, "the server now agrees with the reference executor on this case")
	return 0
}
