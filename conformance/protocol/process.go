package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrAdapter is matched (with errors.Is) by every *AdapterError.
var ErrAdapter = errors.New("protocol: adapter failure")

// The kinds of [AdapterError].
const (
	FailureStart    = "start"    // the command could not be started
	FailureCrash    = "crash"    // the process exited or closed its standard output
	FailureTimeout  = "timeout"  // no answer within the per-request timeout
	FailureProtocol = "protocol" // a line that is not a well-formed answer
	FailureDead     = "dead"     // not restarted again after a previous crash
)

// AdapterError is the error a [Process] returns when the adapter process,
// not the implementation's answer, is at fault. The conformance runner
// reports it as an "error" result with Stderr attached.
type AdapterError struct {
	Kind   string // FailureStart, FailureCrash, ...
	Detail string // what happened, for humans
	Stderr string // the tail of the adapter's standard error at that time
	Err    error  // underlying cause, may be nil
	// Request, when set, is the request (with its wire id) whose answer
	// was at fault, where that is another request than the one the error
	// is returned for: an answer that came a second time for a request
	// already answered.
	Request *Request
}

// Error implements error. It does not include Stderr.
func (e *AdapterError) Error() string {
	return "protocol: adapter " + e.Kind + ": " + e.Detail
}

// Unwrap returns the underlying cause.
func (e *AdapterError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrAdapter].
func (e *AdapterError) Is(target error) bool { return target == ErrAdapter }

// Option configures [NewProcess].
type Option func(*processConfig)

type processConfig struct {
	timeout  time.Duration
	start    time.Duration // the hello's own deadline: see WithStartTimeout
	restarts int
	dir      string
	env      []string
	stderr   int
	log      io.Writer
}

// WithTimeout sets the per-request timeout, counted from the moment the
// request is written (default 5s).
func WithTimeout(d time.Duration) Option {
	return func(c *processConfig) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithStartTimeout sets how long a freshly started adapter has to answer
// hello (default 30s, and never less than the per-request timeout). The
// hello's wait includes the adapter's own start: an interpreter, its
// imports, a JIT, on a loaded machine. That is slower than any later
// request, and a healthy adapter must not be given up for it.
func WithStartTimeout(d time.Duration) Option {
	return func(c *processConfig) {
		if d > 0 {
			c.start = d
		}
	}
}

// WithRestarts sets how many times in a row a crashed or hung adapter is
// restarted after a process died on a request without answering anything
// (default 1, PROTOCOL.md section 6). A process that answered at least one
// request before dying is always replaced.
func WithRestarts(n int) Option {
	return func(c *processConfig) {
		if n >= 0 {
			c.restarts = n
		}
	}
}

// WithLog makes the Process write one line to w as each adapter process
// ends other than by Close: why (a timeout, a crash, a protocol
// violation), the request it did not answer (its number among the
// process's requests, its wire id and the request itself), how many other
// unanswered requests are sent again, and, when the adapter is given up,
// that it is. A silent adapter is thus named as it happens, not only in
// the report at the end. Default: no log.
func WithLog(w io.Writer) Option { return func(c *processConfig) { c.log = w } }

// WithDir sets the adapter's working directory (default: the caller's).
func WithDir(dir string) Option { return func(c *processConfig) { c.dir = dir } }

// WithEnv sets the adapter's environment (default: the caller's).
func WithEnv(env []string) Option { return func(c *processConfig) { c.env = env } }

// Process is an [Implementation] backed by an adapter subprocess speaking
// PROTOCOL.md over its standard streams. Create it with [NewProcess]; the
// process starts on the first Hello or Do and lives until Close. Requests
// from concurrent Do calls are pipelined over the one process. A Process is
// safe for concurrent use; the zero value is not usable.
type Process struct {
	argv []string
	cfg  processConfig

	nextID atomic.Int64

	mu         sync.Mutex
	cur        *proc
	noProgress int          // consecutive deaths of processes that answered nothing
	timeouts   int          // processes ended for a blamed timeout, in all
	silences   atomic.Int64 // processes ended for a timeout, blamed or not
	gaveUp     error        // set once the adapter is not restarted any more
	hello      Hello
	started    bool
	closed     bool
	stderr     *tailBuffer // shared by all processes, so reports show every incarnation

	// After a death with several requests unanswered, they are re-sent one
	// at a time (serialLeft answers long) so that the one that kills the
	// process is known exactly.
	serialMu   sync.Mutex
	serialLeft atomic.Int64
}

// NewProcess returns a [Process] that runs argv (program and arguments) as
// an adapter subprocess. It does not start it yet.
func NewProcess(argv []string, opts ...Option) *Process {
	cfg := processConfig{timeout: 5 * time.Second, start: 30 * time.Second, restarts: 1, stderr: 64 << 10}
	for _, o := range opts {
		o(&cfg)
	}
	return &Process{argv: append([]string(nil), argv...), cfg: cfg, stderr: &tailBuffer{limit: cfg.stderr}}
}

// Timeouts returns how many adapter processes have been ended so far
// because a request went unanswered for the whole timeout, whether or not
// the request could be blamed. A run cut short (by its time budget, say)
// before the one-at-a-time replay blamed a request still has a count
// here, so a silent adapter never goes unreported.
func (e *Process) Timeouts() int { return int(e.silences.Load()) }

// Stderr returns the tail (up to 64 KiB) of what the adapter processes have
// written to standard error so far.
func (e *Process) Stderr() string { return e.stderr.String() }

// Hello starts the adapter if needed and returns its hello answer.
func (e *Process) Hello(ctx context.Context) (Hello, error) {
	if _, err := e.process(ctx, nil); err != nil {
		return Hello{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hello, nil
}

// Do sends req (with a fresh wire id) and waits for its answer. The returned
// Response carries req.ID. A crash while the request is the oldest
// unanswered one, a timeout, or a malformed answer is an *AdapterError;
// other requests in flight during a crash are sent again to the restarted
// process.
func (e *Process) Do(ctx context.Context, req Request) (Response, error) {
	origID := req.ID
	var last *proc
	for {
		p, err := e.process(ctx, last)
		if err != nil {
			return Response{}, err
		}
		req.ID = e.nextID.Add(1)
		line := req.AppendJSON(make([]byte, 0, 256))
		serial := e.serialLeft.Load() > 0
		if serial {
			e.serialMu.Lock()
		}
		a, died := p.roundTrip(ctx, req.ID, &req, append(line, '\n'), e.cfg.timeout, false)
		if serial {
			if !died {
				e.serialLeft.Add(-1)
			}
			e.serialMu.Unlock()
		}
		if died {
			last = p
			continue
		}
		if a.err != nil {
			return Response{}, a.err
		}
		if err := a.resp.Check(req.Op); err != nil {
			return Response{}, &AdapterError{Kind: FailureProtocol, Detail: err.Error(), Stderr: e.Stderr()}
		}
		a.resp.ID = origID
		return a.resp, nil
	}
}

// Close closes the adapter's standard input, waits up to 2 seconds for it to
// exit and then ends its whole process group, so that nothing the adapter
// started outlives it. It returns once no process of the group exists, or
// after at most about 5 seconds whatever the adapter does. It returns nil (exit status at this point is not a
// failure); calling it again does nothing.
func (e *Process) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	p := e.cur
	e.mu.Unlock()
	if p != nil {
		p.shutdown(2 * time.Second)
	}
	return nil
}

// process returns the live process, starting or restarting one as needed.
// dead is a process the caller saw die (nil if none).
func (e *Process) process(ctx context.Context, dead *proc) (*proc, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, &AdapterError{Kind: FailureDead, Detail: "adapter closed", Stderr: e.Stderr()}
	}
	if p := e.cur; p != nil && p != dead && !p.isDead() {
		return p, nil
	}
	if e.gaveUp != nil {
		return nil, e.gaveUp
	}
	if p := e.cur; p != nil {
		<-p.done // the caller saw it die
		p.mu.Lock()
		unseen := p.blameAll && !p.reported
		p.reported = true
		p.mu.Unlock()
		if unseen {
			// A second answer to a request already answered, with no
			// request waiting to be told: the next caller is, once, and
			// the adapter is restarted after that as usual.
			return nil, p.deathError("")
		}
		if p.death.Kind == FailureTimeout {
			e.silences.Add(1)
		}
		if p.death.Kind == FailureTimeout && p.culprit != 0 {
			// A silent adapter: restarting it only buys the next silence,
			// each costing a whole timeout, so blamed timeouts count
			// against the restarts whatever was answered before them. A
			// timeout with several requests unanswered blames none (an
			// adapter may hold earlier answers in its output buffer while
			// it hangs on a later request): the one-at-a-time replay after
			// it blames the request that hangs, and that timeout counts.
			e.timeouts++
			if e.timeouts > e.cfg.restarts {
				e.gaveUp = &AdapterError{Kind: FailureDead, Detail: fmt.Sprintf("not restarted again after %d timeouts, the last: %s", e.timeouts, p.death.Detail),
					Stderr: e.Stderr(), Request: p.death.Request}
				if e.cfg.log != nil {
					fmt.Fprintf(e.cfg.log, "adapter: given up after %d timeouts: every later request is an error, not sent\n", e.timeouts)
				}
				return nil, e.gaveUp
			}
		}
		switch {
		case p.answered.Load() > 0:
			e.noProgress = 0
		case p.culprit != 0:
			e.noProgress++
			// A death with several requests unanswered blames none and
			// costs nothing: the replay that follows will blame one.
		}
		if e.noProgress > e.cfg.restarts {
			e.gaveUp = &AdapterError{Kind: FailureDead, Detail: "not restarted again after: " + p.death.Detail, Stderr: e.Stderr(), Request: p.death.Request}
			return nil, e.gaveUp
		}
		// Requests still waiting for their one-at-a-time replay keep
		// waiting for it: a blamed death during the replay must not end
		// it, or the rest would go out together again and die unblamed,
		// costing one restart more than PROTOCOL.md section 6 allows.
		if u := int64(p.unblamed); u > e.serialLeft.Load() {
			e.serialLeft.Store(u)
		}
	}
	if e.started && e.cur == nil {
		return nil, &AdapterError{Kind: FailureDead, Detail: "adapter could not be started", Stderr: e.Stderr()}
	}
	e.started = true
	p, err := startProc(e.argv, e.cfg, e.stderr)
	if err != nil {
		e.cur = nil
		return nil, err
	}
	e.cur = p
	// Handshake.
	id := e.nextID.Add(1)
	line := fmt.Appendf(nil, "{\"id\":%d,\"op\":\"hello\"}\n", id)
	a, died := p.roundTrip(ctx, id, &Request{ID: id, Op: OpHello}, line, max(e.cfg.timeout, e.cfg.start), true)
	if died {
		return nil, p.deathError("during hello")
	}
	if a.err != nil {
		p.kill(0, nil)
		return nil, a.err
	}
	h, err := decodeHello(a.raw)
	if err == nil {
		err = h.Check()
	}
	if err != nil {
		p.kill(0, nil)
		return nil, &AdapterError{Kind: FailureProtocol, Detail: strings.TrimPrefix(err.Error(), "protocol: "), Stderr: e.Stderr(), Err: err}
	}
	e.hello = h
	return p, nil
}

// proc is one incarnation of the adapter process.
//
// Its life ends in finish, run by readLoop once the answers stop (end of
// output, a protocol violation, a kill): the whole process group is ended,
// the main process reaped, standard error drained, and done closed. Every
// wait on the way is bounded, whatever the adapter and the processes it
// started do (PROTOCOL.md section 6).
type proc struct {
	cmd     *exec.Cmd
	stdin   *os.File // write end of the adapter's standard input
	stdout  *os.File // read end of its standard output
	errPipe *os.File // read end of its standard error
	writeCh chan []byte
	quit    chan struct{}
	exited  chan struct{} // closed once the main process has exited and the group was ended
	waitErr error         // the exit status, set before exited is closed
	readEnd chan struct{} // closed when readLoop stops reading
	errDone chan struct{} // closed when standard error is drained
	done    chan struct{} // closed after the process is gone and death is set
	stderr  *tailBuffer
	log     io.Writer // see WithLog; nil: none

	answered atomic.Int64 // answers delivered, hello excluded

	mu       sync.Mutex
	pending  map[int64]*call
	seq      uint64
	culprit  int64 // wire id blamed for the death, 0 if not known
	unblamed int   // requests unanswered at death, the culprit excluded
	death    *AdapterError
	closing  bool
	// recent holds the last recentAnswered answered requests by wire id,
	// in a ring (recentIDs).
	recent    map[int64]*Request
	recentIDs [recentAnswered]int64
	recentAt  int
	// blameAll is set when the death's cause is an earlier request's
	// second answer: every request still waiting gets the error (none of
	// them is resent), and reported records that one did.
	blameAll bool
	reported bool
}

// Bounded waits of a dying adapter.
const (
	// exitGrace is how long an adapter that closed its standard output is
	// given to exit on its own (so that its exit status is reported)
	// before its group is killed.
	exitGrace = time.Second
	// drainGrace is how long the runner keeps reading standard output and
	// standard error after the group was killed, for a process that
	// escaped the group and holds them open.
	drainGrace = 500 * time.Millisecond
	// groupGoneWait is how long the runner waits, after killing the
	// group, until no process of it exists: SIGKILL is delivered
	// asynchronously, and killed helpers stay zombies until init reaps
	// them (1.3 s on a container whose init reaps by polling).
	groupGoneWait = 2 * time.Second
)

type call struct {
	seq     uint64
	wantRaw bool
	ch      chan answer
	req     *Request // the request, for naming it if its answer comes twice
}

// recentAnswered is how many answered requests a process remembers, so
// that a second answer to one of them names it.
const recentAnswered = 64

type answer struct {
	resp Response
	raw  []byte
	err  error
}

func startProc(argv []string, cfg processConfig, stderr *tailBuffer) (*proc, error) {
	if len(argv) == 0 {
		return nil, &AdapterError{Kind: FailureStart, Detail: "empty adapter command"}
	}
	startErr := func(err error) error {
		return &AdapterError{Kind: FailureStart, Detail: fmt.Sprintf("start %q: %v", strings.Join(argv, " "), err), Err: err}
	}
	// Own pipes, not exec's: Wait then never waits for a pipe that a
	// process started by the adapter keeps open.
	var files [6]*os.File
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, startErr(err)
		}
		files[i], files[i+1] = r, w
	}
	inR, inW, outR, outW, errR, errW := files[0], files[1], files[2], files[3], files[4], files[5]
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = cfg.dir, cfg.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	ownGroup(cmd)
	err := cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, startErr(err)
	}
	p := &proc{cmd: cmd, stdin: inW, stdout: outR, errPipe: errR,
		writeCh: make(chan []byte, 1024), quit: make(chan struct{}), exited: make(chan struct{}),
		readEnd: make(chan struct{}), errDone: make(chan struct{}), done: make(chan struct{}),
		stderr: stderr, log: cfg.log, pending: map[int64]*call{}}
	go p.waitLoop()
	go p.stderrLoop()
	go p.writeLoop()
	go p.readLoop()
	return p, nil
}

// waitLoop reaps the main process. When it exits, the rest of its group
// is ended too (an adapter's helpers do not outlive it), and a reader
// still blocked after drainGrace (a process outside the group holds the
// pipes) is released by closing the pipes.
func (p *proc) waitLoop() {
	p.waitErr = p.cmd.Wait()
	killGroup(p.cmd)
	close(p.exited)
	for _, c := range []struct {
		done <-chan struct{}
		pipe *os.File
	}{{p.readEnd, p.stdout}, {p.errDone, p.errPipe}} {
		t := time.NewTimer(drainGrace)
		select {
		case <-c.done:
		case <-t.C:
			c.pipe.Close()
		}
		t.Stop()
	}
}

func (p *proc) stderrLoop() {
	defer close(p.errDone)
	_, _ = io.Copy(p.stderr, p.errPipe)
}

func (p *proc) isDead() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// roundTrip sends line as request id and waits. died is true when the process
// died and this request is not the one blamed: the caller should resend it.
func (p *proc) roundTrip(ctx context.Context, id int64, req *Request, line []byte, timeout time.Duration, wantRaw bool) (answer, bool) {
	c := &call{wantRaw: wantRaw, ch: make(chan answer, 1), req: req}
	p.mu.Lock()
	if p.death != nil {
		p.mu.Unlock()
		return answer{}, true
	}
	p.seq++
	c.seq = p.seq
	p.pending[id] = c
	p.mu.Unlock()

	// The deadline covers writing, the wait and the decoding of the answer
	// (readLoop decodes before it delivers).
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// afterDeath decides once the process is gone: an answer that arrived
	// before it died still counts; otherwise this request either is the
	// one blamed for the death or must be resent.
	afterDeath := func() (answer, bool) {
		select {
		case a := <-c.ch:
			return a, false
		default:
		}
		p.mu.Lock()
		blamed := p.culprit == id || p.blameAll
		if p.blameAll {
			p.reported = true
		}
		p.mu.Unlock()
		if blamed {
			return answer{err: p.deathError("")}, false
		}
		return answer{}, true
	}
	onTimeout := func() (answer, bool) {
		p.kill(id, &AdapterError{Kind: FailureTimeout, Detail: fmt.Sprintf("no answer within %v", timeout)})
		<-p.done
		return afterDeath()
	}
	select {
	case p.writeCh <- line:
	case <-p.done:
		return afterDeath()
	case <-timer.C:
		return onTimeout()
	}
	select {
	case a := <-c.ch:
		return a, false
	case <-p.done:
		return afterDeath()
	case <-timer.C:
		return onTimeout()
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return answer{err: ctx.Err()}, false
	}
}

// deathError returns the cause of death with the current stderr attached.
func (p *proc) deathError(when string) *AdapterError {
	d := *p.death
	if when != "" {
		d.Detail += " (" + when + ")"
	}
	d.Stderr = p.stderr.String()
	return &d
}

// kill records why the process is being killed (unless a cause is already
// known) and ends its whole process group. The suspect is blamed only if
// it is the one request unanswered: with several in flight, any of them
// may be the cause (an adapter that buffers its output holds the answers
// to earlier requests while it hangs on a later one), and they are all
// re-sent one at a time to the next process. A blamed timeout names the
// request: its number among the process's requests, its id and its line.
func (p *proc) kill(suspect int64, why *AdapterError) {
	p.mu.Lock()
	if p.death == nil {
		if why == nil {
			why = &AdapterError{Kind: FailureProtocol, Detail: "killed after a bad handshake"}
		}
		p.death = why
		if c, ok := p.pending[suspect]; ok && len(p.pending) == 1 {
			p.culprit = suspect
			if why.Kind == FailureTimeout && c.req != nil && c.req.Op != OpHello {
				why.Detail = fmt.Sprintf("no answer to request %d of this adapter process (id %d) %s: %s",
					c.seq-1, suspect, strings.TrimPrefix(why.Detail, "no answer "), quoteLine(c.req.AppendJSON(nil)))
				why.Request = c.req
			}
		}
	}
	p.mu.Unlock()
	killGroup(p.cmd)
}

// deliver hands an answer to its waiter; false for an unknown id.
func (p *proc) deliver(id int64, line []byte, a answer) bool {
	p.mu.Lock()
	c, ok := p.pending[id]
	delete(p.pending, id)
	if ok && c.req != nil {
		if p.recent == nil {
			p.recent = make(map[int64]*Request, recentAnswered)
		}
		delete(p.recent, p.recentIDs[p.recentAt])
		p.recentIDs[p.recentAt] = id
		p.recent[id] = c.req
		p.recentAt = (p.recentAt + 1) % recentAnswered
	}
	p.mu.Unlock()
	if !ok {
		return false
	}
	if c.wantRaw {
		a.raw = append([]byte(nil), line...)
	} else {
		p.answered.Add(1)
	}
	c.ch <- a
	return true
}

func (p *proc) writeLoop() {
	w := bufio.NewWriterSize(p.stdin, 64<<10)
	// Closing stdin also releases a Write blocked on an adapter that does
	// not read (finish closes it too).
	defer p.stdin.Close()
	for {
		select {
		case line := <-p.writeCh:
			_, _ = w.Write(line)
		drain:
			for {
				select {
				case l := <-p.writeCh:
					_, _ = w.Write(l)
				default:
					break drain
				}
			}
			_ = w.Flush()
		case <-p.quit:
			_ = w.Flush()
			return
		case <-p.done:
			return
		}
	}
}

// errLineTooLong is the plain-words cause of an answer line over
// MaxLineBytes.
var errLineTooLong = fmt.Errorf("answer line longer than the protocol's limit of 1 MiB (%d bytes, newline included)", MaxLineBytes)

// readLine returns the next line of br without its "\n" (and a "\r"
// before it), reading at most MaxLineBytes. buf is reused for lines that
// do not fit br's buffer; pass back nextBuf. It allocates at most one
// buffer of MaxLineBytes, whatever the input. A last line without "\n" is returned with io.EOF.
func readLine(br *bufio.Reader, buf []byte) (line, nextBuf []byte, err error) {
	buf = buf[:0]
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes {
			return nil, buf, errLineTooLong
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if cap(buf) < MaxLineBytes {
				// One buffer of the largest size, kept for later long
				// lines: growing by append would allocate several times
				// the line.
				buf = append(make([]byte, 0, MaxLineBytes), buf...)
			}
			buf = append(buf, frag...)
			continue
		}
		line := frag
		if len(buf) > 0 {
			buf = append(buf, frag...)
			line = buf
		}
		if err == nil {
			line = line[:len(line)-1]
		} else if len(line) == 0 {
			return nil, buf, err
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, buf, err
	}
}

func (p *proc) readLoop() {
	br := bufio.NewReaderSize(p.stdout, 64<<10)
	var buf []byte
	var why *AdapterError
	for why == nil {
		line, next, err := readLine(br, buf)
		buf = next
		if line != nil {
			why = p.handleLine(line)
		}
		if why != nil || err == nil {
			continue
		}
		switch {
		case errors.Is(err, errLineTooLong):
			why = &AdapterError{Kind: FailureProtocol, Detail: err.Error(), Err: err}
		case errors.Is(err, io.EOF):
			why = &AdapterError{Kind: FailureCrash, Detail: "adapter closed its standard output"}
		case errors.Is(err, os.ErrClosed):
			why = &AdapterError{Kind: FailureCrash, Detail: "adapter exited, but a process it started outside its process group kept its standard output open"}
		default:
			why = &AdapterError{Kind: FailureProtocol, Detail: "reading answers: " + err.Error(), Err: err}
		}
	}
	close(p.readEnd)
	p.finish(why)
}

// handleLine decodes one answer line and delivers it. It returns why the
// process must die, or nil.
func (p *proc) handleLine(line []byte) *AdapterError {
	resp, err := decodeAnswer(line)
	if err != nil {
		var idOnly struct {
			ID *int64 `json:"id"`
		}
		if json.Unmarshal(line, &idOnly) == nil && idOnly.ID != nil &&
			p.deliver(*idOnly.ID, line, answer{err: &AdapterError{Kind: FailureProtocol,
				Detail: fmt.Sprintf("malformed answer %s: %v", quoteLine(line), err), Stderr: p.stderr.String(), Err: err}}) {
			return nil
		}
		return &AdapterError{Kind: FailureProtocol, Detail: "not a JSON answer: " + quoteLine(line), Err: err}
	}
	if !p.deliver(resp.ID, line, answer{resp: resp}) {
		p.mu.Lock()
		req := p.recent[resp.ID]
		if req != nil {
			p.blameAll = true
		}
		p.mu.Unlock()
		if req != nil {
			return &AdapterError{Kind: FailureProtocol, Request: req,
				Detail: fmt.Sprintf("a second answer to request %d %s: %s", resp.ID, quoteLine(req.AppendJSON(nil)), quoteLine(line))}
		}
		return &AdapterError{Kind: FailureProtocol, Detail: "answer with an unknown or missing id: " + quoteLine(line)}
	}
	return nil
}

// finish records the death, ends the process group and closes done once
// the main process is reaped and standard error drained. Every wait is
// bounded.
func (p *proc) finish(why *AdapterError) {
	p.mu.Lock()
	if p.death == nil {
		p.death = why
	}
	if p.culprit == 0 && len(p.pending) == 1 {
		for id := range p.pending {
			p.culprit = id
		}
	}
	p.unblamed = len(p.pending)
	if _, ok := p.pending[p.culprit]; ok {
		p.unblamed--
	}
	if p.blameAll {
		p.unblamed = 0 // every waiting request gets the error; none is replayed
	}
	closing := p.closing
	p.mu.Unlock()
	if p.death.Kind != FailureCrash {
		killGroup(p.cmd)
	}
	// Give a process that is exiting on its own a moment, then end it.
	t := time.NewTimer(exitGrace)
	select {
	case <-p.exited:
	case <-t.C:
		killGroup(p.cmd)
		<-p.exited
	}
	t.Stop()
	waitGroupGone(p.cmd, groupGoneWait)
	<-p.errDone // bounded by waitLoop's drainGrace
	p.stdin.Close()
	p.stdout.Close()
	if !closing && p.death.Kind == FailureCrash {
		if p.waitErr != nil {
			p.death.Detail += ": " + p.waitErr.Error()
		} else {
			p.death.Detail += ": exit status 0"
		}
	}
	if p.log != nil && !closing {
		again := ""
		if p.unblamed > 0 {
			again = fmt.Sprintf("; %d other unanswered requests are sent again, one at a time", p.unblamed)
		}
		fmt.Fprintf(p.log, "adapter %s: %s%s\n", p.death.Kind, p.death.Detail, again)
	}
	close(p.done)
}

// shutdown closes standard input and waits up to grace for the adapter to
// exit before ending its process group. The group is ended in every case,
// so nothing the adapter started outlives the run.
func (p *proc) shutdown(grace time.Duration) {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	close(p.quit)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
	}
	p.kill(-1, &AdapterError{Kind: FailureDead, Detail: "closed"})
	<-p.done
}

// decodeHello reads the answer to hello. An error object or "unsupported"
// in its place is said as such, not reported as a missing protocol
// version.
func decodeHello(raw []byte) (Hello, error) {
	var w struct {
		Error       *ErrorResult `json:"error"`
		Unsupported bool         `json:"unsupported"`
	}
	var h Hello
	err := json.Unmarshal(raw, &w)
	if err == nil {
		err = json.Unmarshal(raw, &h)
	}
	if err != nil {
		return Hello{}, fmt.Errorf("%w: the answer to hello: %w", ErrHello, plainJSONError(err))
	}
	switch {
	case w.Error != nil:
		return Hello{}, fmt.Errorf("%w: the adapter answered hello with an error instead of describing itself: %s: %s",
			ErrHello, w.Error.Type, w.Error.Message)
	case w.Unsupported:
		return Hello{}, fmt.Errorf("%w: the adapter answered hello with \"unsupported\"; every adapter must answer hello", ErrHello)
	}
	return h, nil
}

// decodeAnswer decodes one answer line of an adapter with
// [Response.UnmarshalJSON].
func decodeAnswer(line []byte) (Response, error) {
	var resp Response
	if err := resp.UnmarshalJSON(line); err != nil {
		return Response{}, err
	}
	return resp, nil
}

func quoteLine(line []byte) string {
	const max = 200
	if len(line) > max {
		return fmt.Sprintf("%q…", line[:max])
	}
	return fmt.Sprintf("%q", line)
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped bool
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if len(b) > t.limit {
		b = b[len(b)-t.limit:]
		t.dropped = true
	}
	t.buf = append(t.buf, b...)
	// Drop the head only once the buffer holds twice the limit, so that an
	// adapter writing its standard error a byte at a time costs O(1) per
	// byte, not a 64 KiB move.
	if over := len(t.buf) - t.limit; over > t.limit {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	tail := t.buf
	if over := len(tail) - t.limit; over > 0 {
		tail = tail[over:]
	}
	if t.dropped || len(tail) < len(t.buf) {
		return "…" + string(tail)
	}
	return string(tail)
}
