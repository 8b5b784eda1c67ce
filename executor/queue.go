package executor

// queue is one named queue: its pause flag (a copy of its entry in
// Executor.paused), the lists of its jobs by kind (the state index behind
// List and Count; the Available list is the ready list in FETCH order:
// priority, then FIFO) and,
// in worker mode, the goroutines parked until one of its jobs becomes
// available. A queue record exists only while it holds a job or a parked
// goroutine (see Executor.release), so a million short-lived queue names
// leave nothing behind.
type queue struct {
	name   string
	paused bool
	kinds  [numKinds]jobList
	levels []level         // the priorities of the ready list, see priority.go
	idle   []chan struct{} // parked worker goroutines, see Executor.park
}

// held reports whether q holds a job or a parked goroutine.
func (q *queue) held() bool {
	if len(q.idle) > 0 {
		return true
	}
	for k := range q.kinds {
		if q.kinds[k].n > 0 {
			return true
		}
	}
	return false
}

// next returns the available job of q that FETCH claims, or nil: the
// highest priority, the first to become available among equals (see
// priority.go). Cancelled, claimed and otherwise moved jobs leave the
// Available list when they change state, so next never skips anything.
func (q *queue) next() *job { return q.kinds[Available].head }

// timerHeap is a binary min-heap of jobs ordered by (due, seq): the
// executor keeps one for scheduled and retryable jobs (scheduled_at,
// next_retry_at) and one for active jobs (reservation deadline). A job is
// in at most one of the two and records its index there (hidx) for
// O(log n) removal.
type timerHeap = jobHeap[byDue]

// byDue orders a timerHeap: due time, then enqueue order.
type byDue struct{}

func (byDue) less(a, b *job) bool { return a.before(b) }
func (byDue) index(j *job) *int32 { return &j.hidx }

// before orders jobs by due time, then by enqueue order.
func (j *job) before(k *job) bool {
	return j.due < k.due || (j.due == k.due && j.seq < k.seq)
}
