package executor

import (
	"cmp"
	"math"
	"slices"
)

// Priority bounds of [JobSpec.Priority]: any value of an int32. ojs-core
// §5 asks for at least -100 to 100; higher numbers are fetched first.
const (
	MinPriority = math.MinInt32
	MaxPriority = math.MaxInt32
)

// Named priority levels of ojs-core §5 (RECOMMENDED aliases of numbers).
const (
	PriorityHigh   = 10
	PriorityNormal = 0
	PriorityLow    = -10
)

// The ready list of a queue (its Available kind list) is kept in FETCH
// order:
//
//  1. higher priority first (ojs-core §5: "jobs with higher priority
//     values MUST be fetched before jobs with lower priority values");
//  2. among equal priorities, the order in which the jobs became available
//     (FIFO: "jobs with equal priority MUST be fetched in FIFO order"); a
//     job that comes back from a retry backoff or a manual retry joins the
//     tail of its priority.
//
// The head is what FETCH claims. Each priority present in the list is a
// level: its number and its last job, sorted from the highest priority
// down, so that a job is inserted after the tail of its level (or before
// the head of the next lower one) in O(log levels) and removed in O(1) plus
// the same search. Jobs of one priority, the usual case, cost one level.
//
//	enqueue (priority)  a(0) b(10) c(0) d(-10) e(10)
//	ready list          b e a c d
//	levels              [10: e] [0: c] [-10: d]
type level struct {
	prio int32
	tail *job
}

// findLevel returns the index of priority p in q.levels, or where it would
// go, and whether it is there.
func (q *queue) findLevel(p int32) (int, bool) {
	return slices.BinarySearchFunc(q.levels, p, func(lv level, p int32) int { return cmp.Compare(p, lv.prio) })
}

// pushReady inserts j into q's ready list at its FETCH position.
func (q *queue) pushReady(j *job) {
	l := &q.kinds[Available]
	i, found := q.findLevel(j.prio)
	switch {
	case found:
		l.insertBefore(q.levels[i].tail.link[byKind].next, j, byKind)
		q.levels[i].tail = j
	case i < len(q.levels):
		// Before the first job of the next lower priority: the previous
		// level's tail, or the head.
		var at *job
		if i == 0 {
			at = l.head
		} else {
			at = q.levels[i-1].tail.link[byKind].next
		}
		l.insertBefore(at, j, byKind)
		q.levels = slices.Insert(q.levels, i, level{prio: j.prio, tail: j})
	default:
		l.push(j, byKind)
		q.levels = append(q.levels, level{prio: j.prio, tail: j})
	}
}

// unlinkReady removes j from q's ready list.
func (q *queue) unlinkReady(j *job) {
	if i, found := q.findLevel(j.prio); found && q.levels[i].tail == j {
		if prev := j.link[byKind].prev; prev != nil && prev.prio == j.prio {
			q.levels[i].tail = prev
		} else {
			q.levels = slices.Delete(q.levels, i, i+1)
			if len(q.levels) == 0 {
				q.levels = nil // a queue without ready jobs keeps no array
			}
		}
	}
	q.kinds[Available].unlink(j, byKind)
}

// pushKind puts j into the kind list of its state (see kindOf).
func (q *queue) pushKind(j *job) {
	if k := kindOf(j); k == int(Available) {
		q.pushReady(j)
	} else {
		q.kinds[k].push(j, byKind)
	}
}

// unlinkKind takes j out of the kind list of its state.
func (q *queue) unlinkKind(j *job) {
	if k := kindOf(j); k == int(Available) {
		q.unlinkReady(j)
	} else {
		q.kinds[k].unlink(j, byKind)
	}
}

// insertBefore inserts j before at in l over slot; a nil at appends.
func (l *jobList) insertBefore(at, j *job, slot int) {
	if at == nil {
		l.push(j, slot)
		return
	}
	prev := at.link[slot].prev
	j.link[slot].prev, j.link[slot].next = prev, at
	at.link[slot].prev = j
	if prev != nil {
		prev.link[slot].next = j
	} else {
		l.head = j
	}
	l.n++
}
