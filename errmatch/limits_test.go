package errmatch

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
)

// heapDelta runs f and returns the bytes it allocated, as
// runtime.MemStats.TotalAlloc counts them (a benchmark-style measure, not a
// timing).
// It takes the least of five runs: TotalAlloc also counts what other
// goroutines (the race detector's, the test framework's) allocate meanwhile.
func heapDelta(f func()) uint64 {
	least := uint64(math.MaxUint64)
	for range 5 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}

// A list of 2 000 000 empty patterns is refused as a whole, at
// once, with a short message naming the limit.
func TestCompileTooManyPatterns(t *testing.T) {
	patterns := make([]string, 2_000_000)
	var err error
	alloc := heapDelta(func() { _, err = Compile(patterns) })
	if !errors.Is(err, ErrTooManyPatterns) {
		t.Fatalf("Compile(2e6 empty) = %v, want ErrTooManyPatterns", err)
	}
	want := "errmatch: 2000000 patterns, more than the limit of 100000 (errmatch.MaxPatterns)"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if alloc > 4096 {
		t.Errorf("Compile allocated %d bytes to refuse the list, want < 4 KiB", alloc)
	}
}

// Within the count limit, every entry bad: the error lists 20 and counts
// the rest, so its size does not grow with the list.
func TestCompileErrorListIsCapped(t *testing.T) {
	patterns := make([]string, MaxPatterns)
	var err error
	alloc := heapDelta(func() { _, err = Compile(patterns) })
	var ce *CompileError
	if !errors.As(err, &ce) || !errors.Is(err, ErrEmptyPattern) || !errors.Is(err, ErrInvalidPattern) {
		t.Fatalf("Compile: %v, want a *CompileError matching ErrEmptyPattern", err)
	}
	if len(ce.Errors) != 20 || ce.Omitted != MaxPatterns-20 {
		t.Errorf("listed %d, omitted %d; want 20 and %d", len(ce.Errors), ce.Omitted, MaxPatterns-20)
	}
	msg := err.Error()
	if !strings.HasSuffix(msg, "errmatch: and 99980 more invalid patterns") || len(msg) > 2000 {
		t.Errorf("message (%d bytes) ends %q", len(msg), msg[max(0, len(msg)-80):])
	}
	if alloc > 16<<10 {
		t.Errorf("Compile allocated %d bytes for 100 000 empty patterns, want < 16 KiB", alloc)
	}
}

func TestCompilePatternTooLong(t *testing.T) {
	long := strings.Repeat("a", MaxPatternLen+1)
	ok := strings.Repeat("b", MaxPatternLen)
	_, err := Compile([]string{ok, long})
	var pe *PatternError
	if !errors.Is(err, ErrPatternTooLong) || !errors.As(err, &pe) || pe.Index != 1 {
		t.Fatalf("Compile: %v, want ErrPatternTooLong at index 1", err)
	}
	if errors.Is(err, ErrEmptyPattern) {
		t.Error("a long pattern matches ErrEmptyPattern")
	}
	want := `errmatch: pattern 1 "` + strings.Repeat("a", 48) + `…(1025 bytes)": longer than the limit of 1024 bytes (errmatch.MaxPatternLen): 1025 bytes`
	if err.Error() != want {
		t.Errorf("message\n%q, want\n%q", err, want)
	}
	if _, err := Compile([]string{ok}); err != nil {
		t.Errorf("a pattern of exactly MaxPatternLen bytes: %v", err)
	}
}
