package shrink_test

import (
	"fmt"

	"github.com/retrykit/retrykit/internal/shrink"
)

func ExampleMap() {
	m := map[int]bool{}
	peak := 0
	for i := range 4096 {
		m[i] = true
	}
	peak = len(m)
	for i := range 4000 {
		delete(m, i)
	}
	m = shrink.Map(m, &peak) // 96 left of a peak of 4096: rebuilt
	fmt.Println(len(m), peak)
	m = shrink.Map(m, &peak) // a peak below shrink.Min: kept as it is
	fmt.Println(len(m), peak)
	// Output:
	// 96 96
	// 96 96
}
