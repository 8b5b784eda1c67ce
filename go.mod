module github.com/retrykit/retrykit

go 1.24

require (
	github.com/google/go-cmp v0.7.0
	github.com/sosodev/duration v1.4.0
	pgregory.net/rapid v1.3.0
)
