package executor

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
)

// Rate limits (ojs-rate-limiting 1.0.0-rc.1): a job may carry a
// [RateLimit] that bounds the starts of every job with the same key, and a
// queue may carry a [QueueRateLimit] that bounds the starts of all its
// jobs. Fetch starts a job only when every limit that applies allows it,
// checked and counted in the same locked step (§5.1, §6.2). A limited job
// is skipped in favour of the next eligible one in FETCH order (§8.1,
// §8.2); it is never claimed, so its attempt count does not change. Its
// OnLimit says what happens to it when it is skipped: it stays available
// (wait), becomes scheduled for when its rate or throttle allows it
// (reschedule), or is discarded without running (drop).
//
// The rules, checked in this order for a job j of key k at time now
// (RK-285, RK-286):
//
//  1. the queue's concurrency: fewer than Concurrency jobs of the queue
//     active;
//  2. the key's concurrency: fewer than j's Concurrency jobs of key k
//     active (0 lets none start);
//  3. the window (a sliding log): fewer than Rate.Limit starts of key k in
//     the half-open interval (now − Rate.Period, now];
//  4. the throttle: no start of key k in (now − ⌈Throttle.Period /
//     Throttle.Limit⌉, now], that is the last start at least that
//     interval ago (the first start is free).
//
// Rules 3 and 4 apply to the queue's own Rate and Throttle too, over the
// queue's starts. Counters belong to the key, limits to the job: two jobs
// of one key with different limits share the counts and each is held to
// its own numbers.
//
// Worked example: Rate {Limit: 2, Period: 10s}, starts of the key at 0 s
// and 3 s. A FETCH at 9.999 s skips the job (2 starts in (-0.001 s,
// 9.999 s]); at 10 s the start at 0 s has left the window (10 s − 10 s = 0
// is excluded), so it starts. Throttle {Limit: 3, Period: 1s}: the
// interval is ⌈333333333.3 ns⌉ = 333333334 ns, so after a start at 0 the
// next may start at 0.333333334 s, not before.

// Limits on rate limit records.
const (
	// MaxWindowLimit is the largest Rate.Limit and Throttle.Limit: the
	// key remembers its last MaxWindowLimit start times at most.
	MaxWindowLimit = 10000
	// MaxRateLimitKeys bounds the keys with a record at once (a key's
	// record lives while a held job names it, or its starts may still
	// count): an Enqueue that would need one more is refused with an
	// error wrapping [ErrTooManyRateLimitKeys].
	MaxRateLimitKeys = 10000
	// MaxRateLimitKeyLen bounds RateLimit.Key, in bytes.
	MaxRateLimitKeyLen = 255
	// maxWindowPeriod bounds a window's period: 100 years.
	maxWindowPeriod = 100 * 365 * 24 * time.Hour
)

// ErrTooManyRateLimitKeys is wrapped by the error Enqueue returns when a
// job names a new rate limit key while [MaxRateLimitKeys] are in use.
var ErrTooManyRateLimitKeys = errors.New("executor: too many rate limit keys")

// OnLimit is what happens to a job its rate limit holds back at a fetch
// (ojs-rate-limiting §6.2). The zero value is LimitWait.
type OnLimit uint8

// The actions of RateLimit.OnLimit.
const (
	// LimitWait: the job stays available and is fetched once the limits
	// allow (the default; non-lossy).
	LimitWait OnLimit = iota
	// LimitReschedule: the job becomes scheduled for the time its rate
	// and throttle next allow a start; a job held back by a concurrency
	// limit alone waits as LimitWait, since no time can be predicted
	// (RK-287).
	LimitReschedule
	// LimitDrop: the job is discarded without running, Expired
	// [DroppedByRateLimit] (lossy).
	LimitDrop
)

// String returns "wait", "reschedule" or "drop".
func (a OnLimit) String() string {
	switch a {
	case LimitReschedule:
		return "reschedule"
	case LimitDrop:
		return "drop"
	}
	return "wait"
}

// Window is a limit of Limit starts per Period. The zero Window is no
// limit; otherwise Limit is 1 to [MaxWindowLimit] and Period positive, at
// most 100 years.
type Window struct {
	Limit  int
	Period time.Duration
}

// set reports whether w limits anything.
func (w Window) set() bool { return w != Window{} }

// interval is the throttle's spacing: ⌈Period / Limit⌉.
func (w Window) interval() int64 {
	p, l := int64(w.Period), int64(w.Limit)
	return p/l + min(p%l, 1)
}

func (w Window) check(field string) string {
	if !w.set() {
		return ""
	}
	if w.Limit < 1 || w.Limit > MaxWindowLimit {
		return fmt.Sprintf("%s.limit must be 1 to %d (executor.MaxWindowLimit), got %d", field, MaxWindowLimit, w.Limit)
	}
	if w.Period <= 0 || w.Period > maxWindowPeriod {
		return fmt.Sprintf("%s.period must be positive and at most 100 years, got %v", field, w.Period)
	}
	return ""
}

// RateLimit is a job's rate limit (ojs-rate-limiting §6): plain data,
// shared read-only once enqueued. Key is required (1 to
// [MaxRateLimitKeyLen] bytes of valid UTF-8). Concurrency, if not nil, is
// the most jobs of Key active at once (0 stops the key). A zero Rate or
// Throttle is none.
type RateLimit struct {
	Key         string
	Concurrency *int
	Rate        Window
	Throttle    Window
	OnLimit     OnLimit
}

// QueueRateLimit is a queue's own limit (ojs-rate-limiting §7.2), applied
// to every job of the queue besides the job's own: Concurrency, if not
// nil, bounds the queue's active jobs; Rate and Throttle its starts. A
// job the queue's limit holds back always waits.
type QueueRateLimit struct {
	Concurrency *int
	Rate        Window
	Throttle    Window
}

// check returns why r is invalid, or "".
func (r *RateLimit) check() string {
	if r.Key == "" {
		return "key is required"
	}
	if reason := checkName(r.Key, MaxRateLimitKeyLen, "executor.MaxRateLimitKeyLen"); reason != "" {
		return "key " + reason
	}
	if r.Concurrency != nil && *r.Concurrency < 0 {
		return fmt.Sprintf("concurrency must be 0 or more, got %d", *r.Concurrency)
	}
	if r.OnLimit > LimitDrop {
		return fmt.Sprintf("on_limit %d is not wait, reschedule or drop", r.OnLimit)
	}
	if s := r.Rate.check("rate"); s != "" {
		return s
	}
	return r.Throttle.check("throttle")
}

// limiter is the state of one rate limit partition: a key's, or a
// queue's. starts is a ring of the last start times (oldest first from
// head), as many as the largest window limit applied to it.
type limiter struct {
	active int        // jobs of the key that are active (keys only)
	jobs   int        // held jobs naming the key (keys only)
	last   int64      // the last start, never when none
	span   int64      // the longest window or throttle interval applied
	latest *RateLimit // the limit of the job of the key enqueued last
	starts []int64
	head   int
	n      int
	conf   *QueueRateLimit // a queue's limit; nil for a key
}

// started records a start at now, keeping the last keep starts.
func (l *limiter) started(now int64, keep int) {
	l.last = now
	if keep > len(l.starts) {
		grown := make([]int64, keep)
		for i := range l.n {
			grown[i] = l.starts[(l.head+i)%len(l.starts)]
		}
		l.starts, l.head = grown, 0
	}
	if len(l.starts) == 0 {
		return
	}
	if l.n < len(l.starts) {
		l.starts[(l.head+l.n)%len(l.starts)] = now
		l.n++
		return
	}
	l.starts[l.head] = now
	l.head = (l.head + 1) % len(l.starts)
}

// nth returns the k-th most recent start (k ≥ 1), or never when fewer are
// remembered.
func (l *limiter) nth(k int) int64 {
	if k > l.n {
		return never
	}
	return l.starts[(l.head+l.n-k)%len(l.starts)]
}

// windowAllows returns never when w allows a start at now, else the
// first time it will.
func (l *limiter) windowAllows(w Window, now int64) int64 {
	if !w.set() {
		return never
	}
	if s := l.nth(w.Limit); s != never && s > now-int64(w.Period) {
		return sat.AddInt(s, int64(w.Period))
	}
	return never
}

// throttleAllows is windowAllows for a throttle.
func (l *limiter) throttleAllows(w Window, now int64) int64 {
	if !w.set() || l.last == never {
		return never
	}
	if at := sat.AddInt(l.last, w.interval()); at > now {
		return at
	}
	return never
}

// idle reports whether the key's record can go: no held job names it and
// no remembered start can still hold a job back at now.
func (l *limiter) idle(now int64) bool {
	return l.jobs == 0 && l.active == 0 && (l.last == never || sat.AddInt(l.last, l.span) <= now)
}

// note widens what l remembers for a job's limit r.
func (l *limiter) note(rate, throttle Window) {
	for _, w := range []Window{rate, throttle} {
		if w.set() {
			l.span = max(l.span, int64(w.Period))
		}
	}
}

// limiterFor returns the record of key, creating it, or an error when
// MaxRateLimitKeys are in use (after dropping idle ones).
func (e *Executor) limiterFor(key string, now int64) (*limiter, error) {
	if l := e.limits[key]; l != nil {
		return l, nil
	}
	if len(e.limits) >= MaxRateLimitKeys {
		for k, l := range e.limits {
			if l.idle(now) {
				delete(e.limits, k)
			}
		}
		if len(e.limits) >= MaxRateLimitKeys {
			return nil, fmt.Errorf("%w: %d keys are in use (executor.MaxRateLimitKeys)", ErrTooManyRateLimitKeys, len(e.limits))
		}
	}
	l := &limiter{last: never}
	e.limits[key] = l
	return l, nil
}

// checkRateLimit returns the record of the key of spec's rate limit
// (checked by prepare), nil without one; e.mu is held.
func (e *Executor) checkRateLimit(spec *JobSpec, now int64) (*limiter, error) {
	r := spec.RateLimit
	if r == nil {
		return nil, nil
	}
	l, err := e.limiterFor(r.Key, now) // r was checked by prepare
	if err != nil {
		return nil, fmt.Errorf("executor: enqueue %q: rate_limit: %w", clip(spec.ID), err)
	}
	return l, nil
}

// blocked returns whether j may not start at now and, if a rate or
// throttle holds it, the first time they allow it (never for a
// concurrency limit alone); e.mu is held.
func (e *Executor) blocked(j *job, now int64) (bool, int64) {
	limited, at, _ := e.blockedBy(j, now)
	return limited, at
}

// blockedBy is blocked with the first rule that holds j back, as an
// event describes it (zero when none).
func (e *Executor) blockedBy(j *job, now int64) (bool, int64, RateLimitEvent) {
	if j.rare().rl == nil {
		return false, never, RateLimitEvent{}
	}
	r, l := j.rare().rl.spec, j.rare().rl.lim
	if r.Concurrency != nil && l.active >= *r.Concurrency {
		return true, never, RateLimitEvent{Strategy: "concurrency", Limit: *r.Concurrency, Current: l.active}
	}
	w, t := l.windowAllows(r.Rate, now), l.throttleAllows(r.Throttle, now)
	switch {
	case w != never && w >= t:
		return true, w, RateLimitEvent{Strategy: "rate", Limit: r.Rate.Limit, Current: r.Rate.Limit}
	case t != never:
		return true, t, RateLimitEvent{Strategy: "throttle", Limit: r.Throttle.Limit, Current: 1}
	}
	return false, never, RateLimitEvent{}
}

// queueBlocked reports whether the queue's own limit lets no job of q
// start at now; e.mu is held.
func (e *Executor) queueBlocked(q *queue, now int64) bool {
	l := e.qlimits[q.name]
	if l == nil {
		return false
	}
	c := l.conf
	if c.Concurrency != nil && q.kinds[Active].n >= *c.Concurrency {
		e.noteLimited(q, math.MaxInt64)
		return true
	}
	if at := max(l.windowAllows(c.Rate, now), l.throttleAllows(c.Throttle, now)); at != never {
		e.noteLimited(q, at)
		return true
	}
	return false
}

// countStart records the start of j at now against its key and queue.
func (e *Executor) countStart(j *job, now int64) {
	if jl := j.rare().rl; jl != nil {
		jl.lim.started(now, max(jl.spec.Rate.Limit, 0))
		if jl.held {
			jl.held = false
			e.rateLimitEvent(j, RateLimitEvent{Kind: RateLimitReleased, Strategy: jl.heldBy, At: nsTime(now)})
		}
	}
	if l := e.qlimits[j.q.name]; l != nil {
		l.started(now, l.conf.Rate.Limit)
	}
}

// noteLimited remembers that q held back a job until at, so that worker
// goroutines parked on q are woken then (see wakeLimited).
func (e *Executor) noteLimited(q *queue, at int64) {
	if e.limited == nil {
		e.limited = make(map[*queue]struct{})
	}
	e.limited[q] = struct{}{}
	if at < e.limitWake {
		e.limitWake = at
		e.dueChanged(at)
	}
}

// wakeLimited wakes a parked worker goroutine of each queue that held back
// a job, once the earliest time a limit frees has come (called from
// advance).
func (e *Executor) wakeLimited(now int64) {
	if e.limitWake > now {
		return
	}
	for q := range e.limited {
		e.wakeOne(q)
	}
	clear(e.limited)
	e.limitWake = math.MaxInt64
}

// holdBack reports whether j's rate limit keeps it from starting at now,
// and then acts on it by its OnLimit: it stays available (noted for the
// parked workers of q), becomes scheduled, or is discarded. e.mu is held.
func (e *Executor) holdBack(q *queue, j *job, now int64) bool {
	limited, at, ev := e.blockedBy(j, now)
	if !limited {
		return false
	}
	jl := j.rare().rl
	if !jl.held {
		jl.held, jl.heldBy = true, ev.Strategy
		ev.Kind, ev.At = RateLimitExceeded, nsTime(now)
		e.rateLimitEvent(j, ev)
	}
	switch jl.spec.OnLimit {
	case LimitReschedule:
		if at != never {
			e.move(j, Scheduled)
			j.more().scheduled, j.due = at, at
			e.schedule(j)
			return true
		}
	case LimitDrop:
		e.move(j, Discarded)
		j.finished, j.started = now, never
		j.more().expired = DroppedByRateLimit
		if o := e.cfg.observer; o != nil {
			o.Discarded(j.snapshot(e.cfg.history))
		}
		e.rateLimitEvent(j, RateLimitEvent{Kind: RateLimitDropped, Strategy: ev.Strategy, Limit: ev.Limit, Current: ev.Current, At: nsTime(now)})
		e.retire(j)
		return true
	}
	if at == never {
		at = math.MaxInt64 // a concurrency limit: limitFreed wakes
	}
	e.noteLimited(q, at)
	return true
}

// limitFreed notes that a rate-limited job, or a job of a queue with a
// limit, left active: parked worker goroutines that a concurrency limit
// held back look again now.
func (e *Executor) limitFreed() {
	if len(e.limited) > 0 {
		now := e.now()
		e.limitWake = min(e.limitWake, now)
		e.dueChanged(now)
	}
}

// SetQueueRateLimit sets the rate limit of queue name ("" is
// DefaultQueue), replacing any; a nil limit removes it. Starts before the
// call do not count against a new Rate or Throttle. An invalid limit
// returns an error wrapping [ErrInvalidJob] that names the field, and
// changes nothing.
func (e *Executor) SetQueueRateLimit(name string, limit *QueueRateLimit) error {
	if name == "" {
		name = DefaultQueue
	}
	if reason := checkName(name, MaxQueueLen, "executor.MaxQueueLen"); reason != "" {
		return fmt.Errorf("%w: queue rate limit %q: %s", ErrInvalidQueue, clip(name), reason)
	}
	if limit != nil {
		c := *limit
		reason := ""
		if c.Concurrency != nil && *c.Concurrency < 0 {
			reason = fmt.Sprintf("concurrency must be 0 or more, got %d", *c.Concurrency)
		} else if reason = c.Rate.check("rate"); reason == "" {
			reason = c.Throttle.check("throttle")
		}
		if reason != "" {
			return fmt.Errorf("%w: queue rate limit %q: %s", ErrInvalidJob, clip(name), reason)
		}
		if c.Concurrency != nil {
			n := *c.Concurrency
			c.Concurrency = &n
		}
		limit = &c
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	if limit == nil {
		delete(e.qlimits, name)
		if q := e.queues[name]; q != nil {
			e.noteLimited(q, now)
		}
		return nil
	}
	if _, ok := e.qlimits[name]; !ok && len(e.qlimits) >= MaxRateLimitKeys {
		return fmt.Errorf("executor: queue rate limit %q: %w: %d queues have one", clip(name), ErrTooManyRateLimitKeys, len(e.qlimits))
	}
	e.qlimits[name] = &limiter{last: never, conf: limit}
	return nil
}

// QueueRateLimit returns the rate limit of queue name, if it has one.
func (e *Executor) QueueRateLimit(name string) (QueueRateLimit, bool) {
	if name == "" {
		name = DefaultQueue
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if l := e.qlimits[name]; l != nil {
		return *l.conf, true
	}
	return QueueRateLimit{}, false
}

// RateLimitState is the state of one rate limit key (ojs-rate-limiting
// §10.1): its active jobs, its starts within a window, its last start and
// its held jobs waiting (available, in any queue).
type RateLimitState struct {
	Key       string
	Active    int
	Jobs      int       // held jobs naming the key, in any state
	Waiting   int       // available jobs naming the key
	LastStart time.Time // zero when none remembered
	// Limit is the rate limit of the job of the key enqueued last
	// (shared: read it, never change it).
	Limit *RateLimit
}

// StartsWithin returns how many remembered starts of key lie in
// (now − period, now], and the time the oldest of them leaves the window
// (zero when none). At most [MaxWindowLimit] starts are remembered, and
// only as many as the largest Rate.Limit a job of the key asked for.
func (e *Executor) StartsWithin(key string, period time.Duration) (int, time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	l := e.limits[key]
	if l == nil {
		return 0, time.Time{}
	}
	n, oldest := 0, never
	for k := 1; k <= l.n; k++ {
		s := l.nth(k)
		if s <= now-int64(period) {
			break
		}
		n, oldest = k, s
	}
	if n == 0 {
		return 0, time.Time{}
	}
	return n, nsTime(sat.AddInt(oldest, int64(period)))
}

// RateLimitKey returns the state of key, if a record of it is held.
// Counting the waiting jobs costs O(jobs naming the key).
func (e *Executor) RateLimitKey(key string) (RateLimitState, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	l := e.limits[key]
	if l == nil {
		return RateLimitState{}, false
	}
	s := RateLimitState{Key: key, Active: l.active, Jobs: l.jobs, Limit: l.latest}
	if l.last != never {
		s.LastStart = nsTime(l.last)
	}
	if l.jobs > 0 {
		for _, q := range e.queues {
			for j := q.kinds[Available].head; j != nil; j = j.link[byKind].next {
				if j.rare().rl != nil && j.rare().rl.lim == l {
					s.Waiting++
				}
			}
		}
	}
	return s, true
}

// RateLimitKeys returns the keys with a record, sorted.
func (e *Executor) RateLimitKeys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.limits))
	for k := range e.limits {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// jobLimit is a job's rate limit with its key's record; held is set
// while the limit holds the job back (between the exceeded and released
// events).
type jobLimit struct {
	spec   *RateLimit
	lim    *limiter
	held   bool
	heldBy string // the strategy that held it back first
}

// The kinds of RateLimitEvent (ojs-rate-limiting §11.1).
const (
	RateLimitExceeded = "rate_limit.exceeded" // a fetch held the job back (once until it starts)
	RateLimitReleased = "rate_limit.released" // the held-back job started
	RateLimitDropped  = "rate_limit.dropped"  // on_limit drop discarded it
)

// RateLimitEvent is what a [RateLimitObserver] hears: the Kind, the rule
// that held the job back (Strategy "concurrency", "rate" or "throttle",
// with its Limit and the Current count; for released only the Strategy
// that first held it back) and the executor's time.
type RateLimitEvent struct {
	Kind     string
	Strategy string
	Limit    int
	Current  int
	At       time.Time
}

// RateLimitObserver is an Observer that also hears of rate limits
// (ojs-rate-limiting §11.1). The executor calls RateLimited, under its
// lock as the other callbacks, when a fetch first holds a job back, when
// that job starts, and when on_limit drop discards it; j.RateLimit names
// the key.
type RateLimitObserver interface {
	Observer
	RateLimited(j Job, ev RateLimitEvent)
}

// rateLimitEvent tells the observer, if it listens, of ev for j.
func (e *Executor) rateLimitEvent(j *job, ev RateLimitEvent) {
	g, ok := e.cfg.observer.(guarded)
	if !ok {
		return
	}
	if o, ok := g.o.(RateLimitObserver); ok {
		func() {
			defer swallow()
			o.RateLimited(j.snapshot(e.cfg.history), ev)
		}()
	}
}

// copyRateLimit returns a copy of r that the caller cannot change.
func copyRateLimit(r *RateLimit) *RateLimit {
	c := *r
	if r.Concurrency != nil {
		n := *r.Concurrency
		c.Concurrency = &n
	}
	return &c
}

// countActive keeps the active count of j's key as j enters (left false)
// or leaves (left true) active, in the same step as the transition
// (ojs-rate-limiting §5.1); e.mu is held.
func (e *Executor) countActive(j *job, left bool) {
	if j.rare().rl != nil {
		if left {
			j.rare().rl.lim.active--
		} else {
			j.rare().rl.lim.active++
		}
	}
	if left && (j.rare().rl != nil || e.qlimits[j.q.name] != nil) {
		e.limitFreed()
	}
}

// roomForKeys refuses a batch whose new rate limit keys would pass
// MaxRateLimitKeys (after dropping idle records), so that its inserts
// cannot fail; e.mu is held.
func (e *Executor) roomForKeys(specs []JobSpec) error {
	var fresh map[string]int
	for i := range specs {
		if r := specs[i].RateLimit; r != nil && e.limits[r.Key] == nil {
			if fresh == nil {
				fresh = make(map[string]int)
			}
			if _, ok := fresh[r.Key]; !ok {
				fresh[r.Key] = i
			}
		}
	}
	if len(fresh) == 0 || len(e.limits)+len(fresh) <= MaxRateLimitKeys {
		return nil
	}
	now := e.now()
	for k, l := range e.limits {
		if l.idle(now) {
			delete(e.limits, k)
		}
	}
	if len(e.limits)+len(fresh) <= MaxRateLimitKeys {
		return nil
	}
	first := len(specs)
	for _, i := range fresh {
		first = min(first, i)
	}
	return &BatchError{Index: first, Err: fmt.Errorf("executor: enqueue %q: rate_limit: %w: %d keys are in use, the batch needs %d more (executor.MaxRateLimitKeys)",
		clip(specs[first].ID), ErrTooManyRateLimitKeys, len(e.limits), len(fresh))}
}
