// Package ojshttp serves an [executor.Executor] over the OJS HTTP binding
// (openjobspec spec/ojs-http-binding.md): retrykit's reference OJS server,
// run by `retrykit serve`.
//
// [Server] is an http.Handler and a thin adapter: each request is decoded,
// bounded and checked, handed to the executor (which applies the lifecycle
// and the retry policy), and the answer is written as the binding's JSON,
// status and error envelope, whose code is one of the Code constants. The
// server keeps beside the executor only what the wire needs: UUIDv7 ids,
// envelope fields the executor does not read, ACK results, the unique-job
// index (ojs-unique-jobs.md, RK-152). [Server] lists the routes; [Events]
// is the optional event log.
//
// With [WithManualClock], POST /x-retrykit/v1/clock/advance {"advance_ms": N}
// moves time: SDK authors test a worker's retry handling in milliseconds,
// deterministically. Everything is bounded: bodies ([WithMaxBodySize]),
// batches, fetch counts, jobs and their bytes ([WithMaxJobs],
// [WithMaxBytes]: 429 queue_full beyond); [NewHTTPServer] and
// [LimitListener] hold off slow or numerous clients.
//
// Non-goals: persistence (a restart loses every job), authentication,
// cron, workflows, schemas and the other OJS extensions; the manifest
// claims none of them. The unexported seam internal/ojsfault plants bugs
// for retrykit's own tests; a server nobody planted faults in is correct.
package ojshttp
