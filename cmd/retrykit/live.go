package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/retrykit/retrykit/conformance/live"
)

const liveUsage = `usage: retrykit conformance --server URL [flags]

Checks the retry behaviour of a running OJS server over the HTTP binding, in
exact terms (package conformance/live): it pushes jobs with chosen policies
to queues unique to the run, fetches them, fails them with error types and
handler codes, and judges every answer and every delivery: state, attempt,
max_attempts, next_attempt_at against the policy's exact delay bounds on the
server's own clock, no retry fetchable early, exhaustion, non-retryable
matching, handler codes, error history, visibility timeouts, heartbeats,
dead letter retry. A full run takes a few seconds.

A retry fetchable after its time is a figure (promotion latency p50, p90,
p99, max, from the moment the FETCH answer arrived), not a failure, up to
--late-bound; one fetchable before it fails. A retry announced further away
than the late bound after the longest delay the checks wait for (2s) is not
awaited: its check fails at once, naming it. The whole run is bounded by
--time; the checks it cuts short are errors naming the budget.

Failures are attributed to server bug models that reproduce the answers
exactly (no defaults merge per field, regex, glob or message matching, no
cap after jitter, attempts from 0, an expired reservation not counted,
handler codes or on_exhaustion ignored, the dialect readings), each held
against the passes; a server that answers 5xx to everything is one cause.
Before the checks a dialect probe tells which interval form and error type
field the server reads; a run with flags that do not fit says so. After
them the run cancels its pending jobs, deletes its dead letters and says
what it left behind.

Every format from one run: --format may be repeated, each with its own -o
in the same order (the last format may go to standard output):
  --format text -o run.txt --format json -o run.json

Where the HTTP binding contradicts the retry spec (docs/decisions.md
RK-100..RK-103, RK-111..RK-115), flags choose the dialect the checker speaks:
  --error-type-field code    the error type in error.code, for servers that
                             follow the nack schema (no error.type)
  --interval-form ms         policies with initial_interval_ms and
                             max_interval_ms integers (the binding's examples)
  --strategy-field F         name the strategy in backoff_strategy or
                             backoff_type (openapi); default: no such field
  --nonretryable-discards    accept a plain discard of a non-retryable
                             failure under dead_letter (L1-RET-003)
The checks of the readings are at level RK, apart from the MUST score; the
report's figures say which reading the server follows.

Exit status: 0 when nothing failed or errored, 1 otherwise, 2 on bad usage
or a server that cannot be reached.

flags:
`

// serverRequested reports whether args select the live-server checker.
func serverRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--server" || a == "-server" || strings.HasPrefix(a, "--server=") || strings.HasPrefix(a, "-server=") {
			return true
		}
	}
	return false
}

func runLive(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("conformance --server", flag.ContinueOnError)
	fset.SetOutput(stderr)
	fset.Usage = func() {
		fmt.Fprint(fset.Output(), liveUsage)
		writeFlags(fset.Output(), fset)
	}
	if helpRequested(args) {
		fset.SetOutput(stdout)
	}
	var (
		server    = fset.String("server", "", "URL of the OJS server (before /ojs/v1), e.g. http://127.0.0.1:8080")
		reset     = fset.String("reset-url", "", "POST to this URL before the checks (servers that offer a reset)")
		report    reportFlags
		skipFile  = fset.String("skip-file", "", "known-failure list: check ids to report as skipped")
		strict    = fset.Bool("strict", false, "run skip-listed checks anyway and fail on those that pass")
		specOnly  = fset.Bool("spec-only", false, "run only the checks of spec requirements (MUST), not the readings (RK-nn)")
		timeout   = fset.Duration("timeout", live.DefaultTimeout, "per-request timeout, above 0 and at most 1h")
		late      = fset.Duration("late-bound", live.DefaultLateBound, "how long after its next_attempt_at a retry may become fetchable, above 0 and at most 10m")
		poll      = fset.Duration("poll", live.DefaultPoll, "pause between fetches while a job is awaited, 100µs..1s")
		codes     = fset.Bool("handler-codes", true, "send the retry spec's handler codes (RETRY, DISCARD, FAIL, DEAD_LETTER) in error.code")
		typeField = fset.String("error-type-field", "type", "the FAIL error field that carries the error type: type or code (RK-111)")
		interval  = fset.String("interval-form", "iso", "policy intervals as iso (initial_interval) or ms (initial_interval_ms); RK-113")
		strategy  = fset.String("strategy-field", "", "name the strategy in backoff_strategy or backoff_type (default: none); RK-114")
		nrDiscard = fset.Bool("nonretryable-discards", false, "accept a plain discard of a non-retryable failure under dead_letter (L1-RET-003); RK-115")
		budget    = fset.Duration("time", live.DefaultBudget, "bound the whole run (0: none); checks it cuts short are errors")
		latN      = fset.Int("latency-retries", live.DefaultLatencyRetries, "extra 20ms retries timed for the latency figure, 0..10000")
		cleanup   = fset.Bool("cleanup", true, "cancel the run's pending jobs and delete its dead letters at the end")
		probe     = fset.Bool("probe", true, "probe the server's dialect (interval form, error type field) before the checks")
		ids       listFlag
	)
	report.define(fset, "checks")
	fset.Var(&ids, "run", "run only these check ids (comma-separated, repeatable)")
	if err := parseTerse(fset, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fset.NArg() > 0 {
		return usageError(stderr, fmt.Sprintf("unexpected argument %q", fset.Arg(0)))
	}
	if strings.TrimSpace(*server) == "" {
		return usageError(stderr, "--server: empty URL")
	}
	if *timeout > maxTimeout {
		return usageError(stderr, fmt.Sprintf("--timeout: must be at most %v, got %v", maxTimeout, *timeout))
	}
	if msg := report.check(); msg != "" {
		return usageError(stderr, msg)
	}
	if *budget < 0 {
		return usageError(stderr, fmt.Sprintf("--time: must not be negative, got %v", *budget))
	}
	opts := []live.Option{
		live.WithResetURL(*reset), live.WithStrict(*strict), live.WithTimeout(*timeout),
		live.WithLateBound(*late), live.WithPollInterval(*poll), live.WithHandlerCodes(*codes), live.WithIDs(ids...),
	}
	opts = append(opts, live.WithErrorTypeField(*typeField), live.WithIntervalForm(*interval),
		live.WithStrategyField(*strategy), live.WithNonRetryableDiscards(*nrDiscard),
		live.WithBudget(*budget), live.WithLatencyRetries(*latN), live.WithCleanup(*cleanup), live.WithDialectProbe(*probe))
	if *specOnly {
		opts = append(opts, live.WithSpecOnly())
	}
	if *strict && *skipFile == "" {
		return usageError(stderr, "--strict: needs --skip-file (it runs the skip-listed checks anyway and fails on those that pass)")
	}
	if *skipFile != "" {
		skips, err := readSkipFile(*skipFile)
		if err != nil {
			return usageError(stderr, err.Error())
		}
		opts = append(opts, live.WithSkips(skips))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := live.Run(ctx, *server, opts...)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	rep.Command = commandLine(args)
	return report.write(rep, stdout, stderr)
}
