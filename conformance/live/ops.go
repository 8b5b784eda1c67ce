// The binding's operations the checks use, and the parts of their answers
// they read.

package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// job is the part of a job object (binding §9, §10) the checks read.
type job struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Args        json.RawMessage `json:"args"`
	State       string          `json:"state"`
	Queue       string          `json:"queue"`
	Attempt     *int            `json:"attempt"`
	MaxAttempts *int            `json:"max_attempts"`
	CreatedAt   string          `json:"created_at"`
	EnqueuedAt  string          `json:"enqueued_at"`
	StartedAt   string          `json:"started_at"`
	Errors      []jobError      `json:"errors"`
	History     []jobError      `json:"error_history"`
	Error       json.RawMessage `json:"error"`
}

// errorList returns the job's error history, under either name (RK-116).
func (j *job) errorList() []jobError {
	if len(j.Errors) > 0 {
		return j.Errors
	}
	return j.History
}

type jobError struct {
	Attempt   *int   `json:"attempt"`
	Type      string `json:"type"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Timestamp string `json:"timestamp"`
}

// nackAnswer is the FAIL answer (binding §10.3).
type nackAnswer struct {
	JobID         string `json:"job_id"`
	State         string `json:"state"`
	Attempt       *int   `json:"attempt"`
	MaxAttempts   *int   `json:"max_attempts"`
	NextAttemptAt string `json:"next_attempt_at"`
	DiscardedAt   string `json:"discarded_at"`
	Job           *job   `json:"job"`
}

// push enqueues one job and returns its id.
func (c *client) push(ctx context.Context, queue, typ string, retry map[string]any) (string, error) {
	opts := map[string]any{"queue": queue}
	if retry != nil {
		opts["retry"] = retry
	}
	ex, err := c.do(ctx, "PUSH", http.MethodPost, "/jobs", map[string]any{"type": typ, "args": []any{queue}, "options": opts})
	if err != nil {
		return "", err
	}
	if ex.status != http.StatusCreated && ex.status != http.StatusOK {
		return "", unexpected("PUSH", ex)
	}
	var a struct {
		Job *job `json:"job"`
	}
	if err := decode("PUSH", ex, &a); err != nil {
		return "", err
	}
	if a.Job == nil || a.Job.ID == "" {
		return "", &serverError{Op: "PUSH", Status: ex.status, Reason: "answer has no job.id: " + snippet(ex.body)}
	}
	c.track(a.Job.ID)
	for _, ts := range []string{a.Job.EnqueuedAt, a.Job.CreatedAt} {
		if t, err := parseTime("job.enqueued_at", ts); err == nil && !t.IsZero() {
			c.observe(ex, t)
			break
		}
	}
	return a.Job.ID, nil
}

// pushStatus enqueues a job and returns only the status and error code, for
// the checks of readings a server may reject.
func (c *client) pushStatus(ctx context.Context, queue, typ string, retry map[string]any) (id string, status int, err error) {
	ex, err := c.do(ctx, "PUSH", http.MethodPost, "/jobs", map[string]any{"type": typ, "args": []any{}, "options": map[string]any{"queue": queue, "retry": retry}})
	if err != nil {
		return "", 0, err
	}
	if ex.status >= 400 && ex.status < 500 {
		return "", ex.status, nil
	}
	if ex.status != http.StatusCreated && ex.status != http.StatusOK {
		return "", ex.status, unexpected("PUSH", ex)
	}
	var a struct {
		Job *job `json:"job"`
	}
	if err := decode("PUSH", ex, &a); err != nil {
		return "", ex.status, err
	}
	if a.Job == nil || a.Job.ID == "" {
		return "", ex.status, &serverError{Op: "PUSH", Status: ex.status, Reason: "answer has no job.id"}
	}
	c.track(a.Job.ID)
	return a.Job.ID, ex.status, nil
}

// fetched is one FETCH that returned a job, with the server's time of it.
type fetched struct {
	job job
	ex  *exchange
	at  time.Time // the job's started_at, zero when absent
}

// fetch claims at most one job of queue; nil when none is available.
func (c *client) fetch(ctx context.Context, queue string, visibility time.Duration) (*fetched, error) {
	body := map[string]any{"queues": []string{queue}, "count": 1, "worker_id": "retrykit-live"}
	if visibility > 0 {
		body["visibility_timeout_ms"] = visibility.Milliseconds()
	}
	ex, err := c.do(ctx, "FETCH", http.MethodPost, "/workers/fetch", body)
	if err != nil {
		return nil, err
	}
	if ex.status != http.StatusOK {
		return nil, unexpected("FETCH", ex)
	}
	var a struct {
		Jobs []job `json:"jobs"`
	}
	if err := decode("FETCH", ex, &a); err != nil {
		return nil, err
	}
	switch {
	case len(a.Jobs) == 0:
		return nil, nil
	case len(a.Jobs) > 1:
		return nil, &serverError{Op: "FETCH", Status: ex.status, Reason: fmt.Sprintf("count 1 asked, %d jobs returned", len(a.Jobs))}
	}
	f := &fetched{job: a.Jobs[0], ex: ex}
	if f.at, err = parseTime("jobs[0].started_at", f.job.StartedAt); err != nil {
		return nil, &serverError{Op: "FETCH", Status: ex.status, Reason: err.Error()}
	}
	c.observe(ex, f.at)
	return f, nil
}

// failure is the error a check reports with FAIL.
type failure struct {
	Type    string // "" leaves error.type out
	Code    string // "" leaves error.code out
	Message string
}

// nack reports a failure. status is the HTTP status; the answer is decoded
// only for 200.
func (c *client) nack(ctx context.Context, id string, f failure) (*nackAnswer, *exchange, error) {
	return c.nackWith(ctx, id, f, nil)
}

// nackWith is nack with extra members of the FAIL body beside job_id and
// error (the retry extensions' retry_after and snooze).
func (c *client) nackWith(ctx context.Context, id string, f failure, extra map[string]any) (*nackAnswer, *exchange, error) {
	e := map[string]any{"message": f.Message}
	if f.Type != "" {
		e["type"] = f.Type
	}
	if f.Code != "" {
		e["code"] = f.Code
	}
	body := map[string]any{"job_id": id, "error": e}
	for k, v := range extra {
		body[k] = v
	}
	ex, err := c.do(ctx, "FAIL", http.MethodPost, "/workers/nack", body)
	if err != nil {
		return nil, nil, err
	}
	if ex.status != http.StatusOK {
		return nil, ex, nil
	}
	var a nackAnswer
	if err := decode("FAIL", ex, &a); err != nil {
		return nil, ex, err
	}
	return &a, ex, nil
}

// ack completes a job.
func (c *client) ack(ctx context.Context, id string) error {
	ex, err := c.do(ctx, "ACK", http.MethodPost, "/workers/ack", map[string]any{"job_id": id})
	if err != nil {
		return err
	}
	if ex.status != http.StatusOK {
		return unexpected("ACK", ex)
	}
	return nil
}

// heartbeat extends the reservation of one active job.
func (c *client) heartbeat(ctx context.Context, id string, visibility time.Duration) error {
	ex, err := c.do(ctx, "BEAT", http.MethodPost, "/workers/heartbeat", map[string]any{
		"worker_id": "retrykit-live", "active_jobs": []string{id}, "visibility_timeout_ms": visibility.Milliseconds(),
	})
	if err != nil {
		return err
	}
	if ex.status != http.StatusOK {
		return unexpected("BEAT", ex)
	}
	var a struct {
		Extended []string `json:"jobs_extended"`
	}
	if err := decode("BEAT", ex, &a); err != nil {
		return err
	}
	if a.Extended != nil && !slices.Contains(a.Extended, id) {
		return &serverError{Op: "BEAT", Status: ex.status, Reason: "the active job is not in jobs_extended: " + snippet(ex.body)}
	}
	return nil
}

// info reads a job.
func (c *client) info(ctx context.Context, id string) (*job, error) {
	ex, err := c.do(ctx, "INFO", http.MethodGet, "/jobs/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	if ex.status != http.StatusOK {
		return nil, unexpected("INFO", ex)
	}
	var a struct {
		Job *job `json:"job"`
	}
	if err := decode("INFO", ex, &a); err != nil {
		return nil, err
	}
	if a.Job == nil {
		return nil, &serverError{Op: "INFO", Status: ex.status, Reason: "answer has no job"}
	}
	return a.Job, nil
}

// Bounds of a dead-letter lookup.
const (
	dlPage     = 100  // jobs asked for per page
	maxDLPages = 1000 // pages read at most (100 000 dead letters)
)

// dlLookup is what one dead-letter lookup saw.
type dlLookup struct {
	found   map[string]bool // the wanted ids that are listed
	foreign int             // jobs of other queues listed under ?queue=
	pages   int
	listed  int
}

// deadLetterFind reads GET /dead-letter?queue=…, page by page (limit and
// offset, binding §12.1), until every id of want is found or the list
// ends (an empty page, has_more false, a page that repeats the previous
// one, or maxDLPages). A server that ignores the queue filter or sorts
// by id still has every dead letter found; the jobs of other queues are
// counted.
//
// Offsets shift while the list is read: a dead letter deleted or retried
// meanwhile (by another check) moves every later one a place forward, and
// the one at the page boundary is then never on a page. So a read that
// misses a wanted id is done again from offset 0, up to dlPasses reads in
// all; an id listed all along is on some read that saw no shift.
func (c *client) deadLetterFind(ctx context.Context, queue string, want ...string) (*dlLookup, error) {
	r := &dlLookup{found: map[string]bool{}}
	for pass := 0; pass < dlPasses; pass++ {
		if err := c.deadLetterRead(ctx, queue, want, r); err != nil {
			return nil, err
		}
		if len(r.found) == len(want) {
			break
		}
	}
	return r, nil
}

// dlPasses is how many times deadLetterFind reads the list at most.
const dlPasses = 3

// deadLetterRead is one read of the list from offset 0, adding to r.
func (c *client) deadLetterRead(ctx context.Context, queue string, want []string, r *dlLookup) error {
	first := ""
	for offset, pages := 0, 0; pages < maxDLPages; pages++ {
		q := url.Values{"queue": {queue}, "limit": {fmt.Sprint(dlPage)}, "offset": {fmt.Sprint(offset)}}
		ex, err := c.do(ctx, "DEAD-LETTER LIST", http.MethodGet, "/dead-letter?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		r.pages++
		if ex.status != http.StatusOK {
			return unexpected("DEAD-LETTER LIST", ex)
		}
		var a struct {
			Jobs       []job `json:"jobs"`
			Pagination *struct {
				HasMore *bool `json:"has_more"`
			} `json:"pagination"`
		}
		if err := decode("DEAD-LETTER LIST", ex, &a); err != nil {
			return err
		}
		if len(a.Jobs) == 0 || a.Jobs[0].ID == first && offset > 0 {
			return nil
		}
		first = a.Jobs[0].ID
		for _, j := range a.Jobs {
			r.listed++
			if j.Queue != "" && j.Queue != queue {
				r.foreign++
			}
			if slices.Contains(want, j.ID) {
				r.found[j.ID] = true
			}
		}
		if len(r.found) == len(want) || a.Pagination != nil && a.Pagination.HasMore != nil && !*a.Pagination.HasMore {
			return nil
		}
		offset += len(a.Jobs)
	}
	return nil
}

// cancel cancels a job (DELETE /jobs/{id}); false when the server refused.
func (c *client) cancel(ctx context.Context, id string) bool {
	ex, err := c.do(ctx, "CANCEL", http.MethodDelete, "/jobs/"+url.PathEscape(id), nil)
	return err == nil && ex.status >= 200 && ex.status < 300
}

// deadLetterDelete deletes a dead letter (DELETE /dead-letter/{id}); false
// when the server refused (not a dead letter, or no such route).
func (c *client) deadLetterDelete(ctx context.Context, id string) bool {
	ex, err := c.do(ctx, "DEAD-LETTER DELETE", http.MethodDelete, "/dead-letter/"+url.PathEscape(id), nil)
	return err == nil && ex.status >= 200 && ex.status < 300
}

// deadLetterRetry re-enqueues a dead-letter job (binding §12.2).
func (c *client) deadLetterRetry(ctx context.Context, id string) error {
	ex, err := c.do(ctx, "DEAD-LETTER RETRY", http.MethodPost, "/dead-letter/"+url.PathEscape(id)+"/retry", nil)
	if err != nil {
		return err
	}
	if ex.status != http.StatusOK {
		return unexpected("DEAD-LETTER RETRY", ex)
	}
	return nil
}

// manifest reads GET /ojs/manifest for the report's title; errors leave
// the name empty.
func (c *client) manifest(ctx context.Context) (name, version string) {
	ex, err := c.do(ctx, "MANIFEST", http.MethodGet, "", nil, c.root+"/ojs/manifest")
	if err != nil || ex.status != http.StatusOK {
		return "", ""
	}
	var m struct {
		Implementation struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"implementation"`
	}
	if json.Unmarshal(ex.body, &m) != nil {
		return "", ""
	}
	return trunc(m.Implementation.Name, 64), trunc(m.Implementation.Version, 32)
}

// errFromStatus is the error a check reports for a FAIL answered with a
// status other than 200.
func errFromStatus(ex *exchange) error {
	if ex == nil {
		return errors.New("live: no answer")
	}
	return unexpected("FAIL", ex)
}
