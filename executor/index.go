package executor

import (
	"fmt"
	"slices"

	"github.com/retrykit/retrykit/internal/shrink"
)

// Every job is in exactly one kind list of its queue: the list of its state,
// except that dead-lettered jobs have their own (kindDead) instead of the
// discarded one. Kind lists keep the order in which jobs entered the kind,
// so for the finished kinds the head is the job that finished first: what
// count retention removes. They let List and Count visit only the jobs they
// select.
const (
	kindDead = numStates
	numKinds = numStates + 1
)

// kindOf returns the kind list a job belongs in.
func kindOf(j *job) int {
	if j.dead {
		return kindDead
	}
	return int(j.state)
}

// Link slots of job.link.
const (
	byKind = 0
	byAge  = 1
)

// jobList is an intrusive doubly linked list of jobs over one of the
// job.link slots: O(1) append and removal, no allocation.
type jobList struct {
	head, tail *job
	n          int
}

func (l *jobList) push(j *job, slot int) {
	j.link[slot].prev, j.link[slot].next = l.tail, nil
	if l.tail != nil {
		l.tail.link[slot].next = j
	} else {
		l.head = j
	}
	l.tail = j
	l.n++
}

func (l *jobList) unlink(j *job, slot int) {
	lk := &j.link[slot]
	if lk.prev != nil {
		lk.prev.link[slot].next = lk.next
	} else {
		l.head = lk.next
	}
	if lk.next != nil {
		lk.next.link[slot].prev = lk.prev
	} else {
		l.tail = lk.prev
	}
	lk.prev, lk.next = nil, nil
	l.n--
}

// Filter selects jobs for List and Count. The zero Filter selects every job.
type Filter struct {
	Queue      string  // "" = every queue
	States     []State // empty = every state
	DeadLetter bool    // only dead-lettered jobs
}

// kindSet returns which kind lists f selects.
func (f Filter) kindSet() (set [numKinds]bool) {
	if f.DeadLetter {
		if len(f.States) == 0 || slices.Contains(f.States, Discarded) {
			set[kindDead] = true
		}
		return
	}
	if len(f.States) == 0 {
		for k := 1; k < numKinds; k++ {
			set[k] = true
		}
		return
	}
	for _, s := range f.States {
		if s > 0 && int(s) < numStates {
			set[s] = true
			if s == Discarded {
				set[kindDead] = true
			}
		}
	}
	return
}

// selected calls fn for each queue f selects.
func (e *Executor) selected(f Filter, fn func(q *queue)) {
	if f.Queue != "" {
		if q := e.queues[f.Queue]; q != nil {
			fn(q)
		}
		return
	}
	for _, q := range e.queues {
		fn(q)
	}
}

// Count returns how many jobs match f. It costs O(queues), whatever the
// number of jobs.
func (e *Executor) Count(f Filter) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	set := f.kindSet()
	n := 0
	e.selected(f, func(q *queue) {
		for k := 1; k < numKinds; k++ {
			if set[k] {
				n += q.kinds[k].n
			}
		}
	})
	return n
}

// List returns snapshots of the jobs matching f in the order they were
// enqueued. It visits only the selected jobs (each queue keeps a list per
// state), so listing the few active jobs costs the same beside a million
// finished ones; ordering k jobs costs O(k log k).
func (e *Executor) List(f Filter) []Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	set := f.kindSet()
	var sel []*job
	e.selected(f, func(q *queue) {
		for k := 1; k < numKinds; k++ {
			if set[k] {
				for j := q.kinds[k].head; j != nil; j = j.link[byKind].next {
					sel = append(sel, j)
				}
			}
		}
	})
	slices.SortFunc(sel, func(a, b *job) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	out := make([]Job, len(sel))
	for i, j := range sel {
		out[i] = j.snapshot(e.cfg.history)
	}
	return out
}

// ---- retention ----

// ageList returns the retention list a finished job is in: the dead letter
// set or the list of other finished jobs.
func (e *Executor) ageList(j *job) *jobList {
	if j.dead {
		return &e.dl
	}
	return &e.fin
}

// retire records that j just finished (completed, cancelled or discarded,
// dead-lettered or not) at j.finished, and applies the count limit that
// covers it: executor-wide for dead letters, per queue and state for the
// others.
func (e *Executor) retire(j *job) {
	l := e.ageList(j)
	l.push(j, byAge)
	if j.dead {
		for e.dl.n > e.cfg.maxCount {
			e.remove(e.dl.head)
		}
		return
	}
	k := &j.q.kinds[kindOf(j)]
	for k.n > e.cfg.finMaxCount {
		e.remove(k.head)
	}
	for e.fin.n > e.cfg.finMaxTotal {
		e.remove(e.fin.head)
	}
}

// unretire takes a finished job out of its retention list (manual retry).
func (e *Executor) unretire(j *job) { e.ageList(j).unlink(j, byAge) }

// pruneAge removes the finished jobs older than their max age at now:
// dead letters after maxAge (ojs-dead-letter §8.1), other finished jobs
// after finMaxAge. Both lists are in finishing order, so this stops at the
// first job that is young enough.
func (e *Executor) pruneAge(now int64) {
	for h := e.dl.head; h != nil && now-h.finished > int64(e.cfg.maxAge); h = e.dl.head {
		e.remove(h)
	}
	for h := e.fin.head; h != nil && now-h.finished > int64(e.cfg.finMaxAge); h = e.fin.head {
		e.remove(h)
	}
}

// remove deletes a finished job removed by retention.
func (e *Executor) remove(j *job) {
	var snap Job
	if e.cfg.observer != nil {
		snap = j.snapshot(e.cfg.history)
	}
	e.drop(j)
	e.pruned++
	if o := e.cfg.observer; o != nil {
		o.Pruned(snap)
	}
}

// drop deletes the finished job j from every index.
func (e *Executor) drop(j *job) {
	e.unretire(j)
	e.timers.remove(j) // a planned automatic replay of a dead letter
	j.q.kinds[kindOf(j)].unlink(j, byKind)
	if j.rare().rl != nil {
		j.rare().rl.lim.jobs--
	}
	delete(e.jobs, j.id)
	e.jobs = shrink.Map(e.jobs, &e.peaks.jobs)
	e.unintern(j.typ)
	e.release(j.q)
}

// Delete removes a finished job (completed, cancelled or discarded,
// dead-lettered or not) at once; Get then returns [ErrNotFound] and its id
// may be used again. Deleting a job that is not finished returns an error
// wrapping [ErrInvalidTransition] (cancel it first); an unknown id one
// wrapping ErrNotFound. Retention ([WithRetention],
// [WithFinishedRetention]) deletes finished jobs by itself; Delete is for
// callers that want them gone sooner.
func (e *Executor) Delete(id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	j, err := e.lookup("delete", id)
	if err != nil {
		return err
	}
	if !j.state.Terminal() {
		return fmt.Errorf("executor: delete %q: job is %s, not finished: %w", clip(id), j.state, ErrInvalidTransition)
	}
	e.drop(j)
	e.deleted++
	return nil
}
