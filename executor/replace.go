package executor

import (
	"fmt"
	"time"
)

// EnqueueReplacing is [Executor.EnqueueBatch] that also cancels the jobs
// named in cancel (OJS unique jobs' on_conflict "replace"), atomically:
// every spec is checked first, and each job to cancel must not be active
// (a *[TransitionError]); only when everything passes are the jobs
// cancelled, then the specs enqueued, under one lock. A refused call
// changes nothing. Jobs to cancel that are already finished, or no longer
// held, are left alone. Errors are those of EnqueueBatch (a *[BatchError]
// for a spec) or the TransitionError of a job to cancel.
func (e *Executor) EnqueueReplacing(specs []JobSpec, cancel []string) ([]Job, error) {
	for i := range specs {
		if err := prepare(&specs[i]); err != nil {
			return nil, &BatchError{Index: i, Err: err}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	if err := e.checkBatch(specs); err != nil {
		return nil, err
	}
	for _, id := range cancel {
		if j := e.jobs[id]; j != nil && j.state == Active {
			return nil, &TransitionError{Op: "cancel", ID: id, From: Active, To: Cancelled}
		}
	}
	for _, id := range cancel {
		j := e.jobs[id]
		if j == nil || j.state.Terminal() {
			continue
		}
		e.cancelLocked(j, now)
	}
	out := make([]Job, 0, len(specs))
	for i := range specs {
		j, err := e.insert(specs[i], now)
		if err != nil { // unreachable: everything was checked above
			panic("executor: internal error: batch insert after checks: " + err.Error())
		}
		out = append(out, j)
	}
	return out, nil
}

// checkBatch applies the checks of EnqueueBatch that need the lock: each
// policy resolves, no spec that refuses a paused queue names one, and ids are unique within the batch and new.
func (e *Executor) checkBatch(specs []JobSpec) error {
	seen := make(map[string]int, len(specs))
	if err := e.roomForKeys(specs); err != nil {
		return err
	}
	for i := range specs {
		sp := &specs[i]
		if _, err := e.resolvePolicy(sp.Retry, sp.Policy); err != nil {
			return &BatchError{Index: i, Err: fmt.Errorf("executor: enqueue %q: %w", clip(sp.ID), err)}
		}
		if err := e.checkPaused(sp); err != nil {
			return &BatchError{Index: i, Err: err}
		}
		if sp.ID == "" {
			continue
		}
		if k, dup := seen[sp.ID]; dup {
			return &BatchError{Index: i, Err: fmt.Errorf("executor: enqueue %q: %w (batch[%d] has it too)", clip(sp.ID), ErrDuplicateID, k)}
		}
		if e.jobs[sp.ID] != nil {
			return &BatchError{Index: i, Err: fmt.Errorf("executor: enqueue %q: %w", clip(sp.ID), ErrDuplicateID)}
		}
		seen[sp.ID] = i
	}
	return nil
}

// FetchWithin is [Executor.FetchN] that stops before the first job for
// which fit returns false, leaving it and the rest available: a server
// claims only the jobs its answer can carry. fit sees each job as it
// would be claimed (attempt and reservation included) and is called with
// the executor's lock held, so it must not call the executor. A nil fit
// claims as FetchN.
func (e *Executor) FetchWithin(n int, vis time.Duration, fit func(Job) bool, queues ...string) []Job {
	if n < 1 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.advance(now)
	if len(queues) == 0 {
		queues = defaultQueues
	}
	var out []Job
	for _, name := range queues {
		if name == "" {
			name = DefaultQueue
		}
		q := e.queues[name]
		if q == nil || q.paused {
			continue
		}
		for len(out) < n {
			j := e.next(q, now)
			if j == nil {
				break
			}
			if fit != nil && !fit(j.snapshot(e.cfg.history)) {
				return out
			}
			if vis > 0 {
				j.vis = int64(vis)
			}
			e.claim(j, now)
			out = append(out, j.snapshot(e.cfg.history))
		}
		if len(out) == n {
			break
		}
	}
	return out
}
