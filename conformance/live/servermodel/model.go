package servermodel

import (
	"encoding/json"
	"github.com/retrykit/retrykit/internal/sat"
	"math"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// Kind is what an observation saw.
type Kind uint8

// The kinds of observations.
const (
	// FailAnswer is the answer to the FAIL of attempt N: State, Attempt,
	// MaxAttempts, the delay window of next_attempt_at (HasDelay), and
	// whether the job was then listed in the dead-letter queue (Listed).
	FailAnswer Kind = iota + 1
	// FetchAttempt is the attempt a FETCH showed for delivery N.
	FetchAttempt
	// InfoAttempt is the attempt INFO showed after N failed attempts
	// (N 0: a job not yet started).
	InfoAttempt
	// HistoryAttempt is the attempt of error history entry N.
	HistoryAttempt
	// ExpiryCounted is a delivery after an expired reservation: Yes when
	// the expiry counted as an attempt.
	ExpiryCounted
	// Delivery is a retry handed out: Yes when before its next_attempt_at.
	// A model of early retries reproduces either answer (a retry polled
	// late is not early), the reference only No.
	Delivery
	// DeadLetterFilter is a dead-letter list read with ?queue=: Yes when it
	// listed jobs of other queues. A model of an ignored filter reproduces
	// either answer, the reference only No.
	DeadLetterFilter
	// StatedDelay is a FAIL answer whose spec answer the check computed
	// itself from intervals the job's policy names (an error rule's, a
	// jitter mode's, a retry whose time the timeouts extension plans):
	// retryable after a delay in [WantLo, WantHi], or discarded when Slack
	// is not 0 and the delay would exceed it (no time left for the retry).
	// Policy, when not nil, is the policy (jitter off) whose delay after
	// attempt N the window is built on: a model scales the window as it
	// scales that delay, and exhausts the job as it would after attempt N.
	// Asked marks a delay the FAIL asked for (retry_after, a snooze past
	// its limit), which no model scales. Only the State and the delay
	// window are judged.
	StatedDelay
	// AnswerAttempt is the attempt a FAIL answer showed when N attempts
	// were spent (a snooze past its limit, say).
	AnswerAttempt
	// Redelivery is whether a job under Policy whose N attempts all
	// ended (expired reservations) was handed out again (Yes).
	Redelivery
	// Promotion is a retry due Delay after its failure (DelayLo) that
	// became fetchable Late after its next_attempt_at (a FETCH that took
	// long proves nothing and is not recorded). The reference makes it
	// fetchable within the delay itself (Late < DelayLo).
	Promotion
)

// Failure is what a FAIL reported.
type Failure struct {
	Type    string // error.type ("" when not sent)
	Code    string // error.code ("" when not sent)
	Message string
}

// Obs is one observation of a run: what the checker did and what the
// server answered. The zero value is not useful.
type Obs struct {
	Check   string         // the check it belongs to
	Kind    Kind           //
	Policy  map[string]any // the retry object as pushed; nil: none (the defaults)
	Failure Failure        // FailAnswer: what was reported
	N       int            // the 1-based attempt, delivery or entry concerned

	State            string        // FailAnswer: the state answered
	Attempt          *int          // the attempt shown (nil: absent)
	MaxAttempts      *int          // FailAnswer: max_attempts (nil: not judged)
	DelayLo, DelayHi time.Duration // FailAnswer: next_attempt_at − failure, on the server's clock
	HasDelay         bool          // the delay window is known
	Listed           *bool         // FailAnswer: listed in the dead-letter queue (nil: not looked)
	Yes              bool          // ExpiryCounted, Delivery, DeadLetterFilter, Redelivery
	// StatedDelay: the spec's delay window and, if not 0, the time left
	// for a retry (a longer delay discards the job).
	WantLo, WantHi, Slack time.Duration
	Asked                 bool
	Late                  time.Duration // Promotion: fetchable this long after next_attempt_at
}

// quirk is one broken rule of the reference server.
type quirk uint8

const (
	refServer quirk = iota
	qNoMergeMax
	qNoMergeInitial
	qNoMergeCoef
	qNoMergeMaxIv
	qNoMergeJitter
	qNoMergeOnEx
	qRegex
	qGlob
	qStarGlob
	qMessage
	qCase
	qNoPostCap
	qNoPreCap
	qNoJitter
	qFetchFrom0
	qFetchHigh
	qAttemptFrom0
	qHistoryFrom0
	qExpiryNotCounted
	qCodesIgnored
	qOnExListsAll
	qOnExNeverListed
	qIntervalMsIgnored
	qIntervalISOIgnored
	qTypeFromCode
	qNonRetryableDiscards
	qBackoffTypeIgnored
	qEarly
	qDLQFilterIgnored
	numQuirks
)

// set is a server: the reference with a set of catalogue quirks (bit
// q%64 of word q/64 for quirk q, so the catalogue may grow past 64) and
// the parameter values of a fitted family (family.go).
type set struct {
	q   [(numQuirks + 63) / 64]uint64
	dev deviation
}

// has reports whether s has quirk q.
func (s set) has(q quirk) bool { return s.q[q/64]&(1<<(q%64)) != 0 }

// with returns s with quirk q added.
func (s set) with(q quirk) set {
	s.q[q/64] |= 1 << (q % 64)
	return s
}

// of returns the server with the quirks qs.
func of(qs ...quirk) set {
	var s set
	for _, q := range qs {
		s = s.with(q)
	}
	return s
}

// Model is one named server bug: the reference server with one rule
// broken. Take models from [Models]; a Model is immutable.
type Model struct {
	Name string // "no-merge-max-attempts", ...
	Fix  string // one line: what to change in the server
	// Flag, when not empty, is the checker flag under which this pattern
	// is a dialect of the binding rather than a bug ("--interval-form iso").
	Flag string
	// Family, for a model fitted to the run's observations, is its
	// family's name ("strategy-as"); "" for a catalogue model.
	Family string
	q      quirk
	dev    deviation
}

// server returns the server m models.
func (m Model) server() set {
	if m.Family != "" {
		return set{dev: m.dev}
	}
	return of(m.q)
}

var catalogue = []Model{
	{Name: "no-merge-max-attempts", Fix: "merge a partial policy over the defaults field by field: an absent max_attempts is 3, not 0 (a job that is never retried)", Flag: "", q: qNoMergeMax},
	{Name: "no-merge-initial-interval", Fix: "an absent initial_interval is PT1S, not zero", Flag: "", q: qNoMergeInitial},
	{Name: "no-merge-coefficient", Fix: "an absent backoff_coefficient is 2.0, not 1", Flag: "", q: qNoMergeCoef},
	{Name: "no-merge-max-interval", Fix: "an absent max_interval is PT5M: cap the delay there instead of leaving it uncapped", Flag: "", q: qNoMergeMaxIv},
	{Name: "no-merge-jitter", Fix: "an absent jitter is true: jitter the delay unless the policy says jitter: false", Flag: "", q: qNoMergeJitter},
	{Name: "no-merge-on-exhaustion", Fix: "an absent on_exhaustion is discard, not dead_letter", Flag: "", q: qNoMergeOnEx},
	{Name: "regex-match", Fix: `match non_retryable_errors exactly or by the ".*" prefix; do not compile them as regular expressions ("a.b" matches "axb")`, Flag: "", q: qRegex},
	{Name: "glob-match", Fix: `match non_retryable_errors exactly or by the ".*" prefix; do not read them as shell globs ("auth*" matches "authx", "a?b" "axb")`, Flag: "", q: qGlob},
	{Name: "star-glob-match", Fix: `match non_retryable_errors exactly or by the ".*" prefix; a "*" is not a wildcard ("auth*" matches "authx")`, Flag: "", q: qStarGlob},
	{Name: "message-match", Fix: "match non_retryable_errors against the error type only, never the message", Flag: "", q: qMessage},
	{Name: "case-insensitive-match", Fix: "match non_retryable_errors case-sensitively", Flag: "", q: qCase},
	{Name: "no-cap-after-jitter", Fix: "cap the delay at max_interval again after multiplying by the jitter (cap, jitter, cap)", Flag: "", q: qNoPostCap},
	{Name: "no-cap-before-jitter", Fix: "cap the raw delay at max_interval before applying jitter, then cap again (cap, jitter, cap)", Flag: "", q: qNoPreCap},
	{Name: "jitter-ignored", Fix: "apply jitter: multiply the capped delay by 0.5 + r, r uniform in [0, 1)", Flag: "", q: qNoJitter},
	{Name: "fetch-attempt-from-zero", Fix: "count the attempt when the job is handed out: the first FETCH shows attempt 1, not 0", Flag: "", q: qFetchFrom0},
	{Name: "fetch-attempt-high", Fix: "a FETCH shows the attempt being handed out (1 for the first delivery), not one more", Flag: "", q: qFetchHigh},
	{Name: "attempt-from-zero", Fix: "attempt is the 1-based number of the attempt: 1 for the first, in FETCH, INFO and the FAIL answer", Flag: "", q: qAttemptFrom0},
	{Name: "history-attempt-from-zero", Fix: "number error history entries by the attempt that failed, from 1", Flag: "", q: qHistoryFrom0},
	{Name: "expiry-not-counted", Fix: "count an expired reservation as a failed attempt (retry spec 9.2): raise the attempt and apply the policy", Flag: "", q: qExpiryNotCounted},
	{Name: "handler-codes-ignored", Fix: "obey the handler codes in error.code (RETRY, DISCARD, FAIL, DEAD_LETTER) before the policy", Flag: "", q: qCodesIgnored},
	{Name: "on-exhaustion-ignored", Fix: "list only jobs dead-lettered under on_exhaustion dead_letter (or DEAD_LETTER) in the dead-letter queue, not every discarded job", Flag: "", q: qOnExListsAll},
	{Name: "dead-letter-never", Fix: "apply on_exhaustion dead_letter: move an exhausted job to the dead-letter queue", Flag: "", q: qOnExNeverListed},
	{Name: "interval-ms-ignored", Fix: "read initial_interval_ms and max_interval_ms (the binding's examples), or reject them at PUSH", Flag: "--interval-form iso", q: qIntervalMsIgnored},
	{Name: "interval-iso-ignored", Fix: "read initial_interval and max_interval as ISO 8601 durations (the retry spec)", Flag: "--interval-form ms", q: qIntervalISOIgnored},
	{Name: "type-from-code-only", Fix: "read the error type from error.type when given (openapi JobError, retry spec 7.3), not only from error.code", Flag: "--error-type-field code", q: qTypeFromCode},
	{Name: "non-retryable-discards", Fix: "apply on_exhaustion to a non-retryable failure (retry spec): dead-letter it under dead_letter", Flag: "--nonretryable-discards", q: qNonRetryableDiscards},
	{Name: "backoff-type-ignored", Fix: "honour openapi's backoff_type (constant, linear) or reject it at PUSH; never accept and ignore it", Flag: "", q: qBackoffTypeIgnored},
	{Name: "early-retry", Fix: "make a retry fetchable only at its next_attempt_at, never before", Flag: "", q: qEarly},
	{Name: "dead-letter-queue-filter-ignored", Fix: "filter GET /ojs/v1/dead-letter by its queue parameter", Flag: "", q: qDLQFilterIgnored},
}

// Models returns the catalogue, a fresh slice on every call.
func Models() []Model { return append([]Model(nil), catalogue...) }

// effective is a policy as a server with quirks s reads it.
type effective struct {
	max      int
	spec     policy.Spec
	noCap    bool
	patterns []string
	dead     bool
}

// read returns the policy a server with quirks s stores for the retry
// object m (nil: none).
func read(s set, m map[string]any) effective {
	e := effective{max: 3, spec: policy.Spec{InitialInterval: time.Second, BackoffCoefficient: 2, MaxInterval: 5 * time.Minute, Jitter: true}}
	if m == nil {
		if s.dev.stratSet && s.dev.stratFrom&(1<<backoff.Exponential) != 0 {
			e.spec.Strategy = s.dev.stratTo
		}
		return e
	}
	if v, ok := num(m["max_attempts"]); ok {
		e.max = int(v)
	} else if s.has(qNoMergeMax) {
		e.max = 0
	}
	initial, iok := dur(s, m, "initial_interval")
	switch {
	case iok:
		e.spec.InitialInterval = initial
	case s.has(qNoMergeInitial):
		e.spec.InitialInterval = 0
	}
	if v, ok := num(m["backoff_coefficient"]); ok {
		e.spec.BackoffCoefficient = v
	} else if s.has(qNoMergeCoef) {
		e.spec.BackoffCoefficient = 1
	}
	maxIv, mok := dur(s, m, "max_interval")
	switch {
	case mok:
		e.spec.MaxInterval = maxIv
	case s.has(qNoMergeMaxIv):
		e.noCap = true
	}
	if v, ok := m["jitter"].(bool); ok {
		e.spec.Jitter = v
	} else if s.has(qNoMergeJitter) {
		e.spec.Jitter = false
	}
	if v, ok := m["on_exhaustion"].(string); ok {
		e.dead = v == "dead_letter"
	} else if s.has(qNoMergeOnEx) {
		e.dead = true
	}
	for _, k := range []string{"backoff_type", "backoff_strategy"} {
		v, _ := m[k].(string)
		st, named := backoff.Exponential, true
		switch {
		case s.has(qBackoffTypeIgnored) && k == "backoff_type":
			named = false
		case v == "constant" || v == "none" || v == "fixed":
			st = backoff.None
		case v == "linear":
			st = backoff.Linear
		case v == "polynomial":
			st = backoff.Polynomial
		case v == "exponential":
		default:
			named = false
		}
		// the family strategy-as is about the strategy named in
		// backoff_strategy (RK-01), or by none at all
		if named && (k == "backoff_strategy" || s.dev.stratTyped) && s.dev.stratSet && s.dev.stratFrom&(1<<st) != 0 {
			st = s.dev.stratTo
		}
		if named {
			e.spec.Strategy = st
		}
	}
	if _, ok := m["backoff_strategy"]; !ok && s.dev.stratSet && s.dev.stratFrom&(1<<backoff.Exponential) != 0 {
		if _, typed := m["backoff_type"]; !typed {
			e.spec.Strategy = s.dev.stratTo
		}
	}
	switch p := m["non_retryable_errors"].(type) {
	case []string:
		e.patterns = p
	case []any:
		for _, x := range p {
			if s, ok := x.(string); ok {
				e.patterns = append(e.patterns, s)
			}
		}
	}
	return e
}

// dur reads the duration field f of m in either form (ISO 8601 or f+"_ms"
// integers), as a server with quirks s does.
func dur(s set, m map[string]any, f string) (time.Duration, bool) {
	if v, ok := m[f].(string); ok && !s.has(qIntervalISOIgnored) {
		if d, err := policy.ParseDuration(v); err == nil {
			return d, true
		}
	}
	if v, ok := num(m[f+"_ms"]); ok && !s.has(qIntervalMsIgnored) {
		return time.Duration(v * float64(time.Millisecond)), true
	}
	return 0, false
}

// num reads a JSON number of m.
func num(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// bounds returns the delay range after attempt n under e, for a server
// with quirks s.
func (e effective) bounds(s set, n int) (lo, hi time.Duration) {
	lo, hi, _ = e.draws(s, n)
	return lo, hi
}

// draws is bounds with the share of the jitter draws that the cap after
// jitter puts at hi exactly (0 when the cap clips none): min(1.5·d, max)
// is max for every draw m ≥ max/d, so a delay d at the cap gives hi for
// half the draws, a point and not a spread.
func (e effective) draws(s set, n int) (lo, hi time.Duration, atHi float64) {
	lo, hi, atHi = e.rawDraws(s, n)
	if f := s.dev.factor; f != 0 {
		lo, hi = scale(lo, f), scale(hi, f)
	}
	return lo, hi, atHi
}

// capShare is the share of a uniform draw from [lo, hi) that a cap c
// clips to c.
func capShare(lo, hi, c time.Duration) float64 {
	switch {
	case hi <= c:
		return 0
	case lo >= c:
		return 1
	}
	return float64(hi-c) / float64(hi-lo)
}

// rawDraws is draws before a constant factor.
func (e effective) rawDraws(s set, n int) (lo, hi time.Duration, atHi float64) {
	sp := e.spec
	if sp.InitialInterval <= 0 {
		return 0, 0, 0
	}
	if e.noCap || s.dev.noCap {
		sp.MaxInterval = time.Duration(1<<63 - 1)
	}
	if sp.MaxInterval < sp.InitialInterval {
		sp.MaxInterval = sp.InitialInterval
	}
	if sp.BackoffCoefficient < 1 {
		sp.BackoffCoefficient = 1
	}
	if k := s.dev.delayShift; k != 0 && (s.dev.shiftOnly == 0 || s.dev.shiftOnly&(1<<sp.Strategy) != 0) {
		n += k
	}
	div := 1.0
	if n < 1 {
		// the formula before attempt 1: the exponential strategy's
		// initial_interval × coefficient^(n−1), none's initial_interval
		// (it has no n), linear's and polynomial's 0
		switch sp.Strategy {
		case backoff.Exponential:
			div = math.Pow(sp.BackoffCoefficient, float64(1-n))
		case backoff.None:
		default:
			return 0, 0, 0
		}
		n = 1
	}
	if f := s.dev.capFactor; f != 0 {
		// a cap of f × max_interval, below initial_interval too
		return e.cappedAt(s, n, div, scale(sp.MaxInterval, f))
	}
	jitter := sp.Jitter && !s.has(qNoJitter)
	sp.Jitter = false
	sp.MaxAttempts = max(e.max, 1)
	sp.OnExhaustion = policy.Discard
	sp.NonRetryableErrors = nil
	raw := sp
	raw.MaxInterval = time.Duration(1<<63 - 1)
	p, err := policy.New(sp)
	if err != nil {
		return 0, 0, 0
	}
	base, _ := p.Backoff().Bounds(n)
	base = time.Duration(float64(base) / div)
	if !jitter {
		return base, base, 0
	}
	if l, h := s.dev.jitterLo, s.dev.jitterHi; l != 0 || h != 0 {
		ulo, uhi := scale(base, l), scale(base, h)
		return ulo, min(uhi, sp.MaxInterval), capShare(ulo, uhi, sp.MaxInterval)
	}
	switch {
	case s.has(qNoPreCap):
		// cap only after jitter: min(raw·m, max)
		rp, err := policy.New(raw)
		if err != nil {
			return 0, 0, 0
		}
		r, _ := rp.Backoff().Bounds(n)
		return min(r/2, sp.MaxInterval), min(r+r/2, sp.MaxInterval), capShare(r/2, r+r/2, sp.MaxInterval)
	case s.has(qNoPostCap):
		return base / 2, base + base/2, 0
	}
	return base / 2, min(base+base/2, sp.MaxInterval), capShare(base/2, base+base/2, sp.MaxInterval)
}

// cappedAt is rawDraws for a server that caps the delay after attempt n
// (divided by div) at c, before and after jitter, whatever c is.
func (e effective) cappedAt(s set, n int, div float64, c time.Duration) (lo, hi time.Duration, atHi float64) {
	sp := e.spec
	sp.MaxInterval = time.Duration(1<<63 - 1)
	sp.Jitter = false
	sp.MaxAttempts = max(e.max, 1)
	sp.OnExhaustion = policy.Discard
	sp.NonRetryableErrors = nil
	if sp.BackoffCoefficient < 1 {
		sp.BackoffCoefficient = 1
	}
	p, err := policy.New(sp)
	if err != nil {
		return 0, 0, 0
	}
	base, _ := p.Backoff().Bounds(n)
	base = min(time.Duration(float64(base)/div), c)
	if !e.spec.Jitter || s.has(qNoJitter) {
		return base, base, 0
	}
	return base / 2, min(base+base/2, c), capShare(base/2, base+base/2, c)
}

// matches reports whether a server with quirks s finds str in patterns.
func matches(s set, patterns []string, str string) bool {
	if str == "" || len(patterns) == 0 {
		return false
	}
	if m, err := errmatch.Compile(patterns); err == nil && m.Match(str) {
		return true
	}
	for _, p := range patterns {
		switch {
		case s.has(qCase) && strings.EqualFold(p, str):
			return true
		case s.has(qCase) && strings.HasSuffix(p, ".*") && len(str) >= len(p)-1 && strings.EqualFold(str[:len(p)-1], p[:len(p)-1]):
			return true
		case s.has(qRegex) && regexMatch(p, str):
			return true
		case s.has(qGlob):
			if ok, err := path.Match(p, str); err == nil && ok {
				return true
			}
		case s.has(qStarGlob) && regexMatch(strings.ReplaceAll(regexp.QuoteMeta(p), `\*`, ".*"), str):
			return true
		}
	}
	return false
}

func regexMatch(p, s string) bool {
	re, err := regexp.Compile("^(?:" + p + ")$")
	return err == nil && re.MatchString(s)
}

// answer is what a server predicts for one observation.
type answer struct {
	state            string
	attempt          int
	max              int
	lo, hi           time.Duration
	hasDelay, listed bool
	yes              bool
}

// predict returns the answer of a server with quirks s to o.
func predict(s set, o *Obs) answer {
	switch o.Kind {
	case FetchAttempt:
		n := o.N
		switch {
		case s.has(qAttemptFrom0), s.has(qFetchFrom0):
			n--
		case s.has(qFetchHigh):
			n++
		}
		return answer{attempt: n}
	case InfoAttempt:
		// a job never started shows attempt 0 on every server modelled,
		// counting from 1 or from 0
		if s.has(qAttemptFrom0) && o.N > 0 {
			return answer{attempt: o.N - 1}
		}
		return answer{attempt: o.N}
	case HistoryAttempt:
		if s.has(qHistoryFrom0) {
			return answer{attempt: o.N - 1}
		}
		return answer{attempt: o.N}
	case ExpiryCounted:
		return answer{yes: !s.has(qExpiryNotCounted)}
	case Delivery:
		return answer{yes: s.has(qEarly) || s.dev.timed()}
	case DeadLetterFilter:
		return answer{yes: s.has(qDLQFilterIgnored)}
	case AnswerAttempt:
		if s.has(qAttemptFrom0) {
			return answer{attempt: o.N - 1}
		}
		return answer{attempt: o.N}
	case StatedDelay:
		lo, hi := o.WantLo, o.WantHi
		if o.Policy != nil {
			e := read(s, o.Policy)
			if o.N >= max(max(e.max, 1)+s.dev.exhaustShift, 1) {
				return answer{state: "discarded"}
			}
		}
		if o.Policy != nil && !o.Asked {
			// the window scales as the base delay (jitter off) the server
			// computes for the policy's attempt N scales
			base, _ := read(s, o.Policy).bounds(s, max(o.N, 1))
			ref, _ := read(set{}, o.Policy).bounds(set{}, max(o.N, 1))
			if ref > 0 && base != ref {
				f := float64(base) / float64(ref)
				lo, hi = scale(lo, f), scale(hi, f)
			}
		} else if f := s.dev.factor; f != 0 && !o.Asked {
			lo, hi = scale(lo, f), scale(hi, f)
		}
		if o.Slack > 0 && lo > o.Slack {
			return answer{state: "discarded"}
		}
		return answer{state: "retryable", lo: lo, hi: hi, hasDelay: true}
	case Redelivery:
		e := read(s, o.Policy)
		return answer{yes: s.has(qExpiryNotCounted) || o.N < max(max(e.max, 1)+s.dev.exhaustShift, 1)}
	case Promotion:
		// the lateness a server promoting at k× the delay shows, within
		// half the delay either way (a loaded host adds to it)
		k := max(s.dev.promoteAt, 1)
		lo := scale(o.DelayLo, k-1)
		return answer{lo: lo, hi: sat.AddInt(lo, o.DelayLo/2), hasDelay: true}
	}
	e := read(s, o.Policy)
	a := answer{attempt: o.N, max: e.max}
	if s.has(qAttemptFrom0) {
		a.attempt--
	}
	typ := o.Failure.Type
	if typ == "" || s.has(qTypeFromCode) {
		typ = o.Failure.Code
	}
	code := ""
	if !s.has(qCodesIgnored) && !s.dev.ignores(o.Failure.Code) && o.Failure.Type != "" {
		switch o.Failure.Code {
		case "RETRY", "DISCARD", "FAIL", "DEAD_LETTER":
			code = o.Failure.Code
		}
	}
	exhausted := o.N >= max(max(e.max, 1)+s.dev.exhaustShift, 1)
	switch {
	case code == "DISCARD" || code == "FAIL":
		a.state = "discarded"
	case code == "DEAD_LETTER":
		a.state, a.listed = "discarded", true
	case code == "" && matchesFailure(s, e.patterns, typ, o.Failure):
		a.state, a.listed = "discarded", e.dead && !s.has(qNonRetryableDiscards) && !s.has(qOnExNeverListed)
	case exhausted:
		a.state, a.listed = "discarded", e.dead && !s.has(qOnExNeverListed)
	default:
		a.state = "retryable"
		a.lo, a.hi = e.bounds(s, o.N)
		a.hasDelay = true
	}
	if a.state == "discarded" && s.has(qOnExListsAll) {
		a.listed = true
	}
	return a
}

// matchesFailure reports whether a server with quirks s finds the
// failure f, whose error type it reads as typ, in patterns: by its type
// (and message, for message-match), or by the fields of s's matched-field.
func matchesFailure(s set, patterns []string, typ string, f Failure) bool {
	if m := s.dev.matchFields; m != 0 {
		return m&fieldType != 0 && matches(s, patterns, typ) ||
			m&fieldMessage != 0 && matches(s, patterns, f.Message) ||
			m&fieldCode != 0 && matches(s, patterns, f.Code)
	}
	return matches(s, patterns, typ) || s.has(qMessage) && matches(s, patterns, f.Message)
}

// resolution is the tolerance of a delay window (the binding's timestamps
// carry milliseconds).
const resolution = time.Millisecond

// consistent reports whether the server's answer in o equals a.
func consistent(a answer, o *Obs) bool {
	switch o.Kind {
	case FetchAttempt, InfoAttempt, HistoryAttempt:
		return o.Attempt != nil && *o.Attempt == a.attempt
	case Delivery, DeadLetterFilter:
		// A server with early retries or an ignored filter shows them only
		// sometimes (a slow poll, an empty dead-letter queue).
		return a.yes || !o.Yes
	case ExpiryCounted, Redelivery:
		return o.Yes == a.yes
	case StatedDelay:
		return o.State == a.state && (!a.hasDelay || !o.HasDelay || o.DelayHi >= a.lo-resolution && o.DelayLo <= a.hi+resolution)
	case AnswerAttempt:
		return o.Attempt != nil && *o.Attempt == a.attempt
	case Promotion:
		if a.lo == 0 { // the reference: fetchable within the delay
			return o.Late < o.DelayLo
		}
		return o.Late >= a.lo && o.Late < a.hi
	}
	if o.State != a.state {
		return false
	}
	if o.Attempt == nil || *o.Attempt != a.attempt {
		return false
	}
	if o.MaxAttempts != nil && *o.MaxAttempts != a.max {
		return false
	}
	if o.Listed != nil && *o.Listed != a.listed {
		return false
	}
	if a.hasDelay && o.HasDelay && (o.DelayHi < a.lo-resolution || o.DelayLo > a.hi+resolution) {
		return false
	}
	return true
}

// same reports whether two predictions are the same answer.
func same(a, b answer) bool { return a == b }
