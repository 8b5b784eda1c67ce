package ojshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// health is GET /ojs/v1/health.
func (s *Server) health(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	return http.StatusOK, map[string]any{
		"status":         "ok",
		"version":        ojsVersion,
		"uptime_seconds": int64(time.Since(s.start).Seconds()),
		"backend":        map[string]any{"type": "memory", "status": "connected"},
		"jobs":           s.exec.Len(),
	}, nil
}

// maxListedQueues bounds GET /ojs/v1/queues.
const maxListedQueues = 1000

func queueView(q executor.QueueInfo) map[string]any {
	status := "active"
	if q.Paused {
		status = "paused"
	}
	stats := map[string]int{"dead_letter": q.DeadLetter}
	for st := executor.Scheduled; st <= executor.Discarded; st++ {
		stats[st.String()] = q.Counts[st]
	}
	return map[string]any{"name": q.Name, "status": status, "stats": stats}
}

// queues is GET /ojs/v1/queues (the first 1000 by name).
func (s *Server) queues(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	all := s.exec.Queues()
	out := make([]map[string]any, 0, min(len(all), maxListedQueues))
	for _, q := range all[:min(len(all), maxListedQueues)] {
		out = append(out, queueView(q))
	}
	return http.StatusOK, map[string]any{"queues": out,
		"pagination": map[string]any{"total": len(all), "limit": maxListedQueues, "offset": 0, "has_more": len(all) > maxListedQueues}}, nil
}

func queueName(r *http.Request) (string, *apiError) {
	name := r.PathValue("name")
	if len(name) > executor.MaxQueueLen || !queuePattern.MatchString(name) {
		return "", invalid("name", "a queue name must match %s, got %q", queuePattern, clip(name))
	}
	return name, nil
}

// queueStats is GET /ojs/v1/queues/{name}/stats, for any valid name.
func (s *Server) queueStats(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	// A queue that holds no job and is not paused has no record: its
	// statistics are zeros.
	q, ok := s.exec.Queue(name)
	if !ok {
		q = executor.QueueInfo{Name: name}
	}
	v := queueView(q)
	v["queue"] = name
	return http.StatusOK, v, nil
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if err := s.exec.PauseQueue(name); err != nil {
		if errors.Is(err, executor.ErrTooManyPausedQueues) {
			return 0, nil, &apiError{status: http.StatusTooManyRequests, code: CodeQueueFull, retryable: true, message: err.Error()}
		}
		return 0, nil, invalid("name", "%v", err)
	}
	return http.StatusOK, map[string]any{"queue": name, "status": "paused", "paused_at": stamp(s.cfg.clock.Now())}, nil
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if err := s.exec.ResumeQueue(name); err != nil {
		return 0, nil, invalid("name", "%v", err)
	}
	return http.StatusOK, map[string]any{"queue": name, "status": "active", "resumed_at": stamp(s.cfg.clock.Now())}, nil
}

// Dead letter list paging (ojs-http-binding §12.1).
const (
	defaultDLLimit = 50
	maxDLLimit     = 100
)

// deadLetters is GET /ojs/v1/dead-letter?queue=&limit=&offset=, the most
// recently dead-lettered first.
func (s *Server) deadLetters(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	q := r.URL.Query()
	limit, offset := defaultDLLimit, 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxDLLimit {
			return 0, nil, invalid("limit", "must be an integer from 1 to %d, got %q", maxDLLimit, clip(v))
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, nil, invalid("offset", "must be a non-negative integer, got %q", clip(v))
		}
		offset = n
	}
	queue := q.Get("queue")
	queue, limit = s.plantDeadLetterPage(queue, limit)
	if queue != "" && (len(queue) > executor.MaxQueueLen || !queuePattern.MatchString(queue)) {
		return 0, nil, invalid("queue", "must match %s", queuePattern)
	}
	jobs := s.exec.List(executor.Filter{Queue: queue, DeadLetter: true})
	slices.SortStableFunc(jobs, func(a, b executor.Job) int { return b.FinishedAt.Compare(a.FinishedAt) })
	total := len(jobs)
	lo := min(offset, total)
	hi := min(lo+limit, total)
	out := make([]map[string]any, 0, hi-lo)
	var size int64
	for k, j := range jobs[lo:hi] {
		// A page is cut by bytes as well as by count (RK-162): has_more
		// and the next offset continue it.
		x := s.store.get(j.ID)
		n := jobEstimate(j, x)
		if k > 0 && size+n > maxAnswer {
			hi = lo + k
			break
		}
		size += n
		out = append(out, s.view(j, x))
	}
	return http.StatusOK, map[string]any{"jobs": out,
		"pagination": map[string]any{"total": total, "limit": limit, "offset": offset, "has_more": hi < total}}, nil
}

// deadLetterJob returns the dead-lettered job id, or the binding's error.
func (s *Server) deadLetterJob(id string) (executor.Job, *apiError) {
	j, err := s.exec.Get(id)
	if err != nil {
		return j, errorFor(err, id)
	}
	if !j.DeadLetter {
		return j, &apiError{status: http.StatusNotFound, code: CodeNotFound,
			message: "job " + strconv.Quote(clip(id)) + " is not in the dead letter set (state " + j.State.String() + ")",
			details: map[string]any{"resource_type": "dead_letter_job", "resource_id": id, "current_state": j.State.String()}}
	}
	return j, nil
}

// deadLetterRetry is POST /ojs/v1/dead-letter/{id}/retry: the job becomes
// available with attempt 0 and a fresh retry budget, keeping its error
// history (ojs-dead-letter §6.1). The body, if any, must be a JSON object;
// it is not read further.
func (s *Server) deadLetterRetry(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	if err := readOptionalBody(w, r, s.cfg.maxBody); err != nil {
		return 0, nil, err
	}
	id := r.PathValue("id")
	if _, aerr := s.deadLetterJob(id); aerr != nil {
		return 0, nil, aerr
	}
	j, err := s.exec.Retry(id, nil)
	if err != nil {
		return 0, nil, errorFor(err, id)
	}
	v := s.view(j, s.store.get(id))
	v["re_enqueued_at"] = stamp(j.EnqueuedAt)
	s.emit("job.enqueued", j, j.EnqueuedAt, map[string]any{})
	return http.StatusOK, map[string]any{"job": v}, nil
}

// deadLetterDelete is DELETE /ojs/v1/dead-letter/{id}.
func (s *Server) deadLetterDelete(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	if _, aerr := s.deadLetterJob(id); aerr != nil {
		return 0, nil, aerr
	}
	if err := s.exec.Delete(id); err != nil {
		return 0, nil, errorFor(err, id)
	}
	s.store.drop(id)
	return http.StatusOK, map[string]any{"deleted": true, "job_id": id}, nil
}

// clockHorizon is as far as the manual clock moves: an advance past it is
// refused with 422 validation_error, so that the executor's times (int64
// nanoseconds, which end in April 2262) keep room for delays and never
// saturate silently.
var clockHorizon = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// maxAdvance bounds one clock advance: 100 years.
const maxAdvance = 100 * 365 * 24 * time.Hour

// advanceClock is POST /x-retrykit/v1/clock/advance {"advance_ms": N}.
func (s *Server) advanceClock(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	var req struct {
		AdvanceMS json.RawMessage `json:"advance_ms"`
	}
	if err := readBody(w, r, s.cfg.maxBody, &req); err != nil {
		return 0, nil, err
	}
	if req.AdvanceMS == nil {
		return 0, nil, invalid("advance_ms", "is required: a non-negative integer number of milliseconds")
	}
	ms, err := intField(req.AdvanceMS)
	if err != nil || ms < 0 || ms > int64(maxAdvance/time.Millisecond) {
		return 0, nil, invalid("advance_ms", "must be an integer from 0 to %d, got %s", int64(maxAdvance/time.Millisecond), clip(string(req.AdvanceMS)))
	}
	s.clockMu.Lock()
	defer s.clockMu.Unlock()
	if cur := s.cfg.manual.Now(); cur.Add(time.Duration(ms) * time.Millisecond).After(clockHorizon) {
		return 0, nil, &apiError{status: http.StatusUnprocessableEntity, code: CodeValidation,
			message: "advance_ms: " + strconv.FormatInt(ms, 10) + " ms would move the clock from " + stamp(cur) +
				" past " + stamp(clockHorizon) + ", the manual clock's horizon (job times are int64 nanoseconds)",
			details: map[string]any{"field": "advance_ms", "now": stamp(cur), "horizon": stamp(clockHorizon)}}
	}
	now := s.cfg.manual.Advance(time.Duration(ms) * time.Millisecond)
	s.exec.Tick()
	return http.StatusOK, map[string]any{"now": stamp(now), "advanced_ms": ms}, nil
}

// moduleVersion is the version of the retrykit module in the running
// binary: a release tag, "(devel)" for a build in a clone, with the commit
// when the build recorded one; "unknown" without build information.
var moduleVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	const path = "github.com/retrykit/retrykit"
	v := ""
	if bi.Main.Path == path {
		v = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			v = d.Version
		}
	}
	if v == "" {
		v = "(devel)"
	}
	for _, st := range bi.Settings {
		if st.Key == "vcs.revision" && len(st.Value) >= 12 {
			v += " " + st.Value[:12]
		}
	}
	return v
})
