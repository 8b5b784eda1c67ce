package ojshttp

import (
	"encoding/json"
	"errors"
	"net/http"
	"runtime/debug"
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

// queueInfo returns the executor's record of name, or an empty active
// queue: a queue that holds no job and is not paused has no record.
func (s *Server) queueInfo(name string) executor.QueueInfo {
	q, ok := s.exec.Queue(name)
	if !ok {
		q = executor.QueueInfo{Name: name}
	}
	return q
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
	// The binding §11.2: the queue's name, status and counts (RK-280).
	v := queueView(s.queueInfo(name))
	return http.StatusOK, map[string]any{"queue": name, "status": v["status"], "stats": v["stats"],
		"computed_at": stamp(s.cfg.clock.Now())}, nil
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
	s.pauses.LoadOrStore(name, s.cfg.clock.Now())
	// The binding §11.3 (RK-280).
	return http.StatusOK, map[string]any{"queue": name, "status": "paused", "paused_at": stamp(s.pausedSince(name))}, nil
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if err := s.exec.ResumeQueue(name); err != nil {
		return 0, nil, invalid("name", "%v", err)
	}
	s.pauses.Delete(name)
	// The binding §11.4 (RK-280).
	return http.StatusOK, map[string]any{"queue": name, "status": "active", "resumed_at": stamp(s.cfg.clock.Now())}, nil
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

// pausedSince is when name was paused through the server (the first of
// repeated pauses), or now for a queue paused otherwise.
func (s *Server) pausedSince(name string) time.Time {
	if t, ok := s.pauses.Load(name); ok {
		return t.(time.Time)
	}
	return s.cfg.clock.Now()
}

// pausedError is the binding's 422 queue_paused for a PUSH (job i of a
// batch when batch) to the paused queue name: nothing was stored (RK-282).
func (s *Server) pausedError(name string, i int, batch bool) *apiError {
	if name == "" {
		name = executor.DefaultQueue
	}
	e := &apiError{status: http.StatusUnprocessableEntity, code: CodeQueuePaused, retryable: true,
		message: "queue " + strconv.Quote(name) + " is paused: no job can be enqueued to it or fetched from it until it is resumed",
		details: map[string]any{"queue": name, "paused_at": stamp(s.pausedSince(name))}}
	if batch {
		e.message = "jobs[" + strconv.Itoa(i) + "]: " + e.message
		e.details["index"] = i
	}
	return e
}
