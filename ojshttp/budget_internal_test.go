package ojshttp

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestBudgetWaitsInOrder: acquire waits while the budget is taken, grants
// waiters in arrival order as bytes come back, clamps a request larger
// than the budget to all of it, and gives up when its context ends.
func TestBudgetWaitsInOrder(t *testing.T) {
	b := newBudget(100)
	ctx := context.Background()
	if n, err := b.acquire(ctx, 1000); err != nil || n != 100 {
		t.Fatalf("clamped acquire: %d %v", n, err)
	}
	got := make(chan int, 2)
	for i, n := range []int64{60, 30} {
		go func() {
			if _, err := b.acquire(ctx, n); err == nil {
				got <- i
			}
		}()
		time.Sleep(20 * time.Millisecond) // arrival order
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(cctx, 10); err == nil {
		t.Fatal("acquire beyond the budget did not wait")
	}
	b.release(40) // 30 would fit now, but the 60 arrived first
	select {
	case i := <-got:
		t.Fatalf("waiter %d passed the first in line", i)
	case <-time.After(30 * time.Millisecond):
	}
	b.release(60)
	<-got
	<-got
	if b.cur != 90 || len(b.waiters) != 0 {
		t.Fatalf("cur %d, %d waiters", b.cur, len(b.waiters))
	}
}

// TestEstimateBoundsEncoding: the estimate of an answer is at least its
// encoded size, for strings that JSON escapes.
func TestEstimateBoundsEncoding(t *testing.T) {
	v := map[string]any{"s": "a\"\\\n\x01\u2028é\xff<>&", "r": json.RawMessage(`[1, 2]`),
		"l": []map[string]any{{"x": []string{"\x00"}}}, "n": 12345}
	enc, _ := json.Marshal(v)
	if e := estimate(v); e < int64(len(enc)) {
		t.Fatalf("estimate %d < encoded %d: %s", e, len(enc), enc)
	}
}
