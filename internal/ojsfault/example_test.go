package ojsfault_test

import (
	"fmt"

	"github.com/retrykit/retrykit/internal/ojsfault"
)

func Example() {
	set, err := ojsfault.Parse("early-retry,attempt-off-by-one")
	fmt.Println(set, err)
	server := new(int) // any pointer identifies a server
	ojsfault.Plant(server, set)
	fmt.Println(ojsfault.Of(server).Has(ojsfault.EarlyRetry), ojsfault.Of(server).Has(ojsfault.RegexMatch))
	ojsfault.Plant(server, 0)
	fmt.Println(ojsfault.Of(server))
	_, err = ojsfault.Parse("slow")
	fmt.Println(err)
	// Output:
	// attempt-off-by-one,early-retry <nil>
	// true false
	//
	// ojsfault: unknown fault "slow" (known: attempt-off-by-one, bad-error-object, dead-letter-code-ignored, dead-letter-pages, delay-doubled, discard-code-ignored, early-retry, exhaust-late, fetch-attempt-high, glob-match, late-retry, linear-as-exponential, message-match, message-not-type, no-cap-after-jitter, no-defaults-merge, no-location, no-version-on-errors, paused-accepts, polynomial-as-exponential, prefix-no-boundary, rate-limit-ignored, rate-limit-spends-attempt, regex-match, retry-extensions-unclaimed, snooze-spends-attempt, text-errors)
}
