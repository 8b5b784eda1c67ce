module github.com/retrykit/retrykit

go 1.24

require (
	github.com/google/go-cmp v0.7.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sosodev/duration v1.4.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/text v0.14.0 // indirect
