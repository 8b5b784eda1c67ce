package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
	"github.com/retrykit/retrykit/executor"

	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

func init() {
	commands["simulate"] = command{
		summary: "simulate jobs retrying through an outage: the thundering herd, or the load of N clients with each jitter mode and a retry budget",
		run:     runSimulate,
	}
}

const simulateUsage = `usage: retrykit simulate [--jobs N] [--outage 60s] [--jitter both|on|off] …
       retrykit simulate --clients N [--every 1s] [--failure-rate 1] …

Two models. Without --clients, the thundering herd (below). With --clients,
the load of N clients through an outage (further below).

The herd: N jobs are enqueued at t=0 and run at once. An attempt that
starts before the end of the outage fails (a retryable error) with
probability --failure-rate (default 1: every one); others succeed.
Each job follows the retry policy on the reference executor with a fake
clock and infinitely many workers. The histogram counts retry arrivals
(attempts 2 and later) per bucket. --jitter both (default) runs the policy
with jitter off and on, side by side; on/off force one; policy keeps the
policy's own setting.

The policy is a file, "-" for standard input, inline OJS JSON, or
"default" for the OJS default policy. Without --policy it is
` + simDefaultPolicy + `: the OJS defaults (PT1S, x2, cap PT5M) with
enough attempts to ride out outages of up to about an hour, so that the
herd's return after the outage shows. With the OJS default's 3 attempts
every job gives up within seconds of a long outage (the report counts
them as discarded, or as dead-lettered under on_exhaustion dead_letter).

The load (--clients N): client c (0-based) enqueues one job at
c·every/N + k·every, k = 0, 1, …, while that is before --until (default:
the end of the outage plus 1m); times are exact nanoseconds (c·every/N
truncated). The outage runs from t=0 to --outage: an attempt that starts
before its end fails with probability --failure-rate (default 1: every
one), and every other attempt succeeds. Workers are unlimited and an
attempt takes no time. A failed attempt n gets the policy's decision
(policy.DecideAt, error type upstream.unavailable): retried, or
exhausted at max_attempts (discarded or dead-lettered), the policy's
jitter_mode set to the run's (Failure.PrevDelay: the delay before attempt
n, which decorrelated jitter reads). With a
budget (docs/extensions.md §3.6), each first attempt deposits, each
success credits, and a retry the policy schedules asks the budget at the
instant of the failure; a refused retry ends the job. Events at the same
instant run first attempts before retries, each in job order (jobs are
numbered by arrival time, then client). Randomness: failure draws u from
PCG(seed, 1), made only when 0 < failure rate < 1 (the attempt fails when
u < rate), and jitter draws r from PCG(seed, 2), made only when the policy
jitters, both math/rand/v2 Float64 in event order.

Each jitter mode of --modes (default all: off, proportional (OJS), full,
equal, decorrelated; docs/extensions.md §3.4) runs without a budget, then
with --budget (default, the Finagle and Linkerd defaults:
` + loadDefaultBudget + `;
none: no budget runs). The report gives
for each run: attempts per original job (all attempts, first ones
included, over jobs), the peak attempts per second (the largest count of
attempts starting in one --bucket window [k·bucket, (k+1)·bucket), over the
bucket in seconds) and when, the same for retries alone, and how the
jobs ended (completed, exhausted by the policy, refused by the
budget). Every job ends: the run goes on until no attempt is pending.
--json prints the same figures as JSON, one object per run.

Ranges (out of range is a usage error, exit status 2, before anything runs):
  --jobs    1 to 1000000. Jobs run in batches of 4096 on a fresh executor
            each, so memory does not grow with --jobs; time does.
  --outage  0 to 10000h.
  --bucket  1ms to 10000h, and at most 100000 buckets between t=0 and the
            last possible retry arrival.
  attempts  a job makes at most max_attempts attempts, and no more than fit
            in the outage at the shortest delays; that bound must be at most
            100000 per job, and --jobs times it at most 10000000 per run,
            whatever max_attempts is (up to 2^63-1). An attempt costs about
            1-2 µs, so a run at the limit takes 10-20 s, and --jitter both
            makes two runs.
  load      --clients 1 to 100000, --every 1ms to 24h, --until 1ns to
            10000h, at most 1000000 jobs; a job makes at most max_attempts
            attempts, and no more than fit in the outage at the shortest
            delays of each mode (full jitter's is 0), and jobs times that is
            at most 10000000 per run; --failure-rate 0 to 1.

flags:
`

// simDefaultPolicy is the policy simulate uses without --policy.
const simDefaultPolicy = `{"max_attempts": 25}`

// Limits of simulate, tied to the memory and time a run uses (see
// simulateUsage).
const (
	maxSimJobs        = 1_000_000
	maxSimOutage      = 10000 * time.Hour
	minSimBucket      = time.Millisecond
	maxSimBucket      = 10000 * time.Hour
	maxSimBuckets     = 100_000    // histogram counters held in memory
	maxSimJobAttempts = 100_000    // attempts one job may make
	maxSimAttempts    = 10_000_000 // jobs × attempts per job, per run
	simBatch          = 4096       // jobs per executor
)

// simRun is the outcome of one simulated run.
type simRun struct {
	label     string
	buckets   []int // retry arrivals per bucket
	completed int
	discarded int // discarded, not dead-lettered
	dead      int // dead-lettered (on_exhaustion dead_letter)
	retries   int
	lastDone  time.Duration // when the last job finished
}

func runSimulate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), simulateUsage); writeFlags(fs.Output(), fs) }
	jobs := fs.Int("jobs", 1000, "number of jobs, 1 to 1000000")
	outage := fs.Duration("outage", 60*time.Second, "length of the outage from t=0, 0 to 10000h")
	polFile := fs.String("policy", simDefaultPolicy, "retry policy: a JSON file, inline JSON, or default (the OJS default policy)")
	jitter := fs.String("jitter", "both", "both, on, off or policy")
	seed := fs.Uint64("seed", 1, "seed of the jitter randomness")
	bucket := fs.Duration("bucket", time.Second, "histogram bucket width, 1ms to 10000h")
	svg := fs.String("svg", "", "also write an SVG chart to this file")
	clients := fs.Int("clients", 0, "the load model: number of clients, 1 to 100000 (0: the herd model)")
	every := fs.Duration("every", time.Second, "load: each client enqueues one job this often")
	until := fs.Duration("until", 0, "load: clients enqueue jobs before this instant (default: the outage's end plus 1m)")
	failureRate := fs.Float64("failure-rate", 1, "probability that an attempt starting during the outage fails, 0 to 1")
	budgetArg := fs.String("budget", loadDefaultBudget, "load: a retry_budget (inline JSON or a file), or none")
	modesArg := fs.String("modes", "all", "load: jitter modes to compare, all or a comma-separated list")
	asJSON := fs.Bool("json", false, "load: print the report as JSON (durations in nanoseconds)")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "retrykit simulate: "+format+"\n", a...)
		return 2
	}
	if len(pos) > 0 {
		return bad("unexpected argument %q (simulate takes flags only; see retrykit simulate --help)", pos[0])
	}
	if *jobs < 1 || *jobs > maxSimJobs {
		return bad("--jobs must be between 1 and %d, got %d", maxSimJobs, *jobs)
	}
	if *outage < 0 || *outage > maxSimOutage {
		return bad("--outage must be between 0s and %v, got %v", maxSimOutage, *outage)
	}
	if *bucket < minSimBucket || *bucket > maxSimBucket {
		return bad("--bucket must be between %v and %v, got %v", minSimBucket, maxSimBucket, *bucket)
	}
	if !(*failureRate >= 0 && *failureRate <= 1) {
		return bad("--failure-rate must be between 0 and 1, got %v", *failureRate)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *clients == 0 {
		for _, name := range []string{"every", "until", "budget", "modes", "json"} {
			if set[name] {
				return bad("--%s belongs to the load model: give --clients N too", name)
			}
		}
	} else {
		for _, name := range []string{"jobs", "jitter"} {
			if set[name] {
				return bad("--%s belongs to the herd model, not to --clients (the load model runs every jitter mode of --modes)", name)
			}
		}
	}
	p := policy.Default()
	switch t := strings.TrimSpace(*polFile); {
	case t == "":
		return bad(`--policy is empty: give a policy file, inline JSON such as '{"max_attempts": 10}', or default`)
	case t == "default":
	default:
		var data []byte
		if strings.HasPrefix(t, "{") {
			data = []byte(*polFile)
		} else if data, err = readPolicyFile(*polFile, stdin); err != nil {
			return bad("--policy: %v", err)
		} else if note := emptyPolicyNote(*polFile, data); note != "" {
			fmt.Fprintf(stderr, "retrykit simulate: --policy: %s\n", note)
		}
		if p, err = policy.Parse(data); err != nil {
			return bad("--policy %s: %v", clipArg(*polFile), err)
		}
	}
	if *clients != 0 {
		return runLoad(loadFlags{
			cfg: loadConfig{clients: *clients, every: *every, until: *until, outage: *outage,
				failureRate: *failureRate, bucket: *bucket, seed: *seed},
			untilSet: set["until"], budget: *budgetArg, modes: *modesArg, svg: *svg, json: *asJSON,
		}, p, stdin, stdout, bad)
	}
	var modes []string
	switch *jitter {
	case "both":
		modes = []string{"off", "on"}
	case "on", "off", "policy":
		modes = []string{*jitter}
	default:
		return bad("--jitter must be both, on, off or policy, got %q", *jitter)
	}
	var (
		qs     []*policy.Policy
		labels []string
		span   time.Duration
	)
	for _, m := range modes {
		q := p
		if m != "policy" {
			s := p.Spec()
			s.Jitter = m == "on"
			if q, err = policy.New(s); err != nil {
				return bad("%v", err)
			}
		}
		label := "jitter " + m
		if m == "policy" {
			label = fmt.Sprintf("jitter %v (policy)", q.Spec().Jitter)
		}
		// The work of a run is bounded before it starts: attempts per job,
		// and jobs times that.
		per, ok := simAttempts(q, *outage)
		if !ok {
			return bad("%s: a job may make more than %d attempts during a %v outage (max_attempts %d, delays from %v): shorten --outage or raise initial_interval",
				label, maxSimJobAttempts, *outage, q.Spec().MaxAttempts, q.Spec().InitialInterval)
		}
		if uint64(*jobs)*per > maxSimAttempts {
			return bad("%s: --jobs %d × up to %d attempts per job is more than %d attempts per run: use --jobs %d or fewer, or a shorter --outage",
				label, *jobs, per, maxSimAttempts, maxSimAttempts/per)
		}
		qs, labels = append(qs, q), append(labels, label)
		span = max(span, simSpan(q, *outage))
	}
	// The histogram holds one counter per bucket up to the last retry
	// arrival; refuse a bucket so narrow that this cannot fit in memory or
	// time, before running anything.
	nb := uint64(span/(*bucket)) + 1
	if nb > maxSimBuckets {
		return bad("--bucket %v is too narrow: retries can arrive up to %v after the start, which makes %d buckets (at most %d); use --bucket %v or wider",
			*bucket, span, nb, maxSimBuckets, roundUp(span/maxSimBuckets+1))
	}
	// Open the SVG file first, so that a bad path fails before the run.
	var svgFile *os.File
	if *svg != "" {
		f, err := os.Create(*svg)
		if err != nil {
			return bad("--svg: %v", err)
		}
		svgFile = f
		defer f.Close()
	}
	var runs []*simRun
	for i, q := range qs {
		fails := failureDraw(*failureRate, *seed)
		runs = append(runs, simulate(q, *jobs, *outage, *bucket, int(nb), rand.New(rand.NewPCG(*seed, 0x5eed)), fails, labels[i]))
	}
	writeSimText(stdout, p, *jobs, *outage, *bucket, runs)
	if err := finishSVG(svgFile, func(w io.Writer) { writeSimSVG(w, *jobs, *outage, *bucket, runs) }); err != nil {
		return bad("--svg: %v", err)
	}
	return 0
}

// finishSVG writes a chart into f through a buffer and closes f; a nil f
// (no --svg) writes nothing.
func finishSVG(f *os.File, write func(io.Writer)) error {
	if f == nil {
		return nil
	}
	bw := bufio.NewWriter(f)
	write(bw)
	err := bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// clipArg shortens a long command-line value (inline JSON) for messages.
func clipArg(s string) string {
	if len(s) <= 60 {
		return s
	}
	return s[:50] + "…"
}

// simAttempts returns an upper bound on the attempts one job of p makes
// through an outage: attempt k starts no earlier than the sum of the
// smallest delays after attempts 1..k-1 (Backoff.Bounds), the first attempt
// at or after the end of the outage succeeds, and max(max_attempts, 1) ends
// the job anyway. ok is false when the bound exceeds maxSimJobAttempts;
// the loop never runs longer than that.
func simAttempts(p *policy.Policy, outage time.Duration) (n uint64, ok bool) {
	last := max(p.Spec().MaxAttempts, 1)
	b := p.Backoff()
	var start time.Duration // earliest start of attempt k
	for k := 1; ; k++ {
		if k >= last || start >= outage {
			return uint64(k), true
		}
		if k >= maxSimJobAttempts {
			return uint64(k), false
		}
		lo, _ := b.Bounds(k)
		start = sat.AddInt(start, lo)
	}
}

// simSpan returns an upper bound on the time of the last retry arrival of a
// run of p through an outage: every failure happens before the outage ends
// and the next attempt comes at most max_interval later, and no job waits
// longer in total than the sum of its largest delays.
func simSpan(p *policy.Policy, outage time.Duration) time.Duration {
	bound := sat.AddInt(outage, p.Spec().MaxInterval)
	b := p.Backoff()
	retries := max(p.Spec().MaxAttempts, 1) - 1
	var sum time.Duration
	// Summing is only worth it while it stays cheap; beyond that the
	// outage bound stands.
	for n := 1; n <= retries && n <= maxSimBuckets; n++ {
		_, hi := b.Bounds(n)
		if sum = sat.AddInt(sum, hi); sum >= bound {
			return bound
		}
	}
	if retries <= maxSimBuckets {
		return sum
	}
	return bound
}

// simulate runs n jobs under p through an outage on a fake clock, simBatch
// jobs at a time, each batch on a fresh executor: jobs never interact (the
// workers are unlimited), so the batches add up to the whole run while
// memory stays that of one batch plus nb histogram buckets. src is shared
// by the batches, so a seed gives one reproducible run.
func simulate(p *policy.Policy, n int, outage, bucket time.Duration, nb int, src backoff.Source, fails func() bool, label string) *simRun {
	r := &simRun{label: label, buckets: make([]int, 0, nb)}
	for done := 0; done < n; done += simBatch {
		simulateBatch(r, p, min(simBatch, n-done), outage, bucket, src, fails)
	}
	return r
}

// simulateBatch runs n jobs on a fresh executor and adds them to r.
// An attempt that starts during the outage fails when fails() says so.
func simulateBatch(r *simRun, p *policy.Policy, n int, outage, bucket time.Duration, src backoff.Source, fails func() bool) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(clock), executor.WithRand(src), executor.WithErrorHistory(10),
		executor.WithFinishedRetention(math.MaxInt64, math.MaxInt)) // the counts below read every finished job
	for i := 0; i < n; i++ {
		e.Enqueue(executor.JobSpec{Type: "call.upstream", Policy: p}) //nolint:errcheck // valid by construction
	}
	fail := executor.Failure{Type: "upstream.unavailable", Message: "upstream is down"}
	for {
		now := clock.Now().Sub(start)
		for {
			j, ok := e.Fetch(executor.DefaultQueue)
			if !ok {
				break
			}
			if j.Attempt > 1 {
				b := int(now / bucket)
				for len(r.buckets) <= b {
					r.buckets = append(r.buckets, 0)
				}
				r.buckets[b]++
				r.retries++
			}
			var after executor.Job
			if now < outage && fails() {
				after, _ = e.Fail(j.ID, j.Delivery, fail)
			} else {
				after, _ = e.Ack(j.ID, j.Delivery)
			}
			if after.State.Terminal() {
				r.lastDone = max(r.lastDone, now)
				// Counted as they finish: the fake clock may later jump
				// past the dead-letter retention, which prunes them.
				switch {
				case after.State == executor.Completed:
					r.completed++
				case after.DeadLetter:
					r.dead++
				default:
					r.discarded++
				}
			}
		}
		next, ok := e.NextDue()
		if !ok {
			break
		}
		clock.Set(next)
	}
}

// failureDraw returns the failure test of an attempt during the outage:
// always true at rate 1, never at 0, else a draw u from PCG(seed, 1)
// with u < rate.
func failureDraw(rate float64, seed uint64) func() bool {
	src := rand.New(rand.NewPCG(seed, 1))
	return func() bool {
		switch {
		case rate >= 1:
			return true
		case rate <= 0:
			return false
		}
		return src.Float64() < rate
	}
}

func peak(b []int) (max, at int) {
	for i, v := range b {
		if v > max {
			max, at = v, i
		}
	}
	return max, at
}

func writeSimText(w io.Writer, p *policy.Policy, n int, outage, bucket time.Duration, runs []*simRun) {
	s := p.Spec()
	fmt.Fprintf(w, "%d jobs, outage %s, bucket %s, policy: max_attempts %d, initial %s, coefficient %g, max %s, strategy %s\n",
		n, human.Exact(outage), human.Exact(bucket), s.MaxAttempts, human.Exact(s.InitialInterval), s.BackoffCoefficient, human.Exact(s.MaxInterval), s.Strategy)
	for _, r := range runs {
		pk, at := peak(r.buckets)
		ended := fmt.Sprintf("discarded %d", r.discarded)
		if r.dead > 0 || s.OnExhaustion == policy.DeadLetter {
			// A dead-lettered job is discarded by the spec's state, but
			// a user looks for it in the dead letter queue.
			ended = fmt.Sprintf("dead-lettered %d", r.dead)
			if r.discarded > 0 {
				ended = fmt.Sprintf("discarded %d, dead-lettered %d", r.discarded, r.dead)
			}
		}
		fmt.Fprintf(w, "%-22s retries %d, peak %d in bucket %d (t=%s), completed %d, %s, last job done at %s\n",
			r.label+":", r.retries, pk, at, human.Exact(time.Duration(at)*bucket), r.completed, ended, human.Round(r.lastDone.Round(time.Millisecond)))
	}
	nb, top := 0, 0
	for _, r := range runs {
		nb = max(nb, len(r.buckets))
		p, _ := peak(r.buckets)
		top = max(top, p)
	}
	const width = 40
	fmt.Fprintf(w, "\nretry arrivals per %s (empty buckets omitted)\n", human.Exact(bucket))
	fmt.Fprintf(w, "%10s", "t")
	for _, r := range runs {
		fmt.Fprintf(w, " │ %-*s", width+8, r.label)
	}
	fmt.Fprintln(w)
	gap := false
	for b := 0; b < nb; b++ {
		empty := true
		for _, r := range runs {
			if b < len(r.buckets) && r.buckets[b] > 0 {
				empty = false
			}
		}
		if empty {
			if !gap {
				fmt.Fprintf(w, "%10s\n", "…")
			}
			gap = true
			continue
		}
		gap = false
		fmt.Fprintf(w, "%10s", human.Exact(time.Duration(b)*bucket))
		for _, r := range runs {
			v := 0
			if b < len(r.buckets) {
				v = r.buckets[b]
			}
			bar := 0
			if top > 0 {
				bar = (v*width + top - 1) / top
			}
			fmt.Fprintf(w, " │ %7d %-*s", v, width, strings.Repeat("█", bar))
		}
		fmt.Fprintln(w)
	}
}

// writeSimSVG draws one bar chart per run, stacked vertically, on a
// shared scale (internal/chart).
func writeSimSVG(w io.Writer, n int, outage, bucket time.Duration, runs []*simRun) {
	c := chart.Bars{
		Title:  fmt.Sprintf("%d jobs through a %s outage: retry arrivals per %s", n, chart.FormatDuration(outage), chart.FormatDuration(bucket)),
		Bucket: bucket, Shade: outage, ShadeLabel: "outage",
		XLabel: "time since the outage began", YLabel: "retries per " + chart.FormatDuration(bucket),
	}
	for _, r := range runs {
		p, _ := peak(r.buckets)
		c.Panels = append(c.Panels, chart.Panel{Name: fmt.Sprintf("%s (peak %d)", r.label, p), Counts: r.buckets})
	}
	c.WriteSVG(w) //nolint:errcheck // the caller checks the buffered writer's flush
}

// roundUp rounds d up to a whole second when it is at least one, else to a
// whole millisecond, so that a suggested flag value reads as one a person
// would type (4m49s rather than 4m48.003000001s).
func roundUp(d time.Duration) time.Duration {
	unit := time.Millisecond
	if d >= time.Second {
		unit = time.Second
	}
	if r := d % unit; r != 0 && d <= math.MaxInt64-unit {
		d += unit - r
	}
	return d
}
