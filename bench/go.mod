module github.com/retrykit/retrykit/bench

go 1.25

replace github.com/retrykit/retrykit => ../

require (
	github.com/avast/retry-go/v5 v5.1.1
	github.com/cenkalti/backoff/v5 v5.0.3
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/retrykit/retrykit v0.0.0-00010101000000-000000000000
	github.com/sethvargo/go-retry v0.5.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/sosodev/duration v1.4.0 // indirect
)
