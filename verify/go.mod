module github.com/retrykit/retrykit/verify

go 1.26.0

replace github.com/retrykit/retrykit => ../

require github.com/sosodev/duration v1.4.0 // indirect

require github.com/retrykit/retrykit v0.0.0-00010101000000-000000000000
