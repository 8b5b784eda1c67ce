// Package verify checks retrykit's profiles of other systems against those
// systems' real code.
//
// retrykit's profile vectors (testdata/profiles/<name>.json) are worked out by
// hand from each system's source formula. This nested module runs them
// through the real implementations that can be installed on a build machine,
// so that a transcription mistake in a vector — or in package
// github.com/retrykit/retrykit/profile — shows up as a failing test:
//
//   - Go modules from the module proxy, called in-process: River's
//     DefaultClientRetryPolicy, asynq's DefaultRetryDelayFunc, gax-go's
//     Backoff.Pause, the AWS SDK for Go v2's standard retryer and the Temporal
//     server's CalculateExponentialRetryInterval (go.temporal.io/server, whose
//     v1.32.1 sets this module's go directive to 1.26.8); the SDK's retry
//     middleware for exhaustion and the x-amz-retry-after header.
//   - grpc-go (google.golang.org/grpc), whose delays are unexported: its
//     internal/backoff Exponential.Backoff through go:linkname, and real
//     ClientConns and a real grpc.Server over net.Pipe in a testing/synctest
//     bubble, where the time between a channel's dials or an RPC's attempts
//     is exactly the delay grpc-go armed its timer with.
//   - BullMQ's Backoffs and Job#shouldRetryJob from its npm package, driven by
//     node (verify/node).
//   - pg-boss from its npm package, driven by node on a real PostgreSQL (a
//     throwaway cluster the test starts and stops): its own send, fetch and
//     fail, with the delay and state read back from its job table.
//   - Celery's backoff and autoretry from Debian's python3-celery, and
//     botocore's standard retry mode from python3-botocore, driven by
//     Debian's python3 (verify/python).
//   - Sidekiq's JobRetry from Debian's ruby-sidekiq and Active Job's retry_on
//     from ruby-activejob, driven by ruby (verify/ruby).
//
// Where the real code takes its randomness from a replaceable source
// (Math.random, random.randrange, botocore's random parameter, Kernel#rand,
// PostgreSQL's random() after setseed),
// the driver replaces it with the vector's draw r and the delay must match the
// vector exactly. Where it seeds its own generator (the Go libraries), the
// tests sample it many times and check every sample lies within the vector's
// inclusive bounds and that the samples reach close to both ends.
//
// Configured profiles (profile.Parse("bullmq:type=fixed,delay=1500")) run
// through the same code with the same settings: BullMQ, Celery, Temporal,
// gax-go, the AWS SDK for Go and grpc-go.
//
// The drift watch checks each system's newest published release beside the
// pinned one: for a Go library, a probe program built in a temporary module
// of its own at the module proxy's @latest (one go.mod cannot hold two
// versions); npm's latest bullmq, p-retry, bee-queue, exponential-backoff and pg-boss,
// installed into a temporary directory the drivers are pointed at; Debian's
// candidate version. A mismatch names the system, both versions, the attempt
// and the two delays. RETRYKIT_DRIFT_<PROFILE>=VERSION points it at a given
// release (RETRYKIT_DRIFT_AWS_GO=v1.47.7 and RETRYKIT_DRIFT_P_RETRY=8.0.0
// fail on purpose; TestDriftCatchesAWS147 and TestDriftCatchesPRetry8 expect
// those failures on every run).
//
// The drivers speak one JSON request and one JSON answer over stdin and
// stdout. verify/install.sh installs what they need (Debian packages, npm ci);
// without it the tests skip locally with the command to run, and fail when CI
// is set to true.
//
// This package's only API is [Load], a reader for the vector files; the work
// is in its tests. Run them with
//
//	cd verify && go test -v ./...
package verify
