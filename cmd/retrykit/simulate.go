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
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/chart"
	"github.com/retrykit/retrykit/policy"
)

func init() {
	commands["simulate"] = command{
		summary: "simulate N jobs retrying through an outage (thundering herd, with and without jitter)",
		run:     runSimulate,
	}
}

const simulateUsage = `usage: retrykit simulate [--jobs N] [--outage 60s] [--policy FILE|JSON|default]
                         [--jitter both|on|off|policy] [--seed S] [--bucket 1s] [--svg FILE]

N jobs are enqueued at t=0 and run at once. Every attempt that starts before
the end of the outage fails (a retryable error); attempts after it succeed.
Each job follows the retry policy on the reference executor with a fake
clock and infinitely many workers. The histogram counts retry arrivals
(attempts 2 and later) per bucket. --jitter both (default) runs the policy
with jitter off and on, side by side; on/off force one; policy keeps the
policy's own setting.

The policy is a file, inline OJS JSON, or "default" for the OJS default
policy. Without --policy it is ` + simDefaultPolicy + `: the OJS
defaults (PT1S, x2, cap PT5M) with enough attempts to ride out outages of
up to about an hour, so that the herd's return after the outage shows. With
the OJS default's 3 attempts every job gives up within seconds of a long
outage (the report counts them as discarded).

flags:
`

// simDefaultPolicy is the policy simulate uses without --policy.
const simDefaultPolicy = `{"max_attempts": 25}`

// simRun is the outcome of one simulated run.
type simRun struct {
	label     string
	buckets   []int // retry arrivals per bucket
	completed int
	discarded int
	retries   int
	lastDone  time.Duration // when the last job finished
}

func runSimulate(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, simulateUsage); fs.PrintDefaults() }
	jobs := fs.Int("jobs", 1000, "number of jobs")
	outage := fs.Duration("outage", 60*time.Second, "length of the outage from t=0")
	polFile := fs.String("policy", simDefaultPolicy, "retry policy: a JSON file, inline JSON, or default (the OJS default policy)")
	jitter := fs.String("jitter", "both", "both, on, off or policy")
	seed := fs.Uint64("seed", 1, "seed of the jitter randomness")
	bucket := fs.Duration("bucket", time.Second, "histogram bucket width")
	svg := fs.String("svg", "", "also write an SVG chart to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "retrykit simulate: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if *jobs < 1 || *jobs > 10_000_000 {
		return bad("--jobs must be between 1 and 10000000, got %d", *jobs)
	}
	if *outage < 0 {
		return bad("--outage must not be negative, got %v", *outage)
	}
	if *bucket <= 0 {
		return bad("--bucket must be positive, got %v", *bucket)
	}
	p := policy.Default()
	if *polFile != "default" {
		data := []byte(*polFile)
		if t := strings.TrimSpace(*polFile); !strings.HasPrefix(t, "{") {
			var err error
			if data, err = os.ReadFile(*polFile); err != nil {
				return bad("%v", err)
			}
		}
		var err error
		if p, err = policy.Parse(data); err != nil {
			return bad("--policy %s: %v", *polFile, err)
		}
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
			var err error
			if q, err = policy.New(s); err != nil {
				return bad("%v", err)
			}
		}
		label := "jitter " + m
		if m == "policy" {
			label = fmt.Sprintf("jitter %v (policy)", q.Spec().Jitter)
		}
		qs, labels = append(qs, q), append(labels, label)
		span = max(span, simSpan(q, *outage))
	}
	// The histogram holds one counter per bucket up to the last retry
	// arrival; refuse a bucket so narrow that this cannot fit in memory or
	// time, before running anything.
	if nb := uint64(span/(*bucket)) + 1; nb > maxSimBuckets {
		return bad("--bucket %v is too narrow: retries can arrive up to %v after the start, which makes %d buckets (at most %d); use --bucket %v or wider",
			*bucket, span, nb, maxSimBuckets, span/maxSimBuckets+1)
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
		runs = append(runs, simulate(q, *jobs, *outage, *bucket, rand.New(rand.NewPCG(*seed, 0x5eed)), labels[i]))
	}
	writeSimText(stdout, p, *jobs, *outage, *bucket, runs)
	if svgFile != nil {
		bw := bufio.NewWriter(svgFile)
		writeSimSVG(bw, *jobs, *outage, *bucket, runs)
		err := bw.Flush()
		if cerr := svgFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return bad("--svg: %v", err)
		}
	}
	return 0
}

// maxSimBuckets is the largest number of histogram buckets simulate
// accepts (the span of the run divided by --bucket).
const maxSimBuckets = 100_000

// simSpan returns an upper bound on the time of the last retry arrival of a
// run of p through an outage: every failure happens before the outage ends
// and the next attempt comes at most max_interval later, and no job waits
// longer in total than the sum of its largest delays.
func simSpan(p *policy.Policy, outage time.Duration) time.Duration {
	bound := addSat(outage, p.Spec().MaxInterval)
	b := p.Backoff()
	retries := max(p.Spec().MaxAttempts, 1) - 1
	var sum time.Duration
	// Summing is only worth it while it stays cheap; beyond that the
	// outage bound stands.
	for n := 1; n <= retries && n <= maxSimBuckets; n++ {
		_, hi := b.Bounds(n)
		if sum = addSat(sum, hi); sum >= bound {
			return bound
		}
	}
	if retries <= maxSimBuckets {
		return sum
	}
	return bound
}

// simulate runs n jobs under p through an outage on a fake clock.
func simulate(p *policy.Policy, n int, outage, bucket time.Duration, src backoff.Source, label string) *simRun {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(clock), executor.WithRand(src), executor.WithErrorHistory(10),
		executor.WithFinishedRetention(math.MaxInt64, math.MaxInt)) // the counts below read every finished job
	for i := 0; i < n; i++ {
		e.Enqueue(executor.JobSpec{Type: "call.upstream", Policy: p}) //nolint:errcheck // valid by construction
	}
	r := &simRun{label: label}
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
			if now < outage {
				after, _ = e.Fail(j.ID, j.Delivery, fail)
			} else {
				after, _ = e.Ack(j.ID, j.Delivery)
			}
			if after.State.Terminal() {
				r.lastDone = now
			}
		}
		next, ok := e.NextDue()
		if !ok {
			break
		}
		clock.Set(next)
	}
	r.completed = e.Count(executor.Filter{States: []executor.State{executor.Completed}})
	r.discarded = e.Count(executor.Filter{States: []executor.State{executor.Discarded}})
	return r
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
	fmt.Fprintf(w, "%d jobs, outage %v, bucket %v, policy: max_attempts %d, initial %v, coefficient %g, max %v, strategy %s\n",
		n, outage, bucket, s.MaxAttempts, s.InitialInterval, s.BackoffCoefficient, s.MaxInterval, s.Strategy)
	for _, r := range runs {
		pk, at := peak(r.buckets)
		fmt.Fprintf(w, "%-22s retries %d, peak %d in bucket %d (t=%v), completed %d, discarded %d, last job done at %v\n",
			r.label+":", r.retries, pk, at, time.Duration(at)*bucket, r.completed, r.discarded, r.lastDone.Round(time.Millisecond))
	}
	nb, top := 0, 0
	for _, r := range runs {
		nb = max(nb, len(r.buckets))
		p, _ := peak(r.buckets)
		top = max(top, p)
	}
	const width = 40
	fmt.Fprintf(w, "\nretry arrivals per %v (empty buckets omitted)\n", bucket)
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
		fmt.Fprintf(w, "%10v", time.Duration(b)*bucket)
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
