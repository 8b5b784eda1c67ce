// The binding rules a retrying client depends on beyond the retry spec:
// headers, the error envelope, Location, paused queues and rate limits.

package live

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// wireFindings is what the client saw of the binding's header and
// envelope rules over every answer of a run (guarded by client.mu).
type wireFindings struct {
	noVersion    int64            // answers without OJS-Version (§6.5)
	noVersionOps map[string]int64 // by operation, at most maxContentTypes
	errAnswers   int64            // 4xx/5xx answers with a body
	badErrors    int64            // of those, not the §16.1 envelope
	badExample   []string         // the first few, "OP HTTP n: reason"
}

// maxBadExamples bounds the examples kept of each broken rule.
const maxBadExamples = 3

// note judges one answer's headers and, for an error answer, its body.
func (w *wireFindings) note(op string, ex *exchange) {
	if ex.header.Get("OJS-Version") == "" {
		w.noVersion++
		if _, ok := w.noVersionOps[op]; ok || len(w.noVersionOps) < maxContentTypes {
			if w.noVersionOps == nil {
				w.noVersionOps = map[string]int64{}
			}
			w.noVersionOps[op]++
		}
	}
	if ex.status < 400 || len(ex.body) == 0 {
		return
	}
	w.errAnswers++
	if reason := envelopeProblem(ex); reason != "" {
		w.badErrors++
		if len(w.badExample) < maxBadExamples {
			w.badExample = append(w.badExample, fmt.Sprintf("%s HTTP %d: %s", op, ex.status, reason))
		}
	}
}

// envelopeProblem returns how an error answer breaks the binding's
// envelope (§16.1), or "": {"error": {"code": string, "message": string,
// "retryable": boolean, "request_id": string}}, the request_id equal to
// the X-Request-Id header, which must be there (§6.5; §19.1: "mirrors").
func envelopeProblem(ex *exchange) string {
	var env struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if json.Unmarshal(ex.body, &env) != nil || env.Error == nil {
		return "no error object: " + snippet(ex.body)
	}
	var missing []string
	str := func(k string) string {
		var s string
		if json.Unmarshal(env.Error[k], &s) != nil || s == "" {
			missing = append(missing, "error."+k+" (a non-empty string)")
		}
		return s
	}
	str("code")
	var msg string
	if json.Unmarshal(env.Error["message"], &msg) != nil {
		missing = append(missing, "error.message (a string)")
	}
	var b bool
	if json.Unmarshal(env.Error["retryable"], &b) != nil {
		missing = append(missing, "error.retryable (a boolean)")
	}
	id := str("request_id")
	if len(missing) > 0 {
		return "missing or mistyped " + strings.Join(missing, ", ")
	}
	switch h := ex.header.Get("X-Request-Id"); {
	case h == "":
		return "no X-Request-Id header for error.request_id to mirror (binding §6.5, §19.1)"
	case h != id:
		return fmt.Sprintf("error.request_id %q is not the X-Request-Id header %q", trunc(id, 60), trunc(h, 60))
	}
	return ""
}

// judgeWire turns the answers of the whole run into the verdicts of
// http-ojs-version and http-error-object. An error answer is provoked
// first (INFO of an id no server holds) so that error answers are judged
// even when the checks chosen met none.
func (e *env) judgeWire(ctx context.Context, selected func(string) bool) {
	if selected("http-error-object") || selected("http-ojs-version") || selected("http-content-type") {
		if _, err := e.c.do(ctx, "INFO", http.MethodGet, "/jobs/"+newUUIDv7(), nil); err != nil {
			e.errored(err, "http-error-object", "http-ojs-version", "http-content-type")
		}
	}
	e.c.mu.Lock()
	w, n := e.c.wire, e.c.answers
	ops := make([]string, 0, len(w.noVersionOps))
	for op, k := range w.noVersionOps {
		ops = append(ops, fmt.Sprintf("%s ×%d", op, k))
	}
	bad := slices.Clone(w.badExample)
	e.c.mu.Unlock()
	slices.Sort(ops)
	if selected("http-ojs-version") {
		switch {
		case n == 0:
			e.notRun("http-ojs-version", "no answer came back")
		case w.noVersion > 0:
			e.fail("http-ojs-version", "%d of %d answers have no OJS-Version header (%s)", w.noVersion, n, strings.Join(ops, ", "))
		default:
			e.pass("http-ojs-version", "")
		}
	}
	if selected("http-error-object") {
		switch {
		case w.errAnswers == 0:
			e.notRun("http-error-object", "no error answer came back")
		case w.badErrors > 0:
			e.fail("http-error-object", "%d of %d error answers break the envelope, e.g. %s", w.badErrors, w.errAnswers, strings.Join(bad, "; "))
		default:
			e.pass("http-error-object", "")
		}
	}
}

// newUUIDv7 returns a random UUIDv7 (RFC 9562) for a job id of the
// checker's own.
func newUUIDv7() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	ms := uint64(time.Now().UnixMilli())
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], ms<<16)
	copy(b[:6], t[:6])
	b[6] = 0x70 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// scenLocation: a 201 PUSH names its job in Location, and a GET on it
// returns the job (binding §9.1).
func scenLocation(ctx context.Context, e *env) {
	const check = "http-location"
	q := e.queue("location")
	ex, a, err := e.c.pushJob(ctx, map[string]any{"type": "retrykit.live.location", "args": []any{}, "options": map[string]any{"queue": q}})
	if err != nil {
		e.errored(err, check)
		return
	}
	loc := ex.header.Get("Location")
	switch {
	case ex.status != http.StatusCreated:
		e.fail(check, "PUSH of a new job answered %d, not 201 Created (with Location)", ex.status)
		return
	case loc == "":
		e.fail(check, "the 201 PUSH of job %s has no Location header", a.ID)
		return
	}
	root, _ := url.Parse(e.c.root)
	ref, err := url.Parse(loc)
	if err != nil {
		e.fail(check, "Location %q is not a URL: %v", trunc(loc, 100), err)
		return
	}
	u := root.ResolveReference(ref)
	if u.Host != root.Host || u.Scheme != root.Scheme {
		e.fail(check, "Location %q points to another server", trunc(loc, 100))
		return
	}
	got, err := e.c.do(ctx, "INFO", http.MethodGet, "", nil, u.String())
	if err != nil {
		e.errored(err, check)
		return
	}
	var j struct {
		Job *job `json:"job"`
	}
	if got.status != http.StatusOK || json.Unmarshal(got.body, &j) != nil || j.Job == nil || j.Job.ID != a.ID {
		e.fail(check, "GET %s (the Location of job %s) answered %d %s, not that job", trunc(loc, 100), a.ID, got.status, snippet(got.body))
		return
	}
	if want := "/ojs/v1/jobs/" + a.ID; u.Path != want {
		e.pass(check, fmt.Sprintf("Location %q returns the job, though the binding's form is %s", trunc(loc, 100), want))
		return
	}
	e.pass(check, "")
}

// queueOp sends POST /queues/{q}/{op} (pause or resume).
func (e *env) queueOp(ctx context.Context, q, op string) (*exchange, error) {
	return e.c.do(ctx, strings.ToUpper(op), http.MethodPost, "/queues/"+url.PathEscape(q)+"/"+op, map[string]any{})
}

// scenPaused: a paused queue is not fetched from; a PUSH to it is 422
// queue_paused, retryable, and stores nothing; after the resume its job
// is fetched (binding §11.3).
func scenPaused(ctx context.Context, e *env) {
	const check = "http-paused-queue"
	q := e.queue("paused")
	before, err := e.c.push(ctx, q, "retrykit.live.paused", nil)
	if err != nil {
		e.errored(err, check)
		return
	}
	ex, err := e.queueOp(ctx, q, "pause")
	if err != nil {
		e.errored(err, check)
		return
	}
	if ex.status == http.StatusNotFound || ex.status == http.StatusMethodNotAllowed || ex.status == http.StatusNotImplemented ||
		(ex.status == http.StatusUnprocessableEntity && strings.Contains(string(ex.body), `"unsupported"`)) {
		e.notRun(check, fmt.Sprintf("POST /ojs/v1/queues/{name}/pause answered %d: the server does not pause queues (a level-4 feature)", ex.status))
		return
	}
	if ex.status != http.StatusOK {
		e.errored(unexpected("PAUSE", ex), check)
		return
	}
	defer e.queueOp(context.WithoutCancel(ctx), q, "resume") //nolint:errcheck // best effort; the run's cleanup follows
	var problems []string
	if f, err := e.c.fetch(ctx, q, 0); err != nil {
		e.errored(err, check)
		return
	} else if f != nil {
		problems = append(problems, "FETCH claimed job "+f.job.ID+" from the paused queue")
	}
	id := newUUIDv7()
	px, err := e.c.do(ctx, "PUSH", http.MethodPost, "/jobs", map[string]any{"id": id, "type": "retrykit.live.paused", "args": []any{}, "options": map[string]any{"queue": q}})
	if err != nil {
		e.errored(err, check)
		return
	}
	var env struct {
		Error *struct {
			Code      string `json:"code"`
			Retryable *bool  `json:"retryable"`
		} `json:"error"`
	}
	json.Unmarshal(px.body, &env) //nolint:errcheck // judged below
	switch {
	case px.status == http.StatusCreated || px.status == http.StatusOK:
		e.c.track(id)
		problems = append(problems, fmt.Sprintf("a PUSH to the paused queue was accepted (%d), not refused with 422 queue_paused", px.status))
	case px.status != http.StatusUnprocessableEntity || env.Error == nil || env.Error.Code != "queue_paused":
		problems = append(problems, fmt.Sprintf("a PUSH to the paused queue answered %d %s, not 422 queue_paused", px.status, snippet(px.body)))
	case env.Error.Retryable == nil || !*env.Error.Retryable:
		problems = append(problems, "queue_paused is not marked retryable")
	default:
		if gx, err := e.c.do(ctx, "INFO", http.MethodGet, "/jobs/"+id, nil); err == nil && gx.status != http.StatusNotFound {
			problems = append(problems, fmt.Sprintf("the refused job %s exists after all (INFO answered %d)", id, gx.status))
		}
	}
	rx, err := e.queueOp(ctx, q, "resume")
	if err != nil || rx.status != http.StatusOK {
		if err == nil {
			err = unexpected("RESUME", rx)
		}
		e.errored(err, check)
		return
	}
	if f, err := e.await(ctx, q, before, time.Time{}, 0); err != nil {
		problems = append(problems, "the job pushed before the pause was not fetched after the resume: "+err.Error())
	} else {
		e.c.ack(ctx, f.job.ID) //nolint:errcheck // the job is the run's; cleanup follows
	}
	if len(problems) > 0 {
		e.fail(check, "%s", strings.Join(problems, "; "))
		return
	}
	e.pass(check, "")
}

// claimsRateLimits reads the manifest's claim of ojs-rate-limiting: the
// capability rate_limiting or the extension urn:ojs:ext:rate-limiting.
func (c *client) claimsRateLimits(ctx context.Context) bool {
	ex, err := c.do(ctx, "MANIFEST", http.MethodGet, "", nil, c.root+"/ojs/manifest")
	if err != nil || ex.status != http.StatusOK {
		return false
	}
	var m struct {
		Capabilities map[string]any    `json:"capabilities"`
		Extensions   []json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(ex.body, &m) != nil {
		return false
	}
	if m.Capabilities["rate_limiting"] == true {
		return true
	}
	for _, raw := range m.Extensions {
		var s string
		var o struct {
			URN  string `json:"urn"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &s) == nil && s == "urn:ojs:ext:rate-limiting" {
			return true
		}
		if json.Unmarshal(raw, &o) == nil && (o.URN == "urn:ojs:ext:rate-limiting" || o.Name == "rate-limiting") {
			return true
		}
	}
	return false
}

// scenRateLimit: with the manifest claiming rate limits, two jobs of one
// key with concurrency 1: while the first is active the second is not
// fetched and keeps attempt 0 (available); after the first's ACK it
// starts as attempt 1 (ojs-rate-limiting §5.1, §8.1, RL-003).
func scenRateLimit(ctx context.Context, e *env) {
	const check = "http-rate-limit-attempt"
	if !e.c.claimsRateLimits(ctx) {
		e.notRun(check, "the manifest claims no rate limiting (capabilities.rate_limiting, extension urn:ojs:ext:rate-limiting)")
		return
	}
	q := e.queue("rate-limit")
	rl := map[string]any{"key": e.prefix + "-rl-" + fmt.Sprint(e.seq.Add(1)), "concurrency": 1}
	var ids []string
	for range 2 {
		ex, a, err := e.c.pushJob(ctx, map[string]any{"type": "retrykit.live.rate_limit", "args": []any{}, "options": map[string]any{"queue": q, "rate_limit": rl}})
		if ex != nil && ex.status >= 400 && ex.status < 500 {
			e.fail(check, "the manifest claims rate limiting, but a PUSH with rate_limit %v answered %d %s", rl, ex.status, snippet(ex.body))
			return
		}
		if err != nil {
			e.errored(err, check)
			return
		}
		ids = append(ids, a.ID)
	}
	first, err := e.c.fetch(ctx, q, 0)
	if err != nil || first == nil {
		if err == nil {
			err = &serverError{Op: "FETCH", Reason: "no job of the rate-limited queue was fetched"}
		}
		e.errored(err, check)
		return
	}
	held := ids[0]
	if first.job.ID == ids[0] {
		held = ids[1]
	}
	var problems []string
	for range 3 {
		f, err := e.c.fetch(ctx, q, 0)
		if err != nil {
			e.errored(err, check)
			return
		}
		if f != nil {
			problems = append(problems, fmt.Sprintf("job %s started while job %s of the same key (concurrency 1) was active", f.job.ID, first.job.ID))
			break
		}
	}
	if j, err := e.c.info(ctx, held); err != nil {
		e.errored(err, check)
		return
	} else if len(problems) == 0 {
		// the attempt of a job never started, held back while FETCHes
		// skipped it: 0 (a server that spends attempts on the wait is
		// an attempt count that differs, grouped with its kind)
		e.recordAttempt(check, servermodel.InfoAttempt, 0, j.Attempt)
		if j.State != "available" {
			problems = append(problems, fmt.Sprintf("the held-back job is %s, not available", j.State))
		}
		if j.Attempt != nil && *j.Attempt != 0 {
			problems = append(problems, fmt.Sprintf("the held-back job shows attempt %d after 3 FETCHes that skipped it, not 0: waiting for the limit spent attempts", *j.Attempt))
		}
	}
	if err := e.c.ack(ctx, first.job.ID); err != nil {
		e.errored(err, check)
		return
	}
	if len(problems) == 0 {
		if _, err := e.await(ctx, q, held, time.Time{}, 0); err != nil {
			e.errored(err, check)
			return
		}
		// INFO, not the FETCH answer, whose attempt http-attempt-absolute
		// judges.
		j, err := e.c.info(ctx, held)
		if err != nil {
			e.errored(err, check)
			return
		}
		e.recordAttempt(check, servermodel.InfoAttempt, 1, j.Attempt)
		if j.Attempt != nil && *j.Attempt != 1 {
			problems = append(problems, fmt.Sprintf("the held-back job's first start shows attempt %d, not 1", *j.Attempt))
		}
		e.c.ack(ctx, held) //nolint:errcheck // the run's cleanup follows
	}
	if len(problems) > 0 {
		e.fail(check, "%s", strings.Join(problems, "; "))
		return
	}
	e.pass(check, "")
}

// pushJob sends a PUSH of body and returns the answer and its job, which
// the run tracks for its cleanup. A status other than 200 or 201, or an
// answer without job.id, is an error (the exchange is still returned).
func (c *client) pushJob(ctx context.Context, body map[string]any) (*exchange, *job, error) {
	ex, err := c.do(ctx, "PUSH", http.MethodPost, "/jobs", body)
	if err != nil {
		return nil, nil, err
	}
	if ex.status != http.StatusCreated && ex.status != http.StatusOK {
		return ex, nil, unexpected("PUSH", ex)
	}
	var a struct {
		Job *job `json:"job"`
	}
	if err := decode("PUSH", ex, &a); err != nil || a.Job == nil || a.Job.ID == "" {
		return ex, nil, &serverError{Op: "PUSH", Status: ex.status, Reason: "answer has no job.id: " + snippet(ex.body)}
	}
	c.track(a.Job.ID)
	return ex, a.Job, nil
}
