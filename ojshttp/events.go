package ojshttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// Events is a bounded in-memory log of OJS lifecycle events (ojs-events
// §3.1 and §3.2: job.enqueued, job.started, job.completed, job.failed,
// job.retrying, job.discarded, job.cancelled, job.heartbeat), served by
// GET /ojs/v1/events (§6.4 HTTP polling) when given to [WithEvents]. It
// is an [executor.Observer]: build the executor with
// executor.WithObserver(ev) so that failures, retries, discards and
// cancellations the executor applies on its own (an expired visibility
// timeout) are logged too; the server logs the events only it sees
// (enqueue, fetch, ack, heartbeat).
//
// The log keeps the most recent events only (NewEvents' capacity): a
// poller that falls further behind loses the oldest (delivery is
// at-most-once). Create it with NewEvents; it is safe for concurrent use.
type Events struct {
	executor.NopObserver
	mu    sync.Mutex
	buf   []event // ring
	head  int     // index of the oldest
	n     int
	bytes int64             // sum of the buffered events' body sizes, at most maxEventBytes
	seq   uint64            // sequence number of the newest
	index map[string]uint64 // event id -> sequence number, for the buffered events
	now   func() time.Time
}

type event struct {
	seq   uint64
	id    string
	typ   string
	queue string
	jtype string
	body  json.RawMessage // the whole envelope
}

// NewEvents returns an event log keeping the last capacity events
// (10000 when capacity ≤ 0).
func NewEvents(capacity int) *Events {
	if capacity <= 0 {
		capacity = 10000
	}
	return &Events{buf: make([]event, capacity), index: map[string]uint64{}, now: time.Now}
}

// add appends an event about job j of type typ with data.
func (ev *Events) add(typ string, j executor.Job, at time.Time, data map[string]any) {
	data["job_type"] = j.Type
	data["queue"] = j.Queue
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.seq++
	id := "evt_" + newUUIDv7(at.UnixMilli())
	body, _ := json.Marshal(map[string]any{
		"specversion": "1.0", "id": id, "type": typ, "source": "ojs://retrykit/serve",
		"time": stamp(at), "subject": j.ID, "datacontenttype": "application/json", "data": data,
	})
	// The oldest events go while the log is full by count or by bytes.
	for ev.n > 0 && (ev.n == len(ev.buf) || ev.bytes+int64(len(body)) > maxEventBytes) {
		old := &ev.buf[ev.head]
		delete(ev.index, old.id)
		ev.bytes -= int64(len(old.body))
		*old = event{}
		ev.head = (ev.head + 1) % len(ev.buf)
		ev.n--
	}
	i := (ev.head + ev.n) % len(ev.buf)
	ev.n++
	ev.bytes += int64(len(body))
	ev.buf[i] = event{seq: ev.seq, id: id, typ: typ, queue: j.Queue, jtype: j.Type, body: body}
	ev.index[id] = ev.seq
}

// Bounds of the event log's memory (RK-161): the log holds at most
// maxEventBytes of event bodies, dropping the oldest first, and an ACK
// result larger than maxEventResult is not copied into job.completed
// (result_bytes gives its size; the job view keeps the result).
const (
	maxEventBytes  = 16 << 20
	maxEventResult = 4 << 10
)

// clear empties the log; sequence numbers go on.
func (ev *Events) clear() {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	clear(ev.buf)
	ev.head, ev.n, ev.bytes = 0, 0, 0
	ev.index = map[string]uint64{}
}

func lastError(j executor.Job) map[string]any {
	if len(j.Errors) == 0 {
		return map[string]any{"code": "", "message": "", "retryable": false}
	}
	e := j.Errors[len(j.Errors)-1]
	return map[string]any{"code": e.Type, "message": e.Message, "retryable": j.State == executor.Retryable}
}

func eventTime(j executor.Job) time.Time {
	if n := len(j.Errors); n > 0 {
		return j.Errors[n-1].Time
	}
	return j.FinishedAt
}

// Retrying logs job.failed and job.retrying (executor.Observer).
func (ev *Events) Retrying(j executor.Job, attempt int, delay time.Duration) {
	at := eventTime(j)
	ev.add("job.failed", j, at, map[string]any{"attempt": attempt, "error": lastError(j)})
	ev.add("job.retrying", j, at, map[string]any{"attempt": attempt, "max_attempts": maxAttempts(j.Policy),
		"next_retry_at": stamp(j.NextRetryAt), "delay_ms": delay.Milliseconds(), "error": lastError(j)})
}

// Discarded logs job.failed and job.discarded (executor.Observer).
func (ev *Events) Discarded(j executor.Job) { ev.discarded(j) }

// DeadLettered logs job.failed and job.discarded with dead_letter true
// (executor.Observer).
func (ev *Events) DeadLettered(j executor.Job) { ev.discarded(j) }

func (ev *Events) discarded(j executor.Job) {
	ev.add("job.failed", j, eventTime(j), map[string]any{"attempt": j.Attempt, "error": lastError(j)})
	ev.add("job.discarded", j, j.FinishedAt, map[string]any{"total_attempts": j.Attempt,
		"last_error": lastError(j), "dead_letter": j.DeadLetter})
}

// Cancelled logs job.cancelled (executor.Observer).
func (ev *Events) Cancelled(j executor.Job) {
	ev.add("job.cancelled", j, j.FinishedAt, map[string]any{"cancelled_by": "api", "reason": ""})
}

var _ executor.Observer = (*Events)(nil)

// Event polling bounds (ojs-events §6.4).
const (
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// events is GET /ojs/v1/events?after=&types=&queues=&job_types=&limit=.
func (s *Server) events(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	ev := s.cfg.events
	q := r.URL.Query()
	limit := defaultEventLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxEventLimit {
			return 0, nil, invalid("limit", "must be an integer from 1 to %d, got %q", maxEventLimit, clip(v))
		}
		limit = n
	}
	set := func(k string) map[string]bool {
		v := q.Get(k)
		if v == "" {
			return nil
		}
		m := map[string]bool{}
		for _, p := range strings.SplitN(v, ",", 101) {
			m[strings.TrimSpace(p)] = true
		}
		return m
	}
	types, queues, jtypes := set("types"), set("queues"), set("job_types")
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var after uint64
	if a := q.Get("after"); a != "" {
		seq, ok := ev.index[a]
		if !ok {
			return 0, nil, &apiError{status: http.StatusNotFound, code: CodeNotFound,
				message: "event " + strconv.Quote(clip(a)) + " is not in the log (unknown, or older than the last " + strconv.Itoa(len(ev.buf)) + " events)"}
		}
		after = seq
	}
	out := []json.RawMessage{}
	cursor, more := "", false
	var size int64
	for k := 0; k < ev.n; k++ {
		e := &ev.buf[(ev.head+k)%len(ev.buf)]
		if e.seq <= after || (types != nil && !types[e.typ]) || (queues != nil && !queues[e.queue]) || (jtypes != nil && !jtypes[e.jtype]) {
			continue
		}
		if len(out) == limit || (len(out) > 0 && size+int64(len(e.body)) > maxAnswer) {
			more = true // a page is cut by count and by bytes (RK-162)
			break
		}
		size += int64(len(e.body)) + 1
		out = append(out, e.body)
		cursor = e.id
	}
	resp := map[string]any{"events": out, "has_more": more}
	if cursor != "" {
		resp["cursor"] = cursor
	}
	return http.StatusOK, resp, nil
}

// RateLimited logs rate_limit.exceeded (key, strategy, limit, current),
// rate_limit.released (key, strategy, job_id) and rate_limit.dropped
// (key, job_id, job_type) of ojs-rate-limiting §11.1
// (executor.RateLimitObserver).
func (ev *Events) RateLimited(j executor.Job, e executor.RateLimitEvent) {
	key := ""
	if j.RateLimit != nil {
		key = j.RateLimit.Key
	}
	data := map[string]any{"key": key, "job_id": j.ID}
	switch e.Kind {
	case executor.RateLimitExceeded:
		data["strategy"], data["limit"], data["current"] = e.Strategy, e.Limit, e.Current
	case executor.RateLimitReleased:
		data["strategy"] = e.Strategy
	}
	ev.add(e.Kind, j, e.At, data)
}

var _ executor.RateLimitObserver = (*Events)(nil)
