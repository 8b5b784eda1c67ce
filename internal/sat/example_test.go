package sat_test

import (
	"fmt"
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"
)

func Example() {
	fmt.Println(sat.Mul(1<<40, 1<<40) == math.MaxUint64)
	fmt.Println(sat.Pow(2, 10))
	fmt.Println(sat.AddInt(time.Duration(math.MaxInt64), time.Second) == math.MaxInt64)
	// Output:
	// true
	// 1024
	// true
}
