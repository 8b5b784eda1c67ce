package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/errmatch"
)

// Handler runs one attempt of a job. A Worker calls it from several
// goroutines at once (one per unit of concurrency), so it must be safe for
// concurrent use. Returning nil acknowledges the job;
// returning an error fails the attempt (see [Worker] for the
// classification). ctx is cancelled as soon as the job is cancelled or
// leaves active otherwise (its reservation expired, ...), and when Stop's
// deadline passes; handlers should return promptly then.
type Handler func(ctx context.Context, j Job) error

// Worker runs Go handlers for an Executor's jobs on the real clock: worker
// mode. It serves [DefaultQueue] with one goroutine, and every queue given
// to [WithConcurrency] with that many: WithConcurrency("emails", 2) adds
// "emails" and keeps "default"; WithConcurrency(DefaultQueue, 0) is how not
// to serve "default". Each goroutine fetches from its queue, runs the handler
// registered for the job's type and reporting the outcome with the job's
// delivery ([Job.Delivery]):
//
//  1. nil → Ack;
//  2. an error → Fail with type and code from errmatch.Classify (attach them
//     with errmatch.Wrap); an unclassified error gets type
//     [HandlerErrorType] and no code (RETRY: the policy decides); the message
//     is err.Error();
//  3. a panic is recovered and recorded as a failure of type
//     [PanicErrorType], no code (the policy decides: a panic may be a
//     transient bug path, and max_attempts bounds the cost), with the panic
//     value as message and {"stack": "..."} as details;
//  4. no handler for the type → Fail with type [NoHandlerErrorType], no code.
//
// While a handler runs the worker heartbeats the job every third of its
// visibility timeout (or WithHeartbeatInterval). Heartbeats stop as soon as
// the handler's run ends, however it ends — a return, a panic, or
// runtime.Goexit (then nothing is reported: the reservation expires and the
// job fails by timeout and is retried under its policy; a new goroutine
// takes the slot). If a heartbeat fails the handler's context is cancelled.
// Because Ack and Fail carry the delivery, a result that arrives after the
// job was fetched again (by this or another consumer, or after a manual
// retry) is rejected as stale and never touches the later run.
//
// Idle goroutines park on their queue: a job becoming available wakes one
// of them, not all. One more goroutine per Worker watches the executor's
// next due time (scheduled jobs, backoffs, reservations, retention).
//
// The executor's clock should be the real clock: the worker sleeps in real
// time until the next due time. Register handlers before Start. A Worker is
// safe for concurrent use; the zero value is not usable, use NewWorker.
type Worker struct {
	e        *Executor
	mu       sync.Mutex
	handlers map[string]Handler
	conc     map[string]int
	beat     time.Duration
	err      error // the first invalid option, returned by Start

	started, stopped bool
	live             int           // running goroutines, guarded by mu
	done             chan struct{} // closed when live drops to 0 after Stop
	stopping         chan struct{} // closed by Stop: fetch no more
	hard             context.Context
	cancelHard       context.CancelFunc
}

// WorkerOption configures a Worker in NewWorker. A nil WorkerOption is
// ignored.
type WorkerOption func(*Worker)

// maxConcurrency is the largest n WithConcurrency accepts for one queue.
const maxConcurrency = 1 << 16

// keeperLimit bounds how long the timekeeper sleeps without looking.
const keeperLimit = time.Second

// ErrInvalidWorkerConfig is wrapped by the error Start returns when an option
// given to NewWorker was invalid.
var ErrInvalidWorkerConfig = errors.New("executor: invalid worker configuration")

// WithConcurrency runs n goroutines fetching from queue ("" is
// DefaultQueue). DefaultQueue is served with one goroutine unless this
// option names it: WithConcurrency(DefaultQueue, 0) stops serving it, and
// n = 0 for any queue means not serving that queue. n must be between 0 and
// 65536 and queue at most MaxQueueLen bytes of valid UTF-8: anything else,
// or a configuration that serves no queue at all, makes Start return an
// error wrapping ErrInvalidWorkerConfig (and start nothing). Given twice
// for one queue, the later n counts.
func WithConcurrency(queue string, n int) WorkerOption {
	return func(w *Worker) {
		if queue == "" {
			queue = DefaultQueue
		}
		if reason := checkName(queue, MaxQueueLen, "executor.MaxQueueLen"); reason != "" {
			if w.err == nil {
				w.err = fmt.Errorf("%w: WithConcurrency(%q, %d): queue: %s",
					ErrInvalidWorkerConfig, clip(queue), n, reason)
			}
			return
		}
		if n < 0 || n > maxConcurrency {
			if w.err == nil {
				w.err = fmt.Errorf("%w: WithConcurrency(%q, %d): n must be between 0 (do not serve the queue) and %d",
					ErrInvalidWorkerConfig, queue, n, maxConcurrency)
			}
			return
		}
		w.conc[queue] = n
	}
}

// WithHeartbeatInterval sets how often a running job is heartbeated
// (default: a third of the job's visibility timeout). Values ≤ 0 are ignored.
func WithHeartbeatInterval(d time.Duration) WorkerOption {
	return func(w *Worker) {
		if d > 0 {
			w.beat = d
		}
	}
}

// NewWorker returns a Worker for e. An invalid option is reported by Start.
func NewWorker(e *Executor, opts ...WorkerOption) *Worker {
	w := &Worker{e: e, handlers: map[string]Handler{}, conc: map[string]int{}}
	for _, o := range opts {
		if o != nil {
			o(w)
		}
	}
	if _, named := w.conc[DefaultQueue]; !named {
		w.conc[DefaultQueue] = 1
	}
	if w.err == nil && len(w.Queues()) == 0 {
		w.err = fmt.Errorf("%w: every queue has concurrency 0: the worker would serve nothing", ErrInvalidWorkerConfig)
	}
	return w
}

// Queues returns the names of the queues the worker serves (concurrency
// above 0), sorted.
func (w *Worker) Queues() []string {
	queues := make([]string, 0, len(w.conc))
	for q, n := range w.conc {
		if n > 0 {
			queues = append(queues, q)
		}
	}
	sort.Strings(queues)
	return queues
}

// WaitIdle waits until no job of the worker's queues ([Worker.Queues]) is
// left to run; see [Executor.WaitIdle] for what counts (in short: every
// job there is completed, cancelled, discarded or pending; scheduled jobs
// and retries waiting for their time are waited for). It returns nil then,
// or ctx.Err() if ctx ends first. It starts and stops nothing: call it
// after Start and before Stop.
func (w *Worker) WaitIdle(ctx context.Context) error {
	return w.e.WaitIdle(ctx, w.Queues()...)
}

// Handle registers h for jobs of type typ, replacing any earlier handler.
func (w *Worker) Handle(typ string, h Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers[typ] = h
}

// ErrWorkerState is returned by Start on a worker already started, and by
// Stop on one never started or already stopped.
var ErrWorkerState = errors.New("executor: worker already started or stopped")

// Start launches the worker's goroutines and returns at once. If an option
// given to NewWorker was invalid it starts nothing and returns an error
// wrapping ErrInvalidWorkerConfig (every time: such a worker never starts).
func (w *Worker) Start() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.started {
		return ErrWorkerState
	}
	w.started = true
	w.stopping = make(chan struct{})
	w.done = make(chan struct{})
	w.hard, w.cancelHard = context.WithCancel(context.Background())
	for _, q := range w.Queues() {
		for i := 0; i < w.conc[q]; i++ {
			w.live++
			go w.loop(q)
		}
	}
	w.live++
	go w.keeper()
	return nil
}

// Stop stops fetching and waits for in-flight handlers to finish and
// report; it returns nil once every goroutine of the worker has finished.
//
// When ctx ends first, Stop cancels the handlers' contexts, stops their
// heartbeats and returns ctx.Err() without waiting further. A handler that
// ignores its context keeps its goroutine until it returns; its job, no
// longer heartbeated, fails by timeout when its reservation expires and is
// retried under its policy (possibly by another consumer). What such a
// handler returns later is still reported, and applied only if the job has
// not been fetched again meanwhile (otherwise it is stale and dropped).
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	if !w.started || w.stopped {
		w.mu.Unlock()
		return ErrWorkerState
	}
	w.stopped = true
	close(w.stopping)
	w.mu.Unlock()
	select {
	case <-w.done:
		w.cancelHard()
		return nil
	case <-ctx.Done():
		w.cancelHard()
		return ctx.Err()
	}
}

// exit records that one of the worker's goroutines is finishing; respawn
// starts a replacement first (a handler called runtime.Goexit).
func (w *Worker) exit(respawn func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if respawn != nil && !w.stopped {
		w.live++
		go respawn()
	}
	w.live--
	if w.live == 0 && w.stopped {
		close(w.done)
	}
}

func (w *Worker) loop(queue string) {
	clean := false
	defer func() {
		if clean {
			w.exit(nil)
		} else { // runtime.Goexit in a handler
			w.exit(func() { w.loop(queue) })
		}
	}()
	wake := make(chan struct{}, 1)
	for {
		select {
		case <-w.stopping:
			clean = true
			return
		default:
		}
		j, ok := w.e.fetchOrPark(queue, wake)
		if !ok {
			select {
			case <-wake:
			case <-w.stopping:
				w.e.unpark(queue, wake)
				clean = true
				return
			}
			continue
		}
		w.run(j)
	}
}

// keeper applies what becomes due (scheduled jobs, backoffs, expired
// reservations, retention) when it becomes due, waking parked goroutines
// through the jobs made available.
func (w *Worker) keeper() {
	defer w.exit(nil)
	k := &keeperWait{}
	defer w.e.unkeep(k)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d, changed := w.e.untilDue(k, keeperLimit)
		timer.Reset(max(d, time.Millisecond))
		select {
		case <-timer.C:
		case <-changed: // Reset above discards the pending expiry (Go 1.23 timers)
		case <-w.stopping:
			return
		}
	}
}

// beat heartbeats one running job until stop is called.
type beat struct {
	w      *Worker
	j      Job
	cancel context.CancelFunc
	every  time.Duration
	mu     sync.Mutex
	t      *time.Timer
	done   bool
}

// tick runs on the timer's goroutine. It holds b.mu while heartbeating, so
// once stop returns no heartbeat of this run is in progress or to come.
func (b *beat) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || b.w.hard.Err() != nil { // run over, or Stop's deadline passed
		return
	}
	if _, err := b.w.e.Heartbeat(b.j.ID, b.j.Delivery); err != nil {
		b.cancel() // cancelled, reservation lost, or fetched again
		return
	}
	b.t.Reset(b.every)
}

func (b *beat) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = true
	b.t.Stop()
}

func (w *Worker) run(j Job) {
	w.mu.Lock()
	h := w.handlers[j.Type]
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(w.hard)
	defer cancel()
	if !w.e.watch(j.ID, j.Delivery, cancel) {
		cancel() // cancelled between the fetch and now
	}

	every := w.beat
	if every <= 0 {
		every = j.VisibilityTimeout / 3
	}
	if every <= 0 {
		every = time.Second
	}
	b := &beat{w: w, j: j, cancel: cancel, every: every}
	b.mu.Lock()
	b.t = time.AfterFunc(every, b.tick)
	b.mu.Unlock()
	defer b.stop() // also on runtime.Goexit

	var f *Failure
	if h == nil {
		f = &Failure{Type: NoHandlerErrorType, Message: fmt.Sprintf("no handler registered for job type %q", j.Type)}
	} else {
		f = call(ctx, h, j)
	}
	b.stop()
	w.report(j, f)
}

// report acks j's delivery (f nil) or fails it with f. Nothing on this path
// may end the goroutine, and with it the process: a panic in it is
// recovered, and the attempt is failed once more with type
// [PanicErrorType] and the panic as message; should that panic too, the
// job is left to its reservation, which expires and fails the attempt by
// timeout.
func (w *Worker) report(j Job, f *Failure) {
	defer func() {
		if v := recover(); v != nil {
			defer swallow()
			w.e.Fail(j.ID, j.Delivery, Failure{ //nolint:errcheck // best effort, see above
				Type:    PanicErrorType,
				Message: fmt.Sprint("executor: panic while recording the outcome: ", v),
			})
		}
	}()
	if f == nil {
		w.e.Ack(j.ID, j.Delivery) //nolint:errcheck // a lost or stale delivery is not the worker's error
		return
	}
	if _, err := errmatch.ParseCode(string(f.Code)); err != nil {
		f.Code = "" // an unknown code from errmatch.Wrap: let the policy decide
	}
	if field, _ := checkFailure(f); field == "type" {
		f.Type = HandlerErrorType // a type over MaxFailureTypeLen or not UTF-8 (RK-46)
	}
	if field, _ := checkFailure(f); field == "details" {
		f.Details = nil // cannot happen for the executor's own details; kept safe
	}
	w.e.Fail(j.ID, j.Delivery, *f) //nolint:errcheck
}

// call runs h, turning its error or panic into a Failure (nil on success).
func call(ctx context.Context, h Handler, j Job) (f *Failure) {
	defer func() {
		if v := recover(); v != nil {
			details, _ := json.Marshal(map[string]string{"stack": string(debug.Stack())})
			f = &Failure{Type: PanicErrorType, Message: fmt.Sprint("panic: ", v), Details: details}
		}
	}()
	err := h(ctx, j)
	if err == nil {
		return nil
	}
	typ, code, ok := errmatch.Classify(err)
	if !ok || typ == "" {
		typ = HandlerErrorType
	}
	return &Failure{Type: typ, Message: failureMessage(err), Code: code, Request: errmatch.RequestOf(err)}
}

// failureMessage is err.Error() without the "<type>: " that an
// errmatch.Error adds in front of its cause's message: the type is recorded
// in its own field, so
//
//	errmatch.Wrap(errors.New("payload missing field x"), "validation.payload_invalid", "")
//
// is recorded with the message "payload missing field x", and
// fmt.Errorf("charge: %w", thatError) with "charge: payload missing field
// x". An *Error without a cause has only its type as message, so its
// message is kept as is.
func failureMessage(err error) string {
	full := err.Error()
	e := errmatch.Find(err)
	if e == nil || e.Type == "" || e.Err == nil {
		return full
	}
	prefix := e.Type + ": "
	if i := strings.LastIndex(full, prefix+e.Err.Error()); i >= 0 {
		return full[:i] + full[i+len(prefix):]
	}
	return full
}
