package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// RetryOptions are the changes a manual retry makes to a job before it runs
// again (ojs-dead-letter §6.3, retry with modifications). The zero value
// changes nothing: the job keeps its queue, args, priority and policy.
type RetryOptions struct {
	// Policy, if not nil, replaces the job's retry policy.
	Policy *policy.Policy
	// Queue, if not empty, moves the job to that queue.
	Queue string
	// Args, if not nil, replaces the job's args (stored as given, checked
	// as at Enqueue: valid JSON of at most MaxArgsSize bytes).
	Args json.RawMessage
	// Priority, if not nil, replaces the job's priority.
	Priority *int
	// DeadLetterOnly refuses to retry a job that is not in the dead letter
	// set (a plainly discarded one, say) with an error wrapping
	// [ErrNotDeadLetter], checked atomically with the retry.
	DeadLetterOnly bool
}

// ErrNotDeadLetter is wrapped by the error of [Executor.RetryWith] with
// DeadLetterOnly and of [Executor.DeleteDeadLetter] for a job that exists
// but is not in the dead letter set.
var ErrNotDeadLetter = errors.New("executor: job is not in the dead letter set")

// DeleteDeadLetter is [Executor.Delete] for a dead-lettered job only: a job
// that is not in the dead letter set (any more) returns an error wrapping
// [ErrNotDeadLetter] and is left alone, checked atomically with the delete.
func (e *Executor) DeleteDeadLetter(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	j, err := e.lookup("delete", id)
	if err != nil {
		return err
	}
	if !j.dead {
		return fmt.Errorf("executor: delete %q: %s: %w", clip(id), j.state, ErrNotDeadLetter)
	}
	e.drop(j)
	e.deleted++
	return nil
}

// RetryWith manually retries a discarded job as [Executor.Retry] does,
// after applying o: the job moves to o.Queue, takes o.Args, o.Priority and
// o.Policy where they are set, then becomes available at the tail of its
// priority in its (new) queue with attempt 0 and its error history kept.
// Invalid options return an error wrapping [ErrInvalidJob] that names the
// field, and change nothing; a job that is not discarded returns a
// *TransitionError; an unknown id an error wrapping [ErrNotFound].
func (e *Executor) RetryWith(id string, o RetryOptions) (Job, error) {
	field, reason := "", ""
	if reason = checkName(o.Queue, MaxQueueLen, "executor.MaxQueueLen"); reason != "" {
		field = "queue"
	} else if reason = checkJSON(o.Args, MaxArgsSize, "executor.MaxArgsSize"); reason != "" {
		field = "args"
	} else if p := o.Priority; p != nil && (*p < MinPriority || *p > MaxPriority) {
		field, reason = "priority", fmt.Sprintf("must be from %d to %d (an int32), got %d", MinPriority, MaxPriority, *p)
	}
	if reason != "" {
		return Job{}, fmt.Errorf("%w: retry %q: %s: %s", ErrInvalidJob, clip(id), field, reason)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	j, err := e.lookup("retry", id)
	if err != nil {
		return Job{}, err
	}
	if o.DeadLetterOnly && !j.dead {
		return Job{}, fmt.Errorf("executor: retry %q: %s: %w", clip(id), j.state, ErrNotDeadLetter)
	}
	if j.state != Discarded {
		return Job{}, &TransitionError{Op: "retry", ID: id, From: j.state, To: Available}
	}
	e.unretire(j)
	e.timers.remove(j) // a planned automatic replay
	if j.x != nil {
		j.x.replayNext = ""
	}
	if o.Queue != "" && o.Queue != j.q.name {
		old := j.q
		old.kinds[kindOf(j)].unlink(j, byKind)
		j.q = e.queue(o.Queue)
		j.q.kinds[kindOf(j)].push(j, byKind)
		e.release(old)
	}
	if o.Args != nil {
		j.args = o.Args
	}
	if o.Priority != nil {
		j.prio = int32(*o.Priority)
	}
	if o.Policy != nil {
		j.pol = o.Policy
	}
	j.attempt = 0
	j.finished = never
	if r := j.x; r != nil {
		r.expires, r.ttl, r.expired = never, 0, NotExpired // the operator decides anew
		r.snoozes, r.prevDelay = 0, 0
	}
	e.makeReady(j, now)
	return j.snapshot(e.cfg.history), nil
}

// Retention returns the dead letter retention in force ([WithRetention]):
// the longest a dead letter is kept, and how many are kept at most.
func (e *Executor) Retention() (maxAge time.Duration, maxCount int) {
	return e.cfg.maxAge, e.cfg.maxCount
}

// DeadLetterEntry is what a [DeadLetterQuery] filter sees of a dead letter:
// plain data, read under the executor's lock without taking a snapshot.
type DeadLetterEntry struct {
	Queue string
	Type  string
	// ErrorType is the type of the most recent error entry ("" if none).
	ErrorType string
	// DeadAt is when the job was dead-lettered (its FinishedAt).
	DeadAt time.Time
}

// DeadLetterQuery selects a page of the dead letter set for
// [Executor.DeadLetters]. The zero value selects the whole set, newest
// first, with no snapshot (Limit 0).
type DeadLetterQuery struct {
	// Accept, if not nil, selects the dead letters it returns true for. It
	// runs under the executor's lock: it must be quick and must not call
	// the executor.
	Accept func(DeadLetterEntry) bool
	// Offset and Limit are the page: the snapshots of matches number
	// Offset to Offset+Limit-1 (0-based) in the chosen order.
	Offset, Limit int
	// OldestFirst orders by dead-lettering time, oldest first; the default
	// is newest first.
	OldestFirst bool
}

// DeadLetters returns a page of the dead letters q selects and how many it
// selects in all. It walks the dead letter set in the order the jobs were
// dead-lettered (no sort) and snapshots only the page, so a filter over the
// whole set costs O(set) and allocates O(page).
func (e *Executor) DeadLetters(q DeadLetterQuery) (page []Job, total int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	next := func(j *job) *job { return j.link[byAge].prev }
	j := e.dl.tail
	if q.OldestFirst {
		next = func(j *job) *job { return j.link[byAge].next }
		j = e.dl.head
	}
	for ; j != nil; j = next(j) {
		if q.Accept != nil && !q.Accept(entryOf(j)) {
			continue
		}
		if total >= q.Offset && total-q.Offset < q.Limit {
			page = append(page, j.snapshot(e.cfg.history))
		}
		total++
	}
	return page, total
}

func entryOf(j *job) DeadLetterEntry {
	return DeadLetterEntry{Queue: j.q.name, Type: j.typ.name, DeadAt: nsTime(j.finished), ErrorType: j.lastErrorType()}
}

// DeadLetterStats summarises the dead letter set (ojs-dead-letter §10.1).
// The maps are the caller's.
type DeadLetterStats struct {
	Total       int
	ByQueue     map[string]int
	ByErrorType map[string]int // by the type of the most recent error entry; "" for none
	// Oldest and Newest are the earliest and latest dead-lettering times
	// (zero when the set is empty).
	Oldest, Newest time.Time
}

// DeadLetterStats counts the dead letter set by queue and by error type in
// one walk, without snapshots.
func (e *Executor) DeadLetterStats() DeadLetterStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	s := DeadLetterStats{ByQueue: map[string]int{}, ByErrorType: map[string]int{}}
	for j := e.dl.head; j != nil; j = j.link[byAge].next {
		d := entryOf(j)
		s.Total++
		s.ByQueue[d.Queue]++
		s.ByErrorType[d.ErrorType]++
		if s.Oldest.IsZero() || d.DeadAt.Before(s.Oldest) {
			s.Oldest = d.DeadAt
		}
		if d.DeadAt.After(s.Newest) {
			s.Newest = d.DeadAt
		}
	}
	return s
}
