package main

import (
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
)

// loadPolicy is the policy of a load run under one jitter mode: the
// policy decides retry or exhaustion, and the mode's backoff gives the
// delay (docs/extensions.md §3.4).
type loadPolicy struct {
	*policy.Policy
	delays *backoff.Backoff
}

// jitterModes maps a --modes name to backoff's jitter mode.
var jitterModes = map[string]backoff.JitterMode{
	"proportional": backoff.Proportional,
	"full":         backoff.Full,
	"equal":        backoff.Equal,
	"decorrelated": backoff.Decorrelated,
}

// withJitterMode returns p with jitter set as mode: "off", or on with the
// named jitter mode.
func withJitterMode(p *policy.Policy, mode string) (*loadPolicy, error) {
	s := p.Spec()
	s.Jitter = mode != "off"
	q, err := policy.New(s)
	if err != nil {
		return nil, err
	}
	b, err := backoff.New(backoff.Config{Strategy: s.Strategy, Initial: s.InitialInterval, Coefficient: s.BackoffCoefficient,
		Max: s.MaxInterval, Jitter: s.Jitter, JitterMode: jitterModes[mode]})
	if err != nil {
		return nil, err
	}
	return &loadPolicy{Policy: q, delays: b}, nil
}

// decideLoad is the decision after a failed attempt whose delay before it
// was prev, for the jitter draw r: the policy's action, with the delay of
// the run's jitter mode (Backoff.DelayAfterAt).
func decideLoad(p *loadPolicy, attempt int, prev time.Duration, r float64) (policy.Decision, error) {
	d, err := p.DecideAt(policy.Failure{Attempt: attempt, ErrorType: "upstream.unavailable"}, r)
	if err != nil || d.Action != policy.Retry {
		return d, err
	}
	d.Delay = p.delays.DelayAfterAt(attempt, prev, r)
	return d, nil
}
