package executor

import (
	"strconv"
	"testing"
	"time"
	"unsafe"
)

// TestJobRecordSize pins the size of the record every held job costs: 192
// bytes on a 64-bit platform, a size class of the Go allocator. A field
// added inline pushes it to the next class (208 bytes) and fails here;
// fields few jobs use belong in jobRare.
func TestJobRecordSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are pinned for 64-bit platforms")
	}
	if got := unsafe.Sizeof(job{}); got > 192 {
		t.Errorf("job record is %d bytes, want at most 192 (move rarely used fields to jobRare)", got)
	}
}

// TestPlainJobHasNoRareFields checks that a job enqueued with no budget,
// schedule or deadline, then fetched and acked, never allocates its
// out-of-line fields, and that a failure, a schedule or a deadline does.
func TestPlainJobHasNoRareFields(t *testing.T) {
	e := New()
	if _, err := e.Enqueue(JobSpec{ID: "plain", Type: "t"}); err != nil {
		t.Fatal(err)
	}
	j, ok := e.Fetch()
	if !ok {
		t.Fatal("no job fetched")
	}
	if _, err := e.Ack(j.ID, j.Delivery); err != nil {
		t.Fatal(err)
	}
	if x := e.jobs["plain"].x; x != nil {
		t.Errorf("plain job after fetch and ack has out-of-line fields %+v", *x)
	}
	if _, err := e.Enqueue(JobSpec{ID: "failing", Type: "t"}); err != nil {
		t.Fatal(err)
	}
	j, _ = e.Fetch()
	if _, err := e.Fail(j.ID, j.Delivery, Failure{Type: "x"}); err != nil {
		t.Fatal(err)
	}
	if e.jobs["failing"].x == nil || len(e.jobs["failing"].x.errs) != 1 {
		t.Errorf("failed job holds no error entry out of line")
	}
}

// TestBurstLeavesNoBackingArrays checks that after a burst of 20 000
// scheduled jobs and 20 000 fetched ones has ended, the timer and lease
// heaps no longer keep the burst's backing arrays (a cap of at most 2 ×
// their length once under an eighth of it), nor the index of active jobs
// its peak.
func TestBurstLeavesNoBackingArrays(t *testing.T) {
	clock := NewFakeClock(time.Unix(1_700_000_000, 0))
	e := New(WithClock(clock), WithFinishedRetention(time.Hour, 10))
	const n = 20000
	later := clock.Now().Add(time.Hour)
	for i := range n {
		if _, err := e.Enqueue(JobSpec{ID: "s" + strconv.Itoa(i), Type: "t", Queue: "s", ScheduledAt: later}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Enqueue(JobSpec{ID: "a" + strconv.Itoa(i), Type: "t", Queue: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	var held []Job
	for range n {
		j, ok := e.Fetch("a")
		if !ok {
			t.Fatal("nothing to fetch")
		}
		held = append(held, j)
	}
	if len(e.timers) != n || len(e.leases) != n || len(e.active) != n {
		t.Fatalf("burst: %d timers, %d leases, %d active, want %d each", len(e.timers), len(e.leases), len(e.active), n)
	}
	for i := range n {
		if _, err := e.Cancel("s" + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Ack(held[i].ID, held[i].Delivery); err != nil {
			t.Fatal(err)
		}
	}
	if c := cap(e.timers); c > shrinkMin {
		t.Errorf("timer heap keeps a backing array of %d after the burst", c)
	}
	if c := cap(e.leases); c > shrinkMin {
		t.Errorf("lease heap keeps a backing array of %d after the burst", c)
	}
	if e.peaks.active >= shrinkMin {
		t.Errorf("active index last rebuilt at a peak of %d, want it rebuilt below %d", e.peaks.active, shrinkMin)
	}
}
