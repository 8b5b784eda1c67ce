package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live/servermodel"
	"github.com/retrykit/retrykit/policy"
)

// resolution is the tolerance for a server timestamp: the binding's
// timestamps carry milliseconds (RK-110).
const resolution = time.Millisecond

// env is what the scenarios of one run share.
type env struct {
	c      *client
	cfg    *config
	prefix string
	seq    atomic.Int64

	mu       sync.Mutex
	lat      []time.Duration // promotion latencies (due → fetched)
	early    []string        // deliveries before the due time
	worst    time.Duration   // the earliest of them, before its due time
	worstMsg string
	late     []string // retries not fetchable within the late bound
	lateSlow []string // the same, seen by FETCHes slow or timed out: inconclusive
	promoted int
	noClock  bool // no server timestamp seen: the local clock stands in
	verdicts map[string]*verdict
	obs      []servermodel.Obs // what the scenarios saw, for the diagnosis
	dlPages  int               // dead-letter pages read
	dlSeen   bool              // a dead letter of the run was listed
	dialect  *dialect          // what the probe found; nil when not probed
	runCtx   context.Context   // the run's context, bounded by its time budget
	res      resolutionLog     // the timing resolution measured (resolution.go)
}

// record keeps an observation for the diagnosis by reproduction (package
// servermodel), at most servermodel.MaxObservations.
func (e *env) record(o servermodel.Obs) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.obs) < servermodel.MaxObservations {
		e.obs = append(e.obs, o)
	}
}

// recordFail keeps the FAIL answer a of attempt n of a job under the
// retry object pol for check, with its delay window when retryable.
func (e *env) recordFail(check string, pol map[string]any, f failure, n int, ex *exchange, a *nackAnswer, listed *bool) {
	o := servermodel.Obs{Check: check, Kind: servermodel.FailAnswer, Policy: pol, N: n,
		Failure: servermodel.Failure{Type: f.Type, Code: f.Code, Message: f.Message},
		State:   a.State, Attempt: a.Attempt, MaxAttempts: a.MaxAttempts, Listed: listed}
	if next, err := parseTime("next_attempt_at", a.NextAttemptAt); err == nil && !next.IsZero() && ex != nil {
		o.DelayLo, o.DelayHi = e.delayRange(ex, next)
		o.HasDelay = true
	}
	e.record(o)
}

// recordAttempt keeps the attempt an answer of kind k showed for the n-th
// delivery, failure or history entry.
func (e *env) recordAttempt(check string, k servermodel.Kind, n int, shown *int) {
	e.record(servermodel.Obs{Check: check, Kind: k, N: n, Attempt: shown})
}

// maxAwaitedDelay is the longest retry delay a scenario waits for: a
// retry due later than this plus the late bound after its FAIL is not
// awaited but reported at once (a server that promises a retry in ten
// years must not hold the run).
const maxAwaitedDelay = 2 * time.Second

// verdict is the running verdict of one check; several scenarios may add
// to it, and the worst status wins (error, fail, pass; not run only alone).
type verdict struct {
	status conformance.Status
	reason string
	notRun string
	notes  []string
}

// rank orders statuses for merging verdicts.
func rank(s conformance.Status) int {
	switch s {
	case conformance.StatusError:
		return 3
	case conformance.StatusFail:
		return 2
	case conformance.StatusPass:
		return 1
	}
	return 0
}

func (e *env) get(id string) *verdict {
	v := e.verdicts[id]
	if v == nil {
		v = &verdict{}
		e.verdicts[id] = v
	}
	return v
}

func (e *env) set(id string, s conformance.Status, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.get(id)
	if rank(s) > rank(v.status) {
		v.status, v.reason = s, reason
	}
}

// pass records a pass of check id, with an optional note kept for the
// report (the reading a server follows).
func (e *env) pass(id string, note string) {
	e.set(id, conformance.StatusPass, "")
	if note != "" {
		e.mu.Lock()
		v := e.get(id)
		if len(v.notes) < 3 {
			v.notes = append(v.notes, note)
		}
		e.mu.Unlock()
	}
}

func (e *env) fail(id, format string, a ...any) {
	e.set(id, conformance.StatusFail, fmt.Sprintf(format, a...))
}

// errored records err against every check in ids. An error caused by the
// run's time budget running out (a request cut short by it, say) is
// recorded as the budget's error, so the report says why the check ended.
func (e *env) errored(err error, ids ...string) {
	if e.runCtx != nil && e.runCtx.Err() != nil && !errors.Is(err, ErrBudget) {
		if berr := e.ctxErr(e.runCtx); errors.Is(berr, ErrBudget) {
			err = fmt.Errorf("%w (%v)", berr, err)
		}
	}
	for _, id := range ids {
		e.set(id, conformance.StatusError, err.Error())
	}
}

// notRun records that check id could not be run against this server.
func (e *env) notRun(id, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v := e.get(id); v.notRun == "" {
		v.notRun = reason
	}
}

// queue returns a queue name no earlier run of the checker has used.
func (e *env) queue(name string) string {
	return fmt.Sprintf("%s-%s-%d", e.prefix, name, e.seq.Add(1))
}

// await polls queue until job id can be fetched and returns it. due is the
// next_attempt_at the server announced (zero for a new job): a delivery
// before it is recorded as early, one after it as a promotion latency, and
// none within the late bound after it is an error of the caller's check.
func (e *env) await(ctx context.Context, queue, id string, due time.Time, vis time.Duration) (*fetched, error) {
	return e.awaitOpt(ctx, queue, id, due, vis, true)
}

// tooFar returns the deadline of a retry of job id due at due (the late
// bound after it, on this host's clock) and, when that is too far ahead
// to wait for, what to report ("" otherwise).
func (e *env) tooFar(id string, due time.Time) (time.Time, string) {
	e.c.mu.Lock()
	off := e.c.offLo
	e.c.mu.Unlock()
	deadline := due.Add(-off).Add(e.cfg.lateBound)
	if wait := time.Until(deadline); wait > maxAwaitedDelay+e.cfg.lateBound {
		return deadline, fmt.Sprintf("job %s's retry is due at %s, %v from now: beyond the late bound %v after the longest delay awaited (%v), so it was not awaited", id, due.Format(time.RFC3339Nano), (wait - e.cfg.lateBound).Round(time.Millisecond), e.cfg.lateBound, maxAwaitedDelay)
	}
	return deadline, ""
}

// awaitOpt is await; record false judges an early delivery but keeps the
// delivery out of the promotion latency (a job back from an expired
// reservation, whose return may include a backoff delay).
func (e *env) awaitOpt(ctx context.Context, queue, id string, due time.Time, vis time.Duration, record bool) (*fetched, error) {
	deadline := time.Now().Add(e.cfg.lateBound)
	if !due.IsZero() {
		var msg string
		if deadline, msg = e.tooFar(id, due); msg != "" {
			e.mu.Lock()
			e.late = append(e.late, msg)
			e.mu.Unlock()
			return nil, &lateError{msg: msg}
		}
	}
	// slow notes a FETCH that took over half the late bound, or one that
	// timed out (tried again until the deadline): a retry not seen in time
	// then says more about this host than about the server (inconclusive).
	slow := ""
	began := time.Now()
	var lastEmpty time.Time // when the last FETCH that found nothing was sent
	for {
		polled := time.Now()
		f, err := e.c.fetch(ctx, queue, vis)
		if rtt := time.Since(polled); rtt > e.cfg.lateBound/2 && slow == "" {
			slow = fmt.Sprintf("a FETCH took %v", rtt.Round(time.Millisecond))
		}
		if err != nil && isTimeout(err) && ctx.Err() == nil && time.Now().Before(deadline) {
			slow = "a FETCH timed out: " + err.Error()
			continue
		}
		if err != nil {
			return nil, err
		}
		if f != nil {
			if f.job.ID != id {
				return nil, fmt.Errorf("live: FETCH of queue %s returned job %q, want %q (the only job pushed there)", queue, trunc(f.job.ID, 64), id)
			}
			e.judgeDelivery(f, due, record)
			if !due.IsZero() && record {
				e.notePolls(began, lastEmpty, due)
			}
			return f, nil
		}
		if err == nil {
			lastEmpty = polled
		}
		if time.Now().After(deadline) {
			if due.IsZero() {
				return nil, &lateError{msg: fmt.Sprintf("job %s not fetchable within %v of its push", id, e.cfg.lateBound), slow: slow}
			}
			msg := fmt.Sprintf("job %s not fetchable within %v after its next_attempt_at %s", id, e.cfg.lateBound, due.Format(time.RFC3339Nano))
			e.mu.Lock()
			if slow != "" {
				msg += " (" + slow + ": this host may have been too slow to see it)"
				e.lateSlow = append(e.lateSlow, msg)
			} else {
				e.late = append(e.late, msg)
			}
			e.mu.Unlock()
			return nil, &lateError{msg: msg, slow: slow}
		}
		select {
		case <-ctx.Done():
			return nil, e.ctxErr(ctx)
		case <-time.After(e.cfg.poll):
		}
	}
}

// lateError is await's error for a job not fetchable in time: not
// within the late bound after its push or its next_attempt_at, or due
// too far away to be awaited. slow says how this host's FETCHes were slow
// meanwhile ("" when they were not).
type lateError struct{ msg, slow string }

func (e *lateError) Error() string { return "live: " + e.msg }

// ctxErr is the error of a scenario stopped by ctx: the run's time budget
// (WithBudget) or an interrupt.
func (e *env) ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && e.cfg.budget > 0 {
		return fmt.Errorf("%w: the run's time budget (--time %v) ran out before this check was judged", ErrBudget, e.cfg.budget)
	}
	return ctx.Err()
}

// judgeDelivery records a delivery of a job due at due. It is early when
// the server answered the FETCH before due (less the timestamp resolution)
// by its own clock: the latest server time the exchange can have had is
// before it. started_at does not decide, since a server may stamp it when
// the request arrives, before the claim or a long poll (RK-110). The
// promotion latency runs from due to the moment the FETCH answer arrived,
// on the server's clock (the middle of the offset window), so a server
// that holds a FETCH open (a long poll) is charged for the wait.
func (e *env) judgeDelivery(f *fetched, due time.Time, record bool) {
	if due.IsZero() {
		return
	}
	_, hi, ok := e.c.window(f.ex)
	early := hi.Before(due.Add(-resolution))
	e.record(servermodel.Obs{Check: "http-not-early", Kind: servermodel.Delivery, Yes: early})
	e.c.mu.Lock()
	arrived := f.ex.recv
	if e.c.offSet {
		arrived = arrived.Add(e.c.offLo + (e.c.offHi-e.c.offLo)/2)
	}
	if len(e.c.fetchRTT) < maxRTTs {
		e.c.fetchRTT = append(e.c.fetchRTT, f.ex.recv.Sub(f.ex.sent))
	}
	e.c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.noClock = e.noClock || !ok
	if early {
		msg := fmt.Sprintf("job %s handed out by %s at the latest (server clock), %v before its next_attempt_at %s", f.job.ID, hi.Format(time.RFC3339Nano), due.Sub(hi).Round(10*time.Microsecond), due.Format(time.RFC3339Nano))
		if by := due.Sub(hi); by > e.worst {
			e.worst, e.worstMsg = by, msg
		}
		e.early = append(e.early, msg)
		return
	}
	e.promoted++
	if record {
		e.lat = append(e.lat, max(arrived.Sub(due), 0))
	}
}

// delayRange returns the smallest and largest delay consistent with a FAIL
// answered in ex whose next_attempt_at is next, on the server's clock.
func (e *env) delayRange(ex *exchange, next time.Time) (lo, hi time.Duration) {
	wlo, whi, ok := e.c.window(ex)
	if !ok {
		e.mu.Lock()
		e.noClock = true
		e.mu.Unlock()
	}
	return next.Sub(whi), next.Sub(wlo)
}

// judgeDelay checks a retry's next_attempt_at against the exact bounds
// [want lo, want hi] of the policy's delay, within the timestamp
// resolution; it returns "" or what is wrong. A delay inside the bounds
// is judged for check (none when ""): the window the delay is known
// within must be narrower than the deviation the check must resolve
// (see mustResolve), else a pass of check is inconclusive (resolution.go).
func (e *env) judgeDelay(check string, ex *exchange, a *nackAnswer, wlo, whi time.Duration) (string, time.Time) {
	next, err := parseTime("next_attempt_at", a.NextAttemptAt)
	if err != nil {
		return err.Error(), time.Time{}
	}
	if next.IsZero() {
		return "the answer has no next_attempt_at", time.Time{}
	}
	lo, hi := e.delayRange(ex, next)
	e.noteWindow(check, hi-lo, wlo, whi)
	if hi < wlo-resolution || lo > whi+resolution {
		return fmt.Sprintf("next_attempt_at is %v..%v after the failure, want %s", lo.Round(10*time.Microsecond), hi.Round(10*time.Microsecond), span(wlo, whi)), next
	}
	return "", next
}

// span formats a delay range.
func span(lo, hi time.Duration) string {
	if lo == hi {
		return lo.String()
	}
	return fmt.Sprintf("[%v, %v]", lo, hi)
}

// meaningfulP99 is how many latencies make a p99 differ from the maximum.
const meaningfulP99 = 100

// latency returns the promotion figure of the run.
func (e *env) latency() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.lat) == 0 {
		return "promotion latency (next_attempt_at → FETCH answer): no retry was promoted"
	}
	l := append([]time.Duration(nil), e.lat...)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	q := func(p float64) time.Duration {
		return l[min(len(l)-1, int(p*float64(len(l))))].Round(10 * time.Microsecond)
	}
	s := fmt.Sprintf("promotion latency (next_attempt_at → FETCH answer arrived, server clock, polled every %v): %d retries, p50 %v, p90 %v, p99 %v, max %v; late bound %v",
		e.cfg.poll, len(l), q(0.5), q(0.9), q(0.99), l[len(l)-1].Round(10*time.Microsecond), e.cfg.lateBound)
	if len(l) < meaningfulP99 {
		s += fmt.Sprintf(" (fewer than %d retries: p99 is the maximum; --latency-retries adds more)", meaningfulP99)
	}
	e.c.mu.Lock()
	rtt := append([]time.Duration(nil), e.c.fetchRTT...)
	e.c.mu.Unlock()
	if len(rtt) > 0 {
		sort.Slice(rtt, func(i, j int) bool { return rtt[i] < rtt[j] })
		if med := rtt[len(rtt)/2]; med >= longPoll {
			s += fmt.Sprintf("; the FETCHes that returned a retry took a median %v (the server holds a FETCH open: a long poll), counted in the latency", med.Round(10*time.Microsecond))
		}
	}
	if e.noClock {
		s += " (the server gave no timestamps: the local clock stood in)"
	}
	return s
}

// longPoll is the median FETCH round trip from which the report says the
// server holds FETCHes open.
const longPoll = 20 * time.Millisecond

// retry is a retry policy a scenario pushes, written in the retry spec's
// form (ISO 8601 durations).
type retry struct {
	max      int
	initial  time.Duration
	coef     float64
	maxIv    time.Duration
	jitter   bool
	nonRetry []string
	dead     bool
	extra    map[string]any // fields of a reading under test
	omit     []string       // fields to leave out
}

// wire returns the policy's JSON object in the dialect the run speaks
// (WithIntervalForm, WithStrategyField).
func (r retry) wire(e *env) map[string]any {
	m := r.raw()
	if e.cfg.intervalMs {
		delete(m, "initial_interval")
		delete(m, "max_interval")
		m["initial_interval_ms"] = r.initial.Milliseconds()
		m["max_interval_ms"] = r.maxIv.Milliseconds()
	}
	if e.cfg.strategyField != "" {
		m[e.cfg.strategyField] = "exponential"
	}
	return m
}

// raw returns the policy's JSON object in the retry spec's form.
func (r retry) raw() map[string]any {
	m := map[string]any{
		"max_attempts":        r.max,
		"initial_interval":    policy.FormatDuration(r.initial),
		"backoff_coefficient": r.coef,
		"max_interval":        policy.FormatDuration(r.maxIv),
		"jitter":              r.jitter,
		"on_exhaustion":       "discard",
	}
	if r.dead {
		m["on_exhaustion"] = "dead_letter"
	}
	if len(r.nonRetry) > 0 {
		m["non_retryable_errors"] = r.nonRetry
	}
	for k, v := range r.extra {
		m[k] = v
	}
	for _, k := range r.omit {
		delete(m, k)
	}
	return m
}

// bounds returns the exact delay range after attempt n under r, from
// retrykit's backoff package.
func (r retry) bounds(n int) (time.Duration, time.Duration) {
	p, err := policy.New(policy.Spec{
		MaxAttempts: r.max, InitialInterval: r.initial, BackoffCoefficient: r.coef,
		MaxInterval: r.maxIv, Jitter: r.jitter, OnExhaustion: policy.Discard,
	})
	if err != nil {
		panic("live: a built-in scenario policy is invalid: " + err.Error()) // a bug of this package
	}
	return p.Backoff().Bounds(n)
}

// intOr formats an optional integer field of an answer.
func intOr(p *int) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

func is(p *int, n int) bool { return p != nil && *p == n }

// isTimeout reports whether err is a request that timed out (the per
// request bound, WithTimeout), not a refusal or a broken answer.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}
