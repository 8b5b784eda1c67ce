package ojshttp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/strictjson"
	"github.com/retrykit/retrykit/policy"
)

// The dead letter extension (ojs-dead-letter §6, §9, §10) is served under
// two prefixes (RK-193): the spec's /ojs/v1/dead-letter and the admin API's
// /ojs/v1/admin/dead-letter (ojs-admin-api §11), which the official suite
// uses. Both run the same handlers; they differ only where the two
// documents give different shapes: the list's key ("jobs" on the spec's
// path, "items" on the admin path), the default page size (50, 20) and
// the answer to a DELETE of one job (200 with a body, 204 without).
const (
	deadLetterPrefix      = "/ojs/v1/dead-letter"
	adminDeadLetterPrefix = "/ojs/v1/admin/dead-letter"
)

// Dead letter paging and bulk bounds.
const (
	defaultDLLimit      = 50  // the binding's default page (ojs-http-binding §12.1)
	defaultAdminDLLimit = 20  // ojs-admin-api §7.1
	maxDLLimit          = 100 // both documents' largest page
	// maxDLBulk bounds the jobs one bulk retry or purge handles; the
	// answer's has_more says whether more match.
	maxDLBulk = 1000
	// maxDLStatsKeys bounds by_queue and by_error_type in the statistics:
	// the largest counts are listed, the rest summed in *_others.
	maxDLStatsKeys = 100
)

func (s *Server) deadLetterRoutes() {
	for _, p := range []string{deadLetterPrefix, adminDeadLetterPrefix} {
		admin := p == adminDeadLetterPrefix
		s.handle("GET "+p, s.deadLetterList(admin))
		s.handle("DELETE "+p, s.deadLetterPurge)
		s.handle("GET "+p+"/stats", s.deadLetterStats)
		s.handle("POST "+p+"/retry", s.deadLetterBulkRetry)
		s.handle("GET "+p+"/{id}", s.deadLetterGet)
		s.handle("POST "+p+"/{id}/retry", s.deadLetterRetry)
		s.handle("DELETE "+p+"/{id}", s.deadLetterDelete(admin))
	}
}

// dlFilter selects dead letters (ojs-dead-letter §9.1, the filter of §6.2):
// every set field must match. The zero value selects every dead letter.
type dlFilter struct {
	queue string
	// typ is an exact job type, or a prefix when it ends in '*'
	// (ojs-admin-api §7.1).
	typ string
	// errorType is the type of the most recent error entry (§9.1); a job
	// with no error entry has none and matches only "".
	errorType string
	// since and until bound discarded_at: since ≤ t < until.
	since, until time.Time
}

func (f dlFilter) match(d executor.DeadLetterEntry) bool {
	if f.queue != "" && d.Queue != f.queue {
		return false
	}
	if f.typ != "" {
		if p, ok := strings.CutSuffix(f.typ, "*"); ok {
			if !strings.HasPrefix(d.Type, p) {
				return false
			}
		} else if d.Type != f.typ {
			return false
		}
	}
	if f.errorType != "" && d.ErrorType != f.errorType {
		return false
	}
	if !f.since.IsZero() && d.DeadAt.Before(f.since) {
		return false
	}
	if !f.until.IsZero() && !d.DeadAt.Before(f.until) {
		return false
	}
	return true
}

// maxFilterValue bounds a filter's string values, in bytes.
const maxFilterValue = 1024

// setFilter sets the filter field named key from the string v; field is
// how an error names it.
func (f *dlFilter) set(field, key, v string) *apiError {
	if len(v) > maxFilterValue {
		return invalid(field, "at most %d bytes, got %d", maxFilterValue, len(v))
	}
	switch key {
	case "queue":
		if v != "" && (len(v) > executor.MaxQueueLen || !queuePattern.MatchString(v)) {
			return invalid(field, "must match %s, got %q", queuePattern, clip(v))
		}
		f.queue = v
	case "state":
		// ojs-admin-api §11.1 takes the job listing's parameters; every
		// dead letter is discarded, so only that state selects anything.
		if v != "discarded" {
			return invalid(field, "dead letters are all discarded; got %q", clip(v))
		}
	case "type":
		f.typ = v
	case "error_type":
		f.errorType = v
	case "since", "until", "older_than":
		t, err := strictjson.Timestamp(v)
		if err != nil {
			return invalid(field, "must be an RFC 3339 timestamp, got %q", clip(v))
		}
		if key == "since" {
			f.since = t
		} else {
			f.until = t // older_than (ojs-admin-api §11.3) is until
		}
	default:
		return invalid(field, "unknown filter; use queue, type, error_type, since, until or state=discarded")
	}
	return nil
}

// filterFromQuery reads the filter of a listing's query parameters; other
// parameters than the filter's and paging's are refused.
func filterFromQuery(q url.Values) (dlFilter, *apiError) {
	var f dlFilter
	for k, vs := range q {
		switch k {
		case "limit", "offset", "page", "per_page":
			continue
		}
		if len(vs) != 1 {
			return f, invalid(k, "give it once")
		}
		if err := f.set(k, k, vs[0]); err != nil {
			return f, err
		}
	}
	return f, nil
}

// filterFromJSON reads a "filter" object of string values.
func filterFromJSON(field string, raw json.RawMessage) (dlFilter, *apiError) {
	var f dlFilter
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return f, invalid(field, "must be a JSON object")
	}
	for k, v := range m {
		var sv string
		if json.Unmarshal(v, &sv) != nil {
			return f, invalid(field+"."+k, "must be a string, got %s", clip(string(v)))
		}
		if err := f.set(field+"."+k, k, sv); err != nil {
			return f, err
		}
	}
	return f, nil
}

// paging reads limit/offset (ojs-http-binding) or page/per_page
// (ojs-admin-api, 1-based pages); the two forms cannot be mixed.
func paging(q url.Values, def int) (limit, offset int, aerr *apiError) {
	num := func(k string, lo, hi int) (int, bool, *apiError) {
		v := q.Get(k)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return 0, false, invalid(k, "must be an integer from %d to %d, got %q", lo, hi, clip(v))
		}
		return n, true, nil
	}
	const maxOffset = 1 << 30
	l, hasL, err1 := num("limit", 1, maxDLLimit)
	o, hasO, err2 := num("offset", 0, maxOffset)
	pp, hasPP, err3 := num("per_page", 1, maxDLLimit)
	pg, hasPg, err4 := num("page", 1, maxOffset/maxDLLimit)
	for _, e := range []*apiError{err1, err2, err3, err4} {
		if e != nil {
			return 0, 0, e
		}
	}
	if (hasL || hasO) && (hasPP || hasPg) {
		return 0, 0, invalid("page", "give limit/offset or page/per_page, not both")
	}
	limit = def
	switch {
	case hasPP || hasPg:
		if hasPP {
			limit = pp
		}
		if hasPg {
			offset = (pg - 1) * limit
		}
	default:
		if hasL {
			limit = l
		}
		offset = o
	}
	return limit, offset, nil
}

// deadLetterList is GET …/dead-letter: a page of dead letters, the most
// recently dead-lettered first, filtered by queue, type, error_type, since
// and until (ojs-dead-letter §9.1, §10), at most 100 per page.
func (s *Server) deadLetterList(admin bool) handler {
	def, key := defaultDLLimit, "jobs"
	if admin {
		def, key = defaultAdminDLLimit, "items"
	}
	return func(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
		q := r.URL.Query()
		limit, offset, aerr := paging(q, def)
		if aerr != nil {
			return 0, nil, aerr
		}
		f, aerr := filterFromQuery(q)
		if aerr != nil {
			return 0, nil, aerr
		}
		f.queue, limit = s.plantDeadLetterPage(f.queue, limit)
		page, total := s.exec.DeadLetters(executor.DeadLetterQuery{Accept: f.match, Offset: offset, Limit: limit})
		out := make([]map[string]any, 0, len(page))
		var size int64
		for k, j := range page {
			// A page is cut by bytes as well as by count (RK-162):
			// has_more and the next offset continue it.
			x := s.store.get(j.ID)
			n := jobEstimate(j, x)
			if k > 0 && size+n > maxAnswer {
				page = page[:k]
				break
			}
			size += n
			out = append(out, s.view(j, x))
		}
		return http.StatusOK, map[string]any{key: out, "pagination": map[string]any{
			"total": total, "limit": limit, "offset": offset, "has_more": offset+len(page) < total,
			"page": offset/limit + 1, "per_page": limit,
		}}, nil
	}
}

// deadLetterGet is GET …/dead-letter/{id}: the job with its error history
// (ojs-dead-letter §9.2).
func (s *Server) deadLetterGet(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	j, aerr := s.deadLetterJob(id)
	if aerr != nil {
		return 0, nil, aerr
	}
	return http.StatusOK, map[string]any{"job": s.view(j, s.store.get(id))}, nil
}

// deadLetterStats is GET …/dead-letter/stats (ojs-dead-letter §10.1):
// total, by_queue, by_error_type ("Unknown" for a job without an error
// entry; each map the 100 largest counts, the rest summed in
// by_queue_others / by_error_type_others), oldest_at, newest_at and the
// retention in force.
func (s *Server) deadLetterStats(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	st := s.exec.DeadLetterStats()
	if n, ok := st.ByErrorType[""]; ok {
		delete(st.ByErrorType, "")
		st.ByErrorType["Unknown"] += n
	}
	maxAge, maxCount := s.exec.Retention()
	v := map[string]any{"total": st.Total,
		"retention": map[string]any{"max_age": policy.FormatDuration(maxAge), "max_count": maxCount}}
	v["by_queue"], v["by_queue_others"] = topCounts(st.ByQueue)
	v["by_error_type"], v["by_error_type_others"] = topCounts(st.ByErrorType)
	setTime(v, "oldest_at", st.Oldest)
	setTime(v, "newest_at", st.Newest)
	return http.StatusOK, v, nil
}

// topCounts keeps the maxDLStatsKeys largest counts of m (ties by name) and
// returns the sum of the others.
func topCounts(m map[string]int) (map[string]int, int) {
	if len(m) <= maxDLStatsKeys {
		return m, 0
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	top, others := make(map[string]int, maxDLStatsKeys), 0
	for i, k := range keys {
		if i < maxDLStatsKeys {
			top[k] = m[k]
		} else {
			others += m[k]
		}
	}
	return top, others
}

// deadLetterJob returns the dead-lettered job id, or the binding's error.
func (s *Server) deadLetterJob(id string) (executor.Job, *apiError) {
	j, err := s.exec.Get(id)
	if err != nil {
		return j, errorFor(err, id)
	}
	if !j.DeadLetter {
		return j, notDeadLetter(id, j.State)
	}
	return j, nil
}

// notDeadLetter is the 404 for a job that is not in the dead letter set.
func notDeadLetter(id string, st executor.State) *apiError {
	return &apiError{status: http.StatusNotFound, code: CodeNotFound,
		message: "job " + strconv.Quote(clip(id)) + " is not in the dead letter set (state " + st.String() + ")",
		details: map[string]any{"resource_type": "dead_letter_job", "resource_id": id, "current_state": st.String()}}
}

// deadLetterErr translates the error of a dead-letter-only executor
// operation: a job that left the dead letter set meanwhile is a 404 as
// deadLetterJob answers it.
func (s *Server) deadLetterErr(err error, id string) *apiError {
	if errors.Is(err, executor.ErrNotDeadLetter) {
		j, gerr := s.exec.Get(id)
		if gerr != nil {
			return errorFor(gerr, id)
		}
		return notDeadLetter(id, j.State)
	}
	return errorFor(err, id)
}

// readRetryBody reads the body of a single retry: none, {} or
// {"override": {…}}; it returns the override (nil: none).
func readRetryBody(w http.ResponseWriter, r *http.Request, limit int64) (json.RawMessage, *apiError) {
	b, aerr := readJSON(w, r, limit, true, 0)
	if aerr != nil || b == nil {
		return nil, aerr
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(b, &body) != nil || body == nil {
		return nil, errf(http.StatusBadRequest, CodeInvalidPayload, "the request body must be empty or a JSON object")
	}
	for k := range body {
		if k != "override" {
			return nil, invalid(k, "unknown field; a dead letter retry takes only \"override\"")
		}
	}
	return body["override"], nil
}

// retryChange is a decoded override (ojs-dead-letter §6.3).
type retryChange struct {
	opts  executor.RetryOptions
	meta  json.RawMessage // the merged meta; nil: unchanged
	shown *policy.Policy  // the client's policy when planted faults run another
	// polCost is what the merged policy costs the job when not shared
	// (policyCache.parse), valid when opts.Policy is set.
	polCost int64
}

// decodeOverride reads override for the dead letter j: queue, args,
// priority replace; meta is merged key by key over the job's; retry is
// merged key by key over the job's policy (RK-194).
func (s *Server) decodeOverride(raw json.RawMessage, j executor.Job, x *extra) (*retryChange, *apiError) {
	c := &retryChange{}
	if raw == nil {
		return c, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalid("override", "must be a JSON object")
	}
	for k, v := range m {
		field := "override." + k
		switch k {
		case "queue":
			var q string
			if json.Unmarshal(v, &q) != nil || len(q) > executor.MaxQueueLen || !queuePattern.MatchString(q) {
				return nil, invalid(field, "must match %s, at most %d bytes, got %s", queuePattern, executor.MaxQueueLen, clip(string(v)))
			}
			c.opts.Queue = q
		case "args":
			a := bytes.TrimSpace(v)
			if len(a) == 0 || a[0] != '[' || !json.Valid(a) {
				return nil, invalid(field, "must be a JSON array")
			}
			if len(a) > executor.MaxArgsSize {
				return nil, invalid(field, "at most %d bytes (executor.MaxArgsSize), got %d", executor.MaxArgsSize, len(a))
			}
			c.opts.Args = a
		case "priority":
			n, aerr := parsePriority(field, v)
			if aerr != nil {
				return nil, aerr
			}
			c.opts.Priority = &n
		case "meta":
			var add map[string]json.RawMessage
			if json.Unmarshal(v, &add) != nil || add == nil {
				return nil, invalid(field, "must be a JSON object")
			}
			merged := map[string]json.RawMessage{}
			if x != nil && len(x.meta) > 0 {
				if json.Unmarshal(x.meta, &merged) != nil {
					merged = map[string]json.RawMessage{}
				}
			}
			for mk, mv := range add {
				merged[mk] = mv
			}
			b, _ := json.Marshal(merged)
			if len(b) > maxMetaSize {
				return nil, invalid(field, "the merged meta is %d bytes, at most %d", len(b), maxMetaSize)
			}
			c.meta = b
		case "retry":
			pol, cost, aerr := s.mergeRetry(j, x, v)
			if aerr != nil {
				return nil, aerr
			}
			run := s.plantPolicy(pol)
			if run != pol {
				c.shown = pol
			}
			c.opts.Policy, c.polCost = run, cost
		default:
			return nil, invalid(field, "unknown field; an override takes queue, args, meta, priority and retry")
		}
	}
	return c, nil
}

// mergeRetry returns the job's policy (as the client gave it) with the keys
// of override replacing its own, read as a PUSH reads options.retry
// (policy.Over: one reading of the bytes sent, RK-261), and what it costs
// the job, counted against WithMaxBytes: a merged policy is the job's
// alone, so its override text plus unsharedPolicyCost.
func (s *Server) mergeRetry(j executor.Job, x *extra, override json.RawMessage) (*policy.Policy, int64, *apiError) {
	pol := j.Policy
	if x != nil && x.shown != nil {
		pol = x.shown
	}
	p, aerr := parseRetry("override.retry", override, policy.Over(pol))
	if aerr != nil {
		return nil, 0, aerr
	}
	return p, int64(len(bytes.TrimSpace(override))) + unsharedPolicyCost, nil
}

// deadLetterRetry is POST …/dead-letter/{id}/retry: the job becomes
// available with attempt 0 and a fresh retry budget, keeping its id and
// error history (ojs-dead-letter §6.1), after the changes of an optional
// {"override": {queue, args, meta, priority, retry}} (§6.3).
func (s *Server) deadLetterRetry(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	raw, aerr := readRetryBody(w, r, s.cfg.maxBody)
	if aerr != nil {
		return 0, nil, aerr
	}
	id := r.PathValue("id")
	j, aerr := s.deadLetterJob(id)
	if aerr != nil {
		return 0, nil, aerr
	}
	x := s.store.get(id)
	c, aerr := s.decodeOverride(raw, j, x)
	if aerr != nil {
		return 0, nil, aerr
	}
	var nx *extra
	if c.meta != nil || c.shown != nil || c.opts.Args != nil || c.opts.Policy != nil && c.polCost != sizeOfPolicy(x) {
		cp := extra{}
		if x != nil {
			cp = *x
		}
		if c.meta != nil {
			cp.size += int64(len(c.meta) - len(cp.meta))
			cp.meta = c.meta
		}
		if c.opts.Args != nil {
			cp.size += int64(len(c.opts.Args) - len(j.Args))
		}
		if c.opts.Policy != nil {
			cp.size += c.polCost - cp.polCost
			cp.polCost = c.polCost
			cp.shown = c.shown
		}
		// The growth is claimed in PUSH's step (reserveBytes), so that
		// concurrent overrides cannot together pass WithMaxBytes, and held
		// until the store counts it.
		release, aerr := s.reserveBytes("override", cp.size-sizeOf(x), "a dead letter")
		if aerr != nil {
			return 0, nil, aerr
		}
		defer release()
		nx = &cp
	}
	c.opts.DeadLetterOnly = true
	nj, err := s.exec.RetryWith(id, c.opts)
	if err != nil {
		return 0, nil, s.deadLetterErr(err, id)
	}
	if nx != nil {
		s.store.put(id, nx)
	} else {
		nx = x
	}
	v := s.view(nj, nx)
	v["re_enqueued_at"] = stamp(nj.EnqueuedAt)
	s.emit("job.enqueued", nj, nj.EnqueuedAt, map[string]any{})
	return http.StatusOK, map[string]any{"job": v}, nil
}

// bulkBody reads {"filter": {…}, "confirm": true} (and "older_than", the
// admin API's purge filter). confirm must be true (ojs-admin-api §8).
func bulkBody(w http.ResponseWriter, r *http.Request, limit int64) (dlFilter, *apiError) {
	var body map[string]json.RawMessage
	if aerr := readBody(w, r, limit, &body); aerr != nil {
		return dlFilter{}, aerr
	}
	var f dlFilter
	confirmed := false
	for k, v := range body {
		switch k {
		case "filter":
			var aerr *apiError
			if f, aerr = filterFromJSON("filter", v); aerr != nil {
				return f, aerr
			}
		case "confirm":
			if json.Unmarshal(v, &confirmed) != nil {
				return f, invalid("confirm", "must be a boolean")
			}
		case "older_than":
		default:
			return f, invalid(k, "unknown field; a bulk operation takes filter, older_than and confirm")
		}
	}
	if v, ok := body["older_than"]; ok {
		var sv string
		if json.Unmarshal(v, &sv) != nil {
			return f, invalid("older_than", "must be an RFC 3339 timestamp")
		}
		if aerr := f.set("older_than", "older_than", sv); aerr != nil {
			return f, aerr
		}
	}
	if !confirmed {
		return f, invalid("confirm", "must be true: a bulk operation acts on every matching dead letter")
	}
	return f, nil
}

// bulkPick returns at most maxDLBulk of the matching dead letters, the
// first dead-lettered first, and whether more match.
func (s *Server) bulkPick(f dlFilter) ([]executor.Job, int) {
	return s.exec.DeadLetters(executor.DeadLetterQuery{Accept: f.match, Limit: maxDLBulk, OldestFirst: true})
}

// deadLetterBulkRetry is POST …/dead-letter/retry {"filter": {queue, type,
// error_type, since, until}, "confirm": true} (ojs-dead-letter §6.2): each
// match is retried as by the single retry, the first dead-lettered first,
// at most 1000 per request.
func (s *Server) deadLetterBulkRetry(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	f, aerr := bulkBody(w, r, s.cfg.maxBody)
	if aerr != nil {
		return 0, nil, aerr
	}
	jobs, matched := s.bulkPick(f)
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs {
		nj, err := s.exec.RetryWith(j.ID, executor.RetryOptions{DeadLetterOnly: true})
		if err != nil {
			continue // retried, deleted or pruned meanwhile
		}
		ids = append(ids, nj.ID)
		s.emit("job.enqueued", nj, nj.EnqueuedAt, map[string]any{})
	}
	return http.StatusOK, map[string]any{"retried": len(ids), "matched": matched,
		"has_more": matched > len(jobs), "job_ids": ids}, nil
}

// deadLetterPurge is DELETE …/dead-letter with the body of a bulk retry:
// each match is deleted, at most 1000 per request.
func (s *Server) deadLetterPurge(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
	f, aerr := bulkBody(w, r, s.cfg.maxBody)
	if aerr != nil {
		return 0, nil, aerr
	}
	jobs, matched := s.bulkPick(f)
	n := 0
	for _, j := range jobs {
		if s.exec.DeleteDeadLetter(j.ID) == nil {
			s.store.drop(j.ID)
			n++
		}
	}
	return http.StatusOK, map[string]any{"deleted": n, "matched": matched, "has_more": matched > len(jobs)}, nil
}

// deadLetterDelete is DELETE …/dead-letter/{id}: 200 {"deleted": true,
// "job_id"} on the spec's path, 204 on the admin path (the suite's
// EXT-DLQ-004).
func (s *Server) deadLetterDelete(admin bool) handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, *apiError) {
		id := r.PathValue("id")
		if _, aerr := s.deadLetterJob(id); aerr != nil {
			return 0, nil, aerr
		}
		if err := s.exec.DeleteDeadLetter(id); err != nil {
			return 0, nil, s.deadLetterErr(err, id)
		}
		s.store.drop(id)
		if admin {
			return http.StatusNoContent, nil, nil
		}
		return http.StatusOK, map[string]any{"deleted": true, "job_id": id}, nil
	}
}
