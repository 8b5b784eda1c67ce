package ojshttp

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// rateLimitKeyPattern is ojs-rate-limiting §6.2's key pattern.
var rateLimitKeyPattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._:-]*$`)

// RateLimitedErrorType is the error type shown for a job its rate limit
// dropped (on_limit "drop"): it never ran.
const RateLimitedErrorType = "rate_limited"

// parseRateLimit reads a PUSH's rate_limit (ojs-rate-limiting §6.1):
// {"key", "concurrency", "rate": {"limit", "period"}, "throttle": {…},
// "on_limit"}. The older form {"max_per_second": N} (the example of
// ojs-extension-lifecycle §8.3, and the official suite's L4-RL-001) is a
// window of N starts per PT1S; without a key it is the queue's own key
// "queue:<name>" (RK-288). A null member is absent. Anything else is
// refused naming the field.
func parseRateLimit(field string, v json.RawMessage, queue string) (*executor.RateLimit, *apiError) {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m == nil {
		return nil, invalid(field, "must be a JSON object {key, concurrency, rate, throttle, on_limit}")
	}
	r := &executor.RateLimit{}
	hasKey, perSecond := false, false
	for _, k := range slices.Sorted(maps.Keys(m)) { // the first bad field by name
		raw := m[k]
		f := field + "." + k
		if string(raw) == "null" && k != "key" {
			continue
		}
		switch k {
		case "key":
			if json.Unmarshal(raw, &r.Key) != nil || len(r.Key) > executor.MaxRateLimitKeyLen || !rateLimitKeyPattern.MatchString(r.Key) {
				return nil, invalid(f, "must be a string matching %s, at most %d bytes, got %s", rateLimitKeyPattern, executor.MaxRateLimitKeyLen, clip(string(raw)))
			}
			hasKey = true
		case "concurrency":
			n, err := intField(raw)
			if err != nil || n < 0 || n > 1<<31-1 {
				return nil, invalid(f, "must be a non-negative integer (0 stops the key), got %s", clip(string(raw)))
			}
			c := int(n)
			r.Concurrency = &c
		case "rate", "throttle":
			w, err := parseWindow(f, raw)
			if err != nil {
				return nil, err
			}
			if k == "rate" {
				if perSecond {
					return nil, invalid(f, "give rate or max_per_second, not both")
				}
				r.Rate = w
			} else {
				r.Throttle = w
			}
		case "max_per_second":
			n, err := intField(raw)
			if err != nil || n < 1 || n > executor.MaxWindowLimit {
				return nil, invalid(f, "must be an integer from 1 to %d, got %s", executor.MaxWindowLimit, clip(string(raw)))
			}
			if r.Rate != (executor.Window{}) {
				return nil, invalid(f, "give rate or max_per_second, not both")
			}
			r.Rate, perSecond = executor.Window{Limit: int(n), Period: time.Second}, true
		case "on_limit":
			var s string
			json.Unmarshal(raw, &s)
			switch s {
			case "wait":
				r.OnLimit = executor.LimitWait
			case "reschedule":
				r.OnLimit = executor.LimitReschedule
			case "drop":
				r.OnLimit = executor.LimitDrop
			default:
				return nil, invalid(f, `must be "wait", "reschedule" or "drop", got %s`, clip(string(raw)))
			}
		default:
			return nil, invalid(f, "unknown field; a rate limit has key, concurrency, rate, throttle and on_limit (ojs-rate-limiting §6.1)")
		}
	}
	if !hasKey {
		if !perSecond {
			return nil, invalid(field+".key", "is required (ojs-rate-limiting §6.2)")
		}
		if queue == "" {
			queue = executor.DefaultQueue
		}
		r.Key = "queue:" + queue
	}
	return r, nil
}

// parseWindow reads {"limit": N, "period": ISO 8601 duration}.
func parseWindow(field string, v json.RawMessage) (executor.Window, *apiError) {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m == nil {
		return executor.Window{}, invalid(field, `must be an object {"limit": N, "period": "PT1M"}, got %s`, clip(string(v)))
	}
	var w executor.Window
	for _, k := range slices.Sorted(maps.Keys(m)) { // the first bad field by name
		raw := m[k]
		switch k {
		case "limit":
			n, err := intField(raw)
			if err != nil || n < 1 || n > executor.MaxWindowLimit {
				return w, invalid(field+".limit", "must be an integer from 1 to %d, got %s", executor.MaxWindowLimit, clip(string(raw)))
			}
			w.Limit = int(n)
		case "period":
			var s string
			d, err := time.Duration(0), error(nil)
			if json.Unmarshal(raw, &s) == nil {
				d, err = policy.ParseDuration(s)
			}
			if s == "" || err != nil || d <= 0 || d > maxAdvance {
				return w, invalid(field+".period", "must be a positive ISO 8601 duration of at most 100 years, got %s", clip(string(raw)))
			}
			w.Period = d
		default:
			return w, invalid(field+"."+k, "unknown field; a window has limit and period")
		}
	}
	if w.Limit == 0 {
		return w, invalid(field+".limit", "is required")
	}
	if w.Period == 0 {
		return w, invalid(field+".period", "is required")
	}
	return w, nil
}

// windowView is a window as ojs-rate-limiting §6.1 writes it.
func windowView(w executor.Window) map[string]any {
	return map[string]any{"limit": w.Limit, "period": policy.FormatDuration(w.Period)}
}

// rateLimitView is a job's rate limit as PUSH reads it.
func rateLimitView(r *executor.RateLimit) map[string]any {
	return limitsView(map[string]any{"key": r.Key, "on_limit": r.OnLimit.String()}, r.Concurrency, r.Rate, r.Throttle)
}

// limitsView adds the concurrency, rate and throttle that are set to v.
func limitsView(v map[string]any, concurrency *int, rate, throttle executor.Window) map[string]any {
	if concurrency != nil {
		v["concurrency"] = *concurrency
	}
	if rate.Limit > 0 {
		v["rate"] = windowView(rate)
	}
	if throttle.Limit > 0 {
		v["throttle"] = windowView(throttle)
	}
	return v
}

// rateLimitRoutes mounts the inspection routes of ojs-rate-limiting §10
// and the queue-level limits of §7.2.
func (s *Server) rateLimitRoutes() {
	s.handle("GET /ojs/v1/rate-limits", s.listRateLimits)
	s.handle("GET /ojs/v1/rate-limits/{key}", s.inspectRateLimit)
	s.handle("PUT /ojs/v1/rate-limits/{key}", func(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
		return 0, nil, &apiError{status: http.StatusUnprocessableEntity, code: CodeUnsupported,
			message: "rate limit overrides (ojs-rate-limiting §10.2, RL-R004, recommended) are not implemented by this server; set a queue's limit with PUT /ojs/v1/admin/queues/{name}/rate-limit",
			details: map[string]any{"feature": "rate_limit_override"}}
	})
	s.handle("GET /ojs/v1/admin/queues/{name}/rate-limit", s.getQueueRateLimit)
	s.handle("PUT /ojs/v1/admin/queues/{name}/rate-limit", s.putQueueRateLimit)
	s.handle("DELETE /ojs/v1/admin/queues/{name}/rate-limit", s.deleteQueueRateLimit)
}

// maxListedRateLimits bounds GET /ojs/v1/rate-limits.
const maxListedRateLimits = 1000

// rateLimitState is a key's state (ojs-rate-limiting §10.1). The
// concurrency, window and throttle parts are read with the limits of the
// job of the key enqueued last (jobs of one key may differ; each is held
// to its own).
func (s *Server) rateLimitState(key string) (map[string]any, bool) {
	st, ok := s.exec.RateLimitKey(key)
	if !ok {
		return nil, false
	}
	v := map[string]any{"key": key, "waiting_count": st.Waiting, "active": st.Active, "jobs": st.Jobs}
	if !st.LastStart.IsZero() {
		v["last_started_at"] = stamp(st.LastStart)
	}
	if r := st.Limit; r != nil {
		if r.Concurrency != nil {
			v["concurrency"] = map[string]any{"limit": *r.Concurrency, "active": st.Active, "available": max(*r.Concurrency-st.Active, 0)}
		}
		if r.Rate.Limit > 0 {
			n, resets := s.exec.StartsWithin(key, r.Rate.Period)
			rv := windowView(r.Rate)
			rv["current_count"] = n
			if !resets.IsZero() {
				rv["window_resets_at"] = stamp(resets)
			}
			v["rate"] = rv
		}
		if r.Throttle.Limit > 0 {
			tv := windowView(r.Throttle)
			if !st.LastStart.IsZero() {
				tv["next_allowed_at"] = stamp(st.LastStart.Add(throttleInterval(r.Throttle)))
			}
			v["throttle"] = tv
		}
	}
	return v, true
}

// throttleInterval is ⌈Period / Limit⌉ (RK-286).
func throttleInterval(w executor.Window) time.Duration {
	return w.Period/time.Duration(w.Limit) + min(w.Period%time.Duration(w.Limit), 1)
}

// inspectRateLimit is GET /ojs/v1/rate-limits/{key}.
func (s *Server) inspectRateLimit(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	key := r.PathValue("key")
	if len(key) > executor.MaxRateLimitKeyLen || !rateLimitKeyPattern.MatchString(key) {
		return 0, nil, invalid("key", "must match %s, got %q", rateLimitKeyPattern, clip(key))
	}
	v, ok := s.rateLimitState(key)
	if !ok {
		return 0, nil, &apiError{status: http.StatusNotFound, code: CodeNotFound,
			message: "no rate limit key " + strconv.Quote(key) + " is in use",
			details: map[string]any{"resource_type": "rate_limit", "resource_id": key}}
	}
	return http.StatusOK, v, nil
}

// listRateLimits is GET /ojs/v1/rate-limits: the first 1000 keys by name.
func (s *Server) listRateLimits(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	keys := s.exec.RateLimitKeys()
	items := make([]map[string]any, 0, min(len(keys), maxListedRateLimits))
	for _, k := range keys[:min(len(keys), maxListedRateLimits)] {
		if v, ok := s.rateLimitState(k); ok {
			items = append(items, v)
		}
	}
	return http.StatusOK, map[string]any{"items": items,
		"pagination": map[string]any{"total": len(keys), "page": 1, "per_page": maxListedRateLimits, "has_more": len(keys) > maxListedRateLimits}}, nil
}

// queueLimitView is a queue's limit as PUT reads it.
func queueLimitView(name string, l executor.QueueRateLimit) map[string]any {
	return limitsView(map[string]any{"queue": name}, l.Concurrency, l.Rate, l.Throttle)
}

// getQueueRateLimit is GET /ojs/v1/admin/queues/{name}/rate-limit.
func (s *Server) getQueueRateLimit(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	l, ok := s.exec.QueueRateLimit(name)
	if !ok {
		return 0, nil, &apiError{status: http.StatusNotFound, code: CodeNotFound,
			message: "queue " + strconv.Quote(name) + " has no rate limit",
			details: map[string]any{"resource_type": "queue_rate_limit", "resource_id": name}}
	}
	return http.StatusOK, queueLimitView(name, l), nil
}

// putQueueRateLimit is PUT /ojs/v1/admin/queues/{name}/rate-limit
// (ojs-rate-limiting §7.2): {"concurrency", "rate", "throttle"}, each
// optional, replacing the queue's limit; {} removes it.
func (s *Server) putQueueRateLimit(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	var m map[string]json.RawMessage
	if err := readBody(w, r, s.cfg.maxBody, &m); err != nil {
		return 0, nil, err
	}
	var l executor.QueueRateLimit
	for _, k := range slices.Sorted(maps.Keys(m)) { // the first bad field by name
		raw := m[k]
		if string(raw) == "null" {
			continue
		}
		switch k {
		case "concurrency":
			n, err := intField(raw)
			if err != nil || n < 0 || n > 1<<31-1 {
				return 0, nil, invalid(k, "must be a non-negative integer, got %s", clip(string(raw)))
			}
			c := int(n)
			l.Concurrency = &c
		case "rate", "throttle":
			win, err := parseWindow(k, raw)
			if err != nil {
				return 0, nil, err
			}
			if k == "rate" {
				l.Rate = win
			} else {
				l.Throttle = win
			}
		default:
			return 0, nil, invalid(k, "unknown field; a queue's rate limit has concurrency, rate and throttle (ojs-rate-limiting §7.2)")
		}
	}
	var set *executor.QueueRateLimit
	if l.Concurrency != nil || l.Rate.Limit > 0 || l.Throttle.Limit > 0 {
		set = &l
	}
	if err := s.exec.SetQueueRateLimit(name, set); err != nil {
		if errors.Is(err, executor.ErrTooManyRateLimitKeys) {
			return 0, nil, &apiError{status: http.StatusTooManyRequests, code: CodeQueueFull, retryable: true, message: err.Error()}
		}
		return 0, nil, invalid("name", "%v", err)
	}
	return http.StatusOK, queueLimitView(name, l), nil
}

// deleteQueueRateLimit is DELETE /ojs/v1/admin/queues/{name}/rate-limit.
func (s *Server) deleteQueueRateLimit(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	name, aerr := queueName(r)
	if aerr != nil {
		return 0, nil, aerr
	}
	if err := s.exec.SetQueueRateLimit(name, nil); err != nil {
		return 0, nil, invalid("name", "%v", err)
	}
	return http.StatusOK, map[string]any{"queue": name, "deleted": true}, nil
}
