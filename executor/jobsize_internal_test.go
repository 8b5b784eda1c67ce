package executor

import (
	"testing"
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
