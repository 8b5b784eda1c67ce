package main

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// loadPolicy is the policy of a load run under one jitter mode.
type loadPolicy struct {
	*policy.Policy
}

// jitterModes maps a --modes name to backoff's jitter mode.
var jitterModes = map[string]backoff.JitterMode{
	"proportional": backoff.Proportional,
	"full":         backoff.Full,
	"equal":        backoff.Equal,
	"decorrelated": backoff.Decorrelated,
}

// withJitterMode returns p with jitter set as mode: "off", or on with the
// named jitter_mode (docs/extensions.md §3.4).
func withJitterMode(p *policy.Policy, mode string) (*loadPolicy, error) {
	s := p.Spec()
	s.Jitter = mode != "off"
	s.JitterMode = jitterModes[mode]
	q, err := policy.New(s)
	if err != nil {
		return nil, err
	}
	return &loadPolicy{Policy: q}, nil
}

// decideLoad is the policy's decision after a failed attempt whose delay
// before it was prev (decorrelated jitter reads it), for the jitter draw r.
func decideLoad(p *loadPolicy, attempt int, prev time.Duration, r float64) (policy.Decision, error) {
	return p.DecideAt(policy.Failure{Attempt: attempt, ErrorType: "upstream.unavailable", PrevDelay: prev}, r)
}
