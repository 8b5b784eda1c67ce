package executor

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// This file holds the operations a network server over the executor needs
// beyond the single-job ones (package ojshttp): atomic batch enqueue,
// multi-job fetch with a reservation chosen by the fetcher, heartbeats that
// choose the extension, and O(1) or O(queues) inventory.

// BatchError is the error of a refused [Executor.EnqueueBatch]: the index
// of the first rejected spec and why (a cause that errors.Is matches
// against [ErrInvalidJob], [ErrDuplicateID], ...).
type BatchError struct {
	Index int   // the rejected spec's index in the batch
	Err   error // the cause, as Enqueue would return it
}

// Error returns "executor: batch[INDEX]: CAUSE".
func (e *BatchError) Error() string {
	return fmt.Sprintf("executor: batch[%d]: %s", e.Index, strings.TrimPrefix(e.Err.Error(), "executor: "))
}

// Unwrap returns the cause.
func (e *BatchError) Unwrap() error { return e.Err }

// EnqueueBatch adds several jobs atomically (OJS batch PUSH): either every
// spec is enqueued, in order, or none is and the error, a [*BatchError],
// names the first rejected one by its index. Each spec is checked as by
// [Executor.Enqueue]; ids must also be unique within the batch.
func (e *Executor) EnqueueBatch(specs []JobSpec) ([]Job, error) {
	return e.EnqueueReplacing(specs, nil)
}

// FetchN claims up to n jobs as n calls of [Executor.Fetch] would, at one
// instant and atomically. A vis > 0 becomes the visibility timeout of each
// claimed job (its reservation now and after each heartbeat); vis ≤ 0
// keeps the job's own. n < 1 claims nothing.
func (e *Executor) FetchN(n int, vis time.Duration, queues ...string) []Job {
	return e.FetchWithin(n, vis, nil, queues...)
}

// HeartbeatFor is [Executor.Heartbeat] with the extension chosen by the
// worker: a vis > 0 becomes the job's visibility timeout and the
// reservation runs until now + vis; vis ≤ 0 is Heartbeat.
func (e *Executor) HeartbeatFor(id string, d uint64, vis time.Duration) (Job, error) {
	if vis <= 0 {
		return e.Heartbeat(id, d)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	j, now, err := e.activeJob("heartbeat", id, Active, d)
	if err != nil {
		return Job{}, err
	}
	j.vis = int64(vis)
	j.heartbeat(now)
	j.due = e.leaseEnd(j, now)
	e.leases.fix(j)
	return j.snapshot(e.cfg.history), nil
}

// Len returns the number of jobs the executor holds, in every state, in
// O(1).
func (e *Executor) Len() int {
	s := e.stats()
	return int(s.enqueued - s.pruned - s.deleted)
}

// QueueInfo describes one queue: its name, whether it is paused and how
// many of its jobs are in each state (dead letters counted under Discarded
// and in DeadLetter too). Plain data.
type QueueInfo struct {
	Name       string
	Paused     bool
	Counts     map[State]int // states with no job are absent
	DeadLetter int
}

// Queues returns every queue the executor knows: those holding a job and
// the paused ones, sorted by name. It costs O(queues).
func (e *Executor) Queues() []QueueInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	out := make([]QueueInfo, 0, len(e.queues))
	for _, q := range e.queues {
		out = append(out, q.info())
	}
	for name := range e.paused {
		if e.queues[name] == nil { // paused, holding no job
			out = append(out, QueueInfo{Name: name, Paused: true, Counts: map[State]int{}})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Queue returns the description of one queue; ok is false when it holds
// no job and is not paused.
func (e *Executor) Queue(name string) (info QueueInfo, ok bool) {
	if name == "" {
		name = DefaultQueue
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(e.now())
	q := e.queues[name]
	if q == nil {
		if _, paused := e.paused[name]; paused {
			return QueueInfo{Name: name, Paused: true, Counts: map[State]int{}}, true
		}
		return QueueInfo{}, false
	}
	return q.info(), true
}

func (q *queue) info() QueueInfo {
	qi := QueueInfo{Name: q.name, Paused: q.paused, Counts: map[State]int{}}
	for k := 1; k < numKinds; k++ {
		n := q.kinds[k].n
		if n == 0 {
			continue
		}
		if k == kindDead {
			qi.DeadLetter = n
			qi.Counts[Discarded] += n
			continue
		}
		qi.Counts[State(k)] += n
	}
	return qi
}

// Release gives back the active job of delivery d without a failure (OJS
// nack with requeue): the job becomes available at once, at the end of its
// queue, and the attempt the fetch counted is not counted (attempt goes
// back by one; no error entry is recorded). The checks are those of
// [Executor.Ack]; the released delivery is stale from then on.
func (e *Executor) Release(id string, d uint64) (Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, now, err := e.activeJob("release", id, Available, d)
	if err != nil {
		return Job{}, err
	}
	e.leases.remove(j)
	j.attempt--
	e.makeReady(j, now)
	return j.snapshot(e.cfg.history), nil
}
