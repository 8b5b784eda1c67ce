package main

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/policy"
)

// withJitterMode returns p with jitter set as mode: "off", or on with the
// named jitter mode.
func withJitterMode(p *policy.Policy, mode string) (*policy.Policy, error) {
	s := p.Spec()
	switch mode {
	case "off":
		s.Jitter = false
	case "proportional":
		s.Jitter = true
	default:
		return nil, fmt.Errorf("jitter mode %s is not available yet", mode)
	}
	return policy.New(s)
}

// decideLoad is the policy's decision after a failed attempt whose delay
// before it was prev, for the jitter draw r.
func decideLoad(p *policy.Policy, attempt int, prev time.Duration, r float64) (policy.Decision, error) {
	return p.DecideAt(policy.Failure{Attempt: attempt, ErrorType: "upstream.unavailable"}, r)
}
