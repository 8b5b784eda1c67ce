package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/bounded"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

func init() {
	commands["schedule"] = command{
		summary: "print the retry schedule of a policy (default policy when no file is given)",
		run:     runSchedule,
	}
}

// scheduleRow is one failed attempt of a schedule and what follows it.
type scheduleRow struct {
	Attempt int    `json:"attempt"`
	Action  string `json:"action"`
	// Delay fields are set only when Action is "retry".
	DelayNS int64 `json:"delay_ns,omitempty"`
	MinNS   int64 `json:"min_ns,omitempty"`
	MaxNS   int64 `json:"max_ns,omitempty"`
	// Cumulative wait before the next attempt starts, summed over the
	// delays so far (saturating).
	CumulativeNS    int64 `json:"cumulative_ns,omitempty"`
	CumulativeMinNS int64 `json:"cumulative_min_ns,omitempty"`
	CumulativeMaxNS int64 `json:"cumulative_max_ns,omitempty"`
}

// scheduleReport is the --json output of the schedule command.
type scheduleReport struct {
	Policy json.RawMessage `json:"policy"`
	Rand   *float64        `json:"rand,omitempty"`
	// Ranges names the convention of every min/max pair: "inclusive",
	// [min, max] with both ends reachable (backoff.Backoff.Bounds).
	Ranges    string        `json:"ranges"`
	Rows      []scheduleRow `json:"attempts"`
	Truncated bool          `json:"truncated"`
	// Exhaustion is what happens when the last allowed attempt fails.
	Exhaustion struct {
		AfterAttempt int    `json:"after_attempt"`
		Action       string `json:"action"`
	} `json:"exhaustion"`
}

// maxScheduleLimit is the largest --limit: the rows are held in memory (and
// a schedule of more rows is not something anyone reads).
const maxScheduleLimit = 10000

// maxPatternsShown is how many non_retryable_errors patterns the text
// output lists before summarising the rest.
const maxPatternsShown = 20

const scheduleUsage = `usage: retrykit schedule [--json] [--limit N] [--rand R] [--svg FILE] [policy.json | - | --profile NAME | --list-profiles]

Prints the retry schedule of an OJS retry policy (a file, "-" for stdin, or
the OJS default policy when none is given) or of another system's profile
(--profile NAME; --list-profiles lists them, with --json as JSON, and
takes no other flag): for each attempt that fails,
what follows, the delay, the range jitter can put it in, and the
cumulative wait. Flags may come before or after the file.

Every range is inclusive, [lo, hi], with both ends reachable, in the JSON
fields min_ns/max_ns and cumulative_min_ns/cumulative_max_ns: it is
backoff.Backoff.Bounds. The spec's jitter multiplier [0.5, 1.5) is
half-open, so hi is 1ns under 1.5 times the base delay ([500ms,
1.499999999s] for a 1s base). The text writes durations for reading:
exact under a minute, with days ("3d8h32m") and rounded beyond, lo down
and hi up (to the second under a day, to the minute from a day on), so the
printed range always contains the exact one; JSON keeps nanoseconds.

Numbers: --limit is 1 to 10000 rows (they are held in memory; the outcome
after the last attempt is always printed, for any max_attempts up to
2^63-1); --rand is a number in [0, 1).

flags:
`

// emptyPolicyNote is the note for stderr when a policy input holds nothing
// but white space, which is the default policy (docs/decisions.md RK-09), so
// that a file left empty or a here-document that never came is not taken
// for a policy silently; "" otherwise.
func emptyPolicyNote(name string, data []byte) string {
	if len(bytes.TrimSpace(data)) > 0 {
		return ""
	}
	if name == "-" {
		name = "standard input"
	}
	return fmt.Sprintf("note: %s is empty: using the OJS default policy (an empty policy is the default, docs/decisions.md RK-09)", name)
}

// readPolicyFile reads a policy file, or stdin for "-", refusing one larger
// than policy.MaxDocumentSize without reading it all.
func readPolicyFile(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name == "-" && stdin == nil {
		return nil, errors.New("-: standard input is not available here")
	}
	if name != "-" {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) && (name == "help" || name == "usage") {
			return nil, fmt.Errorf("%w (the usage is printed by --help)", err)
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := bounded.Read(r, policy.MaxDocumentSize)
	if errors.Is(err, bounded.ErrTooLarge) {
		return nil, fmt.Errorf("%s: larger than the policy size limit of %d bytes (policy.MaxDocumentSize)", name, policy.MaxDocumentSize)
	}
	return data, err
}

func runSchedule(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schedule", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "write the schedule as JSON")
	limit := fs.Int("limit", 50, fmt.Sprintf("print at most this many attempts, 1 to %d (the exhaustion outcome is always printed)", maxScheduleLimit))
	randFlag := fs.String("rand", "", "fixed jitter draw r in [0,1): show exact jittered delays instead of the "+chart.Middle)
	extra := addScheduleFlags(fs) // profiles.go: --profile, --list-profiles, --svg
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), scheduleUsage)
		writeFlags(fs.Output(), fs)
	}
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) > 1 {
		fmt.Fprintf(stderr, "retrykit schedule: one policy file at most, got %d arguments: %q (flags may come before or after it)\n", len(pos), pos)
		return 2
	}
	if *limit < 1 || *limit > maxScheduleLimit {
		fmt.Fprintf(stderr, "retrykit schedule: --limit: must be between 1 and %d, got %d\n", maxScheduleLimit, *limit)
		return 2
	}
	var r *float64
	if *randFlag != "" {
		v, err := strconv.ParseFloat(*randFlag, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v >= 1 {
			fmt.Fprintf(stderr, "retrykit schedule: --rand: must be a number in [0,1), got %q\n", *randFlag)
			return 2
		}
		r = &v
	}
	if code, done := extra.run(len(pos), *asJSON, *limit, r, stdout, stderr); done {
		return code
	}

	p, file := policy.Default(), ""
	if len(pos) == 1 {
		name := pos[0]
		file = name
		if name == "" {
			fmt.Fprintln(stderr, `retrykit schedule: the policy file name is empty; give a file, "-" for stdin, or nothing for the default policy`)
			return 2
		}
		data, err := readPolicyFile(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit schedule: %v\n", err)
			return 2
		}
		if note := emptyPolicyNote(name, data); note != "" {
			fmt.Fprintf(stderr, "retrykit schedule: %s\n", note)
		}
		p, err = policy.Parse(data)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit schedule: %s: %v\n", name, err)
			return 2
		}
	}

	rep, err := buildSchedule(p, *limit, r)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit schedule: %v\n", err)
		return 2
	}
	if code := extra.svgPolicy(p, policyName(file), *limit, stderr); code != 0 {
		return code
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "retrykit schedule: %v\n", err)
			return 1
		}
		return 0
	}
	writeScheduleText(stdout, p, rep)
	return 0
}

// buildSchedule walks the attempts of p through its own Decide method, so the
// schedule shows exactly what the policy decides, including exhaustion.
func buildSchedule(p *policy.Policy, limit int, r *float64) (*scheduleReport, error) {
	canon, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	rep := &scheduleReport{Policy: canon, Rand: r, Ranges: "inclusive"}
	b := p.Backoff()
	var cum, cumLo, cumHi time.Duration
	for n := 1; ; n++ {
		rv := 0.5 // nominal: multiplier 1.0
		if r != nil {
			rv = *r
		}
		d, err := p.DecideAt(policy.Failure{Attempt: n}, rv)
		if err != nil {
			return nil, err
		}
		if d.Action != policy.Retry {
			rep.Exhaustion.AfterAttempt = n
			rep.Exhaustion.Action = d.Action.String()
			if n <= limit {
				rep.Rows = append(rep.Rows, scheduleRow{Attempt: n, Action: d.Action.String()})
			}
			return rep, nil
		}
		delay := b.Base(n)
		if r != nil {
			delay = d.Delay
		}
		lo, hi := b.Bounds(n)
		cum, cumLo, cumHi = sat.AddInt(cum, delay), sat.AddInt(cumLo, lo), sat.AddInt(cumHi, hi)
		if n <= limit {
			rep.Rows = append(rep.Rows, scheduleRow{
				Attempt: n, Action: d.Action.String(),
				DelayNS: int64(delay), MinNS: int64(lo), MaxNS: int64(hi),
				CumulativeNS: int64(cum), CumulativeMinNS: int64(cumLo), CumulativeMaxNS: int64(cumHi),
			})
		} else {
			rep.Truncated = true
			// Past the limit only the exhaustion outcome is still needed,
			// and it comes at attempt max(max_attempts, 1).
			last := max(p.Spec().MaxAttempts, 1)
			if last > n {
				n = last - 1
			}
		}
	}
}

func writeScheduleText(w io.Writer, p *policy.Policy, rep *scheduleReport) {
	s := p.Spec()
	fmt.Fprintf(w, "policy: max_attempts=%d initial_interval=%s backoff_coefficient=%g max_interval=%s jitter=%t strategy=%s on_exhaustion=%s\n",
		s.MaxAttempts, policy.FormatDuration(s.InitialInterval), s.BackoffCoefficient,
		policy.FormatDuration(s.MaxInterval), s.Jitter, s.Strategy, s.OnExhaustion)
	if len(s.NonRetryableErrors) > 0 {
		pats := s.NonRetryableErrors
		more := ""
		if len(pats) > maxPatternsShown {
			more = fmt.Sprintf(", … and %d more", len(pats)-maxPatternsShown)
			pats = pats[:maxPatternsShown]
		}
		fmt.Fprintf(w, "non_retryable_errors: %s%s\n", strings.Join(pats, ", "), more)
	}
	delayHead := "delay"
	switch {
	case rep.Rand != nil:
		delayHead = fmt.Sprintf("delay (r = %g)", *rep.Rand)
	case s.Jitter:
		delayHead = chart.Middle
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "attempt\tthen\t%s\tjitter range (inclusive)\tcumulative\tcumulative range (inclusive)\n", delayHead)
	for _, row := range rep.Rows {
		if row.Action != policy.Retry.String() {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t-\n", row.Attempt, row.Action)
			continue
		}
		// Without jitter there is no range: the delay is exact.
		jr, cr := "-", "-"
		if s.Jitter {
			jr = rangeText(row.MinNS, row.MaxNS)
			cr = rangeText(row.CumulativeMinNS, row.CumulativeMaxNS)
		}
		delay := human.Round(time.Duration(row.DelayNS))
		if rep.Rand != nil { // --rand asks for the exact jittered delay
			delay = human.Exact(time.Duration(row.DelayNS))
		}
		fmt.Fprintf(tw, "%d\tretry\t%s\t%s\t%s\t%s\n", row.Attempt,
			delay, jr, human.Round(time.Duration(row.CumulativeNS)), cr)
	}
	if rep.Truncated {
		fmt.Fprintf(tw, "…\t\t\t\t\t\n")
		if last := rep.Rows[len(rep.Rows)-1]; last.Attempt != rep.Exhaustion.AfterAttempt {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t-\n", rep.Exhaustion.AfterAttempt, rep.Exhaustion.Action)
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nafter attempt %d fails: %s\n", rep.Exhaustion.AfterAttempt, rep.Exhaustion.Action)
}

// rangeText shows an inclusive range of whole nanoseconds for people:
// [lo, hi] with lo rounded down and hi up beyond a minute (human.Range), so
// the printed range contains the exact one of backoff.Backoff.Bounds and of
// the JSON output.
func rangeText(lo, hi int64) string { return human.Range(time.Duration(lo), time.Duration(hi)) }
