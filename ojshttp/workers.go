package ojshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/policy"
)

// Limits on worker requests.
const (
	maxFetchQueues   = 100
	maxHeartbeatJobs = 1000
	maxResultSize    = executor.MaxArgsSize
	maxWorkerIDLen   = 255
)

// fetch is FETCH: POST /ojs/v1/workers/fetch.
func (s *Server) fetch(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var req struct {
		Queues     []string        `json:"queues"`
		Count      json.RawMessage `json:"count"`
		WorkerID   string          `json:"worker_id"`
		Visibility json.RawMessage `json:"visibility_timeout_ms"`
	}
	if err := readBody(w, r, s.cfg.maxBody, &req); err != nil {
		return 0, nil, err
	}
	if len(req.Queues) == 0 {
		return 0, nil, invalid("queues", "must be a non-empty array of queue names")
	}
	if len(req.Queues) > maxFetchQueues {
		return 0, nil, invalid("queues", "at most %d queues, got %d", maxFetchQueues, len(req.Queues))
	}
	for i, q := range req.Queues {
		if len(q) > executor.MaxQueueLen || !queuePattern.MatchString(q) {
			return 0, nil, invalid("queues["+strconv.Itoa(i)+"]", "must match %s, got %q", queuePattern, clip(q))
		}
	}
	if len(req.WorkerID) > maxWorkerIDLen {
		return 0, nil, invalid("worker_id", "at most %d bytes, got %d", maxWorkerIDLen, len(req.WorkerID))
	}
	n := int64(1)
	if req.Count != nil {
		var err error
		if n, err = intField(req.Count); err != nil || n < 1 || n > MaxFetchCount {
			return 0, nil, invalid("count", "must be an integer from 1 to %d, got %s", MaxFetchCount, clip(string(req.Count)))
		}
	}
	vis, aerr := visibility(req.Visibility)
	if aerr != nil {
		return 0, nil, aerr
	}
	s.workers.seen(req.WorkerID, s.cfg.clock.Now(), false)
	// Claim only what the answer can carry (RK-162): the first job always,
	// counted twice since it is also the answer's "job".
	var used int64
	now := s.cfg.clock.Now()
	fit := func(j executor.Job) bool {
		if s.plantLate(j, now) {
			return false
		}
		n := jobEstimate(j, s.store.get(j.ID)) // store.mu under the executor's lock; never the reverse
		if used == 0 {
			used = 2 * n
			return true
		}
		if used+n > maxAnswer {
			return false
		}
		used += n
		return true
	}
	jobs := s.exec.FetchWithin(int(n), vis, fit, req.Queues...)
	s.plantHeldBack(req.Queues)
	out := make([]map[string]any, len(jobs))
	for i, j := range jobs {
		started := j.StartedAt
		var x *extra
		s.store.update(j.ID, func(e *extra) { e.started = started; x = e })
		out[i] = s.view(j, x)
		s.plantFetchAttempt(out[i])
		s.emit("job.started", j, started, map[string]any{"worker_id": req.WorkerID, "attempt": j.Attempt})
	}
	resp := map[string]any{"jobs": out}
	if len(out) > 0 {
		resp["job"] = out[0]
	}
	return http.StatusOK, resp, nil
}

// visibility reads an optional visibility_timeout_ms (0 when absent).
func visibility(raw json.RawMessage) (time.Duration, *apiError) {
	if raw == nil {
		return 0, nil
	}
	ms, err := intField(raw)
	if err != nil || ms < 1 || ms > maxVisibilityMS {
		return 0, invalid("visibility_timeout_ms", "must be an integer from 1 to %d, got %s", maxVisibilityMS, clip(string(raw)))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// onActive runs op on the job's latest delivery. HTTP workers name jobs by
// id only, so the delivery is read first; if the job was fetched again in
// between (a stale delivery), it is read again, a few times.
func (s *Server) onActive(id string, op func(d uint64) (executor.Job, error)) (executor.Job, *apiError) {
	if id == "" {
		return executor.Job{}, invalid("job_id", "is required")
	}
	for try := 0; ; try++ {
		cur, err := s.exec.Get(id)
		if err != nil {
			return executor.Job{}, errorFor(err, id)
		}
		if cur.State != executor.Active {
			return executor.Job{}, conflict(id, cur.State, "the job is not active (state "+cur.State.String()+")")
		}
		j, err := op(cur.Delivery)
		if errors.Is(err, executor.ErrStaleDelivery) && try < 3 {
			continue
		}
		if err != nil {
			return executor.Job{}, errorFor(err, id)
		}
		return j, nil
	}
}

// ack is ACK: POST /ojs/v1/workers/ack.
func (s *Server) ack(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var req struct {
		JobID  string          `json:"job_id"`
		Result json.RawMessage `json:"result"`
	}
	if err := readBody(w, r, s.cfg.maxBody, &req); err != nil {
		return 0, nil, err
	}
	if len(req.Result) > maxResultSize {
		return 0, nil, invalid("result", "at most %d bytes, got %d", maxResultSize, len(req.Result))
	}
	if string(req.Result) == "null" {
		req.Result = nil
	}
	// The result is kept with the job: it counts against WithMaxBytes
	// (RK-161), and an ACK the server cannot hold is refused, the job
	// staying active.
	release, aerr := s.reserveBytes("result", int64(len(req.Result)), "active")
	if aerr != nil {
		return 0, nil, aerr
	}
	defer release()
	j, aerr := s.onActive(req.JobID, func(d uint64) (executor.Job, error) { return s.exec.Ack(req.JobID, d) })
	if aerr != nil {
		return 0, nil, aerr
	}
	var x *extra
	s.store.update(j.ID, func(e *extra) { e.result = req.Result; x = e })
	v := s.view(j, x)
	var took time.Duration
	if !x.started.IsZero() {
		took = max(j.FinishedAt.Sub(x.started), 0)
	}
	data := map[string]any{"attempt": j.Attempt, "duration_ms": took.Milliseconds()}
	if n := len(req.Result); n > maxEventResult {
		data["result_bytes"] = n
	} else if n > 0 {
		data["result"] = req.Result
	}
	s.emit("job.completed", j, j.FinishedAt, data)
	return http.StatusOK, map[string]any{
		"acknowledged": true, "id": j.ID, "job_id": j.ID, "state": j.State.String(),
		"completed_at": stamp(j.FinishedAt), "job": v,
	}, nil
}

// nackError is the error object of a FAIL request: the binding's fields
// plus openapi JobError's type (RK-100).
type nackError struct {
	Code      string          `json:"code"`
	Type      string          `json:"type"`
	Message   string          `json:"message"`
	Retryable *bool           `json:"retryable"`
	Details   json.RawMessage `json:"details"`
}

// nack is FAIL: POST /ojs/v1/workers/nack. The failure handed to the
// executor (RK-100, RK-103):
//
//  1. type: error.type when given, else error.code (so a binding-only
//     worker's code can still be listed in non_retryable_errors);
//  2. code: error.code when it is one of the OJS handler codes RETRY,
//     DISCARD, DEAD_LETTER, FAIL;
//  3. otherwise error.retryable false makes the failure non-retryable:
//     the policy's on_exhaustion applies at once (DEAD_LETTER when it is
//     dead_letter, else DISCARD).
//
// The retry extensions (docs/extensions.md §2.2) add two members beside
// error: retry_after, a delay the handler asks for, and snooze, a wait
// that does not spend the attempt (error is then optional); each an ISO
// 8601 duration read by the policy's parser, at most one of them. The job's
// policy bounds both.
func (s *Server) nack(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var req struct {
		JobID   string     `json:"job_id"`
		Error   *nackError `json:"error"`
		Requeue bool       `json:"requeue"`
		// The retry extensions (docs/extensions.md §2.2).
		RetryAfter *string `json:"retry_after"`
		Snooze     *string `json:"snooze"`
	}
	if err := readBody(w, r, s.cfg.maxBody, &req); err != nil {
		return 0, nil, err
	}
	ask, aerr := nackRequest(req.RetryAfter, req.Snooze)
	if aerr != nil {
		return 0, nil, aerr
	}
	if ask.Kind == errmatch.Snooze && s.faults().Has(ojsfault.SnoozeSpendsAttempt) {
		ask.Kind = errmatch.RetryAfter
	}
	if req.Error == nil && ask.Kind == errmatch.Snooze {
		req.Error = &nackError{}
	}
	if req.Requeue {
		// openapi NackRequest.requeue: give the job back without counting
		// the attempt; no error is recorded and the policy is not asked.
		j, aerr := s.onActive(req.JobID, func(d uint64) (executor.Job, error) { return s.exec.Release(req.JobID, d) })
		if aerr != nil {
			return 0, nil, aerr
		}
		v := s.view(j, s.store.get(j.ID))
		s.emit("job.enqueued", j, j.EnqueuedAt, map[string]any{})
		return http.StatusOK, map[string]any{"id": j.ID, "job_id": j.ID, "state": j.State.String(),
			"attempt": v["attempt"], "max_attempts": v["max_attempts"], "job": v}, nil
	}
	if req.Error == nil {
		return 0, nil, invalid("error", "is required: an object with code and message")
	}
	e := req.Error
	if len(e.Code) > executor.MaxFailureTypeLen {
		return 0, nil, invalid("error.code", "at most %d bytes (executor.MaxFailureTypeLen), got %d", executor.MaxFailureTypeLen, len(e.Code))
	}
	f := executor.Failure{Type: e.Type, Message: e.Message, Details: e.Details, Request: ask}
	if string(f.Details) == "null" {
		f.Details = nil
	}
	if f.Type == "" {
		f.Type = e.Code
	}
	ignored := e.Code == "DISCARD" && s.faults().Has(ojsfault.DiscardCodeIgnored) ||
		e.Code == "DEAD_LETTER" && s.faults().Has(ojsfault.DeadLetterCodeIgnored)
	if c, err := errmatch.ParseCode(e.Code); err == nil && e.Code != "" && !ignored {
		f.Code = c
	}
	// The failure joins the job's error history: it counts against
	// WithMaxBytes (RK-161), and a FAIL the server cannot hold is refused,
	// the job staying active.
	cost := failureCost(f)
	release, aerr := s.reserveBytes("error", cost, "active")
	if aerr != nil {
		return 0, nil, aerr
	}
	defer release()
	snoozes := -1
	j, aerr := s.onActive(req.JobID, func(d uint64) (executor.Job, error) {
		if cur, err := s.exec.Get(req.JobID); err == nil {
			snoozes = cur.Snoozes
		}
		ff := f
		if ff.Code == "" && s.nonRetryable(req.JobID, e, ff.Type) {
			ff.Code = errmatch.CodeDiscard
			if cur, err := s.exec.Get(req.JobID); err == nil && cur.Policy.Spec().OnExhaustion == policy.DeadLetter {
				ff.Code = errmatch.CodeDeadLetter
			}
		}
		return s.exec.Fail(req.JobID, d, ff)
	})
	if aerr != nil {
		return 0, nil, aerr
	}
	var x *extra
	snoozed := snoozes >= 0 && j.Snoozes > snoozes
	if !snoozed { // a snooze records no error entry
		s.store.update(j.ID, func(x *extra) { x.addErrorCost(cost, len(j.Errors)) })
	}
	if n := len(j.Errors); e.Code != "" && n > 0 && !snoozed {
		last := j.Errors[n-1]
		s.store.update(j.ID, func(x *extra) {
			x.sent = withSent(x.sent, sentCode{attempt: last.Attempt, at: last.Time, code: e.Code})
		})
	}
	x = s.store.get(j.ID)
	v := s.view(j, x)
	resp := map[string]any{
		"id": j.ID, "job_id": j.ID, "state": j.State.String(),
		"attempt": v["attempt"], "max_attempts": v["max_attempts"], "job": v,
	}
	for _, k := range []string{"next_attempt_at", "next_attempt_at_capped", "retry_delay_ms", "discarded_at", "completed_at", "dead_letter", "snoozes"} {
		if val, ok := v[k]; ok {
			resp[k] = val
		}
	}
	if snoozed {
		resp["snoozed"] = true
	}
	return http.StatusOK, resp, nil
}

// nackRequest reads the retry_after and snooze members of a FAIL.
func nackRequest(retryAfter, snooze *string) (errmatch.Request, *apiError) {
	if retryAfter != nil && snooze != nil {
		return errmatch.Request{}, invalid("snooze", "give retry_after or snooze, not both")
	}
	field, text, kind := "retry_after", retryAfter, errmatch.RetryAfter
	if snooze != nil {
		field, text, kind = "snooze", snooze, errmatch.Snooze
	}
	if text == nil {
		return errmatch.Request{}, nil
	}
	d, err := policy.ParseDuration(*text)
	if err != nil {
		return errmatch.Request{}, invalid(field, "must be an ISO 8601 duration: %v", err)
	}
	return errmatch.Request{Kind: kind, Delay: d}, nil
}

// nonRetryable reports whether a failure without a handler code ends the
// job at once: error.retryable false, or (planted fault RegexMatch) a
// non_retryable_errors pattern matching typ as an anchored regexp.
func (s *Server) nonRetryable(id string, e *nackError, typ string) bool {
	if e.Retryable != nil && !*e.Retryable {
		return true
	}
	if !s.faults().Has(ojsfault.RegexMatch) && !s.plantedMatching() || typ == "" {
		return false
	}
	j, err := s.exec.Get(id)
	if err != nil {
		return false
	}
	pol := j.Policy
	if x := s.store.get(id); x != nil && x.shown != nil {
		pol = x.shown
	}
	if s.plantedMatch(pol.Spec().NonRetryableErrors, typ, e.Message) {
		return true
	}
	for _, p := range pol.Spec().NonRetryableErrors {
		if !s.faults().Has(ojsfault.RegexMatch) {
			break
		}
		if re, err := regexp.Compile("^(?:" + p + ")$"); err == nil && re.MatchString(typ) {
			return true
		}
	}
	return false
}

// heartbeat is BEAT: POST /ojs/v1/workers/heartbeat. Each listed job that
// is active is extended (by visibility_timeout_ms when given, else by its
// own visibility timeout); the others are listed in jobs_not_extended.
// The answer's state is the worker's directive (RK-154): running unless an
// operator told it to quiet or terminate.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var req struct {
		WorkerID     string          `json:"worker_id"`
		ActiveJobs   json.RawMessage `json:"active_jobs"`
		ActiveJobIDs []string        `json:"active_job_ids"`
		JobID        string          `json:"job_id"`
		Visibility   json.RawMessage `json:"visibility_timeout_ms"`
	}
	if err := readBody(w, r, s.cfg.maxBody, &req); err != nil {
		return 0, nil, err
	}
	if len(req.WorkerID) > maxWorkerIDLen {
		return 0, nil, invalid("worker_id", "at most %d bytes, got %d", maxWorkerIDLen, len(req.WorkerID))
	}
	// active_jobs is the binding's array of ids, or the worker protocol's
	// count (§4.2) beside active_job_ids.
	ids := req.ActiveJobIDs
	if a := bytes.TrimSpace(req.ActiveJobs); len(a) > 0 && string(a) != "null" {
		if a[0] == '[' {
			var list []string
			if json.Unmarshal(a, &list) != nil {
				return 0, nil, invalid("active_jobs", "must be an array of job ids or a count")
			}
			ids = append(ids, list...)
		} else if n, err := intField(a); err != nil || n < 0 {
			return 0, nil, invalid("active_jobs", "must be an array of job ids or a non-negative count, got %s", clip(string(a)))
		}
	}
	if req.JobID != "" {
		ids = append(ids, req.JobID)
	}
	if len(ids) > maxHeartbeatJobs {
		return 0, nil, invalid("active_jobs", "at most %d jobs, got %d", maxHeartbeatJobs, len(ids))
	}
	vis, aerr := visibility(req.Visibility)
	if aerr != nil {
		return 0, nil, aerr
	}
	extended, missed := []string{}, []string{}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		j, aerr := s.onActive(id, func(d uint64) (executor.Job, error) { return s.exec.HeartbeatFor(id, d, vis) })
		if aerr != nil {
			missed = append(missed, id)
			continue
		}
		extended = append(extended, id)
		s.emit("job.heartbeat", j, s.cfg.clock.Now(), map[string]any{"worker_id": req.WorkerID,
			"attempt": j.Attempt, "visible_until": stamp(j.ReservedUntil)})
	}
	state := s.workers.seen(req.WorkerID, s.cfg.clock.Now(), true)
	resp := map[string]any{"state": state, "jobs_extended": extended, "server_time": stamp(s.cfg.clock.Now())}
	if len(missed) > 0 {
		resp["jobs_not_extended"] = missed
	}
	return http.StatusOK, resp, nil
}
