package conformance

import (
	"context"
	"errors"
	"fmt"
	"github.com/retrykit/retrykit/conformance/protocol"
	"sort"
	"sync"
	"time"

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
}

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

// WithParallelism sets how many requests are in flight at once (default 32).
// Requests to a [protocol.Process] are pipelined over its one process.
func WithParallelism(n int) Option {
	return func(c *runConfig) {
		if n > 0 {
			c.parallel = n
		}
	}
}

// WithJitterSamples sets K for the statistical jitter check (default
// [DefaultJitterSamples]); 0 leaves the check out.
func WithJitterSamples(k int) Option {
	return func(c *runConfig) {
		if k >= 0 {
			c.jitterSamples = k
		}
	}
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

// RunnerErrorID is the ID of the one error result of a run that could not
// start at all (a Runner without a suite, a nil Implementation).
const RunnerErrorID = "runner"

// Runner runs a [Suite] against implementations. It is immutable after
// [NewRunner] and safe for concurrent use; each Run is independent.
type Runner struct {
	suite *Suite
	cfg   runConfig
}

// NewRunner returns a runner for suite with the given options. A nil
// suite gives a runner whose Run reports a single error result.
func NewRunner(suite *Suite, opts ...Option) *Runner {
	cfg := runConfig{parallel: 32, jitterSamples: DefaultJitterSamples}
	for _, o := range opts {
		o(&cfg)
	}
	return &Runner{suite: suite, cfg: cfg}
}

// selected reports whether the selection options pick v.
func (r *Runner) selected(v *Vector) bool {
	c := &r.cfg
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
// [RunnerErrorID]), so that it is never OK.
func (r *Runner) Run(ctx context.Context, impl protocol.Implementation) *Report {
	start := time.Now()
	rep := &Report{}
	var misuse string
	switch {
	case r == nil || r.suite == nil:
		misuse = "conformance: Runner has no suite (NewRunner was given nil)"
	case impl == nil:
		misuse = "conformance: Run was given a nil protocol.Implementation"
	}
	if misuse != "" {
		rep.Results = []Result{{ID: RunnerErrorID, Status: StatusError, Reason: misuse}}
		rep.Elapsed = time.Since(start)
		rep.finish()
		return rep
	}
	if len(r.suite.Files) > 0 {
		rep.SuiteVersion, rep.SpecVersion = r.suite.Files[0].SuiteVersion, r.suite.Files[0].SpecVersion
	}
	var sel []*Vector
	for _, v := range r.suite.Vectors {
		if r.selected(v) {
			sel = append(sel, v)
		} else {
			rep.NotSelected++
		}
	}
	for id := range r.cfg.skips {
		if r.suite.Vector(id) == nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("skip list names unknown vector %q", id))
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
			rep.Results = append(rep.Results, res)
		}
		rep.Elapsed = time.Since(start)
		rep.finish()
		return rep
	}
	rep.Implementation = h
	unclaimed := append(append([]string(nil), h.UnclaimedFlags...), r.cfg.without...)
	h.UnclaimedFlags = unclaimed

	type job struct {
		v   *Vector
		idx int
	}
	results := make([]*Result, len(sel))
	var jobs []job
	for i, v := range sel {
		if reason := coverageGap(v, h); reason != "" {
			rep.NotRun = append(rep.NotRun, Uncovered{ID: v.ID, Requirement: v.Requirement, Covers: v.Covers, Kind: v.Kind, Reason: reason})
			continue
		}
		if reason, ok := r.cfg.skips[v.ID]; ok && !r.cfg.strict {
			res := resultFor(v)
			res.Status, res.Reason = StatusSkip, skipReason(reason)
			results[i] = &res
			continue
		}
		jobs = append(jobs, job{v, i})
	}

	ch := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var unsupported []Uncovered
	for w := 0; w < r.cfg.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				res, uncovered := r.runOne(ctx, impl, h, j.v, int64(j.idx+1))
				if uncovered {
					mu.Lock()
					unsupported = append(unsupported, Uncovered{ID: j.v.ID, Requirement: j.v.Requirement, Covers: j.v.Covers, Kind: j.v.Kind,
						Reason: fmt.Sprintf("op %s answered unsupported", OpFor(j.v.Kind))})
					mu.Unlock()
					continue
				}
				results[j.idx] = &res
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	for _, res := range results {
		if res != nil {
			rep.Results = append(rep.Results, *res)
		}
	}
	rep.NotRun = append(rep.NotRun, unsupported...)

	if r.cfg.jitterSamples > 0 && r.selected(jitterCheckVector) {
		if !h.Supports(protocol.OpDelay) {
			rep.NotRun = append(rep.NotRun, Uncovered{ID: JitterCheckID, Requirement: "RET-05", Kind: KindDelay, Reason: "op delay not supported"})
		} else {
			res := jitterCheck(ctx, impl, h, r.cfg.jitterSamples, r.cfg.parallel)
			rep.Results = append(rep.Results, res)
		}
	}
	rep.Elapsed = time.Since(start)
	rep.finish()
	return rep
}

// coverageGap returns why v cannot be run against h, or "".
func coverageGap(v *Vector, h protocol.Hello) string {
	if op := OpFor(v.Kind); !h.Supports(op) {
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
	cmp := comparison{hello: h, floatTol: v.HasFlag("float-tolerance")}
	if h.Jitter == protocol.JitterOpaque && req.Rand != nil {
		req.Rand = nil
		cmp.bounds = opaqueBounds(v)
	}
	got, err := impl.Do(ctx, req)
	res.Want = v.wantJSON
	skipped, onList := r.cfg.skips[v.ID]
	if err != nil {
		res.Status, res.Reason, res.Stderr = StatusError, err.Error(), stderrOf(err)
		if onList {
			res.Status, res.Reason = StatusSkip, skipReason(skipped)+" (still errors: "+err.Error()+")"
		}
		return res, false
	}
	if got.Unsupported {
		return res, true
	}
	res.Got = reportedAnswer(got.AppendJSON(nil))
	if err := got.Check(req.Op); err != nil {
		res.Status, res.Reason = StatusError, "malformed answer: "+err.Error()
	} else if v.sc != nil {
		r.judgeScenario(&res, v, got)
	} else if reason := cmp.compare(v, got); reason != "" {
		res.Status, res.Reason = StatusFail, reason
	} else {
		res.Status = StatusPass
	}
	if onList {
		if res.Status == StatusPass {
			res.Status, res.Reason = StatusFail, stalePrefix+" (strict mode): remove it from the skip file"
		} else {
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
		res.Got = got.AppendJSON(nil)
		return
	}
	reason, want, obs, malformed := judgeScenario(v.sc, got.Steps)
	switch {
	case malformed != nil:
		res.Status, res.Reason = StatusError, "malformed answer: "+malformed.Error()
	case reason != "":
		res.Status, res.Reason, res.Want, res.Got = StatusFail, reason, want, obs
	default:
		res.Status = StatusPass
	}
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
