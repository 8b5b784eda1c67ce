package jetstreamretry

import (
	"sync"

	"github.com/retrykit/retrykit/policy"
)

// The policy cache is bounded twice (docs/decisions.md RK-150): at most
// cacheLimit entries, and only headers of at most cacheKeyLimit bytes are
// kept (a longer one is parsed on every use): at most 1 MiB of header text.
const (
	cacheLimit    = 256
	cacheKeyLimit = 4 << 10
)

// policyCache maps the JSON text of a per-message policy to the parsed
// policy. The zero value is an empty cache, safe for concurrent use; a nil
// cache parses every time.
type policyCache struct {
	mu sync.RWMutex
	m  map[string]*policy.Policy
}

// get returns the policy for raw, parsing it on a miss.
func (c *policyCache) get(raw string) (*policy.Policy, error) {
	if c == nil {
		return policy.Parse([]byte(raw))
	}
	c.mu.RLock()
	p, ok := c.m[raw]
	c.mu.RUnlock()
	if ok {
		return p, nil
	}
	p, err := policy.Parse([]byte(raw))
	if err != nil {
		return nil, err
	}
	if len(raw) <= cacheKeyLimit {
		c.mu.Lock()
		if c.m == nil {
			c.m = make(map[string]*policy.Policy)
		}
		if len(c.m) < cacheLimit {
			c.m[raw] = p
		}
		c.mu.Unlock()
	}
	return p, nil
}
