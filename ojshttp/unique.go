package ojshttp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/policy"
)

// Unique jobs (spec/ojs-unique-jobs.md), RK-152.
//
// A PUSH with options.unique computes a uniqueness key: the SHA-256, in
// lowercase hex, of the compact JSON object {"args"?, "meta"?, "queue"?,
// "type"} with keys sorted at every level and numbers in their shortest
// form. Before the job is created the server looks for a job pushed with a
// unique policy under the same key, in one of the policy's states and
// created less than period ago; when one exists, on_conflict decides.
// Unique PUSHes are serialised (one mutex), so the check and the insert are
// atomic within the server: uniqueness is strong.

// Limits of a unique policy.
const (
	maxUniqueKeys = 64  // args_keys and meta_keys, each
	maxPerKey     = 256 // jobs remembered under one uniqueness key
)

// Conflict strategies (ojs-unique-jobs §5).
const (
	conflictReject                = "reject"
	conflictReplace               = "replace"
	conflictReplaceExceptSchedule = "replace_except_schedule"
	conflictIgnore                = "ignore"
)

// uniquePolicy is a parsed options.unique.
type uniquePolicy struct {
	queue, args, meta bool // dimensions besides type, which is always in
	argsKeys          []string
	metaKeys          []string
	period            time.Duration // 0: no expiry
	states            [16]bool      // indexed by executor.State
	onConflict        string
	raw               json.RawMessage // echoed in the job view
}

// defaultUniqueStates are the non-terminal states (§6.1).
var defaultUniqueStates = []executor.State{executor.Available, executor.Active, executor.Scheduled, executor.Retryable, executor.Pending}

// stateByName maps the eight OJS state names to executor states.
var stateByName = func() map[string]executor.State {
	m := map[string]executor.State{}
	for s := executor.Scheduled; s <= executor.Discarded; s++ {
		m[s.String()] = s
	}
	return m
}()

// parseUnique reads options.unique; an invalid policy is a 400
// invalid_request naming the field (§2.2).
func parseUnique(v json.RawMessage) (*uniquePolicy, *apiError) {
	var in struct {
		Keys       *[]string    `json:"keys"`
		Key        *[]string    `json:"key"`
		ArgsKeys   *[]string    `json:"args_keys"`
		MetaKeys   *[]string    `json:"meta_keys"`
		Period     *string      `json:"period"`
		PeriodMS   *json.Number `json:"period_ms"`
		States     *[]string    `json:"states"`
		OnConflict *string      `json:"on_conflict"`
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return nil, invalid("options.unique", "must be a JSON object")
	}
	// encoding/json matches struct fields without regard to case.
	if aerr := strictPart("options.unique", v, 1); aerr != nil {
		return nil, aerr
	}
	if err := dec.Decode(&in); err != nil {
		return nil, invalid("options.unique", "fields are keys (or key), args_keys, meta_keys, period (or period_ms), states, on_conflict: %s", jsonErr(err))
	}
	u := &uniquePolicy{onConflict: conflictReject, raw: v}
	if in.Key != nil {
		// ojs-core / ojs-json-format §3.5 (RK-178): key names the args
		// fields of the fingerprint, all args when empty; the type is
		// always in. It is keys ["type","args"] with args_keys.
		if in.Keys != nil || in.ArgsKeys != nil {
			return nil, invalid("options.unique.key", "give key (ojs-core) or keys and args_keys (ojs-unique-jobs), not both")
		}
		u.args = true
		if len(*in.Key) > 0 {
			in.ArgsKeys = in.Key
		}
	}
	if in.PeriodMS != nil {
		if in.Period != nil {
			return nil, invalid("options.unique.period_ms", "give period or period_ms, not both")
		}
		ms, err := intField(json.RawMessage(in.PeriodMS.String()))
		if err != nil || ms <= 0 || ms > maxDurationMS {
			return nil, invalid("options.unique.period_ms", "must be a positive integer number of milliseconds, at most %d, got %s", maxDurationMS, clip(in.PeriodMS.String()))
		}
		u.period = time.Duration(ms) * time.Millisecond
	}
	if in.Keys != nil {
		for i, k := range *in.Keys {
			switch k {
			case "type":
			case "queue":
				u.queue = true
			case "args":
				u.args = true
			case "meta":
				u.meta = true
			default:
				return nil, invalid("options.unique.keys["+strconv.Itoa(i)+"]", "must be type, queue, args or meta (case-sensitive), got %q", clip(k))
			}
		}
	}
	for _, f := range []struct {
		name string
		in   *[]string
		out  *[]string
	}{{"args_keys", in.ArgsKeys, &u.argsKeys}, {"meta_keys", in.MetaKeys, &u.metaKeys}} {
		if f.in == nil {
			continue
		}
		if len(*f.in) > maxUniqueKeys {
			return nil, invalid("options.unique."+f.name, "at most %d keys, got %d", maxUniqueKeys, len(*f.in))
		}
		*f.out = slices.Clone(*f.in)
	}
	if u.meta && len(u.metaKeys) == 0 {
		return nil, invalid("options.unique.meta_keys", "must name at least one key when keys holds \"meta\"")
	}
	if in.Period != nil {
		d, err := policy.ParseDuration(*in.Period)
		if err != nil || d <= 0 {
			return nil, invalid("options.unique.period", "must be a positive ISO 8601 duration, got %q", clip(*in.Period))
		}
		u.period = d
	}
	states := defaultUniqueStates
	if in.States != nil {
		if len(*in.States) == 0 {
			return nil, invalid("options.unique.states", "must name at least one state")
		}
		states = states[:0:0]
		for i, name := range *in.States {
			st, ok := stateByName[name]
			if !ok {
				return nil, invalid("options.unique.states["+strconv.Itoa(i)+"]", "must be an OJS state name, got %q", clip(name))
			}
			states = append(states, st)
		}
	}
	for _, st := range states {
		u.states[st] = true
	}
	if in.OnConflict != nil {
		switch *in.OnConflict {
		case conflictReject, conflictReplace, conflictReplaceExceptSchedule, conflictIgnore:
			u.onConflict = *in.OnConflict
		default:
			return nil, invalid("options.unique.on_conflict", "must be reject, replace, replace_except_schedule or ignore, got %q", clip(*in.OnConflict))
		}
	}
	return u, nil
}

// uniqueKey computes the job's uniqueness key (§4). args_keys select the
// named keys of the args' object elements (OJS args is an array): each key
// is taken from the first object element holding it, and a key no element
// holds is an error (§2.2).
func uniqueKey(u *uniquePolicy, typ, queue string, args, meta json.RawMessage) (string, *apiError) {
	dims := map[string]any{"type": typ}
	if u.queue {
		if queue == "" {
			queue = executor.DefaultQueue
		}
		dims["queue"] = queue
	}
	if u.args {
		var all []any
		if err := json.Unmarshal(args, &all); err != nil {
			return "", invalid("args", "cannot be canonicalised for options.unique (numbers must fit an IEEE 754 double, RFC 8785): %s", jsonErr(err))
		}
		if u.argsKeys == nil {
			dims["args"] = all
		} else {
			sel := map[string]any{}
			for i, k := range u.argsKeys {
				for _, el := range all {
					if obj, ok := el.(map[string]any); ok {
						if val, ok := obj[k]; ok {
							sel[k] = val
							break
						}
					}
				}
				if _, ok := sel[k]; !ok {
					return "", invalid("options.unique.args_keys["+strconv.Itoa(i)+"]", "no object in args has the key %q", clip(k))
				}
			}
			dims["args"] = sel
		}
	}
	if u.meta {
		var m map[string]any
		if len(meta) > 0 {
			if err := json.Unmarshal(meta, &m); err != nil {
				return "", invalid("meta", "cannot be canonicalised for options.unique (numbers must fit an IEEE 754 double, RFC 8785): %s", jsonErr(err))
			}
		}
		sel := map[string]any{}
		for _, k := range u.metaKeys {
			if val, ok := m[k]; ok {
				sel[k] = val
			}
		}
		dims["meta"] = sel
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(dims); err != nil { // decoded JSON always encodes
		return "", invalid("args", "cannot canonicalise: %v", err)
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:]), nil
}

// duplicateOf returns the job a unique PUSH conflicts with: a job indexed
// under key, in one of u's states, created less than u.period ago.
func (s *Server) duplicateOf(u *uniquePolicy, key string) (executor.Job, bool) {
	now := s.cfg.clock.Now()
	for _, id := range s.store.uniqueIDs(key) {
		j, err := s.exec.Get(id)
		if err != nil {
			s.store.unindex(key, id)
			continue
		}
		if !u.states[j.State] {
			continue
		}
		if u.period > 0 && !now.Before(j.CreatedAt.Add(u.period)) {
			continue
		}
		return j, true
	}
	return executor.Job{}, false
}

// resolveUnique applies on_conflict to the unique jobs of a PUSH before
// they are created, without changing anything. It returns, per job, the
// existing job that an "ignore" conflict answers with (nil: the job is
// created), and the jobs a "replace" conflict cancels: the executor
// cancels them in the step that creates the new jobs, and only if every
// job of the PUSH is accepted (RK-160). An active job cannot be replaced
// and falls back to reject (§5.2).
func (s *Server) resolveUnique(ps []*pushed) (ignored []*executor.Job, cancel []string, aerr *apiError) {
	seen := map[string]int{}
	for i, p := range ps {
		u := p.x.unique
		if u == nil {
			continue
		}
		if first, dup := seen[p.x.uniqueKey]; dup {
			return nil, nil, dupErr(i, len(ps), "jobs["+strconv.Itoa(first)+"] of the same batch", "", p.x.uniqueKey)
		}
		seen[p.x.uniqueKey] = i
		old, ok := s.duplicateOf(u, p.x.uniqueKey)
		if !ok {
			continue
		}
		switch u.onConflict {
		case conflictIgnore:
			if ignored == nil {
				ignored = make([]*executor.Job, len(ps))
			}
			ignored[i] = &old
		case conflictReplace, conflictReplaceExceptSchedule:
			if old.State == executor.Active {
				e := dupErr(i, len(ps), "job "+strconv.Quote(old.ID), old.State.String(), p.x.uniqueKey)
				e.message += " (an active job cannot be replaced)"
				e.details["existing_job_id"] = old.ID
				return nil, nil, e
			}
			if old.State.Terminal() {
				continue // nothing to cancel: the new job is simply created
			}
			if u.onConflict == conflictReplaceExceptSchedule && old.State == executor.Scheduled {
				p.spec.ScheduledAt = old.ScheduledAt
			}
			cancel = append(cancel, old.ID)
		default:
			e := dupErr(i, len(ps), "job "+strconv.Quote(old.ID), old.State.String(), p.x.uniqueKey)
			e.details["existing_job_id"] = old.ID
			return nil, nil, e
		}
	}
	return ignored, cancel, nil
}

// dupErr is the 409 duplicate of a unique conflict (§5.1).
func dupErr(i, n int, what, state, key string) *apiError {
	e := &apiError{status: http.StatusConflict, code: CodeDuplicate,
		message: "a job matching the uniqueness key already exists: " + what,
		details: map[string]any{"uniqueness_key": key},
		hint:    "options.unique matched an existing job; on_conflict ignore or replace, a period or narrower states allow the PUSH"}
	if state != "" {
		e.details["existing_job_state"] = state
	}
	if n > 1 {
		e.message = "jobs[" + strconv.Itoa(i) + "]: " + e.message
		e.details["index"] = i
	}
	return e
}
