// The cases of fuzz --server: how they are drawn, and how one is made
// smaller.

package live

import (
	"math"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// plainFailure is the failure a shrunk case falls back to: a retryable
// error type no generated pattern matches, no handler code.
var plainFailure = FuzzFailure{Type: "fz.timeout"}

// The vocabulary of error types and non_retryable_errors patterns: exact
// entries, prefix patterns ("fz.*", "fz.fatal.*"), near misses of each
// (other case, a longer first segment, a glob or regexp reading).
var (
	fuzzTypes    = []string{"fz.timeout", "fz.fatal", "fz.fatal.db", "fzx.fatal", "Fz.Fatal", "fz.fxtal"}
	fuzzPatterns = []string{"fz.fatal", "fz.*", "fz.fatal.*", "Fz.Fatal", "fz*", "fz.f.tal", "fz.f?tal"}
	fuzzCodes    = []string{"RETRY", "DISCARD", "DEAD_LETTER", "FAIL"}
	fuzzStrats   = []string{"none", "linear", "exponential", "polynomial"}
)

// genCase draws one case. The policy has every field of ojs-retry §2 but
// initial_interval, each left out now and then (a partial policy, merged
// over the defaults); initial_interval is 10 to 30 ms (a default of PT1S
// would make the run slow), max_attempts 1 to 4, every strategy, jitter,
// a cap of 1 to 8 initial intervals, non_retryable_errors with exact and
// prefix patterns, both on_exhaustion values. A quarter of the policies
// speak the binding's dialect (initial_interval_ms, max_interval_ms,
// backoff_type). The failures are one more than the attempts, each an
// error type of the vocabulary and now and then a handler code.
func genCase(rng *mrand.Rand) FuzzCase {
	initial := time.Duration(1+rng.IntN(3)) * 10 * ms
	maxIv := initial * time.Duration(1<<rng.IntN(4))
	dialect := rng.IntN(4) == 0
	p := map[string]any{
		"max_attempts":        1 + rng.IntN(4),
		"backoff_coefficient": []float64{1, 1.5, 2, 3}[rng.IntN(4)],
		"jitter":              rng.IntN(4) == 0,
		"on_exhaustion":       []string{"discard", "dead_letter"}[rng.IntN(2)],
	}
	if dialect {
		p["initial_interval_ms"] = initial.Milliseconds()
		p["max_interval_ms"] = maxIv.Milliseconds()
	} else {
		p["initial_interval"] = fmtDur(initial)
		p["max_interval"] = fmtDur(maxIv)
	}
	if rng.IntN(4) != 0 {
		st := fuzzStrats[rng.IntN(len(fuzzStrats))]
		if dialect {
			p["backoff_type"] = st
		} else {
			p["backoff_strategy"] = st
		}
	}
	if rng.IntN(3) == 0 {
		n := 1 + rng.IntN(2)
		var pats []string
		for range n {
			pats = append(pats, fuzzPatterns[rng.IntN(len(fuzzPatterns))])
		}
		p["non_retryable_errors"] = pats
	}
	for _, k := range []string{"max_attempts", "backoff_coefficient", "max_interval", "max_interval_ms", "jitter", "on_exhaustion"} {
		if rng.IntN(8) == 0 {
			delete(p, k)
		}
	}
	n := 3 // the default max_attempts
	if m, ok := p["max_attempts"].(int); ok {
		n = m
	}
	c := FuzzCase{Policy: p}
	for range n + 1 {
		f := plainFailure
		if rng.IntN(4) == 0 {
			f.Type = fuzzTypes[rng.IntN(len(fuzzTypes))]
		}
		if rng.IntN(6) == 0 {
			f.Code = fuzzCodes[rng.IntN(len(fuzzCodes))]
		}
		c.Failures = append(c.Failures, f)
	}
	return c
}

// size is the measure shrinking decreases: every variant of a case is
// strictly smaller. A failure weighs 10, plus 2 for a handler code and 1
// for a type other than plainFailure's; a policy field 2, plus its
// max_attempts value, 1 for a value other than the plain one (jitter
// true, dead_letter, a coefficient other than 2, a strategy other than
// exponential, a max_interval other than the initial interval, in either
// spelling), 1 for the binding's spelling of a field, and 1 for each
// non_retryable_errors entry.
func (c FuzzCase) size() int {
	n := 0
	if iv, mx, ok := c.intervals(); ok && iv != mx {
		n++
	}
	for _, f := range c.Failures {
		n += 10
		if f.Code != "" {
			n += 2
		}
		if f.Type != plainFailure.Type {
			n++
		}
	}
	for k, v := range c.Policy {
		n += 2
		switch k {
		case "max_attempts":
			if m, ok := v.(int); ok && m > 0 {
				n += m
			}
		case "jitter":
			if v == true {
				n++
			}
		case "on_exhaustion":
			if v == "dead_letter" {
				n++
			}
		case "backoff_coefficient":
			if v != 2.0 {
				n++
			}
		case "backoff_strategy":
			if v != "exponential" {
				n++
			}
		case "initial_interval_ms", "max_interval_ms":
			n++
		case "backoff_type":
			n++
			if v != "exponential" {
				n++
			}
		case "non_retryable_errors":
			if l, ok := v.([]string); ok {
				n += len(l)
			}
		}
	}
	return n
}

// intervals returns the case's initial interval and max_interval as
// given (in either spelling; ISO 8601 only as "PT<seconds>S", as
// generated), ok false when either is absent, unreadable, given twice,
// or not a whole number of milliseconds.
func (c FuzzCase) intervals() (initial, maxIv time.Duration, ok bool) {
	read := func(iso, msKey string) (time.Duration, bool) {
		v, hasISO := c.Policy[iso]
		m, hasMS := c.Policy[msKey]
		switch {
		case hasISO && hasMS:
			return 0, false
		case hasISO:
			s, _ := v.(string)
			if !strings.HasPrefix(s, "PT") || !strings.HasSuffix(s, "S") {
				return 0, false
			}
			f, err := strconv.ParseFloat(s[2:len(s)-1], 64)
			if err != nil || f <= 0 || f > 1e6 || f*1000 != math.Trunc(f*1000) {
				return 0, false
			}
			return time.Duration(math.Round(f*1000)) * ms, true
		case hasMS:
			var f float64
			switch x := m.(type) {
			case int:
				f = float64(x)
			case int64:
				f = float64(x)
			case float64:
				f = x
			default:
				return 0, false
			}
			if f <= 0 || f > 1e9 || f != math.Trunc(f) {
				return 0, false
			}
			return time.Duration(f) * ms, true
		}
		return 0, false
	}
	initial, ok1 := read("initial_interval", "initial_interval_ms")
	maxIv, ok2 := read("max_interval", "max_interval_ms")
	return initial, maxIv, ok1 && ok2
}

// defaultInitial is the default initial_interval (ojs-retry §8).
const defaultInitial = time.Second

// withoutInitial is c with its initial interval (either spelling) left
// to the default PT1S and a cap given scaled by the same factor, in its
// spelling; ok false when c gives no initial interval, or gives one it
// cannot scale (unreadable, or a cap above 1000 initial intervals or of
// no whole number of milliseconds once scaled).
func (c FuzzCase) withoutInitial() (FuzzCase, bool) {
	_, iso := c.Policy["initial_interval"]
	_, msSpelled := c.Policy["initial_interval_ms"]
	if iso == msSpelled {
		return FuzzCase{}, false
	}
	v := FuzzCase{Policy: make(map[string]any, len(c.Policy)), Failures: slices.Clone(c.Failures)}
	for k, x := range c.Policy {
		v.Policy[k] = x
	}
	delete(v.Policy, "initial_interval")
	delete(v.Policy, "initial_interval_ms")
	_, capISO := c.Policy["max_interval"]
	_, capMS := c.Policy["max_interval_ms"]
	if !capISO && !capMS {
		return v, true
	}
	iv, mx, ok := c.intervals()
	if !ok || mx > 1000*iv {
		return FuzzCase{}, false
	}
	scaled := time.Duration(float64(mx) / float64(iv) * float64(defaultInitial))
	if scaled%ms != 0 {
		return FuzzCase{}, false
	}
	if capISO {
		v.Policy["max_interval"] = fmtDur(scaled)
	} else {
		v.Policy["max_interval_ms"] = scaled.Milliseconds()
	}
	return v, true
}

// variants returns the cases one step smaller than c (each smaller by
// size), the likeliest to keep a disagreement first: the failures after
// the disagreeing one dropped, one earlier failure dropped, the cap
// brought down to the initial interval, in a case of one failure the
// initial interval left to the default with the cap scaled
// (withoutInitial), one attempt fewer (max_attempts 2 written out for an
// absent one), a policy field dropped (merged from the defaults), jitter
// off, jitter true and max_attempts left to their defaults (in a case of
// one failure also jitter false), discard, coefficient 2, a pattern
// fewer, a field respelled from the binding's dialect to the retry
// spec's, one failure without its handler code, with a plain type, or
// made plain.
func variants(c FuzzCase) []FuzzCase {
	var out []FuzzCase
	with := func(edit func(*FuzzCase)) {
		v := FuzzCase{Policy: make(map[string]any, len(c.Policy)), Failures: slices.Clone(c.Failures)}
		for k, x := range c.Policy {
			v.Policy[k] = x
		}
		edit(&v)
		out = append(out, v)
	}
	if c.Step > 0 && c.Step < len(c.Failures) {
		with(func(v *FuzzCase) { v.Failures = v.Failures[:c.Step] })
	}
	for i := range c.Failures {
		if len(c.Failures) > 1 {
			with(func(v *FuzzCase) { v.Failures = slices.Delete(v.Failures, i, i+1) })
		}
	}
	if iv, mx, ok := c.intervals(); ok && iv != mx && iv > 0 {
		// The cap brought down to the initial interval: the smallest cap,
		// which a cap deviation shows at the first retry.
		with(func(v *FuzzCase) {
			if _, iso := v.Policy["max_interval"]; iso {
				v.Policy["max_interval"] = fmtDur(iv)
			} else {
				v.Policy["max_interval_ms"] = iv.Milliseconds()
			}
		})
	}
	one := len(c.Failures) == 1
	if v, ok := c.withoutInitial(); ok && one {
		out = append(out, v)
	}
	if n, ok := c.Policy["max_attempts"].(int); ok && n > 1 {
		with(func(v *FuzzCase) {
			v.Policy["max_attempts"] = n - 1
			if len(v.Failures) > n {
				v.Failures = v.Failures[:n]
			}
		})
	}
	if _, ok := c.Policy["max_attempts"]; !ok && len(c.Failures) > 2 {
		// The default's 3 attempts less one, written out: smaller by
		// the failures dropped.
		with(func(v *FuzzCase) {
			v.Policy["max_attempts"] = 2
			v.Failures = v.Failures[:2]
		})
	}
	// Dropped here: the fields whose default is the plainest value;
	// max_attempts, jitter and the initial interval below, where their
	// defaults (3, on, PT1S) add nothing to the case.
	for _, k := range []string{"backoff_strategy", "backoff_type", "non_retryable_errors", "max_interval", "max_interval_ms", "backoff_coefficient", "on_exhaustion"} {
		if _, ok := c.Policy[k]; ok {
			with(func(v *FuzzCase) { delete(v.Policy, k) })
		}
	}
	if c.Policy["jitter"] == true {
		with(func(v *FuzzCase) { v.Policy["jitter"] = false })
	}
	// Fields left to their defaults: jitter when true (the default does
	// the same); max_attempts; and in a case of one failure, whose first
	// FAIL answer is all that is judged (no retry is waited for), jitter
	// whatever its value, and the initial interval, to the default PT1S,
	// a cap given scaled with it so that the delays keep their shape.
	if _, ok := c.Policy["jitter"]; ok && (one || c.Policy["jitter"] == true) {
		with(func(v *FuzzCase) { delete(v.Policy, "jitter") })
	}
	if _, ok := c.Policy["max_attempts"]; ok {
		with(func(v *FuzzCase) { delete(v.Policy, "max_attempts") })
	}
	if c.Policy["on_exhaustion"] == "dead_letter" {
		with(func(v *FuzzCase) { v.Policy["on_exhaustion"] = "discard" })
	}
	if x, ok := c.Policy["backoff_coefficient"]; ok && x != 2.0 {
		with(func(v *FuzzCase) { v.Policy["backoff_coefficient"] = 2.0 })
	}
	if l, ok := c.Policy["non_retryable_errors"].([]string); ok && len(l) > 1 {
		for i := range l {
			with(func(v *FuzzCase) { v.Policy["non_retryable_errors"] = slices.Delete(slices.Clone(l), i, i+1) })
		}
	}
	for _, f := range [...]struct{ ms, iso string }{{"initial_interval_ms", "initial_interval"}, {"max_interval_ms", "max_interval"}} {
		if x, ok := c.Policy[f.ms].(int64); ok {
			if _, both := c.Policy[f.iso]; !both {
				with(func(v *FuzzCase) {
					delete(v.Policy, f.ms)
					v.Policy[f.iso] = fmtDur(time.Duration(x) * ms)
				})
			}
		}
	}
	if st, ok := c.Policy["backoff_type"].(string); ok {
		if _, both := c.Policy["backoff_strategy"]; !both {
			with(func(v *FuzzCase) {
				delete(v.Policy, "backoff_type")
				v.Policy["backoff_strategy"] = strings.ToLower(st)
			})
		}
	}
	for i, f := range c.Failures {
		if f.Code != "" && f.Type != "" {
			with(func(v *FuzzCase) { v.Failures[i].Code = "" })
		}
		if f.Code != "" && f.Type != plainFailure.Type {
			with(func(v *FuzzCase) { v.Failures[i].Type = plainFailure.Type })
		}
		if f != plainFailure {
			with(func(v *FuzzCase) { v.Failures[i] = plainFailure })
		}
	}
	return out
}
