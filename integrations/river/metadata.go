package riverretry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/riverqueue/river"

	"github.com/retrykit/retrykit/policy"
)

// MetadataKey is the key of a job's metadata object that holds its OJS
// retry policy, as a JSON object.
const MetadataKey = "retrykit_policy"

// ArgsWithPolicy is implemented by job args that carry their own retry
// policy. A nil result means "use the plugin's default". Since
// *policy.Policy marshals to and from OJS JSON, args can hold one as a field:
//
//	type ChargeArgs struct {
//		OrderID int64          `json:"order_id"`
//		Retry   *policy.Policy `json:"retry,omitempty"`
//	}
//
//	func (ChargeArgs) Kind() string                     { return "charge" }
//	func (a ChargeArgs) RetryPolicy() *policy.Policy    { return a.Retry }
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
			return nil, fmt.Errorf("riverretry: metadata: must be a JSON object: %w", err)
		}
	}
	m[MetadataKey] = pj
	return json.Marshal(m)
}

// metadataPolicy returns the raw policy under MetadataKey in md. ok is
// false when there is none or it is null; err reports metadata that is not a
// JSON object.
func metadataPolicy(md []byte) (raw []byte, ok bool, err error) {
	// Fast path: most jobs carry no policy, and the key cannot be present
	// without its quoted name appearing in the text.
	if !bytes.Contains(md, []byte(`"`+MetadataKey+`"`)) {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(md, &m); err != nil {
		return nil, false, fmt.Errorf("riverretry: metadata: must be a JSON object: %w", err)
	}
	raw, ok = m[MetadataKey]
	if ok && string(bytes.TrimSpace(raw)) == "null" {
		return nil, false, nil // null: no per-job policy
	}
	return raw, ok, nil
}

// cacheLimit bounds the number of distinct per-job policies kept parsed;
// past it, further ones are parsed on every use.
const cacheLimit = 256

// policyCache maps the JSON text of a per-job policy to the parsed policy.
// The zero value is an empty cache, safe for concurrent use.
type policyCache struct {
	m sync.Map // string -> *policy.Policy
	n atomic.Int64
}

// get returns the policy for raw, parsing it on a miss. A nil cache parses
// every time.
func (c *policyCache) get(raw []byte) (*policy.Policy, error) {
	if c == nil {
		return policy.Parse(raw)
	}
	if v, ok := c.m.Load(string(raw)); ok {
		return v.(*policy.Policy), nil
	}
	p, err := policy.Parse(raw)
	if err != nil {
		return nil, err
	}
	if c.n.Load() < cacheLimit {
		if _, loaded := c.m.LoadOrStore(string(raw), p); !loaded {
			c.n.Add(1)
		}
	}
	return p, nil
}
