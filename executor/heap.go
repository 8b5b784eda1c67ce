package executor

// heapOrder is how a jobHeap orders its jobs and where each job keeps its
// index in it (-1 while absent), so that a job leaves in O(log n).
type heapOrder interface {
	less(a, b *job) bool
	index(j *job) *int32
}

// jobHeap is a binary min-heap of jobs in the order O. The executor keeps
// three: two timerHeaps (due times, reservation deadlines) and an
// expiryHeap (start deadlines).
type jobHeap[O heapOrder] []*job

// peek returns the first job, or nil.
func (h jobHeap[O]) peek() *job {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

func (h *jobHeap[O]) push(j *job) {
	var o O
	*o.index(j) = int32(len(*h))
	*h = append(*h, j)
	h.up(len(*h) - 1)
}

// remove takes j out of h; a job not in h is left alone.
func (h *jobHeap[O]) remove(j *job) {
	var o O
	i := int(*o.index(j))
	if i < 0 {
		return
	}
	s := *h
	last := len(s) - 1
	if i != last {
		s[i] = s[last]
		*o.index(s[i]) = int32(i)
	}
	s[last] = nil
	*h = s[:last]
	*o.index(j) = -1
	if i != last {
		h.fixAt(i)
	}
	if c := cap(*h); c >= shrinkMin && len(*h) < c/8 {
		// A burst's backing array goes once the heap is an eighth of it
		// (see shrink); the copy is paid for by the removals since.
		*h = append(make(jobHeap[O], 0, 2*len(*h)), *h...)
	}
}

// fix restores the order after j's key changed.
func (h *jobHeap[O]) fix(j *job) {
	var o O
	h.fixAt(int(*o.index(j)))
}

func (h jobHeap[O]) fixAt(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h jobHeap[O]) swap(i, k int) {
	var o O
	h[i], h[k] = h[k], h[i]
	*o.index(h[i]), *o.index(h[k]) = int32(i), int32(k)
}

func (h jobHeap[O]) up(i int) {
	var o O
	for i > 0 {
		p := (i - 1) / 2
		if !o.less(h[i], h[p]) {
			break
		}
		h.swap(i, p)
		i = p
	}
}

func (h jobHeap[O]) down(i int) bool {
	var o O
	start, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && o.less(h[r], h[l]) {
			m = r
		}
		if !o.less(h[m], h[i]) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}
