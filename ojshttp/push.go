package ojshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/internal/strictjson"
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
	var top map[string]bool // options given at the top level, named there in errors
	if o, ok := raw["options"]; ok {
		if err := json.Unmarshal(o, &opts); err != nil || opts == nil {
			return nil, invalid("options", "must be a JSON object")
		}
	}
	for k, v := range raw {
		switch k {
		case "id", "type", "args", "meta", "options", "specversion":
		case "queue", "priority", "retry", "scheduled_at", "tags", "timeout_ms", "pending", "visibility_timeout_ms", "expires_at", "enqueue_ttl", "rate_limit":
			// Envelope attributes of ojs-core may also sit at the top level.
			if opts == nil {
				opts = map[string]json.RawMessage{}
			}
			if _, dup := opts[k]; dup {
				return nil, invalid(k, "given both at the top level and in options")
			}
			opts[k] = v
			if top == nil {
				top = map[string]bool{}
			}
			top[k] = true
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
	if err := s.decodeOptions(p, opts, top); err != nil {
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

// decodeOptions applies the PUSH options. An error names a field by where
// the client put it: "options.queue", or "queue" for one in top.
func (s *Server) decodeOptions(p *pushed, opts map[string]json.RawMessage, top map[string]bool) *apiError {
	var pol *policy.Policy
	var rl json.RawMessage
	for k, v := range opts {
		field := "options." + k
		if top[k] {
			field = k
		}
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
			if pol, p.polCost, err = s.policies.parse(field, v); err != nil {
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
		case "rate_limit":
			rl = v
		case "depends_on", "workflow":
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
			_, top := p.x.unknown[k]
			if top && isBudgetField(k) {
				// The timeouts fields set the job's budget: one of two
				// values would be dropped silently (as for queue, priority).
				return invalid(k, "given both at the top level and in options")
			}
			if !top {
				p.x.unknown[k] = v
			}
		}
	}
	if rl != nil && string(rl) != "null" {
		r, err := parseRateLimit("options.rate_limit", rl, p.spec.Queue)
		if err != nil {
			return err
		}
		p.spec.RateLimit = r
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

// errNotInteger is intField's error for a number that is not an int64.
var errNotInteger = errors.New("not an integer")

// intField decodes an integral JSON number under the project's one integer
// rule (RK-10, strictjson.IntLiteral: 3000, 3000.0 and 3e3 are 3000). A
// string holding digits is refused, as policy.Parse refuses it.
func intField(v json.RawMessage) (int64, error) {
	if t := bytes.TrimSpace(v); len(t) == 0 || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) || !strictjson.Valid(t) {
		return 0, errNotNumber
	}
	n, res := strictjson.IntLiteral(string(bytes.TrimSpace(v)), math.MinInt64, math.MaxInt64)
	if res != strictjson.IntOK {
		return 0, errNotInteger
	}
	return n, nil
}

// maxDurationMS is the longest *_ms interval: the largest time.Duration.
const maxDurationMS = int64(1<<63-1) / int64(time.Millisecond)

// parseRetry reads an OJS retry policy with policy.ParseWith and the
// binding's dialect (RK-101, RK-102, RK-261): the library reads the bytes
// the client sent, once, so a policy is accepted or refused alike over
// HTTP and in Go. opts are further parse options (policy.Over for an
// override). An invalid policy is a 422 validation_error naming the
// field's full path (field is the policy's own path in the body).
func parseRetry(field string, v json.RawMessage, opts ...policy.ParseOption) (*policy.Policy, *apiError) {
	p, err := policy.ParseWith(v, append(opts, policy.BindingDialect())...)
	if err != nil {
		return nil, retryErr(field, err)
	}
	return p, nil
}

// retryErr is the 422 answer for a policy error, each problem named by its
// full path under field ("options.retry.max_attempts").
func retryErr(field string, err error) *apiError {
	path := field
	msg := field + ": " + strings.TrimPrefix(err.Error(), "policy: ")
	var ve *policy.ValidationError
	if errors.As(err, &ve) && len(ve.Errors) > 0 {
		parts := make([]string, 0, len(ve.Errors)+1)
		for i, fe := range ve.Errors {
			at := field
			if fe.Field != "" {
				at += "." + fe.Field
			}
			if i == 0 {
				path = at
			}
			parts = append(parts, at+": "+fe.Reason)
		}
		if ve.Omitted > 0 {
			parts = append(parts, "and "+strconv.Itoa(ve.Omitted)+" more")
		}
		msg = strings.Join(parts, "; ")
	}
	return &apiError{status: http.StatusUnprocessableEntity, code: CodeValidation,
		message: msg, details: map[string]any{"field": path}}
}

// plantPolicy returns the policy the executor runs for a client's policy:
// the same one, unless planted faults change it (NoCapAfterJitter raises
// max_interval by half for jittered policies; EarlyRetry halves every
// interval), or the parameterised faults of ojsfault.Params.
func (s *Server) plantPolicy(p *policy.Policy) *policy.Policy {
	f, params := s.faults(), ojsfault.ParamsOf(s)
	if f == 0 && params == (ojsfault.Params{}) {
		return p
	}
	sp := p.Spec()
	changed := params != (ojsfault.Params{})
	sp = params.Apply(sp)
	if f.Has(ojsfault.NoCapAfterJitter) && sp.Jitter {
		sp.MaxInterval = time.Duration(sat.AddInt(int64(sp.MaxInterval), int64(sp.MaxInterval/2)))
		changed = true
	}
	if f.Has(ojsfault.EarlyRetry) {
		sp.InitialInterval = max(sp.InitialInterval/2, 1)
		sp.MaxInterval = max(sp.MaxInterval/2, sp.InitialInterval)
		changed = true
	}
	if f.Has(ojsfault.PolynomialAsExponential) && sp.Strategy == backoff.Polynomial ||
		f.Has(ojsfault.LinearAsExponential) && sp.Strategy == backoff.Linear {
		sp.Strategy = backoff.Exponential
		changed = true
	}
	if f.Has(ojsfault.DelayDoubled) {
		twice := func(d time.Duration) time.Duration { return time.Duration(sat.AddInt(int64(d), int64(d))) }
		sp.InitialInterval, sp.MaxInterval = twice(sp.InitialInterval), twice(sp.MaxInterval)
		// an error rule's intervals are the policy's too
		for i := range sp.ErrorRules {
			r := &sp.ErrorRules[i]
			r.InitialInterval, r.MaxInterval = twice(r.InitialInterval), twice(r.MaxInterval)
		}
		changed = true
	}
	if f.Has(ojsfault.MessageNotType) && len(sp.NonRetryableErrors) > 0 {
		// the type is never matched: nonRetryable matches the message
		// against the client's list
		sp.NonRetryableErrors = nil
		changed = true
	}
	if f.Has(ojsfault.ExhaustLate) && sp.MaxAttempts < math.MaxInt {
		sp.MaxAttempts = max(sp.MaxAttempts, 1) + 1
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
		return retryErr("options.retry", err)
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

// ErrQueueName is matched by CheckQueueName's error.
var ErrQueueName = errors.New("ojshttp: invalid queue name")

// CheckQueueName returns nil when name is a queue name the server accepts
// (openapi.yaml: lowercase letters, digits, '-' and '.', starting with a
// letter or digit, at most executor.MaxQueueLen bytes), else an error
// matching ErrQueueName that says why. serve checks its configuration with
// it, so that a replay rule cannot name a queue no job can be in.
func CheckQueueName(name string) error {
	if len(name) > executor.MaxQueueLen || !queuePattern.MatchString(name) {
		return fmt.Errorf("%w %q: must match %s, at most %d bytes", ErrQueueName, clip(name), queuePattern, executor.MaxQueueLen)
	}
	return nil
}
