package servermodel

import (
	"math"
	"testing"
	"time"
)

// TestWholeSecondsEndsNearTheLargestDuration: a delay window within a
// second of the largest duration (a server announcing next_attempt_at
// 292 years ahead) is answered at once, not by a loop whose k·s wraps.
func TestWholeSecondsEndsNearTheLargestDuration(t *testing.T) {
	done := make(chan bool, 1)
	go func() {
		done <- inWholeSeconds(math.MaxInt64-600*time.Millisecond, math.MaxInt64-500*time.Millisecond, time.Second, time.Second)
	}()
	select {
	case got := <-done:
		if got {
			t.Error("a window 292 years away holds a whole second within a second of 1s")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("inWholeSeconds did not return within 5s for a window near math.MaxInt64")
	}
	if !inWholeSeconds(999*time.Millisecond, 1001*time.Millisecond, 1500*time.Millisecond, 1500*time.Millisecond) {
		t.Error("a delay of 1s for a spec's 1.5s is a whole second below it")
	}
}
