package executor

// queue is one named queue: its ready FIFO, pause flag, the lists of its
// jobs by kind (the state index behind List and Count) and, in worker mode,
// the goroutines parked until one of its jobs becomes available.
type queue struct {
	name   string
	paused bool
	ready  fifo
	kinds  [numKinds]jobList
	idle   []chan struct{} // parked worker goroutines, see Executor.park
}

// fifo is a growable ring buffer of jobs in the order they became available.
// Cancelled jobs are left in it and skipped when popped (their state is no
// longer Available), so removal is O(1).
type fifo struct {
	buf  []*job
	head int
	n    int
}

func (f *fifo) push(j *job) {
	if f.n == len(f.buf) {
		size := 2 * len(f.buf)
		if size < 8 {
			size = 8
		}
		nb := make([]*job, size)
		k := copy(nb, f.buf[f.head:])
		copy(nb[k:], f.buf[:f.head])
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)%len(f.buf)] = j
	f.n++
}

// pop returns the oldest job still available, or nil.
func (f *fifo) pop() *job {
	for f.n > 0 {
		j := f.buf[f.head]
		f.buf[f.head] = nil
		f.head++
		if f.head == len(f.buf) {
			f.head = 0
		}
		f.n--
		if j.state == Available {
			return j
		}
	}
	if len(f.buf) > 64 { // drained: give back a large buffer
		f.buf, f.head = nil, 0
	}
	return nil
}

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
