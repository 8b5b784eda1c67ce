package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/retrykit/retrykit/errmatch"
)

// Handler runs one attempt of a job. A Worker calls it from several
// goroutines at once (one per unit of concurrency), so it must be safe for
// concurrent use. Returning nil acknowledges the job;
// returning an error fails the attempt (see [Worker] for the
// classification). ctx is cancelled when the job is cancelled or its
// reservation is lost, and when Stop's deadline passes; handlers should
// return promptly then.
type Handler func(ctx context.Context, j Job) error

// Worker runs Go handlers for an Executor's jobs on the real clock: worker
// mode. Each queue given to WithConcurrency (default: "default" with 1) gets
// that many goroutines, each fetching from its queue, running the handler
// registered for the job's type and reporting the outcome:
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
// visibility timeout (or WithHeartbeatInterval). If the heartbeat fails —
// the job was cancelled or its reservation expired — the handler's context
// is cancelled and its eventual result is dropped (ack and fail are tied to
// the attempt, so a late result never completes a later attempt).
//
// The executor's clock should be the real clock: the worker sleeps in real
// time until Executor.NextDue. Register handlers before Start. A Worker is
// safe for concurrent use; the zero value is not usable, use NewWorker.
type Worker struct {
	e        *Executor
	mu       sync.Mutex
	handlers map[string]Handler
	conc     map[string]int
	beat     time.Duration
	poll     time.Duration
	err      error // the first invalid option, returned by Start

	started, stopped bool
	stopping         chan struct{} // closed by Stop: fetch no more
	hard             context.Context
	cancelHard       context.CancelFunc
	wg               sync.WaitGroup
}

// WorkerOption configures a Worker in NewWorker. A nil WorkerOption is
// ignored.
type WorkerOption func(*Worker)

// MaxConcurrency is the largest n WithConcurrency accepts for one queue.
const MaxConcurrency = 1 << 16

// ErrInvalidWorkerConfig is wrapped by the error Start returns when an option
// given to NewWorker was invalid.
var ErrInvalidWorkerConfig = errors.New("executor: invalid worker configuration")

// WithConcurrency runs n goroutines fetching from queue ("" is DefaultQueue).
// n must be between 1 and MaxConcurrency: any other value makes Start return
// an error wrapping ErrInvalidWorkerConfig (and start nothing). Given twice
// for one queue, the later n counts.
func WithConcurrency(queue string, n int) WorkerOption {
	return func(w *Worker) {
		if queue == "" {
			queue = DefaultQueue
		}
		if n < 1 || n > MaxConcurrency {
			if w.err == nil {
				w.err = fmt.Errorf("%w: WithConcurrency(%q, %d): n must be between 1 and %d",
					ErrInvalidWorkerConfig, queue, n, MaxConcurrency)
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

// WithPollInterval bounds how long an idle goroutine sleeps before looking
// again (default 1s); it normally wakes as soon as a job can be fetched.
// Values ≤ 0 are ignored.
func WithPollInterval(d time.Duration) WorkerOption {
	return func(w *Worker) {
		if d > 0 {
			w.poll = d
		}
	}
}

// NewWorker returns a Worker for e. An invalid option is reported by Start.
func NewWorker(e *Executor, opts ...WorkerOption) *Worker {
	w := &Worker{e: e, handlers: map[string]Handler{}, conc: map[string]int{}, poll: time.Second}
	for _, o := range opts {
		if o != nil {
			o(w)
		}
	}
	if len(w.conc) == 0 && w.err == nil {
		w.conc[DefaultQueue] = 1
	}
	return w
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
	w.hard, w.cancelHard = context.WithCancel(context.Background())
	queues := make([]string, 0, len(w.conc))
	for q := range w.conc {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	for _, q := range queues {
		for i := 0; i < w.conc[q]; i++ {
			w.wg.Add(1)
			go w.loop(q)
		}
	}
	return nil
}

// Stop stops fetching and waits for in-flight handlers to finish and report.
// When ctx ends first, Stop cancels the handlers' contexts and returns
// ctx.Err() without waiting further; results the handlers report later are
// still applied if their reservations hold. Otherwise it returns nil.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	if !w.started || w.stopped {
		w.mu.Unlock()
		return ErrWorkerState
	}
	w.stopped = true
	close(w.stopping)
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
		w.cancelHard()
		return nil
	case <-ctx.Done():
		w.cancelHard()
		return ctx.Err()
	}
}

func (w *Worker) loop(queue string) {
	defer w.wg.Done()
	for {
		select {
		case <-w.stopping:
			return
		default:
		}
		j, ok := w.e.Fetch(queue)
		if !ok {
			ch := w.e.wait()
			if j, ok = w.e.Fetch(queue); !ok {
				w.sleep(ch)
				continue
			}
		}
		w.run(j)
	}
}

// sleep waits for a change in the executor, the next due time, the poll
// interval or Stop, whichever comes first.
func (w *Worker) sleep(changed <-chan struct{}) {
	d := w.poll
	if t, ok := w.e.NextDue(); ok {
		if until := time.Until(t); until < d {
			d = until
		}
	}
	if d < time.Millisecond {
		d = time.Millisecond
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-changed:
	case <-timer.C:
	case <-w.stopping:
	}
}

func (w *Worker) run(j Job) {
	w.mu.Lock()
	h := w.handlers[j.Type]
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(w.hard)
	defer cancel()

	interval := w.beat
	if interval <= 0 {
		interval = j.VisibilityTimeout / 3
	}
	if interval <= 0 {
		interval = time.Second
	}
	beatDone := make(chan struct{})
	beatExit := make(chan struct{})
	go func() {
		defer close(beatExit)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if _, err := w.e.heartbeat(j.ID, j.Attempt); err != nil {
					cancel() // cancelled or reservation lost
					return
				}
			case <-beatDone:
				return
			}
		}
	}()

	var f *Failure
	if h == nil {
		f = &Failure{Type: NoHandlerErrorType, Message: fmt.Sprintf("no handler registered for job type %q", j.Type)}
	} else {
		f = call(ctx, h, j)
	}
	close(beatDone)
	<-beatExit
	if f == nil {
		w.e.ack(j.ID, j.Attempt) //nolint:errcheck // a lost reservation is not the worker's error
		return
	}
	if _, err := errmatch.ParseCode(string(f.Code)); err != nil {
		f.Code = "" // an unknown code from errmatch.Wrap: let the policy decide
	}
	w.e.fail(j.ID, j.Attempt, *f) //nolint:errcheck
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
	return &Failure{Type: typ, Message: err.Error(), Code: code}
}
