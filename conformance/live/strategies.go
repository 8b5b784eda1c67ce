// Scenarios of every strategy, of the jitter distribution over many jobs
// and of promotion lateness judged against the delay.

package live

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance/live/servermodel"
	"github.com/retrykit/retrykit/policy"
)

// strategyChecks names the check of each strategy.
var strategyChecks = map[backoff.Strategy]string{
	backoff.None: "http-strategy-none", backoff.Linear: "http-strategy-linear",
	backoff.Exponential: "http-strategy-exponential", backoff.Polynomial: "http-strategy-polynomial",
}

// scenStrategies pushes, for each strategy, four jobs (jitter off and on,
// max_interval 10s and 250ms) under initial_interval 100ms and
// coefficient 3, naming the strategy in backoff_strategy (RK-01), and
// fails each twice: after attempt 2 the delays are none 100ms, linear
// 200ms, exponential 300ms, polynomial 800ms (capped: 100, 200, 250,
// 250ms), each in [0.5, 1.5) of that under jitter and capped again. The
// strategies differ by 100 ms or more at attempt 2, so a FAIL round trip
// slowed to tens of milliseconds by a loaded host still tells them apart. A server that rejects
// the field or the strategy at PUSH is not judged (the extension is
// optional); one that accepts it must compute it.
func scenStrategies(ctx context.Context, e *env) {
	var wg sync.WaitGroup
	for st, check := range strategyChecks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			judgeStrategy(ctx, e, st, check)
		}()
	}
	wg.Wait()
}

// judgeStrategy plays the four jobs of one strategy's check.
func judgeStrategy(ctx context.Context, e *env, st backoff.Strategy, check string) {
	type variant struct {
		jitter bool
		maxIv  time.Duration
	}
	var bad []string
	rejected := 0
	for _, v := range []variant{{false, 10 * time.Second}, {false, 250 * ms}, {true, 10 * time.Second}, {true, 250 * ms}} {
		pol := retry{max: 3, initial: 100 * ms, coef: 3, maxIv: v.maxIv, jitter: v.jitter,
			extra: map[string]any{"backoff_strategy": st.String()}}
		wire := pol.wire(e)
		delete(wire, "backoff_type")
		wire["backoff_strategy"] = st.String()
		p, err := policy.New(policy.Spec{MaxAttempts: 3, InitialInterval: pol.initial, BackoffCoefficient: pol.coef,
			MaxInterval: pol.maxIv, Jitter: pol.jitter, Strategy: st, OnExhaustion: policy.Discard})
		if err != nil {
			e.errored(err, check)
			return
		}
		q := e.queue("strategy")
		id, status, err := e.c.pushStatus(ctx, q, "retrykit.live.strategy", wire)
		if err != nil {
			e.errored(err, check)
			return
		}
		if id == "" {
			rejected++
			_ = status
			continue
		}
		if _, err := e.await(ctx, q, id, time.Time{}, 0); err != nil {
			e.errored(err, check)
			return
		}
		msg, err := e.failThrough(ctx, check, q, id, wire, 2, p.Backoff().Bounds)
		e.c.cancel(ctx, id)
		if err != nil {
			e.errored(err, check)
			return
		}
		if msg != "" {
			bad = append(bad, fmt.Sprintf("jitter %v, max_interval %v, %s", v.jitter, v.maxIv, msg))
		}
	}
	switch {
	case len(bad) > 0:
		e.fail(check, "backoff_strategy %q accepted at PUSH and not computed: %s", st, bad[0])
	case rejected == 4:
		e.notRun(check, fmt.Sprintf("PUSH rejects backoff_strategy %q (retrykit's extension field, RK-01): the strategy is not judged", st))
	case rejected > 0:
		e.fail(check, "PUSH rejected %d of the 4 policies naming backoff_strategy %q and accepted the others", rejected, st)
	default:
		e.pass(check, "")
	}
}

// The jitter distribution: jitterDrawJobs jobs failed once under
// initial_interval PT10S (jitter on), whose delays give multipliers. A
// range of [0.5, 1.5) leaves no draw below 0.65 (or none at 1.35 or
// above) among them with probability 0.85^64 ≈ 3·10⁻⁵ each, so a run
// with either tail empty fails at a false-alarm rate of 6·10⁻⁵; a range
// narrower by 0.15 or more at either end always fails. Multipliers count
// only from windows narrower than 0.02 of the delay (a slow round trip
// widens them); fewer than minNarrowDraws such is inconclusive.
const (
	jitterDrawJobs = 64
	minNarrowDraws = 48
	jitterTail     = 0.15
)

// scenJitterDistribution plays the jitter distribution check.
func scenJitterDistribution(ctx context.Context, e *env) {
	const check = "http-jitter-distribution"
	pol := retry{max: 2, initial: 10 * time.Second, coef: 2, maxIv: time.Minute, jitter: true}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		mults []float64
		out   []string
	)
	sem := make(chan struct{}, 8)
	for i := 0; i < jitterDrawJobs; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			wire := pol.wire(e)
			_, id, a, ex, ok := e.startFailed(ctx, "jitterdist", wire, "external.timeout", check)
			if !ok {
				return
			}
			defer e.c.cancel(ctx, id)
			e.recordFail(check, wire, e.failWith("external.timeout", 1), 1, ex, a, nil)
			next, err := parseTime("next_attempt_at", a.NextAttemptAt)
			if a.State != "retryable" || err != nil || next.IsZero() {
				mu.Lock()
				out = append(out, fmt.Sprintf("the FAIL of attempt 1 of 2 answered state %q, next_attempt_at %q", a.State, a.NextAttemptAt))
				mu.Unlock()
				return
			}
			lo, hi := e.delayRange(ex, next)
			mu.Lock()
			defer mu.Unlock()
			if hi < pol.initial/2-resolution || lo > pol.initial*3/2+resolution {
				out = append(out, fmt.Sprintf("a delay of %v..%v: multiplier outside [0.5, 1.5)", lo.Round(time.Millisecond), hi.Round(time.Millisecond)))
				return
			}
			if hi-lo <= pol.initial/50 {
				mults = append(mults, float64(lo+hi)/2/float64(pol.initial))
			}
		}()
	}
	wg.Wait()
	sort.Float64s(mults)
	switch {
	case len(out) > 0:
		e.fail(check, "%s", out[0])
	case len(mults) < minNarrowDraws:
		e.notRun(check, fmt.Sprintf("inconclusive: only %d of %d delays were timed within 200ms (slow round trips); %d are needed", len(mults), jitterDrawJobs, minNarrowDraws))
	case mults[0] >= 0.5+jitterTail || mults[len(mults)-1] < 1.5-jitterTail:
		e.fail(check, "%d jittered delays of PT10S give multipliers in [%.3f, %.3f] only: the multiplier is not drawn from [0.5, 1.5) (no draw below %.2f or none at %.2f or above; false-alarm rate 2·%.2f^%d)",
			len(mults), mults[0], mults[len(mults)-1], 0.5+jitterTail, 1.5-jitterTail, 1-jitterTail, len(mults))
	default:
		e.pass(check, fmt.Sprintf("%d multipliers in [%.3f, %.3f]: a range narrower by %.2f at an end would fail with probability at least %.5f",
			len(mults), mults[0], mults[len(mults)-1], jitterTail, 1-2*pow(1-jitterTail, len(mults))))
	}
}

func pow(x float64, n int) float64 {
	r := 1.0
	for range n {
		r *= x
	}
	return r
}

// relativeDelay is the delay of the lateness check: long enough that a
// promotion at twice it stands out of a loaded host's round trips.
const relativeDelay = 400 * ms

// scenRelativeLateness fails a job once with a 400ms delay (jitter off)
// and times its promotion against the delay: fetchable a whole delay or
// more after its next_attempt_at (at 2d or later from the failure) is
// late. One late job may be the host (a starved poll, a busy CPU), so a
// late one is observed again with a fresh job: two late of at most three
// fail; one on time passes; a FETCH slower than a quarter of the delay
// makes the job prove nothing, and three such are inconclusive.
func scenRelativeLateness(ctx context.Context, e *env) {
	const check = "http-promoted-relative"
	pol := retry{max: 2, initial: relativeDelay, coef: 2, maxIv: time.Minute}
	var lates []string
	last := ""
	for try := 0; try < 3 && len(lates) < 2; try++ {
		wire := pol.wire(e)
		q, id, a, ex, ok := e.startFailed(ctx, "relative", wire, "external.timeout", check)
		if !ok {
			return
		}
		bad, next := e.judgeDelay(check, ex, a, relativeDelay, relativeDelay)
		if a.State != "retryable" || bad != "" || next.IsZero() {
			e.c.cancel(ctx, id)
			e.notRun(check, "inconclusive: the retry was not scheduled as the policy says, see http-next-attempt-at")
			return
		}
		f, err := e.await(ctx, q, id, next, 0)
		if err != nil {
			e.errored(err, check)
			return
		}
		_ = e.c.ack(ctx, id)
		e.c.mu.Lock()
		arrived := f.ex.recv
		if e.c.offSet {
			arrived = arrived.Add(e.c.offLo + (e.c.offHi-e.c.offLo)/2)
		}
		e.c.mu.Unlock()
		late := arrived.Sub(next)
		rtt := f.ex.recv.Sub(f.ex.sent)
		if rtt <= relativeDelay/4 {
			e.record(servermodel.Obs{Check: check, Kind: servermodel.Promotion, DelayLo: relativeDelay, Late: late})
		}
		switch {
		case late < relativeDelay:
			e.pass(check, fmt.Sprintf("fetchable %v after its next_attempt_at (bound: the delay, %v)", late.Round(time.Millisecond), relativeDelay))
			return
		case rtt > relativeDelay/4:
			last = fmt.Sprintf("fetchable %v after its next_attempt_at, but its FETCH itself took %v (slow round trip)", late.Round(time.Millisecond), rtt.Round(time.Millisecond))
		default:
			lates = append(lates, fmt.Sprintf("%v (FETCH %v)", late.Round(time.Millisecond), rtt.Round(time.Millisecond)))
		}
	}
	if len(lates) >= 2 {
		e.fail(check, "retries due %v after their failure became fetchable only %s after their next_attempt_at: at twice the delay or later (bound: the delay, %v; observed on two jobs)",
			relativeDelay, strings.Join(lates, " and "), relativeDelay)
		return
	}
	if last == "" && len(lates) == 1 {
		last = "one retry fetchable " + lates[0] + " late, the others could not be timed"
	}
	e.notRun(check, "inconclusive after 3 jobs: "+last)
}
