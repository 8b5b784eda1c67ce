package executor

import (
	"encoding/json"
	"math"
	"time"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/replay"
)

// JobSpec is what a client gives Enqueue: plain data, the zero value of a
// field meaning "not set" (the zero JobSpec lacks a Type and is rejected).
// Enqueue copies what it needs except Args, which it keeps as given.
type JobSpec struct {
	// ID must be unique among the executor's jobs; empty means the executor
	// assigns "job-N".
	ID string
	// Type is the job type (required), used by workers to pick a handler.
	Type string
	// Queue is the queue name; empty means "default".
	Queue string
	// Args are the job's arguments as raw JSON. The executor stores the
	// slice as given and never reads or modifies it.
	Args json.RawMessage
	// Retry is the retry policy as OJS JSON (ojs-retry §2), merged with the
	// defaults; nil, empty or `null` means the default policy. It is
	// validated now (RET-16): an invalid policy rejects the job.
	Retry json.RawMessage
	// Policy is an already validated policy. Setting both Policy and Retry
	// is an error.
	Policy *policy.Policy
	// ScheduledAt, if after the current time, makes the job scheduled until
	// then; otherwise it is available at once.
	ScheduledAt time.Time
	// Pending makes the job pending until Activate. It cannot be combined
	// with ScheduledAt.
	Pending bool
	// VisibilityTimeout is the reservation period after each fetch and
	// heartbeat; zero means the executor's default.
	VisibilityTimeout time.Duration
	// Budget, if not nil, is the job's time budget (ojs-timeouts): an
	// execution timeout, a heartbeat timeout and an optional total timeout
	// besides the visibility timeout (see the package doc, "Time budgets").
	Budget *budget.Budget
	// Priority orders the available jobs of a queue for Fetch: higher
	// first, and the first to become available among equals (ojs-core §5).
	// Zero is normal; [PriorityHigh] and [PriorityLow] are the named
	// levels. It must lie in [MinPriority, MaxPriority].
	Priority int
	// ExpiresAt, if set, is the deadline to start (ojs-core §5.2
	// expires_at): a job still waiting then is discarded (see [Expiry]).
	// It bounds every start, retries included.
	ExpiresAt time.Time
	// EnqueueTTL, if positive, bounds the wait for the job's first start,
	// counted from its creation (ojs-timeouts §5.3): a job not yet started
	// when it runs out is discarded. Zero means none; negative is refused.
	EnqueueTTL time.Duration
	// RefusePaused refuses the job while its queue is paused, with an
	// error wrapping [ErrQueuePaused] (ojs-http-binding §11.3). The default
	// accepts it: pausing stops only fetching (RK-36).
	RefusePaused bool
	// RateLimit, if not nil, is the job's rate limit (ojs-rate-limiting
	// §6): Fetch skips the job while it would break it (see
	// [RateLimit]). It is copied; an invalid one refuses the job with an
	// error wrapping [ErrInvalidJob].
	RateLimit *RateLimit
}

// Failure is what a worker reports with Fail (ojs-retry §7.3): plain data.
// The zero value is a failure without type, message or code, which the
// policy treats as RETRY.
type Failure struct {
	Type    string          // dot-namespaced error type, matched against non_retryable_errors
	Message string          // human readable
	Code    errmatch.Code   // "" means RETRY; otherwise RETRY, DISCARD, DEAD_LETTER or FAIL
	Details json.RawMessage // optional structured data, stored as given (copied)
	// Request is a delay the handler asked for (errmatch.RetryAfter) or a
	// snooze (errmatch.Snooze), bounded by the job's policy
	// (docs/extensions.md). A snooze that the policy allows records no
	// error entry and does not spend the attempt.
	Request errmatch.Request
}

// Error types recorded by the executor itself.
const (
	// TimeoutErrorType is the type of the error entry recorded when a
	// reservation expires. It is never matched against non_retryable_errors.
	TimeoutErrorType = "executor.visibility_timeout"
	// HandlerErrorType is the type recorded in worker mode for a handler
	// error that errmatch.Classify does not classify.
	HandlerErrorType = "executor.handler_error"
	// PanicErrorType is the type recorded in worker mode when a handler panics.
	PanicErrorType = "executor.handler_panic"
	// NoHandlerErrorType is the type recorded in worker mode when no handler
	// is registered for a fetched job's type.
	NoHandlerErrorType = "executor.no_handler"
)

// ErrorEntry is one entry of a job's error history (ojs-retry §10.1): plain
// data, read-only once returned in a [Job] (snapshots share it).
type ErrorEntry struct {
	Attempt int             // the attempt that failed
	Type    string          // error type; TimeoutErrorType for an expired reservation
	Message string          // human readable
	Code    errmatch.Code   // the handler code, "RETRY" when none was given
	Time    time.Time       // when the attempt failed (for a timeout: when the reservation expired)
	Details json.RawMessage // as given to Fail; nil when none
}

// Job is a snapshot of a job, returned by every operation. It is a value:
// later operations do not change it, and it may be read from any goroutine.
// Args and Errors share memory with the executor and must be treated as
// read-only. Unset times are the zero time.Time; the zero Job stands for no
// job (State 0, "initial").
type Job struct {
	ID     string
	Type   string
	Queue  string
	Args   json.RawMessage
	Policy *policy.Policy // the effective retry policy

	State      State
	DeadLetter bool // discarded and in the dead letter set
	Priority   int  // see JobSpec.Priority
	// Attempt is the number of the current or last execution: 0 before the
	// first fetch, incremented by every fetch, reset to 0 by a manual retry.
	Attempt int
	// Snoozes is how many snoozes the job has taken (docs/extensions.md
	// §3.5): each ran an attempt and gave it back. A manual retry resets it.
	Snoozes int
	// Snoozed is true while the job is retryable after a snooze: its
	// NextRetryAt ends the snooze, not a backoff after a failure.
	Snoozed bool
	// Delivery identifies the current or last fetch of the job: 0 before the
	// first fetch, then a number the executor never hands out again (not
	// even after a manual retry). Ack, Fail and Heartbeat take it, so only
	// the holder of the latest delivery can end or extend the attempt.
	Delivery uint64

	CreatedAt     time.Time // Enqueue
	EnqueuedAt    time.Time // last entry into available
	ScheduledAt   time.Time // the requested scheduled_at, if any
	StartedAt     time.Time // last fetch; cleared when the attempt ends
	FinishedAt    time.Time // completed_at / discarded_at / cancelled_at
	NextRetryAt   time.Time // set only while retryable
	ReservedUntil time.Time // reservation deadline, set only while active

	VisibilityTimeout time.Duration

	// ExpiresAt and EnqueueTTL are the job's start deadlines as enqueued
	// (zero: none; a manual retry clears them), and Expired which one
	// discarded the job (NotExpired for every other job).
	ExpiresAt  time.Time
	EnqueueTTL time.Duration
	Expired    Expiry

	// RateLimit is the job's rate limit as enqueued (nil: none), shared:
	// read it, never change it.
	RateLimit *RateLimit

	// Errors holds the most recent error entries, oldest first, at most the
	// executor's WithErrorHistory size.
	Errors []ErrorEntry

	// Replay is the job's automatic replay record (ojs-dead-letter §7.2):
	// the zero State when no replay rule has re-enqueued it.
	Replay replay.State
}

// never marks an unset time in the compact job record.
const never int64 = math.MinInt64

func nsTime(ns int64) time.Time {
	if ns == never {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// timeNs returns t as Unix nanoseconds, or never for the zero time. t must
// be zero or representable (Enqueue checks); others are clamped.
func timeNs(t time.Time) int64 {
	if t.IsZero() {
		return never
	}
	return satNanos(t)
}

// job is the executor's compact record of one job. Times are Unix
// nanoseconds (never when unset); due is the time of the job's timer
// (scheduled_at, next_retry_at or reservation deadline) while it is in the
// timer heap. What few jobs use (a time budget, an error history, start
// deadlines, automatic replays, a requested scheduled_at) lives out of
// line in x, allocated on first use: a plain job waiting to run is a
// 192-byte record (TestJobRecordSize), half of what it was with every
// field inline (docs/benchmarks.md, "Memory per held job").
type job struct {
	id   string
	typ  *typeRef // interned
	q    *queue
	args json.RawMessage
	pol  *policy.Policy // shared
	x    *jobRare       // nil until a rare field is set; read through rare()
	// link holds the job's place in two lists: byKind, the list of its
	// queue and kind (see kindOf), and byAge, the executor's retention list
	// of finished or dead-lettered jobs (unused while the job is not
	// finished).
	link [2]struct{ prev, next *job }
	// stop, while the job is active under a Worker, cancels the handler's
	// context; it is called and cleared when the job leaves active.
	stop func()

	seq      uint64
	delivery uint64
	created  int64
	enqueued int64
	started  int64
	finished int64
	due      int64
	vis      int64

	hidx    int32 // index in the timer heap, -1 when absent
	attempt int32
	prio    int32
	state   State
	dead    bool
}

// jobRare holds the fields of a job that few jobs set. A job without one
// (x nil) reads as noRare.
type jobRare struct {
	bud  *budget.Budget // shared; nil: no time budget
	errs []ErrorEntry   // append-only window, see addError
	// scheduled is the requested scheduled_at (never when none).
	scheduled int64
	beat      int64 // the last fetch or heartbeat of a budgeted job, for the stall deadline
	replayAt  int64 // the last automatic replay
	// replayRule is the rule of the last automatic replay, replayNext the
	// rule of the one planned (while the dead letter waits in the timers).
	replayRule, replayNext string
	replays                int32 // automatic replays so far (ojs.replay_count)
	// expires (ExpiresAt, never when unset) and ttl (EnqueueTTL in
	// nanoseconds, 0 when unset) are the start deadlines; edue and ewhy
	// the one watched while the job is in the expiry heap (at eidx, -1
	// when absent); expired the one that discarded it.
	expires int64
	ttl     int64
	edue    int64
	eidx    int32
	ewhy    Expiry
	expired Expiry
	rl      *jobLimit // nil: no rate limit of its own (see ratelimit.go)
	// snoozes is how many snoozes the job has taken, prevDelay the delay
	// it waited before its current attempt when its policy has
	// decorrelated jitter (docs/extensions.md §3.4, §3.5); both reset by a
	// manual retry or replay.
	snoozes   int32
	snoozing  bool // retryable after a snooze, until the next claim
	prevDelay int64
}

// noRare is what a job without out-of-line fields reads. Never written.
var noRare = jobRare{scheduled: never, expires: never, eidx: -1}

// rare returns j's out-of-line fields for reading (noRare when none are
// set); write through more.
func (j *job) rare() *jobRare {
	if j.x == nil {
		return &noRare
	}
	return j.x
}

// more returns j's out-of-line fields for writing, allocating them first.
func (j *job) more() *jobRare {
	if j.x == nil {
		r := noRare
		j.x = &r
	}
	return j.x
}

// snapshot copies the job into a Job. history is the error window size.
func (j *job) snapshot(history int) Job {
	r := j.rare()
	s := Job{
		ID: j.id, Type: j.typ.name, Queue: j.q.name, Args: j.args, Policy: j.pol,
		State: j.state, DeadLetter: j.dead, Priority: int(j.prio), Attempt: int(j.attempt), Delivery: j.delivery,
		CreatedAt: nsTime(j.created), EnqueuedAt: nsTime(j.enqueued), ScheduledAt: nsTime(r.scheduled),
		StartedAt: nsTime(j.started), FinishedAt: nsTime(j.finished),
		VisibilityTimeout: time.Duration(j.vis),
		ExpiresAt:         nsTime(r.expires), EnqueueTTL: time.Duration(r.ttl), Expired: r.expired,
		Replay: j.replayState(), Snoozes: int(r.snoozes), Snoozed: r.snoozing && j.state == Retryable,
	}
	if r.rl != nil {
		s.RateLimit = r.rl.spec
	}
	switch j.state {
	case Retryable:
		s.NextRetryAt = nsTime(j.due)
	case Active:
		s.ReservedUntil = nsTime(j.due)
	}
	if n := len(r.errs); n > 0 {
		lo := n - history
		if lo < 0 {
			lo = 0
		}
		s.Errors = r.errs[lo:n:n]
	}
	return s
}

// addError appends e to the error history. Entries below len(errs) are
// never modified, so snapshots can share the backing array: the slice grows
// up to 2*history entries and is then reallocated with the newest
// history-1 entries, so copying is amortised over history appends.
func (j *job) addError(e ErrorEntry, history int) {
	r := j.more()
	if len(r.errs) >= 2*history {
		fresh := make([]ErrorEntry, history-1, 2*history)
		copy(fresh, r.errs[len(r.errs)-(history-1):])
		r.errs = fresh
	}
	r.errs = append(r.errs, e)
}

// lastErrorType returns the type of j's most recent error entry, "" if
// none.
func (j *job) lastErrorType() string {
	if errs := j.rare().errs; len(errs) > 0 {
		return errs[len(errs)-1].Type
	}
	return ""
}
