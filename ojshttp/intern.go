package ojshttp

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/retrykit/retrykit/policy"
)

// Sharing parsed retry policies. A parsed policy is immutable, so the jobs
// whose PUSH sends the same options.retry text can share one: the server
// parses each text once and keeps it in a bounded cache, so a million jobs
// pushed with one policy hold one *policy.Policy, not a million
// (docs/benchmarks.md, "Memory per held job").

// Bounds of the policy cache: at most maxPolicyTexts texts of at most
// maxPolicyText bytes each, so the cache holds at most 16 MiB of text.
// A full cache starts over empty: the policies it held stay with their
// jobs, and the texts sent from then on are shared again.
const (
	maxPolicyTexts = 4096
	maxPolicyText  = 4 << 10
)

// unsharedPolicyCost is what a policy parsed for one job alone costs
// beyond its text (the compiled backoff and matcher), counted against
// WithMaxBytes with the text itself.
const unsharedPolicyCost = 512

// policyCache maps retry policy texts to their parsed policies. Safe for
// concurrent use.
type policyCache struct {
	mu sync.Mutex
	m  map[string]*policy.Policy
}

// parse returns the policy of the retry text v at field (parseRetry's
// grammar) and the bytes it costs this job, counted against WithMaxBytes:
// 0 when the job shares a policy already held (the default, or a text the
// cache holds); its text plus unsharedPolicyCost when the job brings a
// new one, which the cache then keeps for the jobs that send it next (up
// to maxPolicyText bytes of text).
func (c *policyCache) parse(field string, v json.RawMessage) (*policy.Policy, int64, *apiError) {
	text := bytes.TrimSpace(v)
	if len(text) > maxPolicyText {
		p, err := parseRetry(field, v)
		if err != nil {
			return nil, 0, err
		}
		return p, int64(len(text)) + unsharedPolicyCost, nil
	}
	c.mu.Lock()
	p, ok := c.m[string(text)]
	c.mu.Unlock()
	if ok {
		return p, 0, nil
	}
	p, err := parseRetry(field, v)
	if err != nil {
		return nil, 0, err
	}
	if p.Equal(policy.Default()) {
		return policy.Default(), 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.m[string(text)]; ok { // parsed meanwhile by another PUSH
		return q, 0, nil
	}
	if c.m == nil || len(c.m) >= maxPolicyTexts {
		c.m = make(map[string]*policy.Policy)
	}
	c.m[string(text)] = p
	return p, int64(len(text)) + unsharedPolicyCost, nil
}
