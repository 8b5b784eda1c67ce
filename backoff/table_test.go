package backoff

import (
	"math"
	"testing"
	"time"
)

// The table stops at the first entry equal to Max, holds one entry for a
// constant strategy, and at most tableSize entries otherwise.
func TestTableShape(t *testing.T) {
	tests := []struct {
		name    string
		c       Config
		size    int
		clamped bool // every n past the table is looked up as the last entry
	}{
		{"ojs default", Config{Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute}, 10, true},
		{"none", Config{Strategy: None, Initial: time.Second, Coefficient: 3, Max: time.Hour}, 1, true},
		{"exponential 1.0", Config{Initial: time.Second, Coefficient: 1, Max: time.Hour}, 1, true},
		{"initial = max", Config{Strategy: Linear, Initial: time.Hour, Coefficient: 1, Max: time.Hour}, 1, true},
		{"polynomial 4 PT15S PT1H", Config{Strategy: Polynomial, Initial: 15 * time.Second, Coefficient: 4, Max: time.Hour}, 4, true},
		{"linear uncapped", Config{Strategy: Linear, Initial: 1, Coefficient: 1, Max: math.MaxInt64}, tableSize, false},
		{"exponential 1.01", Config{Initial: time.Millisecond, Coefficient: 1.01, Max: time.Hour}, tableSize, false},
	}
	for _, tt := range tests {
		b, err := New(tt.c)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(b.table) != tt.size || cap(b.table) != tt.size {
			t.Errorf("%s: table len %d cap %d, want %d", tt.name, len(b.table), cap(b.table), tt.size)
		}
		if got := b.fast == math.MaxInt; got != tt.clamped {
			t.Errorf("%s: clamped = %v, want %v", tt.name, got, tt.clamped)
		}
	}
}
