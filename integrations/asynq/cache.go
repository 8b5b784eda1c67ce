package asynqretry

import (
	"sync"
	"sync/atomic"

	"github.com/retrykit/retrykit/policy"
)

// The cache is bounded twice (docs/decisions.md RK-150): at most cacheLimit
// entries, and only headers of at most cacheKeyLimit bytes are kept (a
// longer one is parsed on every use), so that the cache never holds more
// than cacheLimit × cacheKeyLimit = 1 MiB of header text, whatever the
// tasks carry. The limits match the executor's own policy cache.
const (
	cacheLimit    = 256
	cacheKeyLimit = 4 << 10
)

// policyCache maps the JSON text of a per-task policy to the parsed policy.
// The zero value is an empty cache, safe for concurrent use.
type policyCache struct {
	m sync.Map // string -> *policy.Policy
	n atomic.Int64
}

// get returns the policy for raw, parsing it on a miss. A nil cache parses
// every time.
func (c *policyCache) get(raw string) (*policy.Policy, error) {
	if c == nil {
		return policy.Parse([]byte(raw))
	}
	if v, ok := c.m.Load(raw); ok {
		return v.(*policy.Policy), nil
	}
	p, err := policy.Parse([]byte(raw))
	if err != nil {
		return nil, err
	}
	if len(raw) <= cacheKeyLimit && c.n.Load() < cacheLimit {
		if _, loaded := c.m.LoadOrStore(raw, p); !loaded {
			c.n.Add(1)
		}
	}
	return p, nil
}
