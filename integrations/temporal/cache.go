package temporalretry

import (
	"sync"
	"sync/atomic"

	"github.com/retrykit/retrykit/policy"
)

// cacheLimit bounds the number of distinct per-call policies kept parsed;
// past it, further ones are parsed on every use.
const cacheLimit = 256

// cacheKeyLimit is the largest header (payload data, in bytes) kept in the
// cache, so that the cache holds at most cacheLimit*cacheKeyLimit bytes of
// keys; larger headers are parsed on every use.
const cacheKeyLimit = 16 << 10

// policyCache maps the data of a per-call policy header (the JSON string
// as the default data converter encodes it) to the parsed policy. The zero
// value is an empty cache, safe for concurrent use.
type policyCache struct {
	m sync.Map // string -> *policy.Policy
	n atomic.Int64
}

// get returns the policy stored under key, calling parse on a miss.
func (c *policyCache) get(key string, parse func() (*policy.Policy, error)) (*policy.Policy, error) {
	if v, ok := c.m.Load(key); ok {
		return v.(*policy.Policy), nil
	}
	p, err := parse()
	if err != nil {
		return nil, err
	}
	if c.n.Load() < cacheLimit {
		if _, loaded := c.m.LoadOrStore(key, p); !loaded {
			c.n.Add(1)
		}
	}
	return p, nil
}
