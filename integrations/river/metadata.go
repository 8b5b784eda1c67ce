package riverretry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/riverqueue/river"

	"github.com/retrykit/retrykit/policy"
)

// MetadataKey is the key of a job's metadata object that holds its OJS
// retry policy, as a JSON object.
const MetadataKey = "retrykit_policy"

// ErrMetadata is matched (errors.Is) by the error for job metadata that is
// not a JSON object, so that no policy can be read from it or written into
// it. The error also wraps the JSON decoder's (a *json.SyntaxError or
// *json.UnmarshalTypeError, for errors.As). A policy under [MetadataKey]
// that is valid JSON but not a valid policy gives policy's error instead
// (errors.Is policy.ErrInvalidPolicy).
var ErrMetadata = errors.New("riverretry: metadata: must be a JSON object")

// ArgsWithPolicy is implemented by job args that carry their own retry
// policy. A nil result means "use the plugin's default". An args type whose
// method returns one fixed policy gives all jobs of its kind (its worker's
// jobs) that policy, a per-worker default. Since *policy.Policy marshals to
// and from OJS JSON, args can also hold a policy per job as a field:
//
//	type ChargeArgs struct {
//		OrderID int64          `json:"order_id"`
//		Retry   *policy.Policy `json:"retry,omitempty"`
//	}
//
//	func (ChargeArgs) Kind() string                  { return "charge" }
//	func (a ChargeArgs) RetryPolicy() *policy.Policy { return a.Retry }
type ArgsWithPolicy interface {
	river.JobArgs
	RetryPolicy() *policy.Policy
}

// Metadata returns a River job metadata object holding p under
// [MetadataKey], for river.InsertOpts.Metadata when the args type cannot
// implement [ArgsWithPolicy]. A nil p gives the default policy.
func Metadata(p *policy.Policy) []byte {
	md, _ := withPolicy(nil, p) // marshalling a Policy never fails
	return md
}

// withPolicy returns metadata md with p set under MetadataKey; md must be a
// JSON object (or empty).
func withPolicy(md []byte, p *policy.Policy) ([]byte, error) {
	pj, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(md)) > 0 {
		if err := json.Unmarshal(md, &m); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMetadata, err)
		}
	}
	m[MetadataKey] = pj
	return json.Marshal(m)
}

// metadataPolicy returns the raw policy under MetadataKey in md. ok is
// false when there is none or it is null; err reports metadata that names
// the key but is not a JSON object.
func metadataPolicy(md []byte) (raw []byte, ok bool, err error) {
	if !hasPolicyKey(md) {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(md, &m); err != nil {
		if !bytes.Contains(md, quotedKey) {
			return nil, false, nil // on the slow path for a backslash only
		}
		return nil, false, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	raw, ok = m[MetadataKey]
	if ok && string(bytes.TrimSpace(raw)) == "null" {
		return nil, false, nil // null: no per-job policy
	}
	return raw, ok, nil
}

// quotedKey is MetadataKey as it appears in JSON text.
var quotedKey = []byte(`"` + MetadataKey + `"`)

// hasPolicyKey is the fast path for jobs without a policy: the key cannot be
// present without its quoted name appearing in the text, unless the name is
// written with escapes ("retrykit\u005fpolicy"), so text holding a
// backslash takes the slow path too. (PostgreSQL's jsonb gives the job row
// back unescaped; skipping the escaped key at insert would set max_attempts
// from the default policy while the worker later reads the job's own.)
func hasPolicyKey(md []byte) bool {
	return bytes.Contains(md, quotedKey) || bytes.IndexByte(md, '\\') >= 0
}

// cacheLimit bounds the number of entries of a policyCache; past it,
// misses are parsed on every use.
const cacheLimit = 256

// policyCache maps a text (a policy's JSON, or a job's whole metadata) to
// the parsed policy. The zero value is an empty cache, safe for concurrent
// use. Lookups by a []byte key do not allocate.
type policyCache struct {
	mu sync.RWMutex
	m  map[string]*policy.Policy
}

// load returns the policy cached for key.
func (c *policyCache) load(key []byte) (*policy.Policy, bool) {
	c.mu.RLock()
	p, ok := c.m[string(key)]
	c.mu.RUnlock()
	return p, ok
}

// store caches p for key while the cache has room.
func (c *policyCache) store(key []byte, p *policy.Policy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]*policy.Policy)
	}
	if len(c.m) < cacheLimit {
		c.m[string(key)] = p
	}
}

// get returns the policy for the policy JSON raw, parsing it on a miss.
func (c *policyCache) get(raw []byte) (*policy.Policy, error) {
	if p, ok := c.load(raw); ok {
		return p, nil
	}
	p, err := policy.Parse(raw)
	if err != nil {
		return nil, err
	}
	c.store(raw, p)
	return p, nil
}

// len returns the number of cached entries.
func (c *policyCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
