package human_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
)

func Example() {
	d := 80*time.Hour + 31*time.Minute + 52499999994*time.Nanosecond
	fmt.Println(d)                                       // time.Duration's form
	fmt.Println(human.Exact(d))                          // with days
	fmt.Println(human.Floor(d), human.Ceil(d))           // a lower and an upper bound
	fmt.Println(human.Range(5*time.Second, 14999999999)) // short values stay exact
	// Output:
	// 80h31m52.499999994s
	// 3d8h31m52.499999994s
	// 3d8h31m 3d8h32m
	// [5s, 14.999999999s]
}
