package riverretry

import (
	"bytes"
	"crypto/sha256"
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
// JSON object (or empty, or null). The rest of md is kept byte for byte: its members,
// their order, spelling, escapes and duplicates are the user's, and only
// members named MetadataKey (however the name is escaped) are replaced by
// one, p's canonical JSON, placed last.
func withPolicy(md []byte, p *policy.Policy) ([]byte, error) {
	pj, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	member := append([]byte(`"`+MetadataKey+`":`), pj...)
	if len(bytes.TrimSpace(md)) == 0 {
		return append(append([]byte{'{'}, member...), '}'), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(md, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	if m == nil { // the JSON null: no metadata yet
		return append(append([]byte{'{'}, member...), '}'), nil
	}
	out := make([]byte, 0, len(md)+len(member)+2)
	out = append(out, '{')
	err = eachMember(md, func(key string, text []byte) {
		if key != MetadataKey {
			out = append(append(out, text...), ',')
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMetadata, err)
	}
	out = append(append(out, member...), '}')
	return out, nil
}

// eachMember calls f with the decoded name and the exact text ("name":
// value) of every member of the JSON object md, in order, duplicates
// included. md must be a valid JSON object.
func eachMember(md []byte, f func(key string, text []byte)) error {
	dec := json.NewDecoder(bytes.NewReader(md))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	pos := int(dec.InputOffset())
	for dec.More() {
		start := pos
		for start < len(md) && (md[start] == ',' || md[start] == ' ' || md[start] == '\t' || md[start] == '\n' || md[start] == '\r') {
			start++
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		pos = int(dec.InputOffset())
		f(key, md[start:pos])
	}
	return nil
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

// A policyCache is bounded (docs/decisions.md RK-150, RK-170): at most
// cacheLimit entries of texts up to cacheKeyLimit bytes, kept verbatim (at
// most cacheLimit × cacheKeyLimit = 1 MiB of key text), and at most
// cacheLimit entries of longer texts, kept by their SHA-256 digest (32
// bytes each, whatever the jobs carry). A long text is thus parsed once,
// not on every use: a job with 21 MiB of metadata cost a 140 ms JSON decode
// on each failure; a cache hit costs one SHA-256 pass over the text. The
// verbatim limits match the executor's own policy cache.
const (
	cacheLimit    = 256
	cacheKeyLimit = 4 << 10
)

// digest is the cache key of a text over cacheKeyLimit bytes.
type digest [sha256.Size]byte

// policyCache maps a text (a policy's JSON, or a job's whole metadata) to
// the parsed policy; a nil policy records a metadata text that holds none.
// The zero value is an empty cache, safe for concurrent use. Lookups do not
// allocate.
type policyCache struct {
	mu   sync.RWMutex
	m    map[string]*policy.Policy // texts of at most cacheKeyLimit bytes
	long map[digest]*policy.Policy // longer texts, by SHA-256
}

// load returns the policy cached for key.
func (c *policyCache) load(key []byte) (*policy.Policy, bool) {
	if len(key) > cacheKeyLimit {
		d := digest(sha256.Sum256(key))
		c.mu.RLock()
		p, ok := c.long[d]
		c.mu.RUnlock()
		return p, ok
	}
	c.mu.RLock()
	p, ok := c.m[string(key)]
	c.mu.RUnlock()
	return p, ok
}

// store caches p for key. A short key is kept while the cache has room; a
// long one always is, by its digest, in place of an arbitrary older long
// entry once cacheLimit of them are held (so that a stream of large jobs
// keeps being served from the cache).
func (c *policyCache) store(key []byte, p *policy.Policy) {
	if len(key) > cacheKeyLimit {
		d := digest(sha256.Sum256(key))
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.long == nil {
			c.long = make(map[digest]*policy.Policy)
		}
		if _, ok := c.long[d]; !ok && len(c.long) >= cacheLimit {
			for old := range c.long {
				delete(c.long, old)
				break
			}
		}
		c.long[d] = p
		return
	}
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
	if p, ok := c.load(raw); ok && p != nil {
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
	return len(c.m) + len(c.long)
}
