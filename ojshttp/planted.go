package ojshttp

import (
	"encoding/json"
	"path"
	"time"

	"github.com/retrykit/retrykit/errmatch"
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
	return s.faults()&(ojsfault.MessageMatch|ojsfault.GlobMatch) != 0
}

// plantedMatch reports whether the planted faults MessageMatch (the OJS
// rules against msg) or GlobMatch (shell globs against typ) make a
// failure non-retryable.
func (s *Server) plantedMatch(patterns []string, typ, msg string) bool {
	f := s.faults()
	if f.Has(ojsfault.MessageMatch) && msg != "" {
		if m, err := errmatch.Compile(patterns); err == nil && m.Match(msg) {
			return true
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
