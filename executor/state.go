package executor

import (
	"errors"
	"fmt"
)

// State is one of the eight OJS job lifecycle states (ojs-core §6.1). The
// zero value is not a job state: it stands for "no state yet" (the initial
// pseudo-state before PUSH) and prints as "initial".
type State uint8

// The eight OJS states. Completed, Cancelled and Discarded are terminal.
const (
	Scheduled State = iota + 1 // waiting for its scheduled_at time
	Available                  // ready to be fetched
	Pending                    // staged, waiting for Activate
	Active                     // claimed by a worker, reservation running
	Completed                  // terminal: the handler succeeded
	Retryable                  // failed, waiting for next_retry_at
	Cancelled                  // terminal: cancelled
	Discarded                  // terminal: failed permanently (maybe dead-lettered)
)

// numStates is one more than the largest State, for tables indexed by state.
const numStates = int(Discarded) + 1

var stateNames = [numStates]string{"initial", "scheduled", "available", "pending", "active", "completed", "retryable", "cancelled", "discarded"}

// String returns the OJS name of the state ("available", ...), "initial" for
// the zero value, and "state(N)" for values out of range.
func (s State) String() string {
	if int(s) < numStates {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Terminal reports whether s is completed, cancelled or discarded: a
// finished job, kept until retention or [Executor.Delete] removes it.
func (s State) Terminal() bool { return s == Completed || s == Cancelled || s == Discarded }

// transitions is the closed transition table of ojs-core §6.3, as (from, to)
// pairs; the zero State is the initial pseudo-state.
var transitions = func() (t [numStates][numStates]bool) {
	for _, p := range [][2]State{
		{0, Scheduled}, {0, Available}, {0, Pending}, // PUSH
		{Scheduled, Available}, // timer
		{Pending, Available},   // ACTIVATE
		{Available, Active},    // FETCH
		{Active, Completed},    // ACK
		{Active, Retryable},    // FAIL, retries remain
		{Active, Discarded},    // FAIL, exhausted or non-retryable
		{Active, Cancelled},    // CANCEL
		{Active, Available},    // visibility timeout (listed by ojs-core; see package doc)
		{Retryable, Available}, // timer: backoff elapsed
		{Scheduled, Cancelled}, {Available, Cancelled}, {Pending, Cancelled}, {Retryable, Cancelled},
		{Discarded, Available}, // manual retry
		{Available, Scheduled}, // rate limit, on_limit reschedule (ojs-rate-limiting §6.2)
		// expiry: a waiting job past its start deadline (ojs-core §5.2
		// expires_at, ojs-timeouts §5.3 enqueue TTL; see expiry.go)
		{Scheduled, Discarded}, {Available, Discarded}, {Pending, Discarded}, {Retryable, Discarded},
	} {
		t[p[0]][p[1]] = true
	}
	return t
}()

// allowed reports whether ojs-core's transition table (§6.3) lists a
// transition from one state to another. The zero State stands for the
// initial pseudo-state, so allowed(0, Pending) is true.
func allowed(from, to State) bool {
	if int(from) >= numStates || int(to) >= numStates {
		return false
	}
	return transitions[from][to]
}

// ErrInvalidTransition is the errors.Is target of every [*TransitionError].
var ErrInvalidTransition = errors.New("executor: invalid state transition")

// ErrNotFound is returned (wrapped, with the id) for an unknown job id,
// including a dead-lettered job that retention has pruned.
var ErrNotFound = errors.New("executor: job not found")

// ErrDuplicateID is returned (wrapped) by Enqueue for an id already in use.
var ErrDuplicateID = errors.New("executor: duplicate job id")

// ErrInvalidJob is returned (wrapped) by Enqueue for a malformed job (empty
// type, both Pending and ScheduledAt, negative visibility timeout, a field
// over its limit or not valid UTF-8 or JSON, see [MaxIDLen]) and by Fail
// for an unknown handler code or a Type or Details over its limit.
var ErrInvalidJob = errors.New("executor: invalid request")

// TransitionError reports an operation that would need a transition the
// table does not list, for example Ack on an available job. It names the
// operation, the job, the state the job is in and the state the operation
// leads to. errors.Is(err, ErrInvalidTransition) is true.
//
// For Fail the To state is reported as Retryable (the first of its two
// outcomes); for Heartbeat, which keeps a job active, it is Active. It is
// plain data, created by the executor; the zero value is not returned.
type TransitionError struct {
	Op   string // "ack", "fail", "heartbeat", "activate", "retry", "fetch"
	ID   string
	From State
	To   State
}

// Error returns e.g. `executor: ack "j1": invalid transition available -> completed`.
func (e *TransitionError) Error() string {
	return fmt.Sprintf("executor: %s %q: invalid transition %s -> %s", e.Op, clip(e.ID), e.From, e.To)
}

// Is makes errors.Is(err, ErrInvalidTransition) true.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }
