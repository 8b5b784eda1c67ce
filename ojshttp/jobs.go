package ojshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
)

// push is PUSH: POST /ojs/v1/jobs.
func (s *Server) push(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var raw map[string]json.RawMessage
	if err := readBody(w, r, s.cfg.maxBody, &raw); err != nil {
		return 0, nil, err
	}
	p, aerr := s.decodeJob(raw)
	if aerr != nil {
		return 0, nil, aerr
	}
	jobs, dedup, aerr := s.enqueue([]*pushed{p})
	if aerr != nil {
		return 0, nil, aerr
	}
	if len(dedup) > 0 {
		// ojs-unique-jobs §5.4: 200, not 201, with the existing job.
		return http.StatusOK, map[string]any{"job": jobs[0], "deduplicated": true}, nil
	}
	// The binding §9.1: a 201 names the new job's resource (RK-281).
	if !s.faults().Has(ojsfault.NoLocation) {
		w.Header().Set("Location", jobPath(p.spec.ID))
	}
	return http.StatusCreated, map[string]any{"job": jobs[0]}, nil
}

// jobPath is the resource of job id, where INFO reads it: the Location
// of a 201 PUSH.
func jobPath(id string) string { return "/ojs/v1/jobs/" + url.PathEscape(id) }

// pushBatch is batch PUSH: POST /ojs/v1/jobs/batch, atomic.
func (s *Server) pushBatch(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var body struct {
		Jobs []map[string]json.RawMessage `json:"jobs"`
	}
	if err := readBody(w, r, s.cfg.maxBatchB, &body); err != nil {
		return 0, nil, err
	}
	if len(body.Jobs) == 0 {
		return 0, nil, invalid("jobs", "must be a non-empty array of jobs")
	}
	if len(body.Jobs) > s.cfg.maxBatch {
		return 0, nil, invalid("jobs", "at most %d jobs per batch, got %d", s.cfg.maxBatch, len(body.Jobs))
	}
	ps := make([]*pushed, len(body.Jobs))
	for i, raw := range body.Jobs {
		if raw == nil {
			return 0, nil, invalid("jobs["+strconv.Itoa(i)+"]", "must be a JSON object")
		}
		p, err := s.decodeJob(raw)
		if err != nil {
			err.message = "jobs[" + strconv.Itoa(i) + "]: " + err.message
			if err.details == nil {
				err.details = map[string]any{}
			}
			err.details["index"] = i
			return 0, nil, err
		}
		ps[i] = p
	}
	jobs, dedup, aerr := s.enqueue(ps)
	if aerr != nil {
		return 0, nil, aerr
	}
	resp := map[string]any{"jobs": jobs, "count": len(jobs)}
	if len(dedup) > 0 {
		resp["deduplicated"] = dedup
	}
	if len(dedup) == len(jobs) {
		// Nothing was created: 200 with the existing jobs, as a single
		// deduplicated PUSH answers (RK-165).
		return http.StatusOK, resp, nil
	}
	return http.StatusCreated, resp, nil
}

// enqueue hands decoded jobs to the executor (one Enqueue, or an atomic
// EnqueueReplacing) and returns their views. Ids are assigned here
// (UUIDv7); the extras are stored before the jobs exist, so no fetch can
// see a job without them, and taken back if the executor refuses. Unique
// jobs are resolved first (RK-152): dedup lists the indexes of the jobs an
// "ignore" conflict answered with the existing job instead, and the jobs a
// "replace" conflict cancels are cancelled by the executor in the same
// step that creates the new ones. Nothing changes before every check has
// passed: a refused PUSH has no effect (RK-160).
func (s *Server) enqueue(all []*pushed) (out []map[string]any, dedup []int, aerr *apiError) {
	unique := slices.ContainsFunc(all, func(p *pushed) bool { return p.x.unique != nil })
	if unique {
		s.uniqueMu.Lock()
		defer s.uniqueMu.Unlock()
	}
	// A paused queue refuses jobs (the binding §11.3, RK-282): the
	// executor checks it in the step that creates them (RefusePaused).
	ps := all
	var ignored []*executor.Job
	var cancel []string
	if unique {
		if ignored, cancel, aerr = s.resolveUnique(all); aerr != nil {
			return nil, nil, aerr
		}
		if ignored != nil {
			ps = nil
			for i, p := range all {
				if ignored[i] == nil {
					ps = append(ps, p)
				} else {
					dedup = append(dedup, i)
				}
			}
		}
	}
	release, aerr := s.reserve(ps)
	if aerr != nil {
		return nil, nil, aerr
	}
	created, aerr := s.create(ps, cancel)
	release()
	if aerr != nil {
		return nil, nil, aerr
	}
	out = make([]map[string]any, len(all))
	for i := range all {
		if ignored != nil && ignored[i] != nil {
			out[i] = s.view(*ignored[i], s.store.get(ignored[i].ID))
		} else {
			out[i], created = created[0], created[1:]
		}
	}
	return out, dedup, nil
}

// reserve claims room for ps under WithMaxJobs and WithMaxBytes, or
// refuses them with 429 queue_full. The check and the claim are one step
// (admitMu), so concurrent PUSHes cannot together pass a limit that each
// alone respects; release gives the claim back once the jobs are created
// (the executor and the store then count them) or refused.
func (s *Server) reserve(ps []*pushed) (release func(), aerr *apiError) {
	var need int64
	for _, p := range ps {
		need += p.x.size
	}
	n := len(ps)
	s.admitMu.Lock()
	defer s.admitMu.Unlock()
	if s.exec.Len()+s.inflightJobs+n > s.cfg.maxJobs {
		return nil, &apiError{status: http.StatusTooManyRequests, code: CodeQueueFull, retryable: true,
			message: "the server holds its maximum of " + strconv.Itoa(s.cfg.maxJobs) + " jobs"}
	}
	if aerr := s.roomFor(need + s.inflightBytes); aerr != nil {
		return nil, aerr
	}
	s.inflightJobs += n
	s.inflightBytes += need
	return func() {
		s.admitMu.Lock()
		defer s.admitMu.Unlock()
		s.inflightJobs -= n
		s.inflightBytes -= need
	}, nil
}

// reserveBytes claims n more bytes of job data for field (an ACK result,
// a FAIL's error, a dead letter's override) under WithMaxBytes, in the
// same step as reserve (admitMu), or refuses with 429 queue_full naming
// the field and, in stays, what became of the job ("active"); release
// gives the claim back once the store counts the bytes (or the request
// failed).
func (s *Server) reserveBytes(field string, n int64, stays string) (release func(), aerr *apiError) {
	if n <= 0 {
		return func() {}, nil
	}
	s.admitMu.Lock()
	defer s.admitMu.Unlock()
	if aerr := s.roomFor(n + s.inflightBytes); aerr != nil {
		aerr.message = field + ": " + aerr.message + "; the job stays " + stays
		aerr.details["field"] = field
		return nil, aerr
	}
	s.inflightBytes += n
	return func() {
		s.admitMu.Lock()
		defer s.admitMu.Unlock()
		s.inflightBytes -= n
	}, nil
}

// roomFor refuses with 429 queue_full when need more bytes of job data
// would take the store past WithMaxBytes, after sweeping what retention
// has pruned.
func (s *Server) roomFor(need int64) *apiError {
	if s.store.weight()+need <= s.cfg.maxBytes {
		return nil
	}
	s.store.sweep(s.exec, true) // drop what retention has pruned, then look again
	if s.store.weight()+need <= s.cfg.maxBytes {
		return nil
	}
	return &apiError{status: http.StatusTooManyRequests, code: CodeQueueFull, retryable: true,
		message: "the server holds its maximum of " + strconv.FormatInt(s.cfg.maxBytes, 10) + " bytes of job data",
		details: map[string]any{"max_bytes": s.cfg.maxBytes, "needed_bytes": need}}
}

// create enqueues ps (none: nothing), cancelling the jobs of cancel in the
// same executor step, and returns their views.
func (s *Server) create(ps []*pushed, cancel []string) ([]map[string]any, *apiError) {
	if len(ps) == 0 {
		return nil, nil
	}
	now := s.cfg.clock.Now().UnixMilli()
	olds := make([]*extra, len(ps))
	for i, p := range ps {
		if p.spec.ID == "" {
			p.spec.ID = newUUIDv7(now)
		} else if _, err := s.exec.Get(p.spec.ID); err == nil {
			// The id is taken: the entry of the job that holds it is not
			// touched, even for a moment.
			for k := i - 1; k >= 0; k-- {
				s.store.restore(ps[k].spec.ID, ps[k].x, olds[k])
			}
			e := errorFor(executor.ErrDuplicateID, p.spec.ID)
			if len(ps) > 1 {
				e.message = "jobs[" + strconv.Itoa(i) + "]: " + e.message
				e.details["index"] = i
			}
			return nil, e
		}
		olds[i] = s.store.put(p.spec.ID, p.x)
		p.spec.RefusePaused = !s.faults().Has(ojsfault.PausedAccepts)
		if s.faults().Has(ojsfault.RateLimitIgnored) {
			p.spec.RateLimit = nil
		}
	}
	var jobs []executor.Job
	var err error
	if len(ps) == 1 && len(cancel) == 0 {
		var j executor.Job
		if j, err = s.exec.Enqueue(ps[0].spec); err == nil {
			jobs = []executor.Job{j}
		}
	} else {
		specs := make([]executor.JobSpec, len(ps))
		for i, p := range ps {
			specs[i] = p.spec
		}
		jobs, err = s.exec.EnqueueReplacing(specs, cancel)
		var be *executor.BatchError
		if len(ps) == 1 && errors.As(err, &be) {
			err = be.Err // one job: the error the single Enqueue gives
		}
	}
	if err != nil {
		for i := len(ps) - 1; i >= 0; i-- {
			s.store.restore(ps[i].spec.ID, ps[i].x, olds[i])
		}
		if errors.Is(err, executor.ErrQueuePaused) {
			i := 0
			if be := (*executor.BatchError)(nil); errors.As(err, &be) {
				i = be.Index
			}
			return nil, s.pausedError(ps[i].spec.Queue, i, len(ps) > 1)
		}
		var te *executor.TransitionError
		if errors.As(err, &te) && te.Op == "cancel" {
			e := dupErr(0, 1, "job "+strconv.Quote(te.ID), te.From.String(), "")
			e.message += " (it became active, and an active job cannot be replaced)"
			e.details = map[string]any{"existing_job_id": te.ID, "existing_job_state": te.From.String()}
			return nil, e
		}
		id := ps[0].spec.ID
		if errors.Is(err, executor.ErrDuplicateID) && len(ps) > 1 {
			id = "" // the message names the index
		}
		aerr := errorFor(err, id)
		if aerr.code == CodeDuplicate && id == "" {
			aerr.message = err.Error()
		}
		return nil, aerr
	}
	s.store.maybeSweep(s.exec)
	out := make([]map[string]any, len(jobs))
	for i, j := range jobs {
		out[i] = s.view(j, ps[i].x)
		switch j.State {
		case executor.Available:
			s.emit("job.enqueued", j, j.EnqueuedAt, map[string]any{})
		case executor.Scheduled:
			s.emit("job.scheduled", j, j.CreatedAt, map[string]any{"scheduled_at": stamp(j.ScheduledAt)})
		}
	}
	return out, nil
}

// info is INFO: GET /ojs/v1/jobs/{id}.
func (s *Server) info(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	j, err := s.exec.Get(id)
	if err != nil {
		return 0, nil, errorFor(err, id)
	}
	return http.StatusOK, map[string]any{"job": s.view(j, s.store.get(id))}, nil
}

// cancel is CANCEL: DELETE /ojs/v1/jobs/{id}. A job already in a terminal
// state is a 409 conflict, as the binding asks (the executor's Cancel is
// idempotent and would return it unchanged).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	before, err := s.exec.Get(id)
	if err != nil {
		return 0, nil, errorFor(err, id)
	}
	if before.State.Terminal() {
		return 0, nil, conflict(id, before.State, "cannot cancel a job in terminal state "+before.State.String())
	}
	j, err := s.exec.Cancel(id)
	if err != nil {
		return 0, nil, errorFor(err, id)
	}
	if j.State != executor.Cancelled { // finished meanwhile
		return 0, nil, conflict(id, j.State, "cannot cancel a job in terminal state "+j.State.String())
	}
	v := s.view(j, s.store.get(id))
	v["previous_state"] = before.State.String()
	return http.StatusOK, map[string]any{"job": v}, nil
}

// activate is ACTIVATE: POST /ojs/v1/jobs/{id}/activate.
func (s *Server) activate(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	j, err := s.exec.Activate(id)
	if err != nil {
		return 0, nil, errorFor(err, id)
	}
	v := s.view(j, s.store.get(id))
	v["previous_state"] = executor.Pending.String()
	return http.StatusOK, map[string]any{"job": v}, nil
}
