package ojshttp

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/shrink"
	"github.com/retrykit/retrykit/policy"
)

// extra is what the server keeps of a job beside the executor: the
// envelope fields the executor does not read, and the facts the wire shows
// that the executor's snapshot no longer holds. Read and written under
// store.mu; the slices and raw messages are never modified once stored.
type extra struct {
	meta      json.RawMessage
	tags      []string
	timeoutMS *int64
	unknown   map[string]json.RawMessage // top-level fields the server does not know, echoed
	result    json.RawMessage
	started   time.Time // the last fetch (the executor clears it when the attempt ends)
	// shown is the policy the client gave, when planted faults run the job
	// under another one (nil: the executor's policy is the client's).
	shown *policy.Policy
	// born is when the entry was stored: a sweep leaves young entries
	// alone, since their job may still be on its way into the executor.
	born time.Time
	// unique is the job's options.unique (nil: none) and uniqueKey its
	// uniqueness key, under which the store indexes the job (RK-152).
	unique    *uniquePolicy
	uniqueKey string
	// sent are the error codes FAIL requests gave, newest last, at most
	// maxSentCodes: a job's error history shows each as sent (RK-177).
	sent []sentCode
	// size is what the job's caller data weighs: args, meta, unknown
	// fields, result, error history (counted against WithMaxBytes).
	size int64
	// errCosts are the weights of the failures the server recorded, the
	// newest last: as many as the executor may still hold (twice its
	// history window, see executor's addError); errBytes is their sum.
	errCosts []int64
	errBytes int64
	// polCost is the part of size the job's retry policy accounts for
	// when not shared (policyCache.parse).
	polCost int64
}

// sizeOfPolicy returns x's polCost (0 for nil).
func sizeOfPolicy(x *extra) int64 {
	if x == nil {
		return 0
	}
	return x.polCost
}

// addErrorCost records a failure of cost bytes; shown is how many error
// entries the job's snapshot shows after it (the executor's window).
func (x *extra) addErrorCost(cost int64, shown int) {
	costs := append(slices.Clip(x.errCosts), cost)
	if keep := 2 * max(shown, 1); len(costs) > keep {
		costs = slices.Clone(costs[len(costs)-keep:])
	}
	x.errCosts = costs
	x.errBytes = 0
	for _, c := range costs {
		x.errBytes += c
	}
}

// slot is what the store keeps of one job: its extra, or, for a plain
// entry (one whose extra sets nothing but size and born, as most PUSHes
// leave it), the two packed into a word with no extra allocated: the size
// in the low 32 bits, born in the next 31 as seconds since the store's
// epoch (rounded up), and the top bit set. A plain job thus costs the map's slot alone
// instead of a 240-byte extra (docs/benchmarks.md, "Memory per held job").
type slot struct {
	x    *extra
	pack uint64
}

// store maps job ids to their extra, bounded by the executor's own
// retention: entries of jobs the executor no longer holds are swept once
// the map has doubled since the last sweep.
type store struct {
	mu       sync.Mutex
	epoch    time.Time // born of packed slots counts from here
	m        map[string]slot
	bytes    int64 // sum of the entries' size
	sweepAt  int
	sweeping atomic.Bool
	forced   time.Time // the last forced sweep, under mu
	// byKey indexes the jobs pushed with a unique policy by uniqueness
	// key, under mu; an id leaves with its entry, so the index is bounded
	// as the store is.
	byKey map[string][]string
	// peak and keyPeak are the largest sizes of m and byKey since they
	// were last rebuilt (see shrink).
	peak, keyPeak int
}

// minSweep is the size below which the store is never swept.
const minSweep = 4096

// sweepGrace is how old an entry must be before a sweep may remove it.
const sweepGrace = 10 * time.Second

func newStore() *store {
	return &store{m: make(map[string]slot), epoch: time.Now(), sweepAt: minSweep, byKey: make(map[string][]string)}
}

// plain reports whether x sets nothing but size and born, whatever fields
// extra gains.
func plain(x *extra) bool {
	c := *x
	c.size, c.born = 0, time.Time{}
	return reflect.ValueOf(&c).Elem().IsZero()
}

// packed marks a packed slot.
const packed = 1 << 63

// slotOf returns the slot that keeps x: packed when x is plain, its size
// fits 32 bits and its born lies within 68 years after the epoch.
func (st *store) slotOf(x *extra) slot {
	if x == nil {
		return slot{}
	}
	sec := (x.born.Sub(st.epoch) + time.Second - 1) / time.Second // rounded up: a sweep never finds an entry older than it is
	if x.size < 0 || x.size > math.MaxUint32 || sec < 0 || sec > math.MaxInt32 || !plain(x) {
		return slot{x: x}
	}
	return slot{pack: packed | uint64(sec)<<32 | uint64(x.size)}
}

// bornOf and sizeOfSlot read a slot without building its extra.
func (st *store) bornOf(sl slot) time.Time {
	if sl.x != nil {
		return sl.x.born
	}
	return st.epoch.Add(time.Duration(sl.pack>>32&math.MaxInt32) * time.Second)
}

func sizeOfSlot(sl slot) int64 {
	if sl.x != nil {
		return sl.x.size
	}
	return int64(sl.pack & math.MaxUint32)
}

// extra returns the entry sl keeps (nil for none): a fresh copy for a
// packed slot, which the caller may keep.
func (st *store) extra(sl slot) *extra {
	if sl.x != nil || sl.pack&packed == 0 {
		return sl.x
	}
	return &extra{size: sizeOfSlot(sl), born: st.bornOf(sl)}
}

// index adds id under x's uniqueness key; under mu. The oldest ids of a
// key beyond maxPerKey are forgotten.
func (st *store) index(id string, x *extra) {
	if x == nil || x.uniqueKey == "" {
		return
	}
	ids := append(st.byKey[x.uniqueKey], id)
	if len(ids) > maxPerKey {
		ids = slices.Delete(ids, 0, len(ids)-maxPerKey)
	}
	st.byKey[x.uniqueKey] = ids
	st.keyPeak = max(st.keyPeak, len(st.byKey))
}

// unindexLocked removes id from key's list; under mu.
func (st *store) unindexLocked(key, id string) {
	if key == "" {
		return
	}
	ids := slices.DeleteFunc(st.byKey[key], func(s string) bool { return s == id })
	if len(ids) == 0 {
		delete(st.byKey, key)
		st.byKey = shrink.Map(st.byKey, &st.keyPeak)
	} else {
		st.byKey[key] = ids
	}
}

// unindex removes id from key's list.
func (st *store) unindex(key, id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.unindexLocked(key, id)
}

// uniqueIDs returns a copy of the ids indexed under key, newest first.
func (st *store) uniqueIDs(key string) []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	ids := slices.Clone(st.byKey[key])
	slices.Reverse(ids)
	return ids
}

func keyOf(x *extra) string {
	if x == nil {
		return ""
	}
	return x.uniqueKey
}

// get returns id's entry, nil if none. The entry is read-only (views
// rendered from it may be in flight); change it through update.
func (st *store) get(id string) *extra {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.extra(st.m[id])
}

// put stores x for id and returns the entry it replaced (nil if none).
func (st *store) put(id string, x *extra) (old *extra) {
	st.mu.Lock()
	defer st.mu.Unlock()
	old = st.extra(st.m[id])
	st.m[id] = st.slotOf(x)
	st.peak = max(st.peak, len(st.m))
	st.bytes += x.size - sizeOf(old)
	st.unindexLocked(keyOf(old), id)
	st.index(id, x)
	return old
}

func sizeOf(x *extra) int64 {
	if x == nil {
		return 0
	}
	return x.size
}

// weight returns the bytes held.
func (st *store) weight() int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bytes
}

// restore undoes put(id, x) when the job was not created: the entry goes
// back to old, unless someone replaced x since (for a packed entry: with
// an entry of another size or second).
func (st *store) restore(id string, x, old *extra) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.m[id] != st.slotOf(x) {
		return
	}
	st.bytes += sizeOf(old) - x.size
	st.unindexLocked(x.uniqueKey, id)
	st.index(id, old)
	if old == nil {
		st.deleteLocked(id)
	} else {
		st.m[id] = st.slotOf(old)
	}
}

// deleteLocked removes id's slot, rebuilding the map once it holds under
// an eighth of its peak (shrink); under mu.
func (st *store) deleteLocked(id string) {
	delete(st.m, id)
	st.m = shrink.Map(st.m, &st.peak)
}

func (st *store) drop(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	x := st.extra(st.m[id])
	st.bytes -= sizeOf(x)
	st.unindexLocked(keyOf(x), id)
	st.deleteLocked(id)
}

// update runs fn on a copy of id's entry and stores the copy, so that
// views rendered from the old entry are not disturbed.
func (st *store) update(id string, fn func(x *extra)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	x := st.extra(st.m[id])
	if x == nil {
		x = &extra{}
	} else {
		c := *x
		x = &c
	}
	old := x.size
	base := x.size - int64(len(x.result)) - x.errBytes // args and the rest, counted at put
	fn(x)
	x.size = base + int64(len(x.result)) + x.errBytes
	st.m[id] = st.slotOf(x)
	st.peak = max(st.peak, len(st.m))
	st.bytes += x.size - old
}

// maybeSweep removes the entries of jobs exec no longer holds (pruned by
// retention or deleted) once the store has grown past its threshold. One
// sweep runs at a time; it checks each id with exec.Get, so its cost is
// amortised over the puts that grew the store.
func (st *store) maybeSweep(exec *executor.Executor) { st.sweep(exec, false) }

// sweep is maybeSweep; force sweeps whatever the size.
func (st *store) sweep(exec *executor.Executor, force bool) {
	st.mu.Lock()
	due := len(st.m) >= st.sweepAt
	if force && !due && time.Since(st.forced) >= time.Second { // at most one forced sweep a second
		due = true
		st.forced = time.Now()
	}
	st.mu.Unlock()
	if !due || !st.sweeping.CompareAndSwap(false, true) {
		return
	}
	defer st.sweeping.Store(false)
	st.mu.Lock()
	ids := make(map[string]slot, len(st.m))
	for id, sl := range st.m {
		ids[id] = sl
	}
	st.mu.Unlock()
	var gone []string
	for id, sl := range ids {
		if time.Since(st.bornOf(sl)) < sweepGrace {
			continue
		}
		if _, err := exec.Get(id); errors.Is(err, executor.ErrNotFound) {
			gone = append(gone, id)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, id := range gone {
		if sl := st.m[id]; sl == ids[id] {
			x := st.extra(sl)
			st.bytes -= x.size
			st.unindexLocked(x.uniqueKey, id)
			st.deleteLocked(id)
		}
	}
	st.sweepAt = max(2*len(st.m), minSweep)
}

// len returns the number of entries.
func (st *store) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.m)
}

// Reclaim gives back what the server no longer needs to hold: it applies
// what is due in the executor (retention prunes the finished jobs past
// their age), then, when the entries the server keeps beside the executor
// outnumber the executor's jobs by an eighth (and by 4096), drops
// those of the jobs the executor no longer holds (entries younger than
// 10 s are left for a later call), so that its maps rebuild smaller. It
// returns the jobs and the bytes of job data held after it, as
// [WithMaxJobs] and [WithMaxBytes] count them. A server that is only
// answering requests does this work as it grows; Reclaim is for the
// quiet after a burst: `retrykit serve` calls it every 5 seconds. It is
// safe for concurrent use.
func (s *Server) Reclaim() (jobs int, bytes int64) {
	s.exec.Tick()
	jobs = s.exec.Len()
	if s.store.len() > jobs+max(jobs/8, minSweep) {
		s.store.sweep(s.exec, true)
	}
	return s.exec.Len(), s.store.weight()
}
