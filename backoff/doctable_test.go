package backoff_test

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// The worked table in Backoff's doc comment is what the code computes, to
// the nanosecond: each row's base, r=0, r=0.5 and r→1 columns (r→1 being
// the largest draw below 1, whose delay is the top of Bounds).
func TestDocWorkedTable(t *testing.T) {
	src, err := os.ReadFile("backoff.go")
	if err != nil {
		t.Fatal(err)
	}
	b, err := backoff.New(backoff.Config{Strategy: backoff.Exponential, Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute, Jitter: true})
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "//\tn    raw ")
	if !ok {
		t.Fatal("no worked table in backoff.go")
	}
	rows := 0
	for _, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "//\t") {
			break
		}
		f := strings.Fields(strings.TrimPrefix(line, "//\t"))
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		if f[2] == "s" { // "2^49 s"
			f = append(f[:1], f[2:]...)
		}
		want := make([]time.Duration, 4)
		for i := range want {
			if want[i], err = time.ParseDuration(f[2+i]); err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
		}
		lo, hi := b.Bounds(n)
		got := []time.Duration{b.Base(n), b.DelayAt(n, 0), b.DelayAt(n, 0.5), b.DelayAt(n, math.Nextafter(1, 0))}
		for i, name := range []string{"base", "r=0", "r=0.5", "r→1"} {
			if got[i] != want[i] {
				t.Errorf("attempt %d: %s = %v, the doc says %v", n, name, got[i], want[i])
			}
		}
		if lo != want[1] || hi != want[3] {
			t.Errorf("attempt %d: Bounds = [%v, %v], the doc's r=0 and r→1 columns say [%v, %v]", n, lo, hi, want[1], want[3])
		}
		rows++
	}
	if rows < 5 {
		t.Fatalf("read %d rows of the worked table", rows)
	}
}
