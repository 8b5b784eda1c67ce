package ojshttp

import (
	"errors"
	"net/http"

	"github.com/retrykit/retrykit/executor"
)

// ResetPath is the test-only reset endpoint (see [WithReset]).
const ResetPath = "/x-retrykit/v1/reset"

// WithReset mounts POST [ResetPath], which empties the server between the
// tests of a suite run against one process (the official suite's and
// `retrykit conformance --server`'s --reset-url): every job is cancelled
// and deleted, every queue resumed, the event log and the worker registry
// emptied. The clock is
// not moved. It is meant for test servers only, with no other traffic.
func WithReset() Option {
	return func(cfg *config) { cfg.reset = true }
}

// resetAll is POST /x-retrykit/v1/reset.
func (s *Server) resetAll(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	if err := readOptionalBody(w, r, s.cfg.maxBody); err != nil {
		return 0, nil, err
	}
	removed := 0
	for _, j := range s.exec.List(executor.Filter{}) {
		if !j.State.Terminal() {
			if _, err := s.exec.Cancel(j.ID); err != nil && !errors.Is(err, executor.ErrNotFound) {
				return 0, nil, errorFor(err, j.ID)
			}
		}
		if err := s.exec.Delete(j.ID); err == nil {
			s.store.drop(j.ID)
			removed++
		} else if !errors.Is(err, executor.ErrNotFound) {
			return 0, nil, errorFor(err, j.ID)
		}
	}
	for _, q := range s.exec.Queues() {
		if q.Paused {
			s.exec.ResumeQueue(q.Name)
			s.pauses.Delete(q.Name)
		}
	}
	// Only the entries of the jobs removed go: a PUSH racing the reset
	// keeps the meta and tags of the job it creates (RK-160).
	s.workers.clear()
	if ev := s.cfg.events; ev != nil {
		ev.clear()
	}
	return http.StatusOK, map[string]any{"reset": true, "jobs_removed": removed}, nil
}
