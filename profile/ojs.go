package profile

import (
	"time"

	"github.com/retrykit/retrykit/policy"
)

// ojsModel is the OJS default retry policy (policy.Default): exponential
// from 1s with coefficient 2, capped at 5m, jitter multiplier 0.5+r, three
// attempts, then discard.
func ojsModel() *model {
	b := policy.Default().Backoff()
	return &model{
		name:         "ojs",
		release:      "1.0",
		system:       "Open Job Spec default retry policy",
		version:      "OJS retry spec 1.0 (ojs-retry.md §8 defaults)",
		source:       "https://github.com/openjobspec/spec/blob/main/spec/ojs-retry.md (defaults and backoff formula); retrykit's policy.Default",
		summary:      "min(1s*2^(attempt-1), 5m) * (0.5 + r), capped at 5m; 3 attempts, then discard",
		formula:      "base = min(1s * 2^(attempt-1), 5m); delay = min(trunc(base * (0.5 + r)), 5m)",
		draw:         "r is the jitter draw itself: multiplier 0.5 + r in [0.5, 1.5)",
		exhaustion:   "max_attempts = 3 total attempts; the delay after attempt 3 is never used",
		terminal:     "discarded (on_exhaustion \"discard\")",
		maxAttempts:  3,
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return b.DelayAt(n, d.next())
		},
	}
}
