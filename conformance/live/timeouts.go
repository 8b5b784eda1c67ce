// Checks of the timeouts extension (ojs-timeouts): run only against a
// server whose manifest claims urn:ojs:ext:timeouts, reported as not run
// otherwise, never failed.

package live

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// timeoutsURN is the ojs-timeouts extension as a manifest lists it.
const timeoutsURN = "urn:ojs:ext:timeouts"

func init() {
	checks = append(checks,
		Check{"http-total-timeout-no-time-left", "TMO-03", "9.1", "with timeout 1 and total_timeout 4, a failure within 1 s is retried after PT2S (1 + 2 + 1 ≤ 4) and the failure of that retry, 2 s or more after created_at, ends the job at once (2 + 2 + 1 > 4) although attempts remain (ojs-timeouts extension)", []string{"class:total-timeout", "should:total-timeout"}},
		Check{"http-stalled", "TMO-04", "7.3", "a job whose worker sends no heartbeat for longer than heartbeat_timeout (1 s) loses its attempt: it becomes retryable with error type \"stalled\" although its reservation (60 s) still runs (ojs-timeouts extension)", []string{"class:stall"}},
	)
	scenarios = append(scenarios,
		scenario{"timeouts", []string{"http-total-timeout-no-time-left", "http-stalled"}, func(ctx context.Context, e *env) {
			if !e.c.claims(ctx, timeoutsURN) {
				for _, id := range []string{"http-total-timeout-no-time-left", "http-stalled"} {
					e.notRun(id, "the server's manifest does not claim "+timeoutsURN)
				}
				return
			}
			e.totalTimeout(ctx)
			e.stalled(ctx)
		}},
	)
}

// claims reports whether the manifest's extensions list urn.
func (c *client) claims(ctx context.Context, urn string) bool {
	ex, err := c.do(ctx, "MANIFEST", http.MethodGet, "", nil, c.root+"/ojs/manifest")
	if err != nil || ex.status != http.StatusOK {
		return false
	}
	var m struct {
		Extensions []string `json:"extensions"`
	}
	return json.Unmarshal(ex.body, &m) == nil && slices.Contains(m.Extensions, urn)
}

// pushWith enqueues a job with extra top-level envelope fields.
func (c *client) pushWith(ctx context.Context, queue string, fields, retry map[string]any) (string, error) {
	body := map[string]any{"type": "live.timeouts", "args": []any{queue}, "options": map[string]any{"queue": queue, "retry": retry}}
	for k, v := range fields {
		body[k] = v
	}
	ex, err := c.do(ctx, "PUSH", http.MethodPost, "/jobs", body)
	if err != nil {
		return "", err
	}
	var a struct {
		Job *job `json:"job"`
	}
	if ex.status != http.StatusCreated && ex.status != http.StatusOK {
		return "", unexpected("PUSH", ex)
	}
	if err := decode("PUSH", ex, &a); err != nil {
		return "", err
	}
	if a.Job == nil || a.Job.ID == "" {
		return "", &serverError{Op: "PUSH", Status: ex.status, Reason: "answer has no job.id"}
	}
	c.track(a.Job.ID)
	return a.Job.ID, nil
}

// fetchWithin polls queue for up to d and returns the job fetched, or nil.
func (e *env) fetchWithin(ctx context.Context, queue string, d time.Duration) (*fetched, error) {
	end := time.Now().Add(d)
	for {
		f, err := e.c.fetch(ctx, queue, time.Minute)
		if err != nil || f != nil || time.Now().After(end) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, e.ctxErr(ctx)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// totalTimeout judges http-total-timeout-no-time-left. A play whose first
// failure could not be placed within 0.9 s of PUSH (a loaded checker or
// server) judges nothing and is played again with a fresh job, up to 3
// times, before the check is reported not run.
func (e *env) totalTimeout(ctx context.Context) {
	const id = "http-total-timeout-no-time-left"
	for try := 0; try < 3; try++ {
		if !e.playTotalTimeout(ctx, id) {
			return
		}
	}
	e.notRun(id, "in 3 plays the first failure came more than 0.9 s after PUSH: the checker or the server was too slow to place it before the §9.1 boundary")
}

// playTotalTimeout plays http-total-timeout-no-time-left once; it reports
// true, having recorded nothing, when the first failure came too late to
// judge.
func (e *env) playTotalTimeout(ctx context.Context, id string) (tooSlow bool) {
	q := e.queue("tmo-total")
	pushed := time.Now()
	jid, err := e.c.pushWith(ctx, q, map[string]any{"timeout": 1, "total_timeout": 4},
		map[string]any{"max_attempts": 10, "initial_interval": "PT2S", "backoff_coefficient": 1, "jitter": false})
	if err != nil {
		e.errored(err, id)
		return false
	}
	f, err := e.fetchWithin(ctx, q, 2*time.Second)
	if err != nil || f == nil {
		e.errored(orNotFetched(err), id)
		return false
	}
	a, ex, err := e.c.nack(ctx, jid, failure{Type: "live.error", Message: "first"})
	if err != nil || a == nil {
		e.errored(orStatus(err, ex), id)
		return false
	}
	used := time.Since(pushed)
	if used > 900*time.Millisecond {
		return true
	}
	// the retry after PT2S, 1 s long, must end before total_timeout 4 s
	e.recordStated(id, map[string]any{"max_attempts": 10, "initial_interval": "PT2S", "backoff_coefficient": 1, "jitter": false}, a, ex, 2*time.Second, 2*time.Second, 4*time.Second-time.Second-used)
	if a.State != "retryable" {
		e.fail(id, "a failure within 0.9 s, whose retry (after 2 s, 1 s long) ends before total_timeout 4 s, answered %q, want retryable", a.State)
		return false
	}
	next, _ := parseTime("next_attempt_at", a.NextAttemptAt)
	if f, err = e.fetchWithin(ctx, q, 5*time.Second); err != nil {
		e.errored(err, id)
		return false
	}
	if f == nil {
		// a retry that never came is the lateness checks' to judge
		e.notRun(id, "inconclusive: the retry due 2 s after the first failure was not handed out within 5 s, so the time left before total_timeout could not be judged (lateness is judged by http-promoted and http-promoted-relative)")
		return false
	}
	if _, at, ok := e.c.window(f.ex); ok && !next.IsZero() && at.Before(next.Add(-resolution)) {
		// handed out before its next_attempt_at (by the server's clock, as
		// http-not-early judges): the time left is not the one announced
		e.record(servermodel.Obs{Check: id, Kind: servermodel.Delivery, Yes: true})
		e.fail(id, "the retry was handed out %v before its next_attempt_at: the time left before total_timeout cannot be judged", next.Sub(at).Round(time.Millisecond))
		return false
	}
	a, ex, err = e.c.nack(ctx, jid, failure{Type: "live.error", Message: "second"})
	if err != nil || a == nil {
		e.errored(orStatus(err, ex), id)
		return false
	}
	if a.State != "discarded" {
		e.fail(id, "the failure of the retry, %.1f s after created_at, answered %q: a further retry (2 s + 1 s) cannot end before total_timeout 4 s, so the job must be discarded now (§9.1)", time.Since(pushed).Seconds(), a.State)
		return false
	}
	e.pass(id, "")
	return false
}

// stalled judges http-stalled.
func (e *env) stalled(ctx context.Context) {
	const id = "http-stalled"
	q := e.queue("tmo-stall")
	jid, err := e.c.pushWith(ctx, q, map[string]any{"heartbeat_timeout": 1},
		map[string]any{"max_attempts": 3, "initial_interval": "PT30S", "jitter": false})
	if err != nil {
		e.errored(err, id)
		return
	}
	if f, err := e.fetchWithin(ctx, q, 2*time.Second); err != nil || f == nil {
		e.errored(orNotFetched(err), id)
		return
	}
	fetched := time.Now()
	var j *job
	for time.Since(fetched) < 8*time.Second {
		select {
		case <-ctx.Done():
			e.errored(e.ctxErr(ctx), id)
			return
		case <-time.After(250 * time.Millisecond):
		}
		if j, err = e.c.info(ctx, jid); err != nil {
			e.errored(err, id)
			return
		}
		if j.State != "active" {
			break
		}
	}
	if j == nil || j.State == "active" {
		e.fail(id, "no heartbeat for 8 s with heartbeat_timeout 1 s, and the job is still active: no stall detected")
		return
	}
	errs := j.errorList()
	// the stall spent attempt 1 of 3: the job is retryable (its state is
	// what the models judge; the delay, PT30S, is not read here)
	e.record(servermodel.Obs{Check: id, Kind: servermodel.StatedDelay, Policy: map[string]any{"max_attempts": 3, "initial_interval": "PT30S", "jitter": false},
		N: 1, State: j.State, Attempt: j.Attempt, WantLo: 30 * time.Second, WantHi: 30 * time.Second})
	if j.State != "retryable" || len(errs) == 0 || errs[len(errs)-1].Type != "stalled" {
		last := ""
		if len(errs) > 0 {
			last = errs[len(errs)-1].Type
		}
		e.fail(id, "after a missed heartbeat the job is %q with last error type %q, want retryable with type \"stalled\"", j.State, last)
		return
	}
	e.pass(id, "")
}

func orNotFetched(err error) error {
	if err != nil {
		return err
	}
	return errNotFetched
}

func orStatus(err error, ex *exchange) error {
	if err != nil {
		return err
	}
	return errFromStatus(ex)
}

var errNotFetched = &serverError{Op: "FETCH", Reason: "the job could not be fetched in time"}
