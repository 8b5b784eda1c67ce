package ojshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
)

// Name patterns of openapi.yaml: a job type is dot-separated lowercase
// segments; a queue name lowercase letters, digits, '-' and '.'.
var (
	typePattern  = regexp.MustCompile(`^[a-z][a-z0-9_\-]*(\.[a-z][a-z0-9_\-]*)*$`)
	queuePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9\-\.]*$`)
)

// Limits on envelope fields the executor does not hold.
const (
	maxMetaSize = 64 << 10 // meta, bytes of JSON
	maxTags     = 64
	maxTagLen   = 255
	maxUnknown  = 64 << 10 // all unknown top-level fields together, bytes of JSON
)

// entryOverhead is what a job costs beyond its caller data, counted
// against WithMaxBytes: the executor's record and the server's entry.
const entryOverhead = 512

// What the server's structures cost beyond the caller's bytes, counted
// against WithMaxBytes with them, so that no shape of job holds memory the
// bound does not see (docs/servers.md, "Memory"): a tag's string header;
// the map of unknown fields and each of its slots; a unique job's parsed
// options.unique, its key and its place in the key index.
const (
	tagOverhead          = 16
	unknownOverhead      = 256
	unknownFieldOverhead = 128
	uniqueOverhead       = 320
)

// pushed is one decoded PUSH: the executor's spec and the server's extra.
type pushed struct {
	spec executor.JobSpec
	x    *extra
	// polCost is what the job's retry policy costs it when not shared
	// (see policyCache.parse).
	polCost int64
}

// decodeJob turns one PUSH envelope into a spec. now is used for the id.
func (s *Server) decodeJob(raw map[string]json.RawMessage) (*pushed, *apiError) {
	p := &pushed{x: &extra{born: time.Now()}}
	var opts map[string]json.RawMessage
	if o, ok := raw["options"]; ok {
		if err := json.Unmarshal(o, &opts); err != nil || opts == nil {
			return nil, invalid("options", "must be a JSON object")
		}
	}
	for k, v := range raw {
		switch k {
		case "id", "type", "args", "meta", "options", "specversion":
		case "queue", "priority", "retry", "scheduled_at", "tags", "timeout_ms", "pending", "visibility_timeout_ms", "expires_at", "enqueue_ttl":
			// Envelope attributes of ojs-core may also sit at the top level.
			if opts == nil {
				opts = map[string]json.RawMessage{}
			}
			if _, dup := opts[k]; dup {
				return nil, invalid(k, "given both at the top level and in options")
			}
			opts[k] = v
		default:
			if p.x.unknown == nil {
				p.x.unknown = map[string]json.RawMessage{}
			}
			p.x.unknown[k] = v
		}
	}
	if v, ok := raw["specversion"]; ok {
		var sv string
		if json.Unmarshal(v, &sv) != nil || sv != ojsVersion {
			return nil, invalid("specversion", "must be %q", ojsVersion)
		}
	}
	if v, ok := raw["id"]; ok {
		if json.Unmarshal(v, &p.spec.ID) != nil || !uuidV7Pattern.MatchString(p.spec.ID) {
			return nil, invalid("id", "must be a lowercase UUIDv7 string (RFC 9562), got %s", clip(string(v)))
		}
	}
	t, ok := raw["type"]
	if !ok {
		return nil, invalid("type", "is required")
	}
	if json.Unmarshal(t, &p.spec.Type) != nil || len(p.spec.Type) > executor.MaxTypeLen || !typePattern.MatchString(p.spec.Type) {
		return nil, invalid("type", "must be dot-separated lowercase segments (%s), at most %d bytes, got %s",
			typePattern, executor.MaxTypeLen, clip(string(t)))
	}
	a, ok := raw["args"]
	if !ok {
		return nil, invalid("args", "is required")
	}
	if a = bytes.TrimSpace(a); len(a) == 0 || a[0] != '[' {
		return nil, invalid("args", "must be a JSON array")
	}
	if len(a) > executor.MaxArgsSize {
		return nil, invalid("args", "at most %d bytes (executor.MaxArgsSize), got %d", executor.MaxArgsSize, len(a))
	}
	p.spec.Args = a
	if m, ok := raw["meta"]; ok {
		m = bytes.TrimSpace(m)
		if len(m) == 0 || m[0] != '{' {
			return nil, invalid("meta", "must be a JSON object")
		}
		if len(m) > maxMetaSize {
			return nil, invalid("meta", "at most %d bytes, got %d", maxMetaSize, len(m))
		}
		p.x.meta = m
	}
	if err := s.decodeOptions(p, opts); err != nil {
		return nil, err
	}
	if err := decodeBudget(p); err != nil {
		return nil, err
	}
	size := 0
	for k, v := range p.x.unknown {
		size += len(k) + len(v)
	}
	if size > maxUnknown {
		return nil, invalid("(unknown fields)", "at most %d bytes of extension fields, got %d", maxUnknown, size)
	}
	if n := len(p.x.unknown); n > 0 {
		size += unknownOverhead + n*unknownFieldOverhead
	}
	for _, t := range p.x.tags {
		size += len(t) + tagOverhead
	}
	if u := p.x.unique; u != nil {
		size += len(u.raw) + len(p.x.uniqueKey) + uniqueOverhead
	}
	p.x.polCost = p.polCost
	p.x.size = int64(len(p.spec.Args)+len(p.x.meta)+size) + p.polCost + entryOverhead
	return p, nil
}

// decodeOptions applies the PUSH options.
func (s *Server) decodeOptions(p *pushed, opts map[string]json.RawMessage) *apiError {
	var pol *policy.Policy
	for k, v := range opts {
		field := "options." + k
		switch k {
		case "queue":
			if json.Unmarshal(v, &p.spec.Queue) != nil || len(p.spec.Queue) > executor.MaxQueueLen || !queuePattern.MatchString(p.spec.Queue) {
				return invalid(field, "must match %s, at most %d bytes, got %s", queuePattern, executor.MaxQueueLen, clip(string(v)))
			}
		case "priority":
			n, err := parsePriority(field, v)
			if err != nil {
				return err
			}
			p.spec.Priority = n
		case "timeout_ms":
			n, err := intField(v)
			if err != nil || n < 0 {
				return invalid(field, "must be a non-negative integer, got %s", clip(string(v)))
			}
			p.x.timeoutMS = &n
		case "visibility_timeout_ms":
			n, err := intField(v)
			if err != nil || n <= 0 || n > maxVisibilityMS {
				return invalid(field, "must be an integer from 1 to %d, got %s", maxVisibilityMS, clip(string(v)))
			}
			p.spec.VisibilityTimeout = time.Duration(n) * time.Millisecond
		case "delay_until", "scheduled_at":
			t, err := pushTime(field, v, s.cfg.clock.Now())
			if err != nil {
				return err
			}
			if !p.spec.ScheduledAt.IsZero() {
				return invalid(field, "delay_until and scheduled_at are the same option; give one")
			}
			p.spec.ScheduledAt = t
		case "pending":
			if json.Unmarshal(v, &p.spec.Pending) != nil {
				return invalid(field, "must be a boolean")
			}
		case "tags":
			var raws []json.RawMessage
			if json.Unmarshal(v, &raws) != nil || raws == nil {
				return invalid(field, "must be an array of strings")
			}
			if len(raws) > maxTags {
				return invalid(field, "at most %d tags, got %d", maxTags, len(raws))
			}
			tags := make([]string, len(raws))
			for i, r := range raws {
				if len(r) == 0 || r[0] != '"' || json.Unmarshal(r, &tags[i]) != nil {
					return invalid(field+"["+strconv.Itoa(i)+"]", "must be a string, got %s", clip(string(r)))
				}
			}
			for i, t := range tags {
				if len(t) > maxTagLen {
					return invalid(field+"["+strconv.Itoa(i)+"]", "at most %d bytes, got %d", maxTagLen, len(t))
				}
			}
			p.x.tags = tags
		case "retry":
			var err *apiError
			if pol, p.polCost, err = s.policies.parse(v); err != nil {
				return err
			}
			pol = s.plantNoMerge(v, pol)
		case "unique":
			u, err := parseUnique(v)
			if err != nil {
				return err
			}
			p.x.unique = u
		case "expires_at":
			t, err := pushTime(field, v, s.cfg.clock.Now())
			if err != nil {
				return err
			}
			p.spec.ExpiresAt = t
		case "enqueue_ttl":
			d, err := enqueueTTL(field, v)
			if err != nil {
				return err
			}
			p.spec.EnqueueTTL = d
		case "rate_limit", "depends_on", "workflow":
			return &apiError{status: http.StatusUnprocessableEntity, code: CodeUnsupported,
				message: field + ": not supported by this server (the manifest does not claim it)",
				details: map[string]any{"field": field}}
		default:
			// ojs-core §5.5: unknown attributes are preserved, never a
			// reason to refuse a job (RK-153). They are echoed with the
			// unknown top-level fields; a top-level field of the same name wins.
			if p.x.unknown == nil {
				p.x.unknown = map[string]json.RawMessage{}
			}
			if _, ok := p.x.unknown[k]; !ok {
				p.x.unknown[k] = v
			}
		}
	}
	if u := p.x.unique; u != nil {
		key, err := uniqueKey(u, p.spec.Type, p.spec.Queue, p.spec.Args, p.x.meta)
		if err != nil {
			return err
		}
		p.x.uniqueKey = key
	}
	if t := p.x.timeoutMS; t != nil && *t > 0 && p.spec.VisibilityTimeout == 0 {
		// timeout_ms bounds an attempt through its reservation (RK-106).
		p.spec.VisibilityTimeout = time.Duration(min(*t, maxVisibilityMS)) * time.Millisecond
	}
	if pol == nil {
		pol = policy.Default()
	}
	run := s.plantPolicy(pol)
	if run != pol {
		p.x.shown = pol
	}
	p.spec.Policy = run
	return nil
}

// maxVisibilityMS bounds a visibility timeout: 7 days.
const maxVisibilityMS = 7 * 24 * 3600 * 1000

// errNotNumber is intField's error for a value that is not a JSON number.
var errNotNumber = errors.New("not a JSON number")

// intField decodes an integral JSON number. A string holding digits is
// refused, as policy.Parse refuses it (encoding/json would accept it for
// a json.Number).
func intField(v json.RawMessage) (int64, error) {
	if t := bytes.TrimSpace(v); len(t) == 0 || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return 0, errNotNumber
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, err
	}
	return strconv.ParseInt(n.String(), 10, 64)
}

// parseRetry reads an OJS retry policy, accepting the binding's variants
// (RK-101, RK-102): initial_interval_ms and max_interval_ms integers for
// the ISO 8601 durations, and openapi's backoff_type
// (exponential|linear|constant, and polynomial) for retrykit's
// backoff_strategy. Anything else is policy.Parse's strict grammar. An
// invalid policy is a 422 validation_error naming the field.
func parseRetry(v json.RawMessage) (*policy.Policy, *apiError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		return nil, invalid("options.retry", "must be a JSON object")
	}
	for _, f := range []string{"initial_interval", "max_interval"} {
		ms, ok := m[f+"_ms"]
		if !ok {
			continue
		}
		if _, both := m[f]; both {
			return nil, retryErr(f+"_ms", "give "+f+" or "+f+"_ms, not both")
		}
		n, err := intField(ms)
		if err != nil || n < 0 || n > int64(maxDurationMS) {
			return nil, retryErr(f+"_ms", "must be an integer number of milliseconds from 0 to "+strconv.FormatInt(maxDurationMS, 10))
		}
		iso, _ := json.Marshal(policy.FormatDuration(time.Duration(n) * time.Millisecond))
		m[f] = iso
		delete(m, f+"_ms")
	}
	if bt, ok := m["backoff_type"]; ok {
		var name string
		if json.Unmarshal(bt, &name) != nil {
			return nil, retryErr("backoff_type", "must be a string")
		}
		switch strings.ToLower(name) {
		case "constant", "fixed":
			name = "none"
		}
		if old, both := m["backoff_strategy"]; both {
			var o string
			if json.Unmarshal(old, &o) != nil || !strings.EqualFold(o, name) {
				return nil, retryErr("backoff_type", "disagrees with backoff_strategy")
			}
		}
		b, _ := json.Marshal(name)
		m["backoff_strategy"] = b
		delete(m, "backoff_type")
	}
	norm, _ := json.Marshal(m)
	p, err := policy.Parse(norm)
	if err != nil {
		return nil, retryErr("", strings.TrimPrefix(err.Error(), "policy: "))
	}
	return p, nil
}

// maxDurationMS is the longest *_ms interval: the largest time.Duration.
const maxDurationMS = int64(1<<63-1) / int64(time.Millisecond)

func retryErr(field, msg string) *apiError {
	if field != "" {
		msg = field + ": " + msg
	}
	return &apiError{status: http.StatusUnprocessableEntity, code: CodeValidation,
		message: "options.retry: " + msg, details: map[string]any{"field": "options.retry"}}
}

// plantPolicy returns the policy the executor runs for a client's policy:
// the same one, unless planted faults change it (NoCapAfterJitter raises
// max_interval by half for jittered policies; EarlyRetry halves every
// interval).
func (s *Server) plantPolicy(p *policy.Policy) *policy.Policy {
	f := s.faults()
	if f == 0 {
		return p
	}
	sp := p.Spec()
	changed := false
	if f.Has(ojsfault.NoCapAfterJitter) && sp.Jitter {
		sp.MaxInterval = time.Duration(sat.AddInt(int64(sp.MaxInterval), int64(sp.MaxInterval/2)))
		changed = true
	}
	if f.Has(ojsfault.EarlyRetry) {
		sp.InitialInterval = max(sp.InitialInterval/2, 1)
		sp.MaxInterval = max(sp.MaxInterval/2, sp.InitialInterval)
		changed = true
	}
	if !changed {
		return p
	}
	q, err := policy.New(sp)
	if err != nil {
		return p
	}
	return q
}

// errorFor translates an executor error into the binding's answer.
func errorFor(err error, id string) *apiError {
	var te *executor.TransitionError
	switch {
	case errors.Is(err, executor.ErrNotFound):
		return notFound(id)
	case errors.As(err, &te):
		return conflict(id, te.From, "cannot "+te.Op+" a job in state "+te.From.String())
	case errors.Is(err, executor.ErrStaleDelivery):
		return &apiError{status: http.StatusConflict, code: CodeConflict,
			message: "the job was fetched again meanwhile: " + err.Error(), details: map[string]any{"job_id": id}}
	case errors.Is(err, executor.ErrDuplicateID):
		return &apiError{status: http.StatusConflict, code: CodeDuplicate,
			message: "a job with id " + strconv.Quote(clip(id)) + " already exists", details: map[string]any{"job_id": id}}
	case errors.Is(err, policy.ErrInvalidPolicy):
		return retryErr("", err.Error())
	case errors.Is(err, executor.ErrInvalidJob):
		return errf(http.StatusBadRequest, CodeInvalidRequest, "%s", err.Error())
	}
	return &apiError{status: http.StatusInternalServerError, code: CodeInternal, message: err.Error(), retryable: true}
}

func notFound(id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: CodeNotFound,
		message: "job " + strconv.Quote(clip(id)) + " not found",
		details: map[string]any{"resource_type": "job", "resource_id": id}}
}

func conflict(id string, st executor.State, msg string) *apiError {
	return &apiError{status: http.StatusConflict, code: CodeConflict, message: msg,
		details: map[string]any{"job_id": id, "current_state": st.String()}}
}
