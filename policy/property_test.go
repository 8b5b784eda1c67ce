package policy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"pgregory.net/rapid"
)

// durationGen draws non-negative durations from all magnitudes.
func durationGen() *rapid.Generator[time.Duration] {
	return rapid.OneOf(
		rapid.Map(rapid.Int64Range(0, math.MaxInt64), func(n int64) time.Duration { return time.Duration(n) }),
		rapid.Map(rapid.Int64Range(0, 1<<40), func(n int64) time.Duration { return time.Duration(n) }),
		rapid.Map(rapid.Int64Range(0, 100000), func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }),
		rapid.Map(rapid.Int64Range(0, 1000), func(n int64) time.Duration { return time.Duration(n) * time.Hour }),
		rapid.Just(time.Duration(math.MaxInt64)),
	)
}

func patternGen() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[a-z_]{1,8}(\.[a-z_]{1,8}){0,3}(\.\*)?`),
		rapid.SampledFrom([]string{"*", "a.*.b", "auth*", "é.ü", "q\"\\x", "\x01ctl", "\u2028"}),
		rapid.StringN(1, 12, -1).Filter(func(s string) bool { return s != ".*" }),
	)
}

func specGen() *rapid.Generator[Spec] {
	return rapid.Custom(func(t *rapid.T) Spec {
		initial := durationGen().Filter(func(d time.Duration) bool { return d > 0 }).Draw(t, "initial")
		maxI := rapid.Int64Range(int64(initial), math.MaxInt64).Draw(t, "max")
		coef := rapid.OneOf(
			rapid.Float64Range(1, 10),
			rapid.Float64Range(1, math.MaxFloat64),
			rapid.SampledFrom([]float64{1, 1.5, 2, 4, 1.0000000000000002, math.MaxFloat64, 1e21, 0.1 + 0.9}),
		).Draw(t, "coef")
		s := Spec{
			MaxAttempts:        rapid.OneOf(rapid.IntRange(0, 30), rapid.IntRange(0, math.MaxInt)).Draw(t, "max_attempts"),
			InitialInterval:    initial,
			BackoffCoefficient: coef,
			MaxInterval:        time.Duration(maxI),
			Jitter:             rapid.Bool().Draw(t, "jitter"),
			NonRetryableErrors: rapid.SliceOfN(patternGen(), 0, 6).Draw(t, "patterns"),
			OnExhaustion:       rapid.SampledFrom([]Action{Discard, DeadLetter}).Draw(t, "on_exhaustion"),
			Strategy:           rapid.SampledFrom([]backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial}).Draw(t, "strategy"),
		}
		if rapid.Bool().Draw(t, "extension") {
			addExtension(t, &s)
		}
		return s
	})
}

// addExtension draws the extension fields of docs/extensions.md into s:
// a jitter mode (with jitter), bounds, and up to three error rules, each
// a valid policy of its own.
func addExtension(t *rapid.T, s *Spec) {
	mode := func(jitter bool, label string) backoff.JitterMode {
		if !jitter {
			return backoff.Proportional
		}
		return backoff.JitterMode(rapid.IntRange(0, 3).Draw(t, label))
	}
	s.JitterMode = mode(s.Jitter, "jitter_mode")
	pos := durationGen().Filter(func(d time.Duration) bool { return d > 0 })
	if rapid.Bool().Draw(t, "has_max_retry_after") {
		s.MaxRetryAfter = pos.Draw(t, "max_retry_after")
	}
	s.MaxSnoozes = rapid.OneOf(rapid.IntRange(0, 5), rapid.IntRange(0, math.MaxInt)).Draw(t, "max_snoozes")
	if rapid.Bool().Draw(t, "has_max_snooze") {
		s.MaxSnooze = pos.Draw(t, "max_snooze")
	}
	for k := range rapid.IntRange(0, 3).Draw(t, "rules") {
		r := s.Rule(rapid.SliceOfN(patternGen(), 1, 3).Draw(t, "match"+strconv.Itoa(k))...)
		r.MaxAttempts = rapid.IntRange(0, 40).Draw(t, "rule_max_attempts")
		r.InitialInterval = pos.Draw(t, "rule_initial")
		r.MaxInterval = time.Duration(rapid.Int64Range(int64(r.InitialInterval), math.MaxInt64).Draw(t, "rule_max"))
		r.Jitter = rapid.Bool().Draw(t, "rule_jitter")
		r.JitterMode = mode(r.Jitter, "rule_jitter_mode")
		r.Strategy = rapid.SampledFrom([]backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial}).Draw(t, "rule_strategy")
		if rapid.Bool().Draw(t, "rule_has_max_retry_after") {
			r.MaxRetryAfter = pos.Draw(t, "rule_max_retry_after")
		}
		s.ErrorRules = append(s.ErrorRules, r)
	}
}

// TestPropNoDelayAboveItsBound: whatever the failure (type, requested
// delay, snooze, previous delay, draw), a retry's delay is never above
// the bound of the rule that chose it (docs/extensions.md §3.3-§3.5):
// max_snooze (else max_interval) for a snooze, max_retry_after (the
// rule's, the policy's, else the max_interval in force) for a requested
// delay, the max_interval in force for a backoff; never above what the
// handler asked for, and a snooze only while snoozes remain.
func TestPropNoDelayAboveItsBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := specGen().Draw(t, "spec")
		if !rapid.Bool().Draw(t, "plain") {
			addExtension(t, &s)
		}
		p, err := New(s)
		if err != nil {
			t.Skip("invalid spec: ", err)
		}
		types := append([]string{"", "x.y"}, s.NonRetryableErrors...)
		for _, r := range s.ErrorRules {
			types = append(types, r.Match...)
		}
		f := Failure{
			Attempt:   rapid.OneOf(rapid.IntRange(1, 50), rapid.IntRange(1, math.MaxInt)).Draw(t, "attempt"),
			ErrorType: rapid.SampledFrom(types).Draw(t, "type"),
			Request:   errmatch.Request{Kind: errmatch.RequestKind(rapid.IntRange(0, 2).Draw(t, "kind")), Delay: durationGen().Draw(t, "asked")},
			PrevDelay: durationGen().Draw(t, "prev"),
			Snoozes:   rapid.OneOf(rapid.IntRange(0, 6), rapid.IntRange(0, math.MaxInt)).Draw(t, "snoozes"),
		}
		d, err := p.DecideAt(f, rapid.Float64Range(0, 1).Draw(t, "r"))
		if err != nil {
			t.Fatal(err)
		}
		if why := boundProblem(s, p, f, d); why != "" {
			t.Fatal(why)
		}
	})
}

// boundProblem checks decision d of failure f under p (whose Spec is s)
// against the bounds of docs/extensions.md §3.3-§3.5, computed here from
// the Spec's fields: a snooze only while snoozes remain, waiting at most
// min(snooze, max_snooze else max_interval); a requested delay exactly
// min(asked, max_retry_after of the rule, else of the policy, else the
// max_interval in force), never past the attempt limit in force; a backoff
// retry within [0, the max_interval in force]; no delay otherwise. It
// returns what is wrong, or "".
func boundProblem(s Spec, p *Policy, f Failure, d Decision) string {
	inForce, limit, retryAfter := s.MaxInterval, s.MaxAttempts, s.MaxRetryAfter
	if i := p.RuleFor(f.ErrorType); i > 0 {
		r := s.ErrorRules[i-1]
		inForce, limit = r.MaxInterval, r.MaxAttempts
		if r.MaxRetryAfter != 0 {
			retryAfter = r.MaxRetryAfter
		}
	}
	if retryAfter == 0 {
		retryAfter = inForce
	}
	snoozeBound := s.MaxSnooze
	if snoozeBound == 0 {
		snoozeBound = s.MaxInterval
	}
	ok := true
	switch d.Reason {
	case ReasonSnoozed:
		ok = f.Request.Kind == errmatch.Snooze && f.Snoozes < s.MaxSnoozes && d.Delay >= 0 && d.Delay <= min(snoozeBound, f.Request.Delay)
	case ReasonRetryAfter:
		ok = f.Request.Kind != errmatch.NoRequest && d.Delay == min(retryAfter, f.Request.Delay) && f.Attempt < max(limit, 1)
	case ReasonRetry:
		ok = f.Request.Kind == errmatch.NoRequest && d.Delay >= 0 && d.Delay <= inForce && f.Attempt < max(limit, 1)
	default:
		ok = d.Action != Retry && d.Delay == 0
	}
	if !ok {
		return fmt.Sprintf("decision %+v for %+v: outside its bound (max_interval in force %v, max_retry_after %v, snooze bound %v, limit %d)",
			d, f, inForce, retryAfter, snoozeBound, limit)
	}
	return ""
}

// TestPropSnoozesAreBounded plays a job whose handler always snoozes:
// it runs at most max_snoozes + max(max_attempts, 1) times (the
// max_attempts of the rule in force), snoozes at
// most max_snoozes times (the attempt unchanged each time) and waits at
// most max_snoozes × max_snooze while snoozed.
func TestPropSnoozesAreBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := specGen().Draw(t, "spec")
		s.MaxAttempts = rapid.IntRange(0, 20).Draw(t, "max_attempts")
		s.MaxSnoozes = rapid.IntRange(0, 20).Draw(t, "max_snoozes")
		if rapid.Bool().Draw(t, "has_max_snooze") {
			s.MaxSnooze = time.Duration(rapid.Int64Range(1, 1<<40).Draw(t, "max_snooze"))
		}
		p, err := New(s)
		if err != nil {
			t.Skip("invalid spec: ", err)
		}
		asked := durationGen().Draw(t, "asked")
		bound := s.MaxSnooze
		if bound == 0 {
			bound = s.MaxInterval
		}
		f := Failure{Attempt: 1, ErrorType: "x.y", Request: errmatch.Request{Kind: errmatch.Snooze, Delay: asked}}
		limit := s.MaxAttempts
		if i := p.RuleFor(f.ErrorType); i > 0 {
			limit = s.ErrorRules[i-1].MaxAttempts
		}
		runs, snoozed := 0, time.Duration(0)
		for {
			runs++
			if runs > s.MaxSnoozes+max(limit, 1) {
				t.Fatalf("run %d: more than max_snoozes + max_attempts", runs)
			}
			d, err := p.DecideAt(f, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != Retry {
				break
			}
			if d.Reason == ReasonSnoozed {
				f.Snoozes++
				snoozed += d.Delay
				if d.Delay > bound || f.Snoozes > s.MaxSnoozes {
					t.Fatalf("snooze %d of %v (bound %v, max %d)", f.Snoozes, d.Delay, bound, s.MaxSnoozes)
				}
				continue
			}
			f.Attempt++
		}
		if f.Snoozes != s.MaxSnoozes && !p.m.Match("x.y") {
			t.Fatalf("the job took %d snoozes, want all %d before ending", f.Snoozes, s.MaxSnoozes)
		}
		if snoozed/time.Duration(max(s.MaxSnoozes, 1)) > bound {
			t.Fatalf("snoozed %v in all, more than %d × %v", snoozed, s.MaxSnoozes, bound)
		}
	})
}

func TestPropMarshalParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := specGen().Draw(t, "spec")
		p, err := New(s)
		if err != nil {
			t.Fatalf("New(%+v): %v", s, err)
		}
		b, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(%s): %v", b, err)
		}
		if !q.Equal(p) {
			t.Fatalf("round trip differs:\n%+v\n%+v\n%s", p.Spec(), q.Spec(), b)
		}
		b2, _ := q.MarshalJSON()
		if string(b2) != string(b) {
			t.Fatalf("not canonical: %s vs %s", b, b2)
		}
	})
}

func TestPropFormatParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := durationGen().Draw(t, "d")
		s := FormatDuration(d)
		got, err := ParseDuration(s)
		if err != nil || got != d {
			t.Fatalf("ParseDuration(FormatDuration(%d) = %q) = %d, %v", d, s, got, err)
		}
	})
}

// Every (hours, minutes, seconds, fraction) text maps to the exact sum.
func TestPropParseDurationExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := rapid.Int64Range(0, 100000).Draw(t, "h")
		m := rapid.Int64Range(0, 100000).Draw(t, "m")
		sec := rapid.Int64Range(0, 100000).Draw(t, "s")
		ns := rapid.Int64Range(0, 999999999).Draw(t, "ns")
		frac := []byte{'0' + byte(ns/1e8%10), '0' + byte(ns/1e7%10), '0' + byte(ns/1e6%10), '0' + byte(ns/1e5%10),
			'0' + byte(ns/1e4%10), '0' + byte(ns/1e3%10), '0' + byte(ns/1e2%10), '0' + byte(ns/10%10), '0' + byte(ns%10)}
		extra := rapid.StringMatching(`[0-9]{0,5}`).Draw(t, "extra")
		str := "PT" + itoa(h) + "H" + itoa(m) + "M" + itoa(sec) + "." + string(frac) + extra + "S"
		want := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + time.Duration(ns)
		if extra != "" && extra[0] >= '5' {
			want++
		}
		got, err := ParseDuration(str)
		if err != nil || got != want {
			t.Fatalf("ParseDuration(%q) = %d, %v; want %d", str, got, err, want)
		}
		checkOracle(t, str)
	})
}

// Every string of the grammar, with all six components, leading zeros and
// long fractions, is read as sosodev/duration reads it (checkOracle) and
// as the big.Int oracle values it, or rejected only for being too large or
// too long.
func TestPropDurationOracles(t *testing.T) {
	comp := func(t *rapid.T, name string, frac bool) string {
		if !rapid.Bool().Draw(t, name+"?") {
			return ""
		}
		digits := rapid.StringMatching(`0{0,3}[0-9]{1,8}`).Draw(t, name)
		if frac && rapid.Bool().Draw(t, name+".") {
			digits += "." + rapid.StringMatching(`[0-9]{1,40}`).Draw(t, name+"frac")
		}
		return digits + name[:1]
	}
	rapid.Check(t, func(t *rapid.T) {
		date := comp(t, "Years", false) + comp(t, "Months", false) + comp(t, "Days", false)
		clock := comp(t, "Hours", false) + comp(t, "Minutes", false) + comp(t, "Seconds", true)
		s := "P" + date
		if clock != "" {
			s += "T" + clock
		}
		want, ok := oracleDuration(s)
		got, err := ParseDuration(s)
		switch {
		case !ok:
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v outside the grammar", s, got)
			}
		case !want.IsInt64():
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error for %v ns", s, got, want)
			}
		case err != nil || int64(got) != want.Int64():
			t.Fatalf("ParseDuration(%q) = %v, %v; want %v ns", s, got, err, want)
		default:
			checkOracle(t, s)
		}
	})
}

func itoa(n int64) string { return string(appendInt(nil, int(n))) }

func TestPropDecisions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := specGen().Draw(t, "spec")
		p, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		attempt := rapid.OneOf(rapid.IntRange(1, 40), rapid.IntRange(1, math.MaxInt)).Draw(t, "attempt")
		code := rapid.SampledFrom([]errmatch.Code{"", errmatch.CodeRetry, errmatch.CodeDiscard, errmatch.CodeDeadLetter, errmatch.CodeFail}).Draw(t, "code")
		var errType string
		if len(s.NonRetryableErrors) > 0 && rapid.Bool().Draw(t, "pick") {
			errType = rapid.SampledFrom(s.NonRetryableErrors).Draw(t, "errType")
		} else {
			errType = rapid.StringMatching(`[a-z]{1,5}(\.[a-z]{1,5}){0,2}`).Draw(t, "errType")
		}
		r := rapid.Float64Range(0, 1).Draw(t, "r")
		d, err := p.DecideAt(Failure{Attempt: attempt, ErrorType: errType, Code: code}, r)
		if err != nil {
			t.Fatal(err)
		}
		if d.Action == Retry {
			if attempt >= max(s.MaxAttempts, 1) {
				t.Fatalf("retry after attempt %d with max_attempts %d", attempt, s.MaxAttempts)
			}
			if code != "" && code != errmatch.CodeRetry {
				t.Fatalf("retry with code %s", code)
			}
			if p.Matcher().Match(errType) {
				t.Fatalf("retry of non-retryable %q", errType)
			}
			if d.Delay < 0 || d.Delay > s.MaxInterval {
				t.Fatalf("delay %v outside [0, %v]", d.Delay, s.MaxInterval)
			}
		} else if d.Delay != 0 {
			t.Fatalf("delay %v on %v", d.Delay, d.Action)
		}
		switch code {
		case errmatch.CodeDiscard, errmatch.CodeFail:
			if d.Action != Discard {
				t.Fatalf("code %s gave %v", code, d.Action)
			}
		case errmatch.CodeDeadLetter:
			if d.Action != DeadLetter {
				t.Fatalf("code %s gave %v", code, d.Action)
			}
		default:
			// The policy decides (RK-13), by an independent reading of the
			// rules: a listed type or the last allowed attempt ends the job
			// with on_exhaustion, anything else is retried.
			listed := naiveListed(s.NonRetryableErrors, errType)
			last := attempt >= max(s.MaxAttempts, 1)
			switch {
			case listed:
				if d.Action != s.OnExhaustion || d.Reason != ReasonNonRetryable {
					t.Fatalf("listed %q: got %v (%v), want %v non_retryable", errType, d.Action, d.Reason, s.OnExhaustion)
				}
			case last:
				if d.Action != s.OnExhaustion || d.Reason != ReasonExhausted {
					t.Fatalf("attempt %d of %d: got %v (%v), want %v exhausted", attempt, s.MaxAttempts, d.Action, d.Reason, s.OnExhaustion)
				}
			default:
				if d.Action != Retry || d.Reason != ReasonRetry {
					t.Fatalf("attempt %d of %d, %q: got %v (%v), want retry", attempt, s.MaxAttempts, errType, d.Action, d.Reason)
				}
				if lo, hi := p.Backoff().Bounds(attempt); d.Delay < lo || d.Delay > hi {
					t.Fatalf("delay %v outside Bounds [%v, %v]", d.Delay, lo, hi)
				}
			}
		}
	})
}

// naiveListed is the §6.2 rule written plainly: an exact entry, or an entry
// ending in ".*" whose text before the "*" starts errType.
func naiveListed(patterns []string, errType string) bool {
	for _, p := range patterns {
		if p == errType {
			return true
		}
		if len(p) >= 2 && p[len(p)-2:] == ".*" && len(errType) >= len(p)-1 && errType[:len(p)-1] == p[:len(p)-1] {
			return true
		}
	}
	return false
}

// anySpecGen draws Specs New may accept or reject: out-of-range numbers,
// invalid actions and strategies, and patterns that are empty, ".*", too
// long, invalid UTF-8 or lone surrogates (in generalized UTF-8).
func anySpecGen() *rapid.Generator[Spec] {
	badPattern := rapid.SampledFrom([]string{"", ".*", "a.\xff", "\xc3", "\xed\xa0\x80.x", "é.\xff*",
		strings.Repeat("p", errmatch.MaxPatternLen), strings.Repeat("q", errmatch.MaxPatternLen+1)})
	return rapid.Custom(func(t *rapid.T) Spec {
		s := specGen().Draw(t, "base")
		if rapid.Bool().Draw(t, "bad max_attempts") {
			s.MaxAttempts = rapid.IntRange(math.MinInt, -1).Draw(t, "max_attempts")
		}
		if rapid.Bool().Draw(t, "bad initial") {
			s.InitialInterval = time.Duration(rapid.Int64Range(math.MinInt64, 0).Draw(t, "initial"))
		}
		if rapid.Bool().Draw(t, "bad max") {
			s.MaxInterval = time.Duration(rapid.Int64Range(math.MinInt64, int64(s.InitialInterval)).Draw(t, "max"))
		}
		if rapid.Bool().Draw(t, "bad coef") {
			s.BackoffCoefficient = rapid.Float64Range(-1e300, 1).Draw(t, "coef")
		}
		if rapid.Bool().Draw(t, "bad patterns") {
			s.NonRetryableErrors = rapid.SliceOfN(rapid.OneOf(patternGen(), badPattern), 1, 30).Draw(t, "patterns")
		}
		s.OnExhaustion = rapid.SampledFrom([]Action{Discard, DeadLetter, Discard, DeadLetter, Retry, Action(7)}).Draw(t, "on_exhaustion")
		s.Strategy = rapid.SampledFrom([]backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial, backoff.Strategy(9)}).Draw(t, "strategy")
		return s
	})
}

// rawJSON spells s as a policy document, every field given, writing the
// pattern strings byte for byte (only '"', '\\' and control characters
// escaped), so that invalid UTF-8 reaches Parse as it is.
func rawJSON(s Spec) []byte {
	b := []byte(`{"max_attempts":`)
	b = appendInt(b, s.MaxAttempts)
	b = append(b, `,"initial_interval":"`...)
	b = appendDuration(b, s.InitialInterval)
	b = append(b, `","backoff_coefficient":`...)
	b = appendFloat(b, s.BackoffCoefficient)
	b = append(b, `,"max_interval":"`...)
	b = appendDuration(b, s.MaxInterval)
	b = append(b, `","jitter":`...)
	b = strconv.AppendBool(b, s.Jitter)
	b = append(b, `,"non_retryable_errors":[`...)
	for i, p := range s.NonRetryableErrors {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for j := 0; j < len(p); j++ {
			switch c := p[j]; {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, `\u00`...)
				b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
			default:
				b = append(b, c)
			}
		}
		b = append(b, '"')
	}
	b = append(b, `],"on_exhaustion":"`...)
	b = append(b, s.OnExhaustion.String()...)
	b = append(b, `","backoff_strategy":"`...)
	b = append(b, s.Strategy.String()...)
	b = append(b, '"')
	// The extension fields specGen draws are valid; they are spelled as
	// MarshalJSON spells them.
	b = appendExtension(b, &s)
	return append(b, '}')
}

// fieldsOf returns the sorted Field of every problem err lists.
func fieldsOf(err error) []string {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var fs []string
	for _, fe := range ve.Errors {
		fs = append(fs, fe.Field)
	}
	slices.Sort(fs)
	return fs
}

// Parse and New agree on every Spec: both accept it, giving
// Equal policies, or both reject it, naming the same fields.
func TestPropParseAgreesWithNew(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := anySpecGen().Draw(t, "spec")
		doc := rawJSON(s)
		pp, perr := Parse(doc)
		np, nerr := New(s)
		if (perr == nil) != (nerr == nil) {
			t.Fatalf("Parse(%q): %v\nNew: %v", doc, perr, nerr)
		}
		if perr == nil {
			if !pp.Equal(np) {
				t.Fatalf("Parse(%q) and New differ:\n%+v\n%+v", doc, pp.Spec(), np.Spec())
			}
			return
		}
		if pf, nf := fieldsOf(perr), fieldsOf(nerr); !slices.Equal(pf, nf) {
			t.Fatalf("Parse(%q) names %q: %v\nNew names %q: %v", doc, pf, perr, nf, nerr)
		}
	})
}
