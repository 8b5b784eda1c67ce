// Package ojshttp serves an [executor.Executor] over the OJS HTTP/REST
// protocol binding (openjobspec spec/ojs-http-binding.md): retrykit's
// reference OJS server, run by `retrykit serve`.
//
// # Model
//
// [Server] is an http.Handler and a thin adapter: every request is decoded,
// bounded and checked, handed to the executor, and the executor's answer
// (a job snapshot or an error) is translated into the binding's JSON, status
// code and error envelope. The executor applies the job lifecycle and the
// retry policy; the server adds only what the wire needs and the executor
// does not hold: UUIDv7 ids, the envelope fields the executor does not read
// (meta, priority, tags, timeout_ms, unknown fields, the ACK result), kept
// beside the executor and dropped with the job.
//
// Routes (Go 1.22 method patterns on an http.ServeMux):
//
//	GET    /ojs/manifest                    conformance manifest (only what is implemented)
//	GET    /ojs/v1/health                   health
//	POST   /ojs/v1/jobs                     PUSH
//	POST   /ojs/v1/jobs/batch               PUSH batch (atomic)
//	GET    /ojs/v1/jobs/{id}                INFO
//	DELETE /ojs/v1/jobs/{id}                CANCEL
//	POST   /ojs/v1/jobs/{id}/activate       ACTIVATE
//	POST   /ojs/v1/workers/fetch            FETCH
//	POST   /ojs/v1/workers/ack              ACK
//	POST   /ojs/v1/workers/nack             FAIL
//	POST   /ojs/v1/workers/heartbeat        BEAT
//	GET    /ojs/v1/queues                   list queues
//	GET    /ojs/v1/queues/{name}/stats      queue statistics
//	POST   /ojs/v1/queues/{name}/pause      pause
//	POST   /ojs/v1/queues/{name}/resume     resume
//	GET    /ojs/v1/dead-letter              list dead letters
//	POST   /ojs/v1/dead-letter/{id}/retry   manual retry
//	DELETE /ojs/v1/dead-letter/{id}         delete a dead letter
//	GET    /ojs/v1/events                   event polling, with WithEvents (ojs-events §6.4)
//	POST   /x-retrykit/v1/clock/advance     manual clock only, see below
//	POST   /x-retrykit/v1/reset             with WithReset only: delete every job
//
// Every response carries Content-Type application/openjobspec+json,
// OJS-Version and X-Request-Id; errors use the binding's envelope
// {"error":{"code","message","retryable","details","request_id"}}.
//
// [Events] is a bounded event log: the executor's observer and the
// server's own events (enqueue, fetch, ack, heartbeat), polled by cursor.
//
// # Clock
//
// By default the executor runs on the real clock. With [WithManualClock]
// the server mounts one endpoint outside the OJS namespace,
// POST /x-retrykit/v1/clock/advance with {"advance_ms": N} (N ≥ 0), which
// moves the executor's [executor.FakeClock] forward and answers
// {"now": RFC 3339}: SDK authors can then test a worker's retry handling in
// milliseconds, deterministically.
//
// # Limits
//
// Every body is read through http.MaxBytesReader ([WithMaxBodySize],
// default [DefaultMaxBodySize]; a batch [DefaultMaxBatchBodySize]); job
// fields follow the executor's RK-46 limits; a batch holds at most
// [WithMaxBatch] jobs and a fetch claims at most [MaxFetchCount]; the server holds at most [WithMaxJobs]
// jobs and [WithMaxBytes] of their data (429 queue_full beyond). Use
// [NewHTTPServer] for an http.Server with header, read, write and idle
// timeouts against slow clients, and [LimitListener] to bound the
// connections held open at once.
//
// # Unique jobs
//
// options.unique follows spec/ojs-unique-jobs.md (keys, args_keys,
// meta_keys, period, states, on_conflict): the key is the SHA-256 of the
// canonical JSON of the chosen dimensions, and unique PUSHes are
// serialised, so uniqueness is strong within the server (RK-152). Other
// unknown options are kept and echoed (RK-153).
//
// # Planted faults (tests only)
//
// The unexported seam internal/ojsfault lets retrykit's own tests and the
// hidden `retrykit serve --plant NAME` flag run a deliberately buggy server
// (an attempt off by one, no cap after jitter, regex matching of
// non_retryable_errors, a retry fetchable early), to prove that
// `retrykit conformance --server` catches each bug. A server nobody planted
// faults in is correct.
//
// # Non-goals
//
// Persistence (state lives in memory: a restart loses every job),
// authentication, cron, workflows, schemas and the other OJS
// extensions. The manifest claims none of them.
package ojshttp
