package fuzz

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policytest"
	"pgregory.net/rapid"
)

// Config is what [Run] does, plain data. The zero value of each field
// picks its default (Seed excepted).
type Config struct {
	Cases int      // requests to send in all, spread evenly over the ops (default 10 000)
	Seed  uint64   // rapid's base seed; 0 is not allowed (the caller draws and prints one)
	Ops   []string // ops to fuzz (default: every op of policytest.Ops() the hello lists)
	// Unclaimed lists flags the implementation does not claim, in
	// addition to the unclaimed_flags of its hello (as
	// conformance.WithoutFlags): requests carrying one are not sent
	// (OpResult.Skipped), and answers are judged as for a hello that
	// lists them ("extension:backoff_strategy": an effective policy
	// without the field is accepted).
	Unclaimed []string
	// Parallel is the number of requests per rapid check, sent
	// concurrently (default 1). Above 1 the search stops at the first
	// disagreement unshrunk, and a second search of one request per check
	// from the same seed, budgeted at four times the requests the first
	// needed, finds it again and shrinks it: rapid's work on a batch of B
	// requests grows like B².
	Parallel   int
	ShrinkTime time.Duration // limit on shrinking one disagreement (default 30s)
	// Time, if non-zero, bounds the whole run: each op gets an equal share
	// of the time left when it starts, no request is sent after its
	// share, and shrinking fits in the time left. Requests in flight when
	// it runs out still get their per-request timeout, so a run can end
	// up to one such timeout late. Ops cut short report how many of their
	// cases were sent (OpResult.OutOfTime).
	Time time.Duration
	// Stop, if not nil, ends the run early when it is closed (an
	// interrupt): as if Time ran out at that moment. A shrink under way
	// still finishes within its limit.
	Stop <-chan struct{}
	// Progress, if non-nil, gets a line every ProgressEvery (default 2s)
	// while the run goes on, and one when an op ends.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Result is the outcome of a run: plain data, safe to read from several
// goroutines once Run has returned.
type Result struct {
	Hello   protocol.Hello
	Seed    uint64
	Ops     []OpResult
	Elapsed time.Duration
	// OutOfTime reports that Config.Time ran out before every case was
	// sent; the Ops say which were cut short.
	OutOfTime bool
	// Stopped reports that Config.Stop was closed before every case was
	// sent; the ops cut short are marked OutOfTime.
	Stopped bool
}

// OK reports whether no op found a disagreement or an adapter failure.
func (r *Result) OK() bool {
	for _, o := range r.Ops {
		if o.Disagreement != nil || o.Failure != nil {
			return false
		}
	}
	return true
}

// OpResult is the outcome for one op; the zero value is an op with no
// case sent and nothing found.
type OpResult struct {
	Op      string
	Planned int // requests this op was to send (its share of Config.Cases)
	// OutOfTime reports that the op stopped at its share of Config.Time
	// with fewer than Planned requests sent (none, when the time was gone
	// before it started).
	OutOfTime bool
	Cases     int // requests sent and judged
	Skipped   int // requests not sent: they carry a flag the implementation does not claim
	// Unsupported counts the requests (among Cases) answered "unsupported":
	// not covered, neither agreement nor disagreement.
	Unsupported int
	// Disagreement is the minimal request found on which the implementation
	// and the reference differ, or nil.
	Disagreement *policytest.Disagreement
	// Cause is the cause of Disagreement, as [Confirm] found it against the
	// implementation while it ran; nil without a disagreement.
	Cause *Cause
	// Failure is set when the implementation failed (crash, timeout,
	// malformed answer) on FailedRequest; such a failure is not shrunk.
	Failure       error
	FailedRequest *protocol.Request
	Shrink        time.Duration // time from the first disagreement to the end of shrinking
}

// ErrHello is matched by the error [Run] returns when the implementation
// does not answer hello, or lists none of the requested ops.
var ErrHello = errors.New("fuzz: hello failed")

// Run fuzzes impl. It returns an error matching [ErrHello] when impl's hello
// fails or declares no op to fuzz; every other problem is in the Result.
func Run(ctx context.Context, impl protocol.Implementation, cfg Config) (*Result, error) {
	start := time.Now()
	if cfg.Cases <= 0 {
		cfg.Cases = 10000
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 1
	}
	if cfg.ShrinkTime <= 0 {
		cfg.ShrinkTime = 30 * time.Second
	}
	if cfg.Seed == 0 {
		return nil, errors.New("fuzz: Config.Seed must not be 0")
	}
	h, err := impl.Hello(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHello, err)
	}
	if len(cfg.Unclaimed) > 0 {
		h.UnclaimedFlags = append(append([]string(nil), h.UnclaimedFlags...), cfg.Unclaimed...)
	}
	ops := cfg.Ops
	if len(ops) == 0 {
		ops = policytest.Ops()
	}
	var use []string
	for _, op := range ops {
		if h.Supports(op) && known(op) {
			use = append(use, op)
		}
	}
	if len(use) == 0 {
		return nil, fmt.Errorf("%w: the implementation lists none of the ops %v (it lists %v)", ErrHello, ops, h.Ops)
	}
	res := &Result{Hello: h, Seed: cfg.Seed}
	var end time.Time // the run's deadline, zero without Config.Time
	if cfg.Time > 0 {
		end = start.Add(cfg.Time)
	}
	prog := newProgress(cfg, start, end)
	defer prog.stop()
	for i, op := range use {
		n := cfg.Cases / len(use)
		if i < cfg.Cases%len(use) {
			n++
		}
		b := budget{end: end, stop: cfg.Stop}
		if b.stopped() {
			res.Ops = append(res.Ops, OpResult{Op: op, Planned: n, OutOfTime: true})
			prog.opDone(res.Ops[len(res.Ops)-1])
			continue
		}
		if !end.IsZero() {
			left := time.Until(end)
			if left <= 0 {
				res.Ops = append(res.Ops, OpResult{Op: op, Planned: n, OutOfTime: true})
				prog.opDone(res.Ops[len(res.Ops)-1])
				continue
			}
			b.search = time.Now().Add(left / time.Duration(len(use)-i))
		}
		prog.opStart(op, n)
		o := runOp(ctx, impl, h, op, n, cfg, b, prog)
		o.Planned = n
		res.Ops = append(res.Ops, o)
		prog.opDone(o)
	}
	stopped := budget{stop: cfg.Stop}.stopped()
	for _, o := range res.Ops {
		res.OutOfTime = res.OutOfTime || o.OutOfTime && !stopped
		res.Stopped = res.Stopped || o.OutOfTime && stopped
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// budget is the time an op may use: search is when it stops sending new
// requests (its share), end the run's deadline, which bounds shrinking.
// Zero times mean no limit.
type budget struct {
	search, end time.Time
	stop        <-chan struct{}
}

// over reports whether no new request may be sent: the search deadline
// passed or Stop was closed.
func (b budget) over() bool {
	return b.stopped() || !b.search.IsZero() && time.Now().After(b.search)
}

// stopped reports whether Stop was closed.
func (b budget) stopped() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// shrink returns the time shrinking may take: limit, cut to the time left
// before the run's deadline (at least a millisecond, so that rapid still
// reports the unshrunk case).
func (b budget) shrink(limit time.Duration) time.Duration {
	if b.end.IsZero() {
		return limit
	}
	return max(min(limit, time.Until(b.end)), time.Millisecond)
}

// progress writes progress lines to Config.Progress; its methods do
// nothing when that is nil.
type progress struct {
	w           io.Writer
	start, end  time.Time
	mu          sync.Mutex
	op          string
	planned     int
	sent        atomic.Int64
	done        chan struct{}
	stopOnce    sync.Once
	tickerEnded chan struct{}
}

func newProgress(cfg Config, start, end time.Time) *progress {
	p := &progress{w: cfg.Progress, start: start, end: end, done: make(chan struct{}), tickerEnded: make(chan struct{})}
	if p.w == nil {
		close(p.tickerEnded)
		return p
	}
	every := cfg.ProgressEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	go func() {
		defer close(p.tickerEnded)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.mu.Lock()
				op, planned := p.op, p.planned
				p.mu.Unlock()
				if op != "" {
					p.line(fmt.Sprintf("%s: %d of %d cases sent", op, p.sent.Load(), planned))
				}
			}
		}
	}()
	return p
}

// line writes one progress line with the time used and, with a budget,
// the time left.
func (p *progress) line(msg string) {
	if p.w == nil {
		return
	}
	el := time.Since(p.start).Round(time.Second)
	left := ""
	if !p.end.IsZero() {
		left = fmt.Sprintf(", %v left", max(time.Until(p.end), 0).Round(time.Second))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "fuzz: %s (%v elapsed%s)\n", msg, el, left)
}

func (p *progress) opStart(op string, planned int) {
	p.mu.Lock()
	p.op, p.planned = op, planned
	p.mu.Unlock()
	p.sent.Store(0)
}

func (p *progress) opDone(o OpResult) {
	status := "ok"
	switch {
	case o.Disagreement != nil:
		status = "disagreement"
	case o.Failure != nil:
		status = "adapter failure"
	case o.OutOfTime:
		status = "out of time"
	}
	p.mu.Lock()
	p.op = ""
	p.mu.Unlock()
	p.line(fmt.Sprintf("%s: done, %d of %d cases sent, %s", o.Op, o.Cases, o.Planned, status))
}

func (p *progress) stop() {
	p.stopOnce.Do(func() { close(p.done) })
	<-p.tickerEnded
}

func known(op string) bool {
	for _, o := range policytest.Ops() {
		if o == op {
			return true
		}
	}
	return false
}

// rapidMu serialises runs: rapid's settings are process-wide flags.
var rapidMu sync.Mutex

// withRapidFlags sets rapid's flags for the duration of fn and restores
// them. Outside "go test" it first initialises the testing flags rapid
// consults (testing.Short).
func withRapidFlags(set map[string]string, fn func()) {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
	old := map[string]string{}
	for name, v := range set {
		f := flag.Lookup(name)
		if f == nil {
			panic("fuzz: rapid has no flag " + name)
		}
		old[name] = f.Value.String()
		if err := f.Value.Set(v); err != nil {
			panic(fmt.Sprintf("fuzz: set %s=%s: %v", name, v, err))
		}
	}
	defer func() {
		for name, v := range old {
			_ = flag.Lookup(name).Value.Set(v)
		}
	}()
	fn()
}

// runOp fuzzes op with n requests. With batches (Parallel > 1) it runs in
// two phases, because rapid shrinks a batch of B requests in about B² times
// the work of one request (every draw of every request is a block to
// minimise, and every try draws the whole batch): the pipelined search
// stops at the first disagreement without shrinking, and a second search
// from the same seed with one request per check, budgeted at four times the
// requests the first one needed, finds a disagreement again and shrinks it
// cheaply. If that second search finds nothing, the first one's request is
// reported, simplified but not shrunk by rapid.
func runOp(ctx context.Context, impl protocol.Implementation, h protocol.Hello, op string, n int, cfg Config, b budget, prog *progress) OpResult {
	out := OpResult{Op: op}
	shrink := b.shrink(cfg.ShrinkTime)
	if cfg.Parallel > 1 {
		shrink = time.Nanosecond // phase 1 does not shrink
	}
	start := time.Now()
	s := search(ctx, impl, h, op, n, cfg.Parallel, cfg.Seed, shrink, b, prog)
	out.Cases, out.Skipped, out.Unsupported = s.sent, s.skipped, s.unsupported
	out.OutOfTime = s.outOfTime
	switch {
	case s.failure != nil:
		out.Failure, out.FailedRequest = s.failure, s.failedReq
		return out
	case s.disagreement == nil && s.rapidError != "":
		out.Failure = errors.New("fuzz: rapid reported a failure without a disagreement: " + s.rapidError)
		return out
	case s.disagreement == nil:
		return out
	}
	d := s.disagreement
	start = s.firstFail
	if cfg.Parallel > 1 {
		// The second search has the time left of the run, not of the op's
		// share: finding the disagreement again is worth it.
		if s2 := search(ctx, impl, h, op, 4*s.sent, 1, cfg.Seed, b.shrink(cfg.ShrinkTime), budget{search: b.end, stop: b.stop}, nil); s2.disagreement != nil {
			d = s2.disagreement
		}
	}
	out.Disagreement = simplify(ctx, impl, h, d)
	c := Confirm(ctx, impl, out.Disagreement, h.Jitter == protocol.JitterOpaque)
	out.Cause = &c
	out.Shrink = time.Since(start)
	return out
}

// searchResult is what one rapid check found.
type searchResult struct {
	sent, skipped int
	unsupported   int
	disagreement  *policytest.Disagreement // the last one seen: after shrinking, the minimal one
	firstFail     time.Time
	failure       error // the implementation failed; not shrunk
	failedReq     *protocol.Request
	rapidError    string // rapid failed for another reason
	outOfTime     bool   // the search stopped at its deadline
}

// search runs one rapid check of up to n requests of op, batch requests per
// check, shrinking for at most shrink.
//
// Once b is over (its search deadline passed, or Stop closed), the next
// check ends the search (outOfTime): it fails at once, before drawing anything, so that
// rapid stops and has nothing to shrink. prog, if not nil, counts the
// requests sent.
func search(ctx context.Context, impl protocol.Implementation, h protocol.Hello, op string, n, batch int, seed uint64, shrink time.Duration, b budget, prog *progress) searchResult {
	var res searchResult
	checks := (n + batch - 1) / batch
	if checks == 0 {
		return res
	}
	gen := policytest.Request(op)
	searching := true
	prop := func(t *rapid.T) {
		if res.failure != nil {
			t.Fatal("fuzz: the implementation failed") // do not shrink a crash
		}
		if searching && b.over() {
			res.outOfTime = true
			t.Fatal("fuzz: out of time")
		}
		reqs := make([]protocol.Request, batch)
		send := make([]bool, batch)
		for i := range reqs {
			reqs[i] = gen.Draw(t, "request")
			reqs[i].ID = int64(i + 1)
			send[i] = policytest.Claimed(h, reqs[i])
			if searching && !send[i] {
				res.skipped++
			}
		}
		// Stop at exactly n requests during the search.
		if searching {
			for i := range send {
				if send[i] {
					if res.sent >= n {
						send[i] = false
						continue
					}
					res.sent++
					if prog != nil {
						prog.sent.Add(1)
					}
				}
			}
		}
		ds := make([]*policytest.Disagreement, batch)
		errs := make([]error, batch)
		do := func(i int) { ds[i], errs[i] = policytest.Compare(ctx, h, impl, reqs[i]) }
		if batch == 1 {
			if send[0] {
				do(0)
			}
		} else {
			var wg sync.WaitGroup
			for i := range reqs {
				if send[i] {
					wg.Add(1)
					go func() { defer wg.Done(); do(i) }()
				}
			}
			wg.Wait()
		}
		for i := range reqs {
			if !send[i] {
				continue
			}
			if errors.Is(errs[i], policytest.ErrUnsupported) {
				if searching {
					res.unsupported++
				}
				continue
			}
			if errs[i] != nil {
				res.failure, res.failedReq = errs[i], &reqs[i]
				// The answer at fault may be another request's (a second
				// answer to it): name that one.
				var ae *protocol.AdapterError
				if errors.As(errs[i], &ae) && ae.Request != nil {
					res.failedReq = ae.Request
				}
				t.Fatalf("fuzz: %s: the implementation failed: %v", op, errs[i])
			}
			if ds[i] != nil {
				if searching {
					searching, res.firstFail = false, time.Now()
				}
				res.disagreement = ds[i]
				t.Fatal(ds[i].Error())
			}
		}
	}
	tb := &tb{name: "retrykit-fuzz-" + op}
	withRapidFlags(map[string]string{
		"rapid.checks":     strconv.Itoa(checks),
		"rapid.seed":       strconv.FormatUint(seed, 10),
		"rapid.nofailfile": "true",
		"rapid.shrinktime": shrink.String(),
		"rapid.failfile":   "",
		"rapid.v":          "false",
		"rapid.log":        "false",
	}, func() { rapid.Check(tb, prop) })
	if tb.failed && res.disagreement == nil && res.failure == nil && !res.outOfTime {
		res.rapidError = tb.firstError
	}
	return res
}

// tb is the rapid.TB that Run gives rapid.Check: it records failure and
// drops rapid's log lines (the Result carries everything reported).
type tb struct {
	name       string
	failed     bool
	firstError string
}

func (t *tb) Helper()             {}
func (t *tb) Name() string        { return t.name }
func (t *tb) Logf(string, ...any) {}
func (t *tb) Log(...any)          {}
func (t *tb) Skipf(string, ...any) {
}
func (t *tb) Skip(...any) {}
func (t *tb) SkipNow()    {}
func (t *tb) Errorf(format string, args ...any) {
	t.fail(fmt.Sprintf(format, args...))
}
func (t *tb) Error(args ...any) { t.fail(fmt.Sprint(args...)) }
func (t *tb) Fatalf(format string, args ...any) {
	t.fail(fmt.Sprintf(format, args...))
}
func (t *tb) Fatal(args ...any) { t.fail(fmt.Sprint(args...)) }
func (t *tb) FailNow()          { t.failed = true }
func (t *tb) Fail()             { t.failed = true }
func (t *tb) Failed() bool      { return t.failed }

func (t *tb) fail(msg string) {
	if !t.failed {
		t.firstError = msg
	}
	t.failed = true
}
