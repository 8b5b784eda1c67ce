package executor

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/internal/shrink"
	"github.com/retrykit/retrykit/policy"
)

// DefaultQueue is the queue of jobs enqueued without one.
const DefaultQueue = "default"

// maxPolicyCache bounds the cache of parsed retry policy JSON texts.
const maxPolicyCache = 4096

// maxCachedPolicyText is the longest retry policy text kept as a cache key
// (RK-46): longer ones, up to policy.MaxDocumentSize, are parsed each time,
// so the cache holds at most maxPolicyCache * 4 KiB of text.
const maxCachedPolicyText = 4 << 10

// Executor is the in-memory reference executor. Create it with New; the zero
// value is not usable. All methods are safe for concurrent use: one mutex
// guards the whole state, so every operation is atomic (ojs-core §6.5).
type Executor struct {
	mu  sync.Mutex
	cfg config
	now func() int64

	jobs   map[string]*job
	queues map[string]*queue
	types  map[string]*typeRef // interned job types, with their job counts
	// paused holds the names of the paused queues (at most
	// MaxPausedQueues), queue record or not.
	paused   map[string]struct{}
	policies map[string]*policy.Policy
	defPol   *policy.Policy
	// timers holds scheduled and retryable jobs by due time; leases holds
	// active jobs by reservation deadline, and active indexes them by id.
	// Keeping reservations apart makes Fetch, Ack, Fail and Heartbeat cost
	// independent of how many jobs wait for a timer, and the id lookup of
	// Ack, Fail and Heartbeat a lookup among in-flight jobs only.
	timers timerHeap
	leases timerHeap
	active map[string]*job
	// expiries holds the waiting jobs that have a start deadline, by
	// deadline (see expiry.go).
	expiries expiryHeap

	// dl is the dead letter set and fin every other finished job, each in
	// the order the jobs finished (retention, see index.go).
	dl, fin jobList

	seq        uint64
	nextID     uint64
	deliveries uint64 // the last delivery handed out
	enqueued   int64
	pruned     int64
	deleted    int64
	parks      int64 // worker goroutines parked so far (test seam)

	// peaks are the largest sizes of the maps since they were last
	// rebuilt (see shrink).
	peaks struct{ jobs, queues, types, active int }

	// waiters are the WaitIdle calls in progress (see idle.go).
	waiters []*idleWaiter

	// keepers are the workers' timekeepers waiting for the next due time
	// (see wake.go).
	keepers []*keeperWait

	// limits are the rate limit records by key, qlimits the queues'
	// own (see ratelimit.go); limited are the queues that held back a
	// job since limitWake, the earliest time a limit frees.
	limits    map[string]*limiter
	qlimits   map[string]*limiter
	limited   map[*queue]struct{}
	limitWake int64

	// onTransition, if set, sees every state change (test seam).
	onTransition func(id string, from, to State)
}

// New returns an Executor configured by opts.
func New(opts ...Option) *Executor {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.rand == nil {
		cfg.rand = backoff.Random()
	}
	e := &Executor{
		cfg:      cfg,
		jobs:     make(map[string]*job),
		queues:   make(map[string]*queue),
		types:    make(map[string]*typeRef),
		paused:   make(map[string]struct{}),
		policies: make(map[string]*policy.Policy),
		active:   make(map[string]*job),
		defPol:   policy.Default(),
		limits:   make(map[string]*limiter),
		qlimits:  make(map[string]*limiter),

		limitWake: math.MaxInt64,
	}
	if n, ok := cfg.clock.(nower); ok {
		e.now = n.nowNanos
	} else {
		c := cfg.clock
		e.now = func() int64 { return satNanos(c.Now()) }
	}
	return e
}

// stats are running totals since New; the number of jobs the executor
// holds is always enqueued - pruned - deleted.
type stats struct {
	enqueued, pruned, deleted int64
}

func (e *Executor) stats() stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	return stats{e.enqueued, e.pruned, e.deleted}
}

// ---- internal helpers (all called with e.mu held) ----

func (e *Executor) queue(name string) *queue {
	if name == "" {
		name = DefaultQueue
	}
	q := e.queues[name]
	if q == nil {
		_, paused := e.paused[name]
		q = &queue{name: name, paused: paused}
		e.queues[name] = q
		e.peaks.queues = max(e.peaks.queues, len(e.queues))
	}
	return q
}

// release deletes q's record once it holds nothing (no job, no parked
// goroutine). Its pause flag lives on in e.paused.
func (e *Executor) release(q *queue) {
	if !q.held() && e.queues[q.name] == q {
		delete(e.queues, q.name)
		e.queues = shrink.Map(e.queues, &e.peaks.queues)
	}
}

// intern returns the executor's record of typ and counts one more job of
// it; unintern undoes that when the job goes, and forgets a type with no
// job left.
func (e *Executor) intern(typ string) *typeRef {
	t := e.types[typ]
	if t == nil {
		t = &typeRef{name: typ}
		e.types[typ] = t
		e.peaks.types = max(e.peaks.types, len(e.types))
	}
	t.jobs++
	return t
}

func (e *Executor) unintern(t *typeRef) {
	if e.types[t.name] == t {
		if t.jobs--; t.jobs <= 0 {
			delete(e.types, t.name)
			e.types = shrink.Map(e.types, &e.peaks.types)
		}
	}
}

// shrinkMin is the smallest peak size at which shrink.Map rebuilds a map;
// the heaps use it too.
const shrinkMin = shrink.Min

// typeRef is an interned job type and the number of jobs of that type.
type typeRef struct {
	name string
	jobs int
}

// resolvePolicy parses raw (with a cache, so identical texts share one
// *policy.Policy) or returns p, or the default policy.
func (e *Executor) resolvePolicy(raw []byte, p *policy.Policy) (*policy.Policy, error) {
	if p != nil {
		if len(raw) > 0 {
			return nil, fmt.Errorf("%w: both Retry and Policy are set", ErrInvalidJob)
		}
		return p, nil
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" || string(t) == "{}" {
		return e.defPol, nil
	}
	if p, ok := e.policies[string(t)]; ok {
		return p, nil
	}
	p, err := policy.Parse(t)
	if err != nil {
		return nil, err
	}
	if p.Equal(e.defPol) {
		p = e.defPol
	}
	if len(e.policies) < maxPolicyCache && len(t) <= maxCachedPolicyText {
		e.policies[string(t)] = p
	}
	return p, nil
}

// move changes j's state, keeping the kind lists and the active index. It
// refuses (and reports) any pair the table does not list. Leaving active
// stops a worker's handler (j.stop). A job leaving discarded leaves the
// dead letter set.
func (e *Executor) move(j *job, to State) {
	from := j.state
	if !transitions[from][to] {
		// Unreachable: every caller checks the state first. Kept as a guard
		// so that a bug shows up as a test failure rather than a silent
		// off-table transition.
		panic(fmt.Sprintf("executor: internal error: transition %s -> %s", from, to))
	}
	if from != 0 {
		j.q.unlinkKind(j)
	}
	j.state = to
	j.dead = false
	j.q.pushKind(j)
	if w := waiting(to); w != waiting(from) {
		if w {
			e.arm(j)
		} else {
			e.disarm(j)
		}
	}
	if from == Active || to == Active {
		e.countActive(j, from == Active)
	}
	switch {
	case from == Active:
		delete(e.active, j.id)
		e.active = shrink.Map(e.active, &e.peaks.active)
		if j.stop != nil {
			j.stop()
			j.stop = nil
		}
	case to == Active:
		e.active[j.id] = j
		e.peaks.active = max(e.peaks.active, len(e.active))
	}
	if len(e.waiters) > 0 && open(from) && !open(to) && !j.q.busy() {
		e.wakeIdle()
	}
	if e.onTransition != nil {
		e.onTransition(j.id, from, to)
	}
}

func (e *Executor) makeReady(j *job, at int64) {
	e.move(j, Available) // the tail of its priority in the queue's ready list
	j.enqueued = at
	j.started = never
	e.wakeOne(j.q)
	e.expireDue(j, at)
}

// advance applies everything due at or before now: scheduled and retryable
// jobs become available (in due order, at their due time), expired
// reservations become failed attempts, and retention prunes. A reservation
// whose deadline saturated at the largest representable time never expires
// (see lease).
func (e *Executor) advance(now int64) {
	for {
		t, l, x := e.timers.peek(), e.leases.peek(), e.expiries.peek()
		if l != nil && (l.due > now || l.due == maxNanos) {
			l = nil
		}
		switch {
		case x != nil && x.x.edue <= now && (t == nil || x.x.edue <= t.due) && (l == nil || x.x.edue <= l.due):
			// A start deadline goes first among things due at one
			// instant: a job expired at t cannot start at t.
			e.expiries.remove(x)
			e.expire(x)
		case l != nil && (t == nil || !t.before(l)):
			e.leases.remove(l)
			e.timeout(l)
		case t != nil && t.due <= now:
			e.timers.remove(t)
			if t.state == Discarded {
				e.replayDue(t, t.due)
			} else {
				e.makeReady(t, t.due)
			}
		default:
			e.pruneAge(now)
			e.wakeLimited(now)
			return
		}
	}
}

// unschedule takes j out of the heap it is in, if any.
func (e *Executor) unschedule(j *job) {
	if j.state == Active {
		e.leases.remove(j)
	} else {
		e.timers.remove(j)
	}
}

// timeout treats the expired reservation of j as a failed attempt at the
// deadline (ojs-retry §9.2, RET-12). The error type is never matched
// against non_retryable_errors.
func (e *Executor) timeout(j *job) {
	at := j.due
	if x, ok := j.budgetExpiry(at); ok {
		e.expired(j, x, at)
		d, err := e.decide(j, x.Type(), "", errmatch.Request{}, at)
		if err != nil {
			d = policy.Decision{Action: policy.Discard}
		}
		e.apply(j, d, at)
		return
	}
	e.addError(j, ErrorEntry{
		Attempt: int(j.attempt), Type: TimeoutErrorType,
		Message: "visibility timeout of " + time.Duration(j.vis).String() + " expired",
		Code:    errmatch.CodeRetry, Time: nsTime(at),
	})
	if o := e.cfg.observer; o != nil {
		o.TimedOut(j.snapshot(e.cfg.history))
	}
	d, err := e.decide(j, "", "", errmatch.Request{}, at)
	if err != nil { // cannot happen for attempt ≥ 1; end the job rather than loop
		d = policy.Decision{Action: policy.Discard}
	}
	e.apply(j, d, at)
}

func (e *Executor) addError(j *job, ent ErrorEntry) {
	j.addError(ent, e.cfg.history)
}

// apply carries out a decision for the active job j whose attempt failed at
// time at.
func (e *Executor) apply(j *job, d policy.Decision, at int64) {
	d = e.budgeted(j, d, at)
	j.started = never
	switch d.Action {
	case policy.Retry:
		if d.Reason != policy.ReasonSnoozed && (j.x != nil || j.pol.Decorrelated()) {
			j.more().prevDelay = int64(d.Delay) // decorrelated jitter grows from it
		}
		e.move(j, Retryable)
		j.due = sat.AddInt(at, int64(d.Delay))
		e.schedule(j)
		if o := e.cfg.observer; o != nil {
			o.Retrying(j.snapshot(e.cfg.history), int(j.attempt), d.Delay)
		}
		e.expireDue(j, at)
	default:
		e.move(j, Discarded)
		j.finished = at
		if d.Action == policy.DeadLetter {
			j.q.kinds[Discarded].unlink(j, byKind)
			j.dead = true
			j.q.kinds[kindDead].push(j, byKind)
		}
		if o := e.cfg.observer; o != nil {
			if j.dead {
				o.DeadLettered(j.snapshot(e.cfg.history))
			} else {
				o.Discarded(j.snapshot(e.cfg.history))
			}
		}
		e.retire(j)
		e.planReplay(j)
	}
}

// schedule puts a scheduled or retryable job into the timer heap at j.due.
func (e *Executor) schedule(j *job) {
	e.timers.push(j)
	e.dueChanged(j.due)
}

func (e *Executor) lookup(op, id string) (*job, error) {
	j := e.jobs[id]
	if j == nil {
		return nil, fmt.Errorf("executor: %s %q: %w", op, clip(id), ErrNotFound)
	}
	return j, nil
}

// ---- operations ----

// Enqueue adds a job (ojs-core PUSH). The retry policy is validated now
// (RET-16): an invalid one returns an error wrapping policy.ErrInvalidPolicy
// and no job is created. The job enters pending if spec.Pending is set,
// scheduled if spec.ScheduledAt is after the current time, and available
// otherwise. A ScheduledAt outside the years 1677 to 2262 (Unix nanoseconds
// in an int64) is rejected. ID, Type, Queue and Args are checked against
// the limits [MaxIDLen], [MaxTypeLen], [MaxQueueLen] and [MaxArgsSize]
// (valid UTF-8, valid JSON; RK-46) before anything else is done, in time
// linear in their size. Other errors wrap ErrDuplicateID, ErrInvalidJob
// or (with spec.RefusePaused) [ErrQueuePaused]; their messages name the
// field and the limit.
func (e *Executor) Enqueue(spec JobSpec) (Job, error) {
	if err := prepare(&spec); err != nil {
		return Job{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	return e.insert(spec, now)
}

// prepare applies the checks of Enqueue that need no lock.
func prepare(spec *JobSpec) error {
	if err := checkSpec(spec); err != nil {
		return err
	}
	if spec.Pending && !spec.ScheduledAt.IsZero() {
		return fmt.Errorf("%w: enqueue %q: pending and scheduled_at cannot be combined", ErrInvalidJob, clip(spec.ID))
	}
	if spec.VisibilityTimeout < 0 {
		return fmt.Errorf("%w: enqueue %q: negative visibility timeout %v", ErrInvalidJob, clip(spec.ID), spec.VisibilityTimeout)
	}
	if r := spec.RateLimit; r != nil {
		if reason := r.check(); reason != "" {
			return fmt.Errorf("%w: enqueue %q: rate_limit: %s", ErrInvalidJob, clip(spec.ID), reason)
		}
	}
	if spec.EnqueueTTL < 0 {
		return fmt.Errorf("%w: enqueue %q: negative enqueue TTL %v", ErrInvalidJob, clip(spec.ID), spec.EnqueueTTL)
	}
	if !spec.ExpiresAt.IsZero() && !representable(spec.ExpiresAt) {
		return fmt.Errorf("%w: enqueue %q: expires_at %s is outside the representable range %s to %s",
			ErrInvalidJob, clip(spec.ID), spec.ExpiresAt.UTC().Format(time.RFC3339Nano),
			minTime.Format(time.RFC3339Nano), maxTime.Format(time.RFC3339Nano))
	}
	if !spec.ScheduledAt.IsZero() && !representable(spec.ScheduledAt) {
		return fmt.Errorf("%w: enqueue %q: scheduled_at %s is outside the representable range %s to %s",
			ErrInvalidJob, clip(spec.ID), spec.ScheduledAt.UTC().Format(time.RFC3339Nano),
			minTime.Format(time.RFC3339Nano), maxTime.Format(time.RFC3339Nano))
	}
	return nil
}

// insert creates the job of a prepared spec at now; e.mu is held.
func (e *Executor) insert(spec JobSpec, now int64) (Job, error) {
	pol, err := e.resolvePolicy(spec.Retry, spec.Policy)
	if err != nil {
		return Job{}, fmt.Errorf("executor: enqueue %q: %w", clip(spec.ID), err)
	}
	if err := e.checkPaused(&spec); err != nil {
		return Job{}, err
	}
	lim, err := e.checkRateLimit(&spec, now)
	if err != nil {
		return Job{}, err
	}
	id := spec.ID
	if id == "" {
		for {
			e.nextID++
			id = "job-" + strconv.FormatUint(e.nextID, 10)
			if e.jobs[id] == nil {
				break
			}
		}
	} else if e.jobs[id] != nil {
		return Job{}, fmt.Errorf("executor: enqueue %q: %w", id, ErrDuplicateID)
	}
	vis := spec.VisibilityTimeout
	if vis == 0 {
		vis = e.cfg.visibility
	}
	e.seq++
	j := &job{
		id: id, typ: e.intern(spec.Type), q: e.queue(spec.Queue), args: spec.Args, pol: pol,
		prio: int32(spec.Priority), seq: e.seq, created: now, enqueued: never,
		started: never, finished: never, vis: int64(vis), hidx: -1,
	}
	if spec.Budget != nil || !spec.ScheduledAt.IsZero() || !spec.ExpiresAt.IsZero() || spec.EnqueueTTL != 0 {
		r := j.more()
		r.bud, r.scheduled = spec.Budget, timeNs(spec.ScheduledAt)
		r.expires, r.ttl = timeNs(spec.ExpiresAt), int64(spec.EnqueueTTL)
	}
	if lim != nil {
		r := copyRateLimit(spec.RateLimit)
		j.more().rl = &jobLimit{spec: r, lim: lim}
		lim.jobs++
		lim.note(r.Rate, r.Throttle)
		lim.latest = r
	}
	e.jobs[id] = j
	e.peaks.jobs = max(e.peaks.jobs, len(e.jobs))
	e.enqueued++
	switch {
	case spec.Pending:
		e.move(j, Pending)
	case j.rare().scheduled != never && j.x.scheduled > now:
		e.move(j, Scheduled)
		j.due = j.x.scheduled
		e.schedule(j)
	default:
		e.makeReady(j, now)
	}
	e.expireDue(j, now)
	return j.snapshot(e.cfg.history), nil
}

// Fetch claims an available job of the first listed queue that has one
// and is not paused (ojs-core FETCH: queues are checked left to right):
// the one of highest priority, and among equals the first to become
// available (ojs-core §5; see [JobSpec.Priority]).
// The job becomes active, its attempt is incremented and its reservation
// runs until now + its visibility timeout. ok is false when nothing is
// available. With no arguments Fetch reads DefaultQueue, the queue of jobs
// enqueued without one; an empty name also means DefaultQueue.
func (e *Executor) Fetch(queues ...string) (j Job, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	if len(queues) == 0 {
		queues = defaultQueues
	}
	for _, name := range queues {
		if name == "" {
			name = DefaultQueue
		}
		q := e.queues[name]
		if q == nil || q.paused {
			continue
		}
		if jb := e.next(q, now); jb != nil {
			e.claim(jb, now)
			return jb.snapshot(e.cfg.history), true
		}
	}
	return Job{}, false
}

// defaultQueues is what Fetch reads when given no queue. Never modified.
var defaultQueues = []string{DefaultQueue}

// claim makes j active under a new delivery, with a reservation until now +
// its visibility timeout. A deadline past the largest representable time
// saturates there, and such a reservation never expires: a lease cannot end
// at its start, even on a clock at that limit.
func (e *Executor) claim(j *job, now int64) {
	e.move(j, Active)
	e.countStart(j, now)
	if j.x != nil {
		j.x.snoozing = false
	}
	j.attempt++
	if j.attempt == 1 {
		if b := e.budgetFor(j.q.name); b != nil {
			b.DepositAt(nsTime(now))
		}
	}
	e.deliveries++
	j.delivery = e.deliveries
	j.started = now
	j.heartbeat(now)
	j.due = e.leaseEnd(j, now)
	e.leases.push(j)
	e.dueChanged(j.due)
}

// ErrStaleDelivery is wrapped by the error Ack, Fail and Heartbeat return
// when the delivery given is not the job's latest: the reservation it
// named expired and the job was fetched again (by another consumer, or
// after a manual retry). Nothing changes; the latest delivery's holder is
// unaffected.
var ErrStaleDelivery = errors.New("executor: stale delivery")

// activeJob looks up the job of delivery d for op, after applying what is
// due. The checks, in order: an unknown id wraps ErrNotFound; a d other
// than the job's latest delivery wraps ErrStaleDelivery; a job that is no
// longer active (its reservation expired, it was cancelled, ...) gives a
// *TransitionError.
func (e *Executor) activeJob(op, id string, to State, d uint64) (*job, int64, error) {
	now := e.now()
	e.advance(now)
	j := e.active[id]
	if j == nil {
		var err error
		if j, err = e.lookup(op, id); err != nil {
			return nil, now, err
		}
	}
	if d != j.delivery {
		return nil, now, fmt.Errorf("executor: %s %q: %w: delivery %d, the job's latest is %d", op, clip(id), ErrStaleDelivery, d, j.delivery)
	}
	if j.state != Active {
		return nil, now, &TransitionError{Op: op, ID: id, From: j.state, To: to}
	}
	return j, now, nil
}

// Ack completes the active job of delivery d (ojs-core ACK): d is the
// [Job.Delivery] of the Fetch that claimed it. A stale delivery returns an
// error wrapping [ErrStaleDelivery]; a job whose reservation has expired
// (and was not fetched again) or that was cancelled is no longer active, so
// a late Ack returns a *TransitionError.
func (e *Executor) Ack(id string, d uint64) (Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, now, err := e.activeJob("ack", id, Completed, d)
	if err != nil {
		return Job{}, err
	}
	e.leases.remove(j)
	e.move(j, Completed)
	if b := e.budgetFor(j.q.name); b != nil {
		b.SuccessAt(nsTime(now))
	}
	j.finished = now
	j.started = never
	s := j.snapshot(e.cfg.history)
	if o := e.cfg.observer; o != nil {
		o.Completed(s)
	}
	e.retire(j)
	return s, nil
}

// Fail reports a failed attempt of the active job of delivery d (ojs-core
// FAIL; d as for [Executor.Ack]) and applies the job's retry policy through
// [policy.Policy.Decide]: handler codes first (DISCARD and FAIL discard,
// DEAD_LETTER dead-letters), then non_retryable_errors and max_attempts
// (on_exhaustion), else the job becomes retryable until now + the backoff
// delay. The failure is recorded in the error history first. An unknown
// code, a Type over [MaxFailureTypeLen] bytes or not valid UTF-8, or
// Details over [MaxDetailsSize] bytes or not valid JSON return an error
// wrapping ErrInvalidJob and change nothing (RK-46); a Message is never
// refused: it is recorded cut to [MaxMessageLen] bytes of valid UTF-8. A
// stale delivery (ErrStaleDelivery) also changes nothing: it never uses up
// the attempt of the latest one.
func (e *Executor) Fail(id string, d uint64, f Failure) (Job, error) {
	code, err := errmatch.ParseCode(string(f.Code))
	if err != nil {
		return Job{}, fmt.Errorf("%w: fail %q: %w", ErrInvalidJob, clip(id), err)
	}
	if field, reason := checkFailure(&f); reason != "" {
		return Job{}, fmt.Errorf("%w: fail %q: %s: %s", ErrInvalidJob, clip(id), field, reason)
	}
	msg := boundMessage(f.Message)
	e.mu.Lock()
	defer e.mu.Unlock()
	j, now, err := e.activeJob("fail", id, Retryable, d)
	if err != nil {
		return Job{}, err
	}
	dec, err := e.decide(j, f.Type, code, f.Request, now)
	if err != nil {
		return Job{}, fmt.Errorf("executor: fail %q: %w", clip(id), err)
	}
	e.leases.remove(j)
	if dec.Action == policy.Retry && dec.Reason == policy.ReasonSnoozed {
		// A snooze is not a failure: no error entry, and the attempt
		// that ran is given back, so the next fetch runs the same one.
		j.attempt--
		r := j.more()
		r.snoozes++
		r.snoozing = true
		e.apply(j, dec, now)
		return j.snapshot(e.cfg.history), nil
	}
	var details []byte
	if len(f.Details) > 0 {
		details = append([]byte(nil), f.Details...)
	}
	e.addError(j, ErrorEntry{Attempt: int(j.attempt), Type: f.Type, Message: msg, Code: code, Time: nsTime(now), Details: details})
	e.apply(j, dec, now)
	return j.snapshot(e.cfg.history), nil
}

// Heartbeat extends the reservation of the active job of delivery d to now
// + its visibility timeout (RET-13; d as for [Executor.Ack]). A stale
// delivery returns an error wrapping ErrStaleDelivery and extends nothing;
// once the reservation has expired the job is no longer active and
// Heartbeat returns a *TransitionError.
func (e *Executor) Heartbeat(id string, d uint64) (Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, now, err := e.activeJob("heartbeat", id, Active, d)
	if err != nil {
		return Job{}, err
	}
	j.heartbeat(now)
	j.due = e.leaseEnd(j, now)
	e.leases.fix(j)
	return j.snapshot(e.cfg.history), nil
}

// Cancel cancels a job that is scheduled, available, pending, active or
// retryable (ojs-core CANCEL). Cancelling a job in a terminal state changes
// nothing and is not an error (ojs-core §7.6 asks for idempotence); the
// returned Job shows its state. The observer sees Cancelled. A Worker
// running the job has its handler's context cancelled at once; any Ack,
// Fail or Heartbeat of the job's delivery then fails.
func (e *Executor) Cancel(id string) (Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	j, err := e.lookup("cancel", id)
	if err != nil {
		return Job{}, err
	}
	if j.state.Terminal() {
		return j.snapshot(e.cfg.history), nil
	}
	return e.cancelLocked(j, now), nil
}

// cancelLocked cancels j, which is not finished, at now; e.mu is held.
func (e *Executor) cancelLocked(j *job, now int64) Job {
	e.unschedule(j) // no-op unless scheduled, retryable or active
	e.move(j, Cancelled)
	j.finished = now
	j.started = never
	s := j.snapshot(e.cfg.history)
	if o := e.cfg.observer; o != nil {
		o.Cancelled(s)
	}
	e.retire(j)
	return s
}

// Activate makes a pending job available (ojs-core ACTIVATE).
func (e *Executor) Activate(id string) (Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	j, err := e.lookup("activate", id)
	if err != nil {
		return Job{}, err
	}
	if j.state != Pending {
		return Job{}, &TransitionError{Op: "activate", ID: id, From: j.state, To: Available}
	}
	e.makeReady(j, now)
	return j.snapshot(e.cfg.history), nil
}

// Retry manually retries a discarded job, dead-lettered or not
// (ojs-dead-letter §6.1): it becomes available with attempt 0, leaves the
// dead letter set, keeps its error history, and gets a fresh retry budget
// (its next fetch is a new delivery: the deliveries of its earlier runs stay
// stale)
// under its policy, or under override when that is not nil
// (ojs-dead-letter §6.3). Other states return a *TransitionError.
// Retry(id, p) is shorthand for RetryWith(id, RetryOptions{Policy: p}).
func (e *Executor) Retry(id string, override *policy.Policy) (Job, error) {
	return e.RetryWith(id, RetryOptions{Policy: override})
}

// MaxPausedQueues is the largest number of queues paused at once (RK-85).
// A paused queue's flag is kept whether or not the queue holds jobs, so the
// bound keeps a caller pausing ever new names from growing memory without
// end: PauseQueue beyond it returns an error wrapping
// [ErrTooManyPausedQueues] and pauses nothing.
const MaxPausedQueues = 10000

// ErrTooManyPausedQueues is wrapped by the error PauseQueue returns when
// MaxPausedQueues queues are paused already.
var ErrTooManyPausedQueues = errors.New("executor: too many paused queues")

// ErrQueuePaused is wrapped by the error Enqueue and EnqueueReplacing
// return for a [JobSpec] with RefusePaused whose queue is paused. Nothing
// is created.
var ErrQueuePaused = errors.New("executor: queue is paused")

// checkPaused refuses spec when it asks to be refused by a paused queue
// and its queue is paused; e.mu is held.
func (e *Executor) checkPaused(spec *JobSpec) error {
	if !spec.RefusePaused {
		return nil
	}
	name := spec.Queue
	if name == "" {
		name = DefaultQueue
	}
	if _, ok := e.paused[name]; ok {
		return fmt.Errorf("executor: enqueue %q: %w: %q", clip(spec.ID), ErrQueuePaused, clip(name))
	}
	return nil
}

// ErrInvalidQueue is wrapped by the error PauseQueue and ResumeQueue return
// for a name no queue can have: over [MaxQueueLen] bytes or not valid
// UTF-8.
var ErrInvalidQueue = errors.New("executor: invalid queue name")

// PauseQueue stops Fetch from claiming jobs of the queue ("" is
// DefaultQueue), which need not hold jobs yet. Jobs still become available
// on time, and reservations still expire. Pausing a paused queue does
// nothing. A name over [MaxQueueLen] bytes or not valid UTF-8 returns an
// error wrapping [ErrInvalidQueue]; a new pause beyond [MaxPausedQueues]
// paused queues one wrapping [ErrTooManyPausedQueues]. Either way nothing
// is stored.
func (e *Executor) PauseQueue(name string) error {
	if name == "" {
		name = DefaultQueue
	}
	if reason := checkName(name, MaxQueueLen, "executor.MaxQueueLen"); reason != "" {
		return fmt.Errorf("%w: pause %q: %s", ErrInvalidQueue, clip(name), reason)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	if _, ok := e.paused[name]; ok {
		return nil
	}
	if len(e.paused) >= MaxPausedQueues {
		return fmt.Errorf("executor: pause %q: %w: %d queues are paused (MaxPausedQueues); resume one first",
			clip(name), ErrTooManyPausedQueues, len(e.paused))
	}
	e.paused[name] = struct{}{}
	if q := e.queues[name]; q != nil {
		q.paused = true
	}
	return nil
}

// ResumeQueue undoes PauseQueue. Resuming a queue that is not paused does
// nothing; a name no queue can have returns an error wrapping
// [ErrInvalidQueue].
func (e *Executor) ResumeQueue(name string) error {
	if name == "" {
		name = DefaultQueue
	}
	if reason := checkName(name, MaxQueueLen, "executor.MaxQueueLen"); reason != "" {
		return fmt.Errorf("%w: resume %q: %s", ErrInvalidQueue, clip(name), reason)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	if _, ok := e.paused[name]; !ok {
		return nil
	}
	delete(e.paused, name)
	if q := e.queues[name]; q != nil && q.paused {
		q.paused = false
		for i := q.kinds[Available].n; i > 0 && len(q.idle) > 0; i-- {
			e.wakeOne(q)
		}
	}
	return nil
}

// Tick applies everything due at the clock's current time (timers,
// reservation expiry, retention) without any other operation. Every
// operation does this first, so Tick is only needed to observe time passing
// through an Observer.
func (e *Executor) Tick() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
}

// NextDue returns the earliest time at which something is due (a scheduled
// job, the end of a backoff, a reservation deadline or a retention expiry).
// ok is false when nothing is.
func (e *Executor) NextDue() (t time.Time, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.nextDue()
	if next == math.MaxInt64 {
		return time.Time{}, false
	}
	return nsTime(next), true
}

// nextDue returns NextDue as Unix nanoseconds, math.MaxInt64 for none.
func (e *Executor) nextDue() int64 {
	next := int64(math.MaxInt64)
	if h := e.timers.peek(); h != nil {
		next = h.due
	}
	if h := e.leases.peek(); h != nil && h.due < next {
		next = h.due
	}
	if h := e.expiries.peek(); h != nil && h.x.edue < next {
		next = h.x.edue
	}
	if h := e.dl.head; h != nil {
		next = min(next, sat.AddInt(sat.AddInt(h.finished, int64(e.cfg.maxAge)), 1))
	}
	if h := e.fin.head; h != nil {
		next = min(next, sat.AddInt(sat.AddInt(h.finished, int64(e.cfg.finMaxAge)), 1))
	}
	return min(next, e.limitWake)
}

// Get returns a snapshot of the job (ojs-core INFO), after applying what is
// due. An unknown or pruned id returns an error wrapping ErrNotFound.
func (e *Executor) Get(id string) (Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	j, err := e.lookup("get", id)
	if err != nil {
		return Job{}, err
	}
	return j.snapshot(e.cfg.history), nil
}
