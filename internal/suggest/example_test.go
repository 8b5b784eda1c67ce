package suggest_test

import (
	"fmt"

	"github.com/retrykit/retrykit/internal/suggest"
)

func ExampleClosest() {
	fields := []string{"max_attempts", "jitter", "on_exhaustion"}
	fmt.Println(suggest.Closest("jiter", fields))
	fmt.Println(suggest.Closest("MaxAttempts", fields))
	fmt.Println(suggest.Closest("retries", fields))
	fmt.Printf("unknown field%s\n", suggest.Hint("jiter", fields))
	// Output:
	// jitter true
	// max_attempts true
	//  false
	// unknown field (did you mean "jitter"?)
}
