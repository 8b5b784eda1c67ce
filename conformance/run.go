package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
)

// Option configures a [Runner].
type Option func(*runConfig)

type runConfig struct {
	ids, reqs, flags map[string]bool
	without          []string
	skips            SkipList
	strict           bool
	parallel         int
	jitterSamples    int
	specOnly         bool
	repeat           int
}

// The documented bounds of the numeric options; the retrykit command
// rejects values outside them.
const (
	// maxParallel bounds [WithParallelism]: each unit is one goroutine
	// (a few KiB of stack) and one request in flight.
	maxParallel = 1024
	// maxJitterSamples bounds [WithJitterSamples]: the check keeps 8 bytes
	// per sample (8 MB at the bound) and sends one delay request each.
	maxJitterSamples = 1_000_000
	// maxRepeat bounds [WithRepeat]: each repetition resends every
	// draw-dependent vector (and the statistical check) once.
	maxRepeat = 100
)

// WithIDs selects only the vectors with these ids (repeatable; the union of
// all selections by id, requirement and flag is run).
func WithIDs(ids ...string) Option {
	return func(c *runConfig) { c.ids = union(c.ids, ids) }
}

// WithRequirements selects only the vectors testing these requirements
// ("RET-04", "RK-05").
func WithRequirements(reqs ...string) Option {
	return func(c *runConfig) { c.reqs = union(c.reqs, reqs) }
}

// WithFlags selects only the vectors carrying at least one of these flags.
func WithFlags(flags ...string) Option {
	return func(c *runConfig) { c.flags = union(c.flags, flags) }
}

// WithoutFlags declares flags the implementation does not claim, in
// addition to the unclaimed_flags of its hello. Vectors carrying one are
// not run and are reported under coverage.
func WithoutFlags(flags ...string) Option {
	return func(c *runConfig) { c.without = append(c.without, flags...) }
}

// WithSkips sets the known-failure list. Listed vectors are reported as
// skipped with the list's reason; in strict mode they are run anyway.
func WithSkips(s SkipList) Option { return func(c *runConfig) { c.skips = s } }

// WithStrict turns on strict mode: vectors on the skip list are run, and one
// that passes is reported as a failure ("remove it from the skip list"), so
// the list cannot go stale.
func WithStrict(strict bool) Option { return func(c *runConfig) { c.strict = strict } }

// WithParallelism sets how many requests are in flight at once: 1 to 1024
// (default 32; values outside are clamped). Each costs one goroutine;
// requests to a [protocol.Process] are pipelined over its one process.
func WithParallelism(n int) Option {
	return func(c *runConfig) { c.parallel = min(max(n, 1), maxParallel) }
}

// WithJitterSamples sets K for the statistical jitter check: 0 (leave the
// check out) to 1 000 000 (default [DefaultJitterSamples]; values outside
// are clamped). The check sends K delay requests and keeps 8 bytes per
// sample.
func WithJitterSamples(k int) Option {
	return func(c *runConfig) { c.jitterSamples = min(max(k, 0), maxJitterSamples) }
}

// WithSpecOnly restricts the run to the spec's MUST level: vectors of
// SHOULD-level or optional features and of retrykit decisions (see
// [Result.Level]) are not selected. It is the run behind the spec-only
// score and command of every report.
func WithSpecOnly() Option { return func(c *runConfig) { c.specOnly = true } }

// WithRepeat runs every draw-dependent vector ([Result.Random]) and the
// statistical jitter check k times, 1 to 100 (default 1; values outside are
// clamped). A vector judged differently across the runs is reported as a
// failure that flips, and listed in [Report.Flipped].
func WithRepeat(k int) Option {
	return func(c *runConfig) { c.repeat = min(max(k, 1), maxRepeat) }
}

func union(m map[string]bool, xs []string) map[string]bool {
	if len(xs) == 0 {
		return m
	}
	if m == nil {
		m = map[string]bool{}
	}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// runnerErrorID is the ID of the one error result of a run that could not
// start at all (a Runner without a suite, a nil Implementation).
const runnerErrorID = "runner"

// Runner runs a [Suite] against implementations. It judges each answer by
// these rules, in order:
//
//  1. a vector whose op the implementation lacks, or that carries a flag it
//     does not claim, is not run and is reported under coverage;
//  2. an error from Do (crash, timeout, protocol violation) or an answer
//     without the fields of its op is an error, never a failure;
//  3. otherwise the answer passes when it equals the expected outcome (or
//     one acceptable outcome) within the resolution the implementation
//     declares; with opaque jitter the runner sends no rand and checks the
//     delay against the jitter bounds instead ([Result.Random]).
//
// For every implementation that answers delays, a Kolmogorov–Smirnov test
// of its own jitter multiplier (false-alarm rate 10⁻⁶) is reported as
// [JitterCheckID]. A Runner is immutable after [NewRunner] and safe for
// concurrent use; each Run is independent.
type Runner struct {
	suite *Suite
	cfg   runConfig
}

// NewRunner returns a runner for suite with the given options. A nil
// suite gives a runner whose Run reports a single error result.
func NewRunner(suite *Suite, opts ...Option) *Runner {
	cfg := runConfig{parallel: 32, jitterSamples: DefaultJitterSamples, repeat: 1}
	for _, o := range opts {
		o(&cfg)
	}
	return &Runner{suite: suite, cfg: cfg}
}

// selected reports whether the selection options pick v.
func (r *Runner) selected(v *Vector) bool {
	c := &r.cfg
	if c.specOnly && levelOf(v.Requirement, v.Flags) != levelMust {
		return false
	}
	if c.ids == nil && c.reqs == nil && c.flags == nil {
		return true
	}
	if c.ids[v.ID] || c.reqs[v.Requirement] {
		return true
	}
	for _, req := range v.Covers {
		if c.reqs[req] {
			return true
		}
	}
	for _, f := range v.Flags {
		if c.flags[f] {
			return true
		}
	}
	return false
}

// Run runs every selected vector against impl and returns the report. It
// never fails: a broken implementation shows up as "error" results. Hello is
// called first; if it fails, or declares another protocol, every selected
// vector is reported as an error. A nil Runner, a Runner without a suite
// or a nil impl gives a report with a single error result (ID
// "runner"), so that it is never OK.
func (r *Runner) Run(ctx context.Context, impl protocol.Implementation) *Report {
	start := time.Now()
	rep := &Report{Repeat: 1}
	var misuse string
	switch {
	case r == nil || r.suite == nil:
		misuse = "conformance: Runner has no suite (NewRunner was given nil)"
	case impl == nil:
		misuse = "conformance: Run was given a nil protocol.Implementation"
	}
	if misuse != "" {
		rep.Results = []Result{{ID: runnerErrorID, Status: StatusError, Reason: misuse}}
		rep.Elapsed = time.Since(start)
		rep.finish()
		return rep
	}
	rep.notes, rep.SpecOnly, rep.Repeat = r.suite.notes, r.cfg.specOnly, r.cfg.repeat
	rep.SuiteVersion, rep.SpecVersion = r.suite.suite, r.suite.spec
	var sel []*Vector
	for _, v := range r.suite.Vectors {
		if r.selected(v) {
			sel = append(sel, v)
		} else {
			rep.NotSelected++
		}
	}
	var unknown []string
	for id := range r.cfg.skips {
		if r.suite.Vector(id) == nil {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	for _, id := range unknown {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("skip list names unknown vector %q", id))
		if r.cfg.strict {
			// A typo'd id would otherwise hide nothing and say nothing.
			rep.Results = append(rep.Results, Result{ID: id, Requirement: "skip-file", Kind: "skip-file", Status: StatusFail,
				Level: levelMust, Reason: "skip file names a vector the suite does not have (strict mode): fix or remove the line",
				cause: "unknown-skip-entry"})
		}
	}
	sort.Strings(rep.Warnings)

	h, err := impl.Hello(ctx)
	if err == nil {
		err = h.Check()
	}
	if err != nil {
		for _, v := range sel {
			res := resultFor(v)
			res.Status, res.Reason, res.Stderr = StatusError, "hello: "+err.Error(), stderrOf(err)
			res.cause = "hello-failed"
			rep.Results = append(rep.Results, res)
		}
		rep.Elapsed = time.Since(start)
		rep.finish()
		return rep
	}
	rep.Implementation = h
	unclaimed := append(append([]string(nil), h.UnclaimedFlags...), r.cfg.without...)
	h.UnclaimedFlags = unclaimed

	results := make([]*Result, len(sel))
	var jobs []int
	for i, v := range sel {
		if v.Kind == kindScenario && !h.Supports(protocol.OpScenario) {
			// A policy library without an executor: scenarios are not its
			// job, so they leave the scores, coverage and JUnit (one line
			// of the report says so).
			rep.ScenariosLeftOut++
			continue
		}
		if reason := coverageGap(v, h); reason != "" {
			rep.NotRun = append(rep.NotRun, uncovered(v, reason))
			continue
		}
		if reason, ok := r.cfg.skips[v.ID]; ok && !r.cfg.strict {
			res := resultFor(v)
			res.Status, res.Reason = StatusSkip, skipReason(reason)
			results[i] = &res
			continue
		}
		jobs = append(jobs, i)
	}

	unsupported := make([]bool, len(sel))
	r.pool(len(jobs), func(k int) {
		i := jobs[k]
		res, unsup := r.runOne(ctx, impl, h, sel[i], int64(i+1))
		if unsup {
			unsupported[i] = true
			return
		}
		results[i] = &res
	})
	r.repeatRandom(ctx, impl, h, sel, results, rep)
	for i, res := range results {
		switch {
		case unsupported[i]:
			rep.NotRun = append(rep.NotRun, uncovered(sel[i], fmt.Sprintf("op %s answered unsupported", opFor(sel[i].Kind))))
		case res != nil:
			rep.Results = append(rep.Results, *res)
		}
	}

	if r.cfg.jitterSamples > 0 && r.selected(jitterCheckVector) {
		if !h.Supports(protocol.OpDelay) {
			rep.NotRun = append(rep.NotRun, uncovered(jitterCheckVector, "op delay not supported"))
		} else {
			res := jitterCheck(ctx, impl, h, r.cfg.jitterSamples, r.cfg.parallel)
			for n := 1; n < r.cfg.repeat && (res.Status == StatusPass || res.Status == StatusFail); n++ {
				again := jitterCheck(ctx, impl, h, r.cfg.jitterSamples, r.cfg.parallel)
				if again.Status != res.Status {
					res = flipped(res, again, n+1, r.cfg.repeat)
					rep.Flipped = append(rep.Flipped, res.ID)
					break
				}
			}
			rep.Results = append(rep.Results, res)
		}
	}
	rep.Elapsed = time.Since(start)
	rep.finish()
	return rep
}

// pool calls fn(0) … fn(n-1) on up to the configured number of goroutines
// and waits for them.
func (r *Runner) pool(n int, fn func(int)) {
	ch := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(r.cfg.parallel, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range ch {
				fn(k)
			}
		}()
	}
	for k := 0; k < n; k++ {
		ch <- k
	}
	close(ch)
	wg.Wait()
}

// repeatRandom runs the draw-dependent vectors among results (those judged
// pass or fail) r.cfg.repeat−1 more times. A vector judged differently in
// some run becomes a failure naming the flip, and is listed in
// rep.Flipped.
func (r *Runner) repeatRandom(ctx context.Context, impl protocol.Implementation, h protocol.Hello, sel []*Vector, results []*Result, rep *Report) {
	if r.cfg.repeat <= 1 {
		return
	}
	var idx []int
	for i, res := range results {
		if res != nil && res.Random && (res.Status == StatusPass || res.Status == StatusFail) {
			idx = append(idx, i)
		}
	}
	n := len(idx) * (r.cfg.repeat - 1)
	var mu sync.Mutex
	r.pool(n, func(k int) {
		i := idx[k%len(idx)]
		again, unsup := r.runOne(ctx, impl, h, sel[i], int64(len(sel)+k+1))
		mu.Lock()
		defer mu.Unlock()
		if _, onList := r.cfg.skips[sel[i].ID]; onList && !unsup {
			// Skip-listed: a run that still fails keeps the vector skipped;
			// it is stale only if it passed in every run.
			if res := results[i]; res.cause == "stale-skip-entry" && again.Status == StatusSkip {
				results[i] = &again
			}
			return
		}
		if res := results[i]; !unsup && again.Status != res.Status && !contains(rep.Flipped, res.ID) {
			f := flipped(*res, again, k/len(idx)+2, r.cfg.repeat)
			results[i] = &f
			rep.Flipped = append(rep.Flipped, res.ID)
		}
	})
	sort.Strings(rep.Flipped)
}

// flipped returns the result for a vector judged as first in one run and
// as again in another (run number n of total): a failure that says so,
// with the failing run's reason and answer.
func flipped(first, again Result, n, total int) Result {
	fail, failRun, passRun := again, n, 1
	if first.Status == StatusFail {
		fail, failRun, passRun = first, 1, n
	}
	fail.Random = true
	fail.Status = StatusFail
	fail.Reason = fmt.Sprintf("verdict flips between runs (own random draws): passed in run %d of %d, failed in run %d: %s", passRun, total, failRun, fail.Reason)
	return fail
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// coverageGap returns why v cannot be run against h, or "".
func coverageGap(v *Vector, h protocol.Hello) string {
	if op := opFor(v.Kind); !h.Supports(op) {
		return "op " + op + " not supported"
	}
	for _, f := range v.Flags {
		if !h.Claims(f) {
			return "flag " + f + " not claimed"
		}
	}
	return ""
}

// stalePrefix starts the reason of a strict-mode failure for a listed vector
// that passes.
const stalePrefix = "listed in skip file but passes now"

func skipReason(reason string) string {
	if reason == "" {
		return "listed in skip file"
	}
	return "listed in skip file: " + reason
}

// runOne sends one vector. uncovered is true when the answer was
// "unsupported".
func (r *Runner) runOne(ctx context.Context, impl protocol.Implementation, h protocol.Hello, v *Vector, id int64) (Result, bool) {
	res := resultFor(v)
	req := v.req
	req.ID = id
	cmp := comparison{hello: h, floatTol: v.hasFlag("float-tolerance")}
	if h.Jitter == protocol.JitterOpaque && req.Rand != nil {
		req.Rand = nil
		cmp.bounds = opaqueBounds(v)
	}
	res.Random = req.Rand == nil && (cmp.bounds != nil || hasBounds(v.Kind, &v.want))
	got, err := impl.Do(ctx, req)
	res.Want = v.wantJSON
	if cmp.bounds != nil {
		// Opaque jitter: the answer is judged against the jitter bounds,
		// so the expectation shown is those bounds.
		res.Want = boundsJSON(v.Kind, cmp.bounds)
	}
	skipped, onList := r.cfg.skips[v.ID]
	if err != nil {
		res.Status, res.Reason, res.Stderr = StatusError, err.Error(), stderrOf(err)
		res.cause = errorSymptom(err)
		if onList {
			res.Status, res.Reason = StatusSkip, skipReason(skipped)+" (still errors: "+err.Error()+")"
		}
		return res, false
	}
	if got.Unsupported {
		return res, true
	}
	ans := got.AppendJSON(nil)
	res.Got = reportedAnswer(ans)
	if len(ans) <= maxDiagnosedAnswer {
		res.probe = &probe{v: v, req: req, got: got, cmp: cmp}
	}
	if err := got.Check(req.Op); err != nil {
		res.Status, res.Reason, res.cause = StatusError, "malformed answer: "+err.Error(), "malformed-answer"
	} else if v.sc != nil {
		r.judgeScenario(&res, v, got)
	} else if reason := asSent(cmp.compare(v, got), got); reason != "" {
		res.Status, res.Reason, res.cause = StatusFail, reason, failSymptom(v.Kind, &v.want, got, reason)
	} else {
		res.Status = StatusPass
	}
	if onList {
		switch {
		case res.Status == StatusPass && res.Random && drawDependentEntry(skipped) && r.cfg.repeat == 1:
			// One passing draw proves nothing for a vector listed as
			// draw-dependent; --repeat K runs it K times.
			res.Status, res.Reason = StatusSkip, skipReason(skipped)+" (passed in this run; a draw-dependent entry is stale only when it passes every run of --repeat K)"
		case res.Status == StatusPass:
			res.Status, res.Reason = StatusFail, stalePrefix+" (strict mode): remove it from the skip file"
			if r.cfg.repeat > 1 && res.Random {
				res.Reason = fmt.Sprintf("%s in every one of %d runs (strict mode): remove it from the skip file", stalePrefix, r.cfg.repeat)
			}
			res.cause = "stale-skip-entry"
		default:
			res.Status, res.Reason = StatusSkip, skipReason(skipped)+" (still fails: "+res.Reason+")"
		}
	}
	return res, false
}

// judgeScenario fills res for the answer to a scenario vector. A scenario
// answer is long, so a report shows only the expectation and the
// observation of the first step that differs (nothing for a pass).
func (r *Runner) judgeScenario(res *Result, v *Vector, got protocol.Response) {
	res.Want, res.Got = nil, nil
	if got.Error != nil {
		// The adapter could not run the scenario at all (PROTOCOL.md 3.7).
		res.Status, res.Reason = StatusError, "scenario rejected: "+got.Error.Type+": "+got.Error.Message
		res.cause = "scenario-rejected"
		res.Got = got.AppendJSON(nil)
		return
	}
	reason, want, obs, malformed := judgeScenario(v.sc, got.Steps)
	switch {
	case malformed != nil:
		res.Status, res.Reason, res.cause = StatusError, "malformed answer: "+malformed.Error(), "malformed-answer"
	case reason != "":
		res.Status, res.Reason, res.Want, res.Got = StatusFail, reason, want, obs
		res.cause = "wrong-scenario"
	default:
		res.Status = StatusPass
	}
}

// hasBounds reports whether w (or an acceptable entry of it) bounds a delay
// instead of fixing it: the implementation then draws its own jitter.
func hasBounds(kind string, w *outcome) bool {
	if kind != kindDelay && kind != kindDecide {
		return false
	}
	if w.MinNS != nil {
		return true
	}
	for i := range w.Acceptable {
		if hasBounds(kind, &w.Acceptable[i]) {
			return true
		}
	}
	return false
}

// opaqueBounds returns the closed range a jittered delay of v's policy and
// attempt can take, computed with the reference, or nil when the policy
// has no jitter (the exact value is then compared) or is invalid.
func opaqueBounds(v *Vector) *[2]int64 {
	if v.want.DelayNS == nil {
		return nil
	}
	p, err := policy.Parse(v.req.Policy)
	if err != nil || !p.Spec().Jitter || v.req.Attempt < 1 {
		return nil
	}
	lo, hi := p.Backoff().Bounds(clampAttempt(v.req.Attempt))
	return &[2]int64{int64(lo), int64(hi)}
}

// stderrOf returns the adapter stderr attached to err, if any.
func stderrOf(err error) string {
	var ae *protocol.AdapterError
	if errors.As(err, &ae) {
		return ae.Stderr
	}
	return ""
}

// boundsJSON is the expectation shown for a delay judged against jitter
// bounds (opaque jitter).
func boundsJSON(kind string, b *[2]int64) json.RawMessage {
	if kind == kindDecide {
		return json.RawMessage(fmt.Sprintf(`{"action":"retry","min_ns":%d,"max_ns":%d}`, b[0], b[1]))
	}
	return json.RawMessage(fmt.Sprintf(`{"min_ns":%d,"max_ns":%d}`, b[0], b[1]))
}
