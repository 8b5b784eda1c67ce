package temporalretry

import (
	"sync"
	"sync/atomic"

	"github.com/retrykit/retrykit/policy"
)

// cacheLimit bounds the number of distinct per-call policies kept parsed;
// past it, further ones are parsed on every use.
const cacheLimit = 256

// policyCache maps the JSON text of a per-call policy to the parsed policy.
// The zero value is an empty cache, safe for concurrent use.
type policyCache struct {
	m sync.Map // string -> *policy.Policy
	n atomic.Int64
}

// get returns the policy for raw, parsing it on a miss.
func (c *policyCache) get(raw string) (*policy.Policy, error) {
	if v, ok := c.m.Load(raw); ok {
		return v.(*policy.Policy), nil
	}
	p, err := policy.Parse([]byte(raw))
	if err != nil {
		return nil, err
	}
	if c.n.Load() < cacheLimit {
		if _, loaded := c.m.LoadOrStore(raw, p); !loaded {
			c.n.Add(1)
		}
	}
	return p, nil
}
