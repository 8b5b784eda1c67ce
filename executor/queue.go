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
// in at most one heap and records its index there for O(log n) removal.
type timerHeap []*job

// before orders jobs by due time, then by enqueue order.
func (j *job) before(k *job) bool {
	return j.due < k.due || (j.due == k.due && j.seq < k.seq)
}

func (h timerHeap) less(a, b *job) bool { return a.before(b) }

// peek returns the earliest job, or nil.
func (h timerHeap) peek() *job {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

func (h *timerHeap) push(j *job) {
	j.hidx = int32(len(*h))
	*h = append(*h, j)
	h.up(int(j.hidx))
}

func (h *timerHeap) remove(j *job) {
	i := int(j.hidx)
	if i < 0 {
		return
	}
	s := *h
	last := len(s) - 1
	if i != last {
		s[i] = s[last]
		s[i].hidx = int32(i)
	}
	s[last] = nil
	*h = s[:last]
	j.hidx = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}

// fix restores the order after j.due changed.
func (h *timerHeap) fix(j *job) {
	if !h.down(int(j.hidx)) {
		h.up(int(j.hidx))
	}
}

func (h timerHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		h[i].hidx, h[p].hidx = int32(i), int32(p)
		i = p
	}
}

func (h timerHeap) down(i int) bool {
	start, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(h[r], h[l]) {
			m = r
		}
		if !h.less(h[m], h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		h[i].hidx, h[m].hidx = int32(i), int32(m)
		i = m
	}
	return i > start
}
