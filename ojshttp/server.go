package ojshttp

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
)

// MediaType is the OJS JSON content type of every response.
const MediaType = "application/openjobspec+json"

// AdminClockPath is the manual clock's advance endpoint (see [WithManualClock]).
const AdminClockPath = "/x-retrykit/v1/clock/advance"

// Limits on requests.
const (
	// DefaultMaxBodySize is the default bound of one request body, in
	// bytes: the executor's largest args (executor.MaxArgsSize) plus room
	// for the rest of the envelope.
	DefaultMaxBodySize = 2 << 20
	// DefaultMaxBatchBodySize is the default bound of a batch PUSH body.
	DefaultMaxBatchBodySize = 8 << 20
	// DefaultMaxBatch is the default largest number of jobs in one batch.
	DefaultMaxBatch = 1000
	// MaxFetchCount is the largest count one FETCH claims.
	MaxFetchCount = 1000
	// DefaultMaxJobs is the default bound of the jobs held (WithMaxJobs).
	DefaultMaxJobs = 500_000
	// DefaultMaxBytes is the default bound of the job data held
	// (WithMaxBytes): 256 MiB, so that a server at its default limits
	// lives within a 2 GiB address space (README, serve).
	DefaultMaxBytes = 256 << 20
)

// Server serves one executor over the OJS HTTP binding. Create it with New;
// the zero value is not usable. It is safe for concurrent use.
//
// Routes (Go 1.22 method patterns on an http.ServeMux):
//
//	GET    /ojs/manifest                    conformance manifest (only what is implemented)
//	GET    /ojs/v1/health                   health
//	POST   /ojs/v1/jobs                     PUSH (201 with Location; 422 queue_paused for a paused queue)
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
//	GET    /ojs/v1/dead-letter              list dead letters (filters queue, type, error_type, since, until)
//	DELETE /ojs/v1/dead-letter              purge the matching dead letters (confirm: true)
//	GET    /ojs/v1/dead-letter/stats        dead letter statistics
//	POST   /ojs/v1/dead-letter/retry        bulk retry by filter (confirm: true)
//	GET    /ojs/v1/dead-letter/{id}         one dead letter with its error history
//	POST   /ojs/v1/dead-letter/{id}/retry   manual retry, with an optional override
//	DELETE /ojs/v1/dead-letter/{id}         delete a dead letter
//	       /ojs/v1/admin/dead-letter/...    the same, as the admin API and the official suite name them
//	GET    /ojs/v1/admin/workers            workers seen in FETCH and heartbeat requests
//	POST   /ojs/v1/admin/workers/{id}/quiet      tell a worker to quiet (next heartbeat answer)
//	POST   /ojs/v1/admin/workers/{id}/terminate  tell a worker to terminate
//	GET    /ojs/v1/rate-limits              rate limit keys in use (ojs-rate-limiting §10.3)
//	GET    /ojs/v1/rate-limits/{key}        one key's counts (§10.1)
//	GET, PUT, DELETE /ojs/v1/admin/queues/{name}/rate-limit  a queue's own limit (§7.2)
//	*      /ojs/v1/cron, /workflows, /schemas and below  422 unsupported (feature and level named)
//	GET    /ojs/v1/events                   event polling, with WithEvents (ojs-events §6.4)
//	POST   /x-retrykit/v1/clock/advance     with WithManualClock only
//	POST   /x-retrykit/v1/reset             with WithReset only: delete every job
//
// Every response carries Content-Type application/openjobspec+json,
// OJS-Version and X-Request-Id (the client's own when sane, RK-283);
// errors use the binding's envelope
// {"error":{"code","message","retryable","details","request_id"}}.
type Server struct {
	exec  *executor.Executor
	cfg   config
	mux   *http.ServeMux
	store *store
	// policies shares the parsed retry policies of PUSHes (intern.go).
	policies policyCache
	start    time.Time
	// uniqueMu serialises the PUSHes of unique jobs, so that a
	// uniqueness check and the insert it allows are atomic (RK-152).
	uniqueMu sync.Mutex
	// admitMu guards the room claimed by PUSHes not yet created
	// (inflightJobs, inflightBytes), so that the WithMaxJobs and
	// WithMaxBytes checks and the claims are atomic (RK-160).
	admitMu       sync.Mutex
	inflightJobs  int
	inflightBytes int64
	workers       *workers
	// clockMu serialises manual clock advances against clockHorizon.
	clockMu sync.Mutex
	// skips counts, under planted fault RateLimitSpendsAttempt, the
	// FETCHes that held each rate-limited job back (id → int).
	skips sync.Map
	// pauses holds when each queue paused through the server was paused
	// (name → time.Time), for the pause answer and queue_paused; at most
	// executor.MaxPausedQueues entries, each deleted on resume.
	pauses sync.Map
	// inflight bounds the bytes of bodies being read and answers being
	// rendered at once (WithMaxInflightBytes).
	inflight *byteBudget
}

type config struct {
	clock     executor.Clock
	manual    *executor.FakeClock
	maxBody   int64
	maxBatchB int64
	maxBatch  int
	maxJobs   int
	maxBytes  int64
	events    *Events
	reset     bool
	inflight  int64
}

// Option configures a Server in New. A nil Option is ignored.
type Option func(*config)

// WithManualClock declares that the executor runs on c (the caller builds
// the executor with executor.WithClock(c)) and mounts the admin endpoint
// [AdminClockPath] that advances it, by 0 to 100 years per request and
// never past 2200-01-01T00:00:00Z (422 validation_error beyond): POST
// {"advance_ms": N} answers {"now": RFC 3339, "advanced_ms": N} and fires
// every timer now due (retries, schedules, visibility timeouts). Without it
// the server reads the real clock and has no admin endpoint. A nil c is
// ignored.
func WithManualClock(c *executor.FakeClock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.manual, cfg.clock = c, c
		}
	}
}

// WithMaxBodySize bounds every request body to n bytes and a batch body to
// 4n (defaults [DefaultMaxBodySize], [DefaultMaxBatchBodySize]). Values ≤ 0
// are ignored.
func WithMaxBodySize(n int64) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.maxBody, cfg.maxBatchB = n, 4*n
		}
	}
}

// WithMaxBatch bounds the number of jobs of one batch PUSH (default
// [DefaultMaxBatch]). Values ≤ 0 are ignored.
func WithMaxBatch(n int) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.maxBatch = n
		}
	}
}

// WithMaxJobs bounds the number of jobs the executor may hold, in every
// state (default [DefaultMaxJobs]): a PUSH beyond it is refused with 429
// queue_full, so a client cannot exhaust memory. Values ≤ 0 are ignored.
func WithMaxJobs(n int) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.maxJobs = n
		}
	}
}

// WithEvents serves ev at GET /ojs/v1/events and logs to it the events
// the server sees; build the executor with executor.WithObserver(ev) so
// that it logs the rest (see [Events]). A nil ev is ignored.
func WithEvents(ev *Events) Option {
	return func(cfg *config) {
		if ev != nil {
			cfg.events = ev
		}
	}
}

// WithMaxBytes bounds the caller data the server holds for its jobs —
// args, meta, extension fields, results, plus a fixed overhead per job
// (default [DefaultMaxBytes]): a PUSH beyond it is refused with 429
// queue_full. Values ≤ 0 are ignored.
func WithMaxBytes(n int64) Option {
	return func(cfg *config) {
		if n > 0 {
			cfg.maxBytes = n
		}
	}
}

// New returns a Server for exec.
func New(exec *executor.Executor, opts ...Option) *Server {
	cfg := config{clock: executor.RealClock{}, maxBody: DefaultMaxBodySize,
		maxBatchB: DefaultMaxBatchBodySize, maxBatch: DefaultMaxBatch, maxJobs: DefaultMaxJobs, maxBytes: DefaultMaxBytes,
		inflight: DefaultMaxInflightBytes}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := &Server{exec: exec, cfg: cfg, mux: http.NewServeMux(), store: newStore(), start: time.Now(), workers: newWorkers(),
		inflight: newBudget(cfg.inflight)}
	s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	markConn(r.Context(), false) // the request is ours now, not a slow client's (ConnLimiter)
	w.Header().Set("X-Request-Id", requestID(r))
	header(w)
	if v := r.Header.Get("OJS-Version"); !acceptVersion(v) {
		s.writeError(w, r, versionError(v))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// NewHTTPServer returns an http.Server for h on addr with timeouts against
// slow or stalled clients: 5 s to read the headers, 30 s to read a request,
// 30 s to write the answer, 30 s idle between keep-alive requests, and
// 64 KiB of headers; a request body must keep up MinRequestRate after a
// 2 s grace. With a [ConnLimiter], set its ConnState and ConnContext hooks
// too. Stop it with its Shutdown method, which lets
// in-flight requests finish.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// handler is a route's function: it answers with a status and a value, or
// an apiError.
type handler func(w http.ResponseWriter, r *http.Request) (int, any, *apiError)

func (s *Server) handle(pattern string, h handler) {
	limit := s.cfg.maxBody
	if strings.HasSuffix(pattern, "/jobs/batch") {
		limit = s.cfg.maxBatchB
	}
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		// A body is read and decoded (about twice its size) within the
		// in-flight budget (RK-162).
		var held int64
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			n := limit
			if r.ContentLength > 0 && r.ContentLength < n {
				n = r.ContentLength
			}
			var err error
			if held, err = s.inflight.acquire(r.Context(), 2*n); err != nil {
				return // the client went away while waiting
			}
		}
		status, v, aerr := h(w, r)
		s.inflight.release(held)
		if aerr != nil {
			s.writeError(w, r, aerr)
			return
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		// Rendering takes about three times the answer: the encoder's
		// buffer (grown by doubling) and the copy written out.
		est := estimate(v)
		n, err := s.inflight.acquire(r.Context(), 3*est)
		if err != nil {
			return
		}
		defer s.inflight.release(n)
		writeSized(w, status, v, est)
	})
}

func (s *Server) routes() {
	s.handle("GET /ojs/manifest", s.manifest)
	s.handle("GET /ojs/v1/health", s.health)
	s.handle("POST /ojs/v1/jobs", s.push)
	s.handle("POST /ojs/v1/jobs/batch", s.pushBatch)
	s.handle("GET /ojs/v1/jobs/{id}", s.info)
	s.handle("DELETE /ojs/v1/jobs/{id}", s.cancel)
	s.handle("POST /ojs/v1/jobs/{id}/activate", s.activate)
	s.handle("POST /ojs/v1/workers/fetch", s.fetch)
	s.handle("POST /ojs/v1/workers/ack", s.ack)
	s.handle("POST /ojs/v1/workers/nack", s.nack)
	s.handle("POST /ojs/v1/workers/heartbeat", s.heartbeat)
	s.handle("GET /ojs/v1/queues", s.queues)
	s.handle("GET /ojs/v1/queues/{name}/stats", s.queueStats)
	s.handle("POST /ojs/v1/queues/{name}/pause", s.pause)
	s.handle("POST /ojs/v1/queues/{name}/resume", s.resume)
	s.deadLetterRoutes()
	s.handle("GET /ojs/v1/dead-letter/replay-rules", s.replayRules)
	s.handle("GET /ojs/v1/admin/workers", s.listWorkers)
	s.handle("POST /ojs/v1/admin/workers/{id}/quiet", s.directWorker(workerQuiet))
	s.handle("POST /ojs/v1/admin/workers/{id}/terminate", s.directWorker(workerTerminate))
	if s.cfg.events != nil {
		s.handle("GET /ojs/v1/events", s.events)
	}
	if s.cfg.manual != nil {
		s.handle("POST "+AdminClockPath, s.advanceClock)
	}
	if s.cfg.reset {
		s.handle("POST "+ResetPath, s.resetAll)
	}
	s.rateLimitRoutes()
	s.unsupportedRoutes()
	s.handle("/", func(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
		return 0, nil, errf(http.StatusNotFound, CodeNotFound, "no route for %s %s", r.Method, clip(r.URL.Path))
	})
}

// emit logs a server-side event when an event log is configured.
func (s *Server) emit(typ string, j executor.Job, at time.Time, data map[string]any) {
	if s.cfg.events != nil {
		s.cfg.events.add(typ, j, at, data)
	}
}

// faults returns the planted faults (internal/ojsfault); none normally.
func (s *Server) faults() ojsfault.Set { return ojsfault.Of(s) }
