package ojshttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/ojshttp"
)

// A stateful sequence of requests against one server, read from bytes:
// push, unique push (every on_conflict, with valid and invalid second
// pushes), batch (with repeated and existing ids), fetch, ack, fail,
// cancel, reset, pause and resume, and clock advances. After every request
// it checks:
//
//  1. a refused request (status ≥ 400) changed nothing: every job's INFO
//     view, the job count and the queue list are byte-for-byte as before;
//  2. no job is lost: every job the server created (201) or answered
//     with is still found, until a reset removes it;
//  3. no job ends twice: a job seen in a terminal state keeps that state
//     (the sequence holds no dead-letter retry, the one way out);
//  4. every answer is one valid JSON value.
//
// The manual clock moves only through the sequence's advances, so nothing
// else changes a job between two requests.
// fataler is what a run needs of *testing.T and *rapid.T.
type fataler interface {
	Fatalf(format string, args ...any)
}

type seqRun struct {
	t     fataler
	h     *ojshttp.Server
	exec  *executor.Executor
	known []string          // ids created, in order
	final map[string]string // id -> terminal state once seen
	in    []byte
	last  string // the snapshot after the previous request ("" before the first)
}

// seqMaxJobs keeps sequences in a small server, so that the job limit and
// the byte limit are reached too.
const seqMaxJobs = 24

func newSeqRun(t fataler, in []byte) *seqRun {
	c := executor.NewFakeClock(start)
	e := executor.New(executor.WithClock(c), executor.WithRand(backoff.Fixed(0.5)))
	h := ojshttp.New(e, ojshttp.WithManualClock(c), ojshttp.WithReset(), ojshttp.WithMaxJobs(seqMaxJobs),
		ojshttp.WithMaxBytes(40_000), ojshttp.WithEvents(ojshttp.NewEvents(64)))
	return &seqRun{t: t, h: h, exec: e, final: map[string]string{}, in: in}
}

func (r *seqRun) byte() byte {
	if len(r.in) == 0 {
		return 0
	}
	b := r.in[0]
	r.in = r.in[1:]
	return b
}

func (r *seqRun) call(method, path, body string) (int, map[string]any) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		r.t.Fatalf("%s %s %s: answer is not JSON: %v: %.200q", method, path, body, err, rec.Body.String())
	}
	return rec.Code, m
}

// snapshot renders everything a refused request must leave alone.
func (r *seqRun) snapshot() string {
	var b strings.Builder
	jobs := r.exec.List(executor.Filter{})
	slices.SortFunc(jobs, func(a, b executor.Job) int { return strings.Compare(a.ID, b.ID) })
	fmt.Fprintf(&b, "len %d\n", r.exec.Len())
	for _, j := range jobs {
		_, m := r.call("GET", "/ojs/v1/jobs/"+j.ID, "")
		v, _ := json.Marshal(m["job"])
		fmt.Fprintf(&b, "%s delivery=%d %s\n", j.ID, j.Delivery, v)
	}
	_, q := r.call("GET", "/ojs/v1/queues", "")
	v, _ := json.Marshal(q)
	b.Write(v)
	return b.String()
}

func (r *seqRun) pick() string {
	if len(r.known) == 0 {
		return "0190a000-0000-7000-8000-000000000000"
	}
	return r.known[int(r.byte())%len(r.known)]
}

var seqQueues = []string{"a", "b"}

// jobBody is one PUSH envelope drawn from the input; it may be invalid on
// purpose (pending with scheduled_at, a time past 2262, a string number).
func (r *seqRun) jobBody() string {
	b := r.byte()
	opts := []string{fmt.Sprintf(`"queue":%q`, seqQueues[b&1]), `"retry":{"max_attempts":2,"initial_interval":"PT1S","jitter":false}`}
	if b&2 != 0 {
		on := []string{"reject", "replace", "replace_except_schedule", "ignore"}[(b>>2)&3]
		opts = append(opts, fmt.Sprintf(`"unique":{"keys":["type","args"],"on_conflict":%q,"states":["available","scheduled","pending","retryable","active"]}`, on))
	}
	switch v := r.byte() % 8; v {
	case 1:
		opts = append(opts, `"pending":true`)
	case 2:
		opts = append(opts, `"scheduled_at":"2026-01-02T03:05:05Z"`)
	case 3:
		opts = append(opts, `"pending":true,"scheduled_at":"2026-01-02T03:05:05Z"`) // refused
	case 4:
		opts = append(opts, `"scheduled_at":"2300-01-01T00:00:00Z"`) // refused: past 2262
	case 5:
		opts = append(opts, `"visibility_timeout_ms":"100"`) // refused: a string
	}
	body := fmt.Sprintf(`"type":"seq.job","args":[%d],"meta":{"m":%d},"tags":["t%d"],"options":{%s}`,
		r.byte()%3, b, b, strings.Join(opts, ","))
	if r.byte()%4 == 0 && len(r.known) > 0 {
		body = fmt.Sprintf(`"id":%q,`, r.pick()) + body // an existing id: refused
	}
	return "{" + body + "}"
}

// step runs one request and checks the invariants; false ends the run.
func (r *seqRun) step() bool {
	if len(r.in) == 0 {
		return false
	}
	op := r.byte() % 11
	var method, path, body string
	switch op {
	case 0, 1:
		method, path, body = "POST", "/ojs/v1/jobs", r.jobBody()
	case 2:
		n := 1 + int(r.byte())%3
		jobs := make([]string, n)
		for i := range jobs {
			jobs[i] = r.jobBody()
		}
		method, path, body = "POST", "/ojs/v1/jobs/batch", `{"jobs":[`+strings.Join(jobs, ",")+`]}`
	case 3:
		method, path, body = "POST", "/ojs/v1/workers/fetch", fmt.Sprintf(`{"queues":[%q],"count":%d}`, seqQueues[r.byte()&1], 1+r.byte()%3)
	case 4:
		method, path, body = "POST", "/ojs/v1/workers/ack", fmt.Sprintf(`{"job_id":%q,"result":{"n":%d}}`, r.pick(), r.byte())
	case 5:
		method, path, body = "POST", "/ojs/v1/workers/nack", fmt.Sprintf(`{"job_id":%q,"error":{"type":"e","message":"m","retryable":%v}}`, r.pick(), r.byte()&1 == 0)
	case 6:
		method, path = "DELETE", "/ojs/v1/jobs/"+r.pick()
	case 7:
		if r.byte()%4 != 0 {
			return true // resets are rarer than the rest
		}
		method, path = "POST", ojshttp.ResetPath
	case 8:
		method, path = "POST", "/ojs/v1/queues/"+seqQueues[r.byte()&1]+"/pause"
	case 9:
		method, path = "POST", "/ojs/v1/queues/"+seqQueues[r.byte()&1]+"/resume"
	case 10:
		method, path, body = "POST", ojshttp.AdminClockPath, fmt.Sprintf(`{"advance_ms":%d}`, 500*int(r.byte()%8))
	}
	before := r.last
	if before == "" {
		before = r.snapshot()
	}
	r.last = ""
	status, m := r.call(method, path, body)
	if status >= 500 {
		r.t.Fatalf("%s %s %s: %d %v", method, path, body, status, m)
	}
	if status >= 400 {
		if r.last = r.snapshot(); r.last != before {
			after := r.last
			r.t.Fatalf("refused request changed the server: %s %s %s: %d %v\nbefore:\n%s\nafter:\n%s", method, path, body, status, m, before, after)
		}
		return true
	}
	if path == ojshttp.ResetPath {
		r.known, r.final = nil, map[string]string{}
		return true
	}
	var got []any
	if j, ok := m["job"].(map[string]any); ok {
		got = append(got, j)
	}
	if js, ok := m["jobs"].([]any); ok {
		got = append(got, js...)
	}
	for _, j := range got {
		if id, ok := j.(map[string]any)["id"].(string); ok && !slices.Contains(r.known, id) {
			r.known = append(r.known, id)
		}
	}
	for _, id := range r.known {
		j, err := r.exec.Get(id)
		if err != nil {
			r.t.Fatalf("after %s %s %s (%d): job %s lost: %v", method, path, body, status, id, err)
		}
		if was, ok := r.final[id]; ok && was != j.State.String() {
			r.t.Fatalf("after %s %s %s: job %s ended %s, then became %s", method, path, body, id, was, j.State)
		}
		if j.State.Terminal() {
			r.final[id] = j.State.String()
		}
	}
	return true
}

func runSeq(t fataler, in []byte) {
	r := newSeqRun(t, in)
	for steps := 0; steps < 200 && r.step(); steps++ {
	}
}

// seqSeeds are sequences that once broke an invariant, written as the
// bytes step reads (op, then its draws).
var seqSeeds = [][]byte{
	// A unique replace push, then the same job again as pending with
	// scheduled_at: refused, and the first job must stay as it was.
	{0, 0x06, 0, 0, 1, 1, 0x06, 3, 0, 1},
	// The same with scheduled_at in 2300.
	{0, 0x06, 0, 0, 1, 1, 0x06, 4, 0, 1},
	// A batch of a replace push and a job repeating an existing id.
	{0, 0x00, 0, 0, 1, 0, 0x06, 0, 0, 1, 2, 1, 0x06, 0, 0, 1, 0x00, 0, 0, 0, 0},
	// A string visibility_timeout_ms after a replace push.
	{0, 0x06, 0, 0, 1, 0, 0x06, 5, 0, 1},
}

// FuzzServeSequence runs request sequences read from the fuzzer's bytes
// against one server and checks that refused requests change nothing and
// that no job is lost or ends twice (see seqRun).
func FuzzServeSequence(f *testing.F) {
	for _, s := range seqSeeds {
		f.Add(s)
	}
	f.Add(bytes.Repeat([]byte{0, 2, 1, 1, 2, 2, 3, 0, 1, 4, 0, 1, 5, 0, 1}, 8))
	f.Fuzz(func(t *testing.T, in []byte) { runSeq(t, in) })
}

// TestServeSequences is FuzzServeSequence's invariants over random
// sequences drawn by rapid, so that every plain test run explores new
// ones too.
func TestServeSequences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		runSeq(t, rapid.SliceOfN(rapid.Byte(), 0, 600).Draw(t, "ops"))
	})
}
