package main

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retrybudget"
)

// The load model of simulate (--clients): see simulateUsage and
// docs/benchmarks.md "Retry load through an outage" for its statement.

// loadConfig is one load simulation's input.
type loadConfig struct {
	clients     int
	every       time.Duration // each client enqueues one job per every
	until       time.Duration // arrivals at t < until
	outage      time.Duration // attempts starting at t < outage may fail
	failureRate float64       // probability that such an attempt fails
	bucket      time.Duration
	seed        uint64
}

// loadRun is the outcome of one load simulation.
type loadRun struct {
	mode      string // jitter mode: off, proportional, full, equal, decorrelated
	budget    string // "none" or the budget's kind
	jobs      int    // first attempts (original jobs)
	attempts  int    // every attempt, first ones included
	retries   int    // attempts after the first
	completed int
	exhausted int           // ended by the policy: max_attempts reached (discarded or dead-lettered)
	refused   int           // ended because the budget refused the retry
	buckets   []int         // attempts per bucket
	retried   []int         // retries (attempts after the first) per bucket
	lastAt    time.Duration // start of the last attempt
}

// amplification is attempts per original job.
func (r *loadRun) amplification() float64 { return float64(r.attempts) / float64(r.jobs) }

// peakPerSecond is the largest count in one bucket of counts, per second,
// and the bucket's start.
func peakPerSecond(counts []int, bucket time.Duration) (float64, time.Duration) {
	pk, at := peak(counts)
	return float64(pk) / bucket.Seconds(), time.Duration(at) * bucket
}

// loadEvent is one pending attempt. Events run in order of time, then
// first attempts before retries, then job number (jobs are numbered in
// order of arrival, then client).
type loadEvent struct {
	at      time.Duration
	retry   bool
	job     int
	attempt int
	prev    time.Duration // the delay before this attempt (decorrelated jitter)
}

type loadQueue []loadEvent

func (q loadQueue) Len() int { return len(q) }
func (q loadQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.retry != b.retry {
		return !a.retry
	}
	return a.job < b.job
}
func (q loadQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *loadQueue) Push(x any)   { *q = append(*q, x.(loadEvent)) }
func (q *loadQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// loadArrivals returns the number of jobs the clients enqueue: client c
// (0-based) enqueues at c·every/clients + k·every for k = 0, 1, … while
// that is before until.
func loadArrivals(c loadConfig) int {
	n := 0
	for i := 0; i < c.clients; i++ {
		off := loadOffset(c, i)
		if off < c.until {
			n += int((c.until-off-1)/c.every) + 1
		}
	}
	return n
}

// loadOffset is the instant of client i's first job, truncated to the
// nanosecond.
func loadOffset(c loadConfig, i int) time.Duration {
	return time.Duration(uint64(c.every) * uint64(i) / uint64(c.clients))
}

// simulateLoad runs the clients' jobs under p (its jitter set as mode)
// through the outage, with budget b (nil: none). Randomness comes from two
// PCG streams of the seed: one for failure draws (made only when the
// failure rate is strictly between 0 and 1), one for jitter draws (made
// only when the policy jitters), so that a seed gives one exact run.
func simulateLoad(c loadConfig, p *loadPolicy, mode string, b retrybudget.Budget, budgetName string) *loadRun {
	r := &loadRun{mode: mode, budget: budgetName}
	failSrc := rand.New(rand.NewPCG(c.seed, 1))
	jitterSrc := rand.New(rand.NewPCG(c.seed, 2))
	jitters := p.Spec().Jitter
	// Arrivals in order of time, then client: job numbers follow it.
	q := make(loadQueue, 0, loadArrivals(c))
	for i := 0; i < c.clients; i++ {
		for at := loadOffset(c, i); at < c.until; at += c.every {
			q = append(q, loadEvent{at: at, attempt: 1, job: i})
		}
	}
	heap.Init(&q)
	// Renumber first attempts as they come out, so that job numbers
	// follow arrival order; retries keep their job's number.
	next := 0
	epoch := time.Unix(0, 0).UTC()
	for q.Len() > 0 {
		e := heap.Pop(&q).(loadEvent)
		now := epoch.Add(e.at)
		if !e.retry {
			e.job = next
			next++
			r.jobs++
			if b != nil {
				b.DepositAt(now)
			}
		}
		r.attempts++
		k := int(e.at / c.bucket)
		for len(r.buckets) <= k {
			r.buckets = append(r.buckets, 0)
			r.retried = append(r.retried, 0)
		}
		r.buckets[k]++
		if e.retry {
			r.retries++
			r.retried[k]++
		}
		r.lastAt = e.at
		fails := false
		if e.at < c.outage {
			switch {
			case c.failureRate >= 1:
				fails = true
			case c.failureRate > 0:
				fails = failSrc.Float64() < c.failureRate
			}
		}
		if !fails {
			r.completed++
			if b != nil {
				b.SuccessAt(now)
			}
			continue
		}
		draw := 0.0
		if jitters {
			draw = jitterSrc.Float64()
		}
		d, err := decideLoad(p, e.attempt, e.prev, draw)
		if err != nil || d.Action != policy.Retry {
			r.exhausted++
			continue
		}
		if b != nil && !b.AllowAt(now) {
			r.refused++
			continue
		}
		heap.Push(&q, loadEvent{at: sat.AddInt(e.at, d.Delay), retry: true, job: e.job, attempt: e.attempt + 1, prev: d.Delay})
	}
	return r
}

// loadBudgetName names a budget for the report.
func loadBudgetName(b retrybudget.Budget) string {
	switch b := b.(type) {
	case *retrybudget.TokenBucket:
		s := b.Spec()
		return fmt.Sprintf("token bucket %g, +%g/s, +%g/success", s.Capacity, s.RefillPerSecond, s.CreditPerSuccess)
	case *retrybudget.Ratio:
		s := b.Spec()
		return fmt.Sprintf("ratio %g, floor %g/s, window %s", s.Ratio, s.MinPerSecond, human.Exact(s.Window))
	}
	return "none"
}

// writeLoadText writes the load report: the model's parameters, then one
// row per run.
func writeLoadText(w io.Writer, c loadConfig, p *policy.Policy, budgetText string, runs []*loadRun) {
	s := p.Spec()
	jobs := 0
	if len(runs) > 0 {
		jobs = runs[0].jobs
	}
	base := float64(c.clients) / c.every.Seconds()
	fmt.Fprintf(w, "%d clients, one job each every %s until %s: %d jobs, %g jobs/s\n", c.clients, human.Exact(c.every), human.Exact(c.until), jobs, base)
	fmt.Fprintf(w, "outage from 0s to %s, failure rate %g (attempts starting in it fail with that probability; all others succeed)\n", human.Exact(c.outage), c.failureRate)
	fmt.Fprintf(w, "policy: max_attempts %d, initial %s, coefficient %g, max %s, strategy %s; budget: %s; seed %d; peak over %s buckets\n\n",
		s.MaxAttempts, human.Exact(s.InitialInterval), s.BackoffCoefficient, human.Exact(s.MaxInterval), s.Strategy, budgetText, c.seed, human.Exact(c.bucket))
	fmt.Fprintf(w, "%-13s %-7s %13s %10s %9s %13s %9s %10s %9s %9s\n", "jitter", "budget", "attempts/job", "peak/s", "(at)", "retry peak/s", "(at)", "completed", "exhausted", "refused")
	for _, r := range runs {
		pk, at := peakPerSecond(r.buckets, c.bucket)
		rpk, rat := peakPerSecond(r.retried, c.bucket)
		fmt.Fprintf(w, "%-13s %-7s %13.3f %10.1f %9s %13.1f %9s %10d %9d %9d\n", r.mode, budgetColumn(r.budget), r.amplification(), pk, human.Exact(at), rpk, human.Exact(rat), r.completed, r.exhausted, r.refused)
	}
}

// loadJSON is one run of the --json report.
type loadJSON struct {
	Jitter          string  `json:"jitter"`
	Budget          string  `json:"budget"`
	Jobs            int     `json:"jobs"`
	Attempts        int     `json:"attempts"`
	Retries         int     `json:"retries"`
	AttemptsPerJob  float64 `json:"attempts_per_job"`
	PeakPerSecond   float64 `json:"peak_attempts_per_second"`
	PeakAtNS        int64   `json:"peak_at_ns"`
	RetryPeak       float64 `json:"peak_retries_per_second"`
	RetryPeakAtNS   int64   `json:"peak_retries_at_ns"`
	Completed       int     `json:"completed"`
	Exhausted       int     `json:"exhausted"`
	RefusedByBudget int     `json:"refused_by_budget"`
	LastAttemptNS   int64   `json:"last_attempt_at_ns"`
}

// writeLoadJSON writes the load report as JSON: the model's parameters
// and one object per run.
func writeLoadJSON(w io.Writer, c loadConfig, budgetText string, runs []*loadRun) {
	out := struct {
		Clients     int        `json:"clients"`
		EveryNS     int64      `json:"every_ns"`
		UntilNS     int64      `json:"until_ns"`
		OutageNS    int64      `json:"outage_ns"`
		FailureRate float64    `json:"failure_rate"`
		BucketNS    int64      `json:"bucket_ns"`
		Seed        uint64     `json:"seed"`
		Budget      string     `json:"budget"`
		Runs        []loadJSON `json:"runs"`
	}{c.clients, int64(c.every), int64(c.until), int64(c.outage), c.failureRate, int64(c.bucket), c.seed, budgetText, []loadJSON{}}
	for _, r := range runs {
		pk, at := peakPerSecond(r.buckets, c.bucket)
		rpk, rat := peakPerSecond(r.retried, c.bucket)
		out.Runs = append(out.Runs, loadJSON{Jitter: r.mode, Budget: r.budget, Jobs: r.jobs, Attempts: r.attempts, Retries: r.retries,
			AttemptsPerJob: r.amplification(), PeakPerSecond: pk, PeakAtNS: int64(at), RetryPeak: rpk, RetryPeakAtNS: int64(rat),
			Completed: r.completed, Exhausted: r.exhausted, RefusedByBudget: r.refused, LastAttemptNS: int64(r.lastAt)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(out) //nolint:errcheck // stdout; the command's exit status reports usage, not output errors
}

// budgetColumn is the short budget name of a table row.
func budgetColumn(name string) string {
	if name == "none" {
		return "none"
	}
	return "yes"
}

// writeLoadSVG draws attempts per bucket, one panel per run, on a shared
// scale, each panel named with its figures.
func writeLoadSVG(w io.Writer, c loadConfig, runs []*loadRun) {
	ch := chart.Bars{
		Title:  fmt.Sprintf("%d clients through a %s outage (failure rate %g): attempts per %s", c.clients, chart.FormatDuration(c.outage), c.failureRate, chart.FormatDuration(c.bucket)),
		Bucket: c.bucket, Shade: c.outage, ShadeLabel: "outage",
		XLabel: "time since the outage began", YLabel: "attempts per " + chart.FormatDuration(c.bucket),
	}
	for _, r := range runs {
		pk, _ := peakPerSecond(r.buckets, c.bucket)
		name := "jitter " + r.mode
		if r.budget != "none" {
			name += ", budget"
		}
		ch.Panels = append(ch.Panels, chart.Panel{Name: fmt.Sprintf("%s: %.2f attempts/job, peak %.0f/s", name, r.amplification(), pk), Counts: r.buckets})
	}
	ch.WriteSVG(w) //nolint:errcheck // the caller checks the buffered writer's flush
}

// loadModes are the jitter modes a load run compares, in report order.
var loadModes = []string{"off", "proportional", "full", "equal", "decorrelated"}

// parseModes reads --modes: "all" or a comma-separated list of loadModes.
func parseModes(s string) ([]string, error) {
	if s == "all" {
		return loadModes, nil
	}
	var out []string
	for _, m := range strings.Split(s, ",") {
		ok := false
		for _, k := range loadModes {
			ok = ok || k == m
		}
		if !ok {
			return nil, fmt.Errorf("--modes: %q is not a jitter mode (all, or a list of %s)", m, strings.Join(loadModes, ", "))
		}
		out = append(out, m)
	}
	return out, nil
}

// loadDefaultBudget is the budget a load run compares with none.
const loadDefaultBudget = `{"ratio": {"ratio": 0.2, "min_per_second": 10, "window": "PT10S"}}`

// Limits of the load model (see simulateUsage).
const (
	maxLoadClients = 100_000
	minLoadEvery   = time.Millisecond
	maxLoadEvery   = 24 * time.Hour
	maxLoadJobs    = 1_000_000
)

// loadFlags are the load model's flags as given.
type loadFlags struct {
	cfg      loadConfig
	untilSet bool
	budget   string
	modes    string
	svg      string
	json     bool
}

// runLoad checks the load model's input, runs it and writes the report.
func runLoad(f loadFlags, p *policy.Policy, stdin io.Reader, stdout io.Writer, bad func(string, ...any) int) int {
	c := f.cfg
	if c.clients < 1 || c.clients > maxLoadClients {
		return bad("--clients must be between 1 and %d, got %d", maxLoadClients, c.clients)
	}
	if c.every < minLoadEvery || c.every > maxLoadEvery {
		return bad("--every must be between %v and %v, got %v", minLoadEvery, maxLoadEvery, c.every)
	}
	if !f.untilSet {
		c.until = c.outage + time.Minute
	}
	if c.until < 1 || c.until > maxSimOutage {
		return bad("--until must be between 1ns and %v, got %v", maxSimOutage, c.until)
	}
	// Count the jobs before building them: clients × until/every can be
	// huge.
	if per := uint64(c.until/c.every) + 1; per > maxLoadJobs || uint64(c.clients)*per > 2*maxLoadJobs {
		return bad("--clients %d enqueueing every %v until %v make more than %d jobs: use fewer clients, a longer --every or an earlier --until", c.clients, c.every, c.until, maxLoadJobs)
	}
	jobs := loadArrivals(c)
	if jobs > maxLoadJobs {
		return bad("--clients %d enqueueing every %v until %v make %d jobs, more than %d: use fewer clients, a longer --every or an earlier --until", c.clients, c.every, c.until, jobs, maxLoadJobs)
	}
	if jobs == 0 {
		return bad("no job arrives before --until %v", c.until)
	}
	modes, err := parseModes(f.modes)
	if err != nil {
		return bad("%v", err)
	}
	var budgetText string
	var newBudget func() retrybudget.Budget
	switch t := strings.TrimSpace(f.budget); {
	case t == "none":
		budgetText = "none"
	case t == "":
		return bad(`--budget is empty: give a retry_budget such as '%s', or none`, loadDefaultBudget)
	default:
		data := []byte(t)
		if !strings.HasPrefix(t, "{") {
			if data, err = readPolicyFile(f.budget, stdin); err != nil {
				return bad("--budget: %v", err)
			}
		}
		b, err := retrybudget.Parse(data)
		if err != nil {
			return bad("--budget: %v", err)
		}
		budgetText = loadBudgetName(b)
		newBudget = func() retrybudget.Budget { b, _ := retrybudget.Parse(data); return b }
	}
	var pols []*loadPolicy
	span := c.until
	for _, m := range modes {
		q, err := withJitterMode(p, m)
		if err != nil {
			return bad("--modes %s: %v", m, err)
		}
		per, ok := loadAttempts(q, m, c.outage)
		if !ok || uint64(jobs)*per > maxSimAttempts {
			return bad("jitter %s: %d jobs × up to %d attempts per job is more than %d attempts per run: use fewer jobs, a shorter --outage or a lower max_attempts",
				m, jobs, per, maxSimAttempts)
		}
		pols = append(pols, q)
		// A retry comes at most max_interval after a failure, and failures
		// happen before the end of the outage.
		span = max(span, sat.AddInt(c.outage, q.Spec().MaxInterval))
	}
	if nb := uint64(span/c.bucket) + 1; nb > maxSimBuckets {
		return bad("--bucket %v is too narrow: attempts can start up to %v after the start, which makes %d buckets (at most %d); use --bucket %v or wider",
			c.bucket, span, nb, maxSimBuckets, roundUp(span/maxSimBuckets+1))
	}
	var svgFile *os.File
	if f.svg != "" {
		if svgFile, err = os.Create(f.svg); err != nil {
			return bad("--svg: %v", err)
		}
		defer svgFile.Close()
	}
	var runs []*loadRun
	for i, m := range modes {
		runs = append(runs, simulateLoad(c, pols[i], m, nil, "none"))
	}
	if newBudget != nil {
		for i, m := range modes {
			runs = append(runs, simulateLoad(c, pols[i], m, newBudget(), budgetText))
		}
	}
	if f.json {
		writeLoadJSON(stdout, c, budgetText, runs)
	} else {
		writeLoadText(stdout, c, p, budgetText, runs)
	}
	if err := finishSVG(svgFile, func(w io.Writer) { writeLoadSVG(w, c, runs) }); err != nil {
		return bad("--svg: %v", err)
	}
	return 0
}

// loadAttempts bounds the attempts one job makes through the outage under
// jitter mode m: attempt k+1 starts no earlier than the sum of the
// shortest delays after attempts 1..k (the base delay without jitter,
// half of it with proportional or equal jitter, initial_interval with
// decorrelated jitter, 0 with full jitter), the first attempt at or after
// the end of the outage succeeds, and max(max_attempts, 1) ends the job.
func loadAttempts(p *loadPolicy, m string, outage time.Duration) (n uint64, ok bool) {
	s := p.Spec()
	last := max(s.MaxAttempts, 1)
	b := p.Backoff()
	var start time.Duration
	for k := 1; ; k++ {
		if k >= last || start >= outage {
			return uint64(k), true
		}
		if k >= maxSimJobAttempts {
			return uint64(k), false
		}
		var lo time.Duration
		switch m {
		case "off":
			lo = b.Base(k)
		case "proportional", "equal":
			lo = b.Base(k) / 2
		case "decorrelated":
			lo = min(s.InitialInterval, s.MaxInterval)
		}
		start = sat.AddInt(start, lo)
	}
}
