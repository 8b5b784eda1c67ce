package main

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policytest"
)

func init() {
	commands["fuzz"] = command{
		summary: "differential property-based fuzzing of an adapter (--impl) against the reference; shrinks and writes disagreements as vectors",
		run:     runFuzz,
	}
}

// Ranges of the numeric flags of fuzz.
const (
	fuzzMaxCases    = 100_000_000
	fuzzMaxParallel = 1024
	// fuzzDefaultTime is the default --time: an unattended run ends in
	// about two minutes whatever the adapter's speed (plus at most one
	// --timeout for requests in flight).
	fuzzDefaultTime = 2 * time.Minute
)

const fuzzUsage = `usage: retrykit fuzz --impl CMD [flags]
       retrykit fuzz --server URL [--jobs N] [--seed S] [--time D] [--late-bound D] [--out DIR] [--all] [--format FORMAT [-o FILE]]...
       retrykit fuzz --server URL --replay FILE

With --server, a live OJS server is fuzzed instead of an adapter, against
the reference executor (package executor, which "retrykit serve" puts on
HTTP) run in process on a manual clock. Each job has a generated policy
(every strategy, polynomial included; jitter; caps; non_retryable_errors
with exact and prefix patterns; discard or dead_letter; fields left out,
merged over the defaults; now and then the binding's initial_interval_ms,
max_interval_ms and backoff_type) and is failed delivery by delivery with
random error types and handler codes. The same job, its policy read as
serve reads a PUSH, is played on the executor, and every answer is
compared: the PUSH accepted or refused, each FETCH's attempt, each FAIL
answer's state, attempt, max_attempts and next_attempt_at (the delay
against the executor's range for that attempt, from the lowest to the
highest jitter draw), dead letter or not, and the dead letter's error
history. The first disagreement is shrunk by replaying smaller cases
(failures dropped, fewer attempts, fields dropped or made plain, plainer
failures) and printed; --out DIR writes it as DIR/fuzz-server-case.json,
which --replay FILE plays again (a jittered case up to 16 times, until
it disagrees). Each disagreement says its kind (push, fetch-attempt,
attempt, max_attempts, history; a state or dead letter by the deviation
seen and the rule involved: state:retried-not-discarded(DISCARD),
state:ended-not-retried(non_retryable_errors),
dead-letter:dead-lettered-not-discarded(on_exhaustion), ...; a delay by
the deviation seen: delay:above-cap, delay:initial, delay:STRATEGY);
with --all the run goes on with the jobs left, shrinking one case of
each further kind, the kinds found no longer judged (so a server that
counts attempts from 0 still has its delays compared). At most --jobs
jobs are pushed (shrinking included)
within --time; at the end the run cancels its pending jobs, deletes its
dead letters, and says what the server still holds and what it could
not remove. A disagreement is claimed only on an answer received: a case
that cannot be observed in time (a retry not fetchable within
--late-bound after its next_attempt_at, a request timed out, a FAIL
refused with 409 after a lapsed reservation) is played again, at most
twice, then counted inconclusive with its reason; the run goes on.
--format json writes the report for tools, --format html one page to read
(the disagreements, each case and the commands that reproduce it); each
format may go to its own -o, all of them in one run.

Generates requests for every op the adapter lists in its hello
(parse_duration, validate, delay, match, decide, and scenario: random job
lifecycles compared step by step with the reference executor), biased
toward the edges of the OJS rules, sends them to the adapter
(conformance/PROTOCOL.md) and compares each answer with retrykit's
reference, as "retrykit conformance" compares vector answers. Adapters
with opaque jitter get bounds checks. The first disagreement of each op is
shrunk by rapid to a minimal request and printed side by side (sent,
expected, got) with the seed and command that reproduce it; --out DIR also
writes it as a vector file that "retrykit conformance --impl CMD --vectors
DIR" runs as is, and a scenario disagreement as a scenario file in
DIR/scenarios (expected observations from the reference executor) that
"retrykit conformance --impl CMD --scenarios-dir DIR/scenarios" runs as is.
Each disagreement names its cause: the bug model that reproduces the
answer, its fix and the rule broken. Requests carrying a flag the
implementation does not claim (its hello's unclaimed_flags, or
--unclaimed, as for conformance) are not sent.

The run is bounded by --time (default 2m): each op gets an equal share of
the time left when it starts and sends no request after it; shrinking fits
in the time left. An op cut short says how many of its cases were sent, and
the verdict says that the run stopped on its budget. Progress goes to
standard error every 2 seconds (--quiet: none). An interrupt (Ctrl-C) or
SIGTERM stops it the same way, with the report (exit status 130 unless
something was found); a second one quits at once.

Exit status: 0 no disagreement; 1 a disagreement, or the adapter failed
(crash, timeout, malformed answer) on a request; 2 bad usage, or an adapter
that cannot start or answer hello.

flags:
`

func runFuzz(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), fuzzUsage)
		writeFlags(fset.Output(), fset)
	}
	if helpRequested(args) {
		fset.SetOutput(stdout)
	}
	var (
		impl     = fset.String("impl", "", "adapter command line, e.g. \"python3 conformance/adapters/python/adapter.py\" (required)")
		cases    = fset.Int("cases", 10000, fmt.Sprintf("requests to send in all, spread over the ops (1..%d)", fuzzMaxCases))
		seedStr  = fset.String("seed", "", "rapid seed, 1..2^64-1 (default: a random one, printed)")
		out      = fset.String("out", "", "write each disagreement as a vector file DIR/fuzz-KIND.json (scenarios: DIR/scenarios/fuzz-scenario.json)")
		parallel = fset.Int("parallel", 64, fmt.Sprintf("requests in flight at once, pipelined over the adapter (1..%d)", fuzzMaxParallel))
		timeout  = fset.Duration("timeout", 5*time.Second, "per-request timeout (1ms..1h)")
		budget   = fset.Duration("time", fuzzDefaultTime, "total time budget (1s..24h): each op gets an equal share of the time left; the report then says how many cases were sent")
		quiet    = fset.Bool("quiet", false, "no progress lines on standard error")
		server   = fset.String("server", "", "fuzz a live OJS server at this base URL instead of an adapter: generated policies and failure sequences, every answer against the reference executor run in process")
		jobs     = fset.Int("jobs", 50, "--server: jobs to push at most, shrinking included (1..10000)")
		replayF  = fset.String("replay", "", "--server: replay one case file written by --out instead of fuzzing")
		all      = fset.Bool("all", false, "--server: go on after the first disagreement; each further kind is shrunk and written too (DIR/fuzz-server-case-N.json), the kinds found no longer judged")
		late     = fset.Duration("late-bound", live.DefaultLateBound, "--server: how long after its next_attempt_at a retry may become fetchable, above 0 and at most 10m; a case whose retry comes later, even when played again, is inconclusive")
		formats  repeatFlag
		outputs  repeatFlag
		ops, unc listFlag
	)
	fset.Var(&formats, "format", "report format: text, json or html (repeatable, each with its own -o; default text)")
	fset.Var(&outputs, "o", "write the report to this file instead of standard output (repeatable, one per --format, in order)")
	fset.Var(&ops, "ops", "ops to fuzz, comma-separated (default: every op the adapter lists): "+strings.Join(policytest.Ops(), ", "))
	fset.Var(&unc, "unclaimed", "flags the implementation does not claim, as for conformance; requests carrying one are not sent: "+strings.Join(fuzzRequestFlags, ", "))
	if err := parseTerse(fset, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "retrykit fuzz: %s\n", msg)
		return 2
	}
	switch {
	case fset.NArg() > 0:
		return usageErr(fmt.Sprintf("unexpected argument %q", fset.Arg(0)))
	case *server != "" && *impl != "":
		return usageErr("--server and --impl: give one")
	case *server == "" && strings.TrimSpace(*impl) == "":
		return usageErr("--impl: an adapter command line is required (or --server URL)")
	case *server != "" && (*jobs < 1 || *jobs > 10000):
		return usageErr(fmt.Sprintf("--jobs: must be in 1..10000, got %d", *jobs))
	case *cases < 1 || *cases > fuzzMaxCases:
		return usageErr(fmt.Sprintf("--cases: must be in 1..%d, got %d", fuzzMaxCases, *cases))
	case *parallel < 1 || *parallel > fuzzMaxParallel:
		return usageErr(fmt.Sprintf("--parallel: must be in 1..%d, got %d", fuzzMaxParallel, *parallel))
	case *timeout < time.Millisecond || *timeout > time.Hour:
		return usageErr(fmt.Sprintf("--timeout: must be in 1ms..1h, got %v", *timeout))
	case *budget < time.Second || *budget > 24*time.Hour:
		return usageErr(fmt.Sprintf("--time: must be in 1s..24h, got %v", *budget))
	}
	if *server != "" {
		if *late <= 0 || *late > live.MaxLateBound {
			return usageErr(fmt.Sprintf("--late-bound: must be above 0 and at most %v, got %v", live.MaxLateBound, *late))
		}
		if len(formats) == 0 {
			formats = repeatFlag{"text"}
		}
		for _, f := range formats {
			if f != "text" && f != "json" && f != "html" {
				return usageErr(fmt.Sprintf("--format: --server writes text, json or html, got %q", f))
			}
		}
		if *replayF != "" && (len(formats) > 1 || len(outputs) > 0 || formats[0] != "text") {
			return usageErr("--format, -o: --replay prints its verdict, as text, to standard output")
		}
		if msg := pairOutputs(formats, outputs); msg != "" {
			return usageErr(msg)
		}
		for _, o := range outputs {
			if msg := checkOutputs(o, ""); msg != "" {
				return usageErr(msg)
			}
		}
		return runServerFuzz(serverFuzz{url: *server, jobs: *jobs, seed: *seedStr, budget: *budget, timeout: *timeout,
			late: *late, out: *out, replay: *replayF, all: *all, formats: formats, outputs: outputs,
			command: fuzzCommandLine(args)}, stdout, stderr)
	}
	if len(formats) == 0 {
		formats = repeatFlag{"text"}
	}
	for _, f := range formats {
		if f != "text" && f != "json" && f != "html" {
			return usageErr(fmt.Sprintf("--format: want text, json or html, got %q", f))
		}
	}
	if msg := pairOutputs(formats, outputs); msg != "" {
		return usageErr(msg)
	}
	for _, o := range outputs {
		if msg := checkOutputs(o, ""); msg != "" {
			return usageErr(msg)
		}
	}
	// textOut: the text report goes to standard output, which then shows
	// the random seed before the run.
	textOut := len(outputs) < len(formats) && formats[len(formats)-1] == "text"
	if *out != "" {
		// Checked before the run, not after it: a run can take minutes,
		// and its findings would be lost to a bad --out.
		if fi, err := os.Stat(*out); err == nil && !fi.IsDir() {
			return usageErr(fmt.Sprintf("--out: %s is not a directory", *out))
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return usageErr(fmt.Sprintf("--out: %v", err))
		}
	}
	for _, op := range ops {
		if !isFuzzOp(op) {
			return usageErr(fmt.Sprintf("--ops: unknown op %q (want some of %s)", op, strings.Join(policytest.Ops(), ", ")))
		}
	}
	if msg := unknownFuzzUnclaimed(unc); msg != "" {
		return usageErr(msg)
	}
	seed, msg := parseSeed(*seedStr)
	if msg != "" {
		return usageErr(msg)
	}
	argv, err := splitCommand(*impl)
	if err != nil || len(argv) == 0 {
		return usageErr(fmt.Sprintf("--impl: cannot split %q into a command line", *impl))
	}
	// A request waits at most a third of the budget, so that a silent
	// adapter is named within --time of falling silent (on standard error
	// as it happens, and as an adapter failure in the report): the first
	// timeout, with many requests unanswered, may blame none, and the
	// one-at-a-time replay after it finds the request it hangs on.
	var alog io.Writer
	stderr, alog = adapterLog(stderr, "retrykit fuzz: ")
	p := protocol.NewProcess(argv, protocol.WithTimeout(min(*timeout, max(*budget/3, time.Second))), protocol.WithLog(alog))
	defer p.Close()
	ctx := context.Background()
	if _, err := p.Hello(ctx); err != nil {
		fmt.Fprintf(stderr, "retrykit fuzz: --impl %q: the adapter did not start: %v\n", *impl, err)
		if tail := strings.TrimRight(p.Stderr(), "\n"); tail != "" {
			fmt.Fprintf(stderr, "adapter standard error:\n%s\n", indent(tail))
		}
		return 2
	}
	if *seedStr == "" && textOut {
		fmt.Fprintf(stdout, "seed %d (random; --seed %d repeats this run)\n", seed, seed)
	}
	cfg := fuzz.Config{Cases: *cases, Seed: seed, Ops: ops, Parallel: *parallel, Time: *budget, Unclaimed: unc}
	if !*quiet {
		cfg.Progress = stderr
	}
	// An interrupt (or SIGTERM) ends the run as the budget would: the
	// report of what was covered is still written. A second one quits.
	stop, sigs := make(chan struct{}), make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	runDone := make(chan struct{})
	defer close(runDone)
	go func() {
		select {
		case <-sigs:
		case <-runDone:
			return
		}
		fmt.Fprintln(stderr, "retrykit fuzz: interrupted: finishing the requests in flight, then the report (interrupt again to quit at once)")
		close(stop)
		select {
		case <-sigs:
			os.Exit(130)
		case <-runDone:
		}
	}()
	cfg.Stop = stop
	res, err := fuzz.Run(ctx, p, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fuzz: %v\n", err)
		return 2
	}
	markSilence(res, p.Timeouts())
	repro := func(op string) string {
		return fmt.Sprintf("%s fuzz --impl %s --seed %d --ops %s --parallel %d --cases %d%s",
			self, shellQuote(*impl), seed, op, *parallel, *cases, unclaimedArgs(unc))
	}
	vectors := map[string][2]string{}
	var writeErrs []string
	if *out != "" {
		opaque := res.Hello.Jitter == protocol.JitterOpaque
		for _, o := range res.Ops {
			if o.Disagreement == nil {
				continue
			}
			var path, id string
			var err error
			if o.Op == protocol.OpScenario {
				// A scenario file beside vector files would stop either
				// directory from loading: scenarios go one level down, as
				// "conformance export" lays them out.
				path, id, err = fuzz.WriteScenario(filepath.Join(*out, "scenarios"), o.Disagreement, seed)
			} else {
				path, id, err = fuzz.WriteVector(*out, o.Disagreement, causeOf(o, opaque), seed, opaque)
			}
			if err != nil {
				writeErrs = append(writeErrs, fmt.Sprintf("--out: %s: %v", o.Op, err))
				continue
			}
			vectors[o.Op] = [2]string{path, id}
		}
	}
	replay := func(id, dir string) string {
		return fmt.Sprintf("%s conformance --impl %s %s --run %s --jitter-samples 0", self, shellQuote(*impl), dir, id)
	}
	for i, f := range formats {
		write := func(w io.Writer) error {
			switch f {
			case "json":
				writeFuzzJSON(w, res, repro, vectors)
			case "html":
				return writeFuzzHTML(w, res, fuzzCommandLine(args), repro, replay, vectors)
			default:
				writeFuzzText(w, res, repro, replay, vectors)
			}
			return nil
		}
		var err error
		if i < len(outputs) {
			err = writeFile(outputs[i], write)
		} else {
			err = write(stdout)
		}
		if err != nil {
			writeErrs = append(writeErrs, fmt.Sprintf("writing the %s report: %v", f, err))
		}
	}
	for _, e := range writeErrs {
		fmt.Fprintf(stderr, "retrykit fuzz: %s\n", e)
	}
	if len(writeErrs) > 0 {
		return 2
	}
	if !res.OK() {
		return 1
	}
	if res.Stopped {
		return 130 // interrupted: the report covers part of the run
	}
	return 0
}

func isFuzzOp(op string) bool {
	for _, o := range policytest.Ops() {
		if o == op {
			return true
		}
	}
	return false
}

func writeFuzzText(w io.Writer, res *fuzz.Result, repro func(string) string, replay func(id, dirFlags string) string, vectors map[string][2]string) {
	h := res.Hello
	fmt.Fprintf(w, "fuzzing %s (jitter %s, resolution %dns) against the retrykit reference, seed %d\n",
		strings.TrimSpace(h.Implementation+" "+h.Version), h.Jitter, h.ResolutionNS, res.Seed)
	total := 0
	for _, o := range res.Ops {
		total += o.Cases
		status := "ok"
		switch {
		case o.Disagreement != nil:
			status = fmt.Sprintf("DISAGREEMENT (shrunk in %v)", o.Shrink.Round(time.Millisecond))
		case o.Failure != nil:
			status = "ADAPTER FAILURE"
		}
		skipped := ""
		if o.Skipped > 0 {
			skipped = fmt.Sprintf(", %d not sent (unclaimed flags)", o.Skipped)
		}
		if o.Unsupported > 0 {
			skipped += fmt.Sprintf(", %d answered unsupported", o.Unsupported)
		}
		if o.OutOfTime {
			skipped += fmt.Sprintf(" of %d (out of time)", o.Planned)
		}
		fmt.Fprintf(w, "  %-15s %7d cases%s  %s\n", o.Op, o.Cases, skipped, status)
	}
	for _, o := range res.Ops {
		switch {
		case o.Disagreement != nil:
			d := o.Disagreement
			fmt.Fprintf(w, "\n%s: minimal disagreement: %s\n", o.Op, d.Reason)
			fmt.Fprintf(w, "  sent:     %s\n", d.Request.AppendJSON(nil))
			fmt.Fprintf(w, "  expected: %s\n", d.Want.AppendJSON(nil))
			fmt.Fprintf(w, "  got:      %s\n", d.Got.AppendJSON(nil))
			writeFuzzCause(w, causeOf(o, h.Jitter == protocol.JitterOpaque), repro(o.Op))
			fmt.Fprintf(w, "  seed:     %d\n  repeat:   %s\n", res.Seed, repro(o.Op))
			if v, ok := vectors[o.Op]; ok && o.Op == protocol.OpScenario {
				fmt.Fprintf(w, "  scenario: %s in %s\n  replay:   %s\n", v[1], v[0], replay(v[1], "--scenarios-dir "+shellQuote(filepath.Dir(v[0]))))
			} else if ok {
				fmt.Fprintf(w, "  vector:   %s in %s\n  replay:   %s\n", v[1], v[0], replay(v[1], "--vectors "+shellQuote(filepath.Dir(v[0]))+" --scenarios=false"))
			}
		case o.Failure != nil:
			fmt.Fprintf(w, "\n%s: the adapter failed: %v\n", o.Op, o.Failure)
			if o.FailedRequest != nil {
				fmt.Fprintf(w, "  sent:     %s\n", o.FailedRequest.AppendJSON(nil))
			}
			fmt.Fprintf(w, "  seed:     %d\n  repeat:   %s\n", res.Seed, repro(o.Op))
			var ae *protocol.AdapterError
			if errors.As(o.Failure, &ae) && strings.TrimSpace(ae.Stderr) != "" {
				fmt.Fprintf(w, "  adapter standard error:\n%s\n", indent(strings.TrimRight(ae.Stderr, "\n")))
			}
		}
	}
	verdict := "PASS: no disagreement"
	if !res.OK() {
		verdict = "FAIL"
	}
	if res.OutOfTime || res.Stopped {
		planned := 0
		for _, o := range res.Ops {
			planned += o.Planned
		}
		why := "the --time budget"
		if res.Stopped {
			why = "an interrupt"
		}
		fmt.Fprintf(w, "\nstopped by %s: %d of %d cases sent (ops marked \"out of time\" were cut short)\n", why, total, planned)
	}
	fmt.Fprintf(w, "\n%s  %d cases in %v (%.0f cases/s)\n", verdict, total, res.Elapsed.Round(time.Millisecond),
		float64(total)/max(res.Elapsed.Seconds(), 1e-9))
}

type fuzzJSONOp struct {
	Op           string          `json:"op"`
	Planned      int             `json:"planned"`
	OutOfTime    bool            `json:"out_of_time"`
	Cases        int             `json:"cases"`
	Skipped      int             `json:"skipped"`
	Unsupported  int             `json:"unsupported"`
	Status       string          `json:"status"` // "ok", "disagreement" or "adapter_failure"
	Sent         json.RawMessage `json:"sent,omitempty"`
	Expected     json.RawMessage `json:"expected,omitempty"`
	Got          json.RawMessage `json:"got,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	Flags        []string        `json:"flags,omitempty"`
	Cause        string          `json:"cause,omitempty"`       // "bug:no-post-jitter-cap": the bug model that reproduces the answer
	Fix          string          `json:"fix,omitempty"`         // that model's fix
	Requirement  string          `json:"requirement,omitempty"` // the rule broken, "RET-06"
	Unclaim      string          `json:"unclaim,omitempty"`     // the flag to declare unclaimed instead of a fix (a missing extension)
	ShrinkMS     float64         `json:"shrink_ms,omitempty"`
	Repeat       string          `json:"repeat,omitempty"`
	VectorFile   string          `json:"vector_file,omitempty"` // the vector file, or for op scenario the scenario file
	VectorID     string          `json:"vector_id,omitempty"`
	AdapterError string          `json:"adapter_error,omitempty"`
}

func writeFuzzJSON(w io.Writer, res *fuzz.Result, repro func(string) string, vectors map[string][2]string) {
	doc := struct {
		Implementation string       `json:"implementation"`
		Version        string       `json:"version"`
		Jitter         string       `json:"jitter"`
		Seed           uint64       `json:"seed"`
		OK             bool         `json:"ok"`
		OutOfTime      bool         `json:"out_of_time"`
		Interrupted    bool         `json:"interrupted"`
		ElapsedMS      float64      `json:"elapsed_ms"`
		Ops            []fuzzJSONOp `json:"ops"`
	}{res.Hello.Implementation, res.Hello.Version, res.Hello.Jitter, res.Seed, res.OK(), res.OutOfTime, res.Stopped,
		float64(res.Elapsed.Microseconds()) / 1000, nil}
	for _, o := range res.Ops {
		j := fuzzJSONOp{Op: o.Op, Planned: o.Planned, OutOfTime: o.OutOfTime, Cases: o.Cases, Skipped: o.Skipped, Unsupported: o.Unsupported, Status: "ok"}
		switch {
		case o.Disagreement != nil:
			d := o.Disagreement
			c := causeOf(o, res.Hello.Jitter == protocol.JitterOpaque)
			j.Status, j.Reason, j.Flags, j.Requirement = "disagreement", d.Reason, c.Flags, c.Requirement
			if c.Found() {
				j.Cause, j.Fix, j.Unclaim = "bug:"+c.Model.Name, c.Model.Fix, c.Model.Unclaim()
			}
			j.Sent, j.Expected, j.Got = d.Request.AppendJSON(nil), d.Want.AppendJSON(nil), d.Got.AppendJSON(nil)
			j.ShrinkMS = float64(o.Shrink.Microseconds()) / 1000
			j.Repeat = repro(o.Op)
			j.VectorFile, j.VectorID = vectors[o.Op][0], vectors[o.Op][1]
		case o.Failure != nil:
			j.Status, j.AdapterError, j.Repeat = "adapter_failure", o.Failure.Error(), repro(o.Op)
			if o.FailedRequest != nil {
				j.Sent = o.FailedRequest.AppendJSON(nil)
			}
		}
		doc.Ops = append(doc.Ops, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(doc)
}

// markSilence makes a run in which the adapter timed out an adapter
// failure even when no request could be blamed before the run ended (the
// budget ran out during the one-at-a-time replay that finds the request
// it hangs on): a silent adapter is never a PASS. The failure goes to the
// first op cut short by the budget, else the first op that sent a case.
func markSilence(res *fuzz.Result, timeouts int) {
	if timeouts == 0 || !res.OK() || len(res.Ops) == 0 {
		return
	}
	i := 0
	for j, o := range res.Ops {
		if o.OutOfTime {
			i = j
			break
		}
		if o.Cases > 0 && res.Ops[i].Cases == 0 {
			i = j
		}
	}
	res.Ops[i].Failure = fmt.Errorf("fuzz: the adapter stopped answering: %d adapter process(es) ended by a request timeout (each named on standard error), and the run ended before the request it hangs on was found", timeouts)
}

// causeOf is the cause of o's disagreement: the one the run confirmed
// against the implementation, or Explain's for a result built without one.
func causeOf(o fuzz.OpResult, opaque bool) fuzz.Cause {
	if o.Cause != nil {
		return *o.Cause
	}
	return fuzz.Explain(o.Disagreement, opaque)
}

// parseSeed reads --seed, or draws a random seed for ""; msg says what is
// wrong with the flag.
func parseSeed(str string) (seed uint64, msg string) {
	if str != "" {
		s, err := strconv.ParseUint(str, 10, 64)
		if err != nil || s == 0 {
			return 0, fmt.Sprintf("--seed: must be an integer in 1..2^64-1, got %q", str)
		}
		return s, ""
	}
	var b [8]byte
	for seed == 0 {
		_, _ = crand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	return seed, ""
}
