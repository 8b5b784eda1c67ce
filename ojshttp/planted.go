package ojshttp

import (
	"encoding/json"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/policy"
)

// The seams of the planted faults of internal/ojsfault that change one
// answer each; a server without planted faults passes through them
// unchanged.

// plantNoMerge returns the policy a server with planted fault
// NoDefaultsMerge stores for the client's retry object raw: an absent
// max_attempts is 0, an absent max_interval no cap, an absent jitter off.
func (s *Server) plantNoMerge(raw json.RawMessage, p *policy.Policy) *policy.Policy {
	if !s.faults().Has(ojsfault.NoDefaultsMerge) {
		return p
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return p
	}
	sp := p.Spec()
	if _, ok := m["max_attempts"]; !ok {
		sp.MaxAttempts = 0
	}
	_, iso := m["max_interval"]
	_, ms := m["max_interval_ms"]
	if !iso && !ms {
		sp.MaxInterval = time.Duration(1<<63 - 1)
	}
	if _, ok := m["jitter"]; !ok {
		sp.Jitter = false
	}
	q, err := policy.New(sp)
	if err != nil {
		return p
	}
	return q
}

// plantFetchAttempt shows a FETCH answer's attempt one too high (planted
// fault FetchAttemptHigh).
func (s *Server) plantFetchAttempt(v map[string]any) {
	if n, ok := v["attempt"].(int); ok && s.faults().Has(ojsfault.FetchAttemptHigh) {
		v["attempt"] = n + 1
	}
}

// plantedMatching reports whether a planted fault changes the matching of
// non_retryable_errors beyond RegexMatch.
func (s *Server) plantedMatching() bool {
	return s.faults()&(ojsfault.MessageMatch|ojsfault.GlobMatch|ojsfault.PrefixNoBoundary|ojsfault.MessageNotType) != 0
}

// plantedMatch reports whether the planted faults MessageMatch or
// MessageNotType (the OJS rules against msg), PrefixNoBoundary ("p.*" as
// the bare prefix p of typ) or GlobMatch (shell globs against typ) make a
// failure non-retryable.
func (s *Server) plantedMatch(patterns []string, typ, msg string) bool {
	f := s.faults()
	if f&(ojsfault.MessageMatch|ojsfault.MessageNotType) != 0 && msg != "" {
		if m, err := errmatch.Compile(patterns); err == nil && m.Match(msg) {
			return true
		}
	}
	if f.Has(ojsfault.PrefixNoBoundary) {
		for _, p := range patterns {
			if pre, ok := strings.CutSuffix(p, ".*"); ok && strings.HasPrefix(typ, pre) {
				return true
			}
		}
	}
	if f.Has(ojsfault.GlobMatch) {
		for _, p := range patterns {
			if ok, err := path.Match(p, typ); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// plantDeadLetterPage is the queue filter and page size of a dead-letter
// list under planted fault DeadLetterPages: no filter, 2 jobs a page.
func (s *Server) plantDeadLetterPage(queue string, limit int) (string, int) {
	if !s.faults().Has(ojsfault.DeadLetterPages) {
		return queue, limit
	}
	return "", min(limit, 2)
}

// writeError writes e through the planted faults that break error
// answers: NoVersionOnErrors, TextErrors (headers) and BadErrorObject
// (the envelope).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	f := s.faults()
	if f&(ojsfault.NoVersionOnErrors|ojsfault.TextErrors|ojsfault.BadErrorObject) == 0 {
		writeError(w, r, e)
		return
	}
	e.planted = f.Has(ojsfault.BadErrorObject)
	writeError(plantedWriter{w, f}, r, e)
}

// plantedWriter changes an error answer's headers as it is written.
type plantedWriter struct {
	http.ResponseWriter
	f ojsfault.Set
}

func (p plantedWriter) WriteHeader(code int) {
	if p.f.Has(ojsfault.NoVersionOnErrors) {
		p.Header().Del("OJS-Version")
	}
	if p.f.Has(ojsfault.TextErrors) {
		p.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	p.ResponseWriter.WriteHeader(code)
}

// plantHeldBack charges, under planted fault RateLimitSpendsAttempt, one
// attempt to each rate-limited job of queues that a FETCH left available.
func (s *Server) plantHeldBack(queues []string) {
	if !s.faults().Has(ojsfault.RateLimitSpendsAttempt) {
		return
	}
	for _, q := range queues {
		for _, j := range s.exec.List(executor.Filter{Queue: q, States: []executor.State{executor.Available}}) {
			if j.RateLimit != nil {
				n, _ := s.skips.LoadOrStore(j.ID, 0)
				s.skips.Store(j.ID, n.(int)+1)
			}
		}
	}
}

// plantedSkips is the attempts planted fault RateLimitSpendsAttempt
// charged to job id (0 normally).
func (s *Server) plantedSkips(id string) int {
	if n, ok := s.skips.Load(id); ok {
		return n.(int)
	}
	return 0
}

// plantAnnounced returns the retry delay d of job j as a server with
// planted fault EarlyRetry announces it: twice d when d is a delay of
// the job's (halved) policy for the attempt that failed, d itself for a
// delay a retry extension asked for (error rule, retry_after, snooze).
func (s *Server) plantAnnounced(j executor.Job, d time.Duration) time.Duration {
	if !s.faults().Has(ojsfault.EarlyRetry) || j.Policy == nil || len(j.Errors) == 0 {
		return d
	}
	lo, hi := j.Policy.Backoff().Bounds(j.Errors[len(j.Errors)-1].Attempt)
	if d < lo-time.Millisecond || d > hi+time.Millisecond {
		return d
	}
	return 2 * d
}

// plantLate reports whether a server with planted fault LateRetry holds
// the retry j back at now: it becomes fetchable only at twice its delay
// after the failure, though next_attempt_at announces the delay itself.
func (s *Server) plantLate(j executor.Job, now time.Time) bool {
	if !s.faults().Has(ojsfault.LateRetry) || len(j.Errors) == 0 {
		return false
	}
	last := j.Errors[len(j.Errors)-1]
	if last.Attempt != j.Attempt && last.Attempt != j.Attempt-1 || j.EnqueuedAt.Before(last.Time) {
		return false // not a retry after a failure
	}
	return now.Before(last.Time.Add(2 * j.EnqueuedAt.Sub(last.Time)))
}
