package servermodel

import (
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"

	"pgregory.net/rapid"
)

// templates are the observations of a run by the live checker's scenarios
// in miniature: policies and failures like theirs, answers left to fill.
func templates() []Obs {
	full := func(extra map[string]any, omit ...string) map[string]any {
		m := map[string]any{"max_attempts": 3, "initial_interval": "PT0.02S", "backoff_coefficient": 2.0, "max_interval": "PT1S", "jitter": false, "on_exhaustion": "discard"}
		for k, v := range extra {
			m[k] = v
		}
		for _, k := range omit {
			delete(m, k)
		}
		return m
	}
	f := func(typ string) Failure { return Failure{Type: typ, Message: "attempt failed"} }
	out := []Obs{
		{Check: "attempts", Kind: FailAnswer, Policy: full(nil), Failure: f("x.timeout"), N: 1},
		{Check: "attempts", Kind: FailAnswer, Policy: full(nil), Failure: f("x.timeout"), N: 3},
		{Check: "dead", Kind: FailAnswer, Policy: full(map[string]any{"on_exhaustion": "dead_letter"}), Failure: f("x.timeout"), N: 3},
		{Check: "discard", Kind: FailAnswer, Policy: full(nil), Failure: f("x.timeout"), N: 3},
		{Check: "partial-max", Kind: FailAnswer, Policy: full(nil, "max_attempts"), Failure: f("x.timeout"), N: 1},
		{Check: "partial-initial", Kind: FailAnswer, Policy: full(nil, "initial_interval"), Failure: f("x.timeout"), N: 1},
		{Check: "partial-coef", Kind: FailAnswer, Policy: full(nil, "backoff_coefficient"), Failure: f("x.timeout"), N: 2},
		{Check: "partial-maxiv", Kind: FailAnswer, Policy: full(map[string]any{"initial_interval": "PT0.5S", "backoff_coefficient": 1000.0}, "max_interval"), Failure: f("x.timeout"), N: 2},
		{Check: "partial-jitter", Kind: FailAnswer, Policy: full(map[string]any{"initial_interval": "PT2S", "max_interval": "PT1M"}, "jitter"), Failure: f("x.timeout"), N: 1},
		{Check: "partial-onex", Kind: FailAnswer, Policy: full(map[string]any{"max_attempts": 1}, "on_exhaustion"), Failure: f("x.timeout"), N: 1},
		{Check: "jitter-cap", Kind: FailAnswer, Policy: full(map[string]any{"initial_interval": "PT0.06S", "max_interval": "PT0.06S", "jitter": true}), Failure: f("x.timeout"), N: 1},
		{Check: "cap-before", Kind: FailAnswer, Policy: full(map[string]any{"backoff_coefficient": 4.0, "max_interval": "PT0.04S", "jitter": true}), Failure: f("x.timeout"), N: 2},
		{Check: "jitter", Kind: FailAnswer, Policy: full(map[string]any{"initial_interval": "PT2S", "max_interval": "PT1M", "jitter": true}), Failure: f("x.timeout"), N: 1},
		{Check: "regex", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"a.b"}}), Failure: f("axb"), N: 1},
		{Check: "glob", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"a?b"}}), Failure: f("axb"), N: 1},
		{Check: "star", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"auth*"}}), Failure: f("authx"), N: 1},
		{Check: "message", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"x.down"}}), Failure: Failure{Type: "x.timeout", Message: "x.down"}, N: 1},
		{Check: "case", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"Auth.Failed"}}), Failure: f("auth.failed"), N: 1},
		{Check: "exact", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"v.bad"}}), Failure: f("v.bad"), N: 1},
		{Check: "nr-dead", Kind: FailAnswer, Policy: full(map[string]any{"non_retryable_errors": []string{"v.bad"}, "on_exhaustion": "dead_letter"}), Failure: f("v.bad"), N: 1},
		{Check: "code", Kind: FailAnswer, Policy: full(nil), Failure: Failure{Type: "x.declined", Code: "DISCARD", Message: "m"}, N: 1},
		{Check: "interval-ms", Kind: FailAnswer, Policy: full(map[string]any{"initial_interval_ms": 30}, "initial_interval"), Failure: f("x.timeout"), N: 1},
		{Check: "backoff-type", Kind: FailAnswer, Policy: full(map[string]any{"backoff_type": "constant"}), Failure: f("x.timeout"), N: 2},
		{Check: "default", Kind: FailAnswer, Failure: f("x.timeout"), N: 1},
		{Check: "strategy-none", Kind: FailAnswer, Policy: full(map[string]any{"backoff_strategy": "none"}), Failure: f("x.timeout"), N: 2},
		{Check: "strategy-linear", Kind: FailAnswer, Policy: full(map[string]any{"backoff_strategy": "linear", "max_attempts": 5}), Failure: f("x.timeout"), N: 3},
		{Check: "strategy-poly", Kind: FailAnswer, Policy: full(map[string]any{"backoff_strategy": "polynomial"}), Failure: f("x.timeout"), N: 2},
		{Check: "strategy-poly", Kind: FailAnswer, Policy: full(map[string]any{"backoff_strategy": "polynomial", "max_interval": "PT10S"}), Failure: f("x.timeout"), N: 3},
		{Check: "code-fail", Kind: FailAnswer, Policy: full(nil), Failure: Failure{Type: "x.declined", Code: "FAIL", Message: "m"}, N: 1},
		{Check: "absolute", Kind: FetchAttempt, N: 1},
		{Check: "absolute", Kind: InfoAttempt, N: 3},
		{Check: "history", Kind: HistoryAttempt, N: 1},
		{Check: "expiry", Kind: ExpiryCounted},
		{Check: "early", Kind: Delivery},
		{Check: "filter", Kind: DeadLetterFilter},
		// an error rule's delay, and a retry the timeouts extension plans
		// within the time left (2.1 s for a 2 s delay)
		{Check: "rule-delay", Kind: StatedDelay, WantLo: 200 * time.Millisecond, WantHi: 200 * time.Millisecond},
		{Check: "time-left", Kind: StatedDelay, WantLo: 2 * time.Second, WantHi: 2 * time.Second, Slack: 2100 * time.Millisecond},
		{Check: "snooze", Kind: AnswerAttempt, N: 1},
		{Check: "expiries", Kind: Redelivery, Policy: full(map[string]any{"max_attempts": 2}), N: 2},
		{Check: "relative", Kind: Promotion, DelayLo: 400 * time.Millisecond},
	}
	for i := range out {
		if out[i].Kind == FailAnswer {
			listed := false
			out[i].Listed = &listed
		}
	}
	return out
}

// answered fills the answers of obs as the server with quirks s gives
// them (a delay at an end of its range outside the reference's, if any),
// and returns which checks fail: those where the server's answers differ
// from the reference's (as the live checker judges jitter over several
// jobs, where one answer inside the reference's range proves nothing).
func answered(s set, obs []Obs) map[string]bool {
	failed := map[string]bool{}
	for i := range obs {
		o := &obs[i]
		a := predict(s, o)
		n := a.attempt
		o.Attempt = &n
		switch o.Kind {
		case FailAnswer:
			m := a.max
			o.State, o.MaxAttempts = a.state, &m
			l := a.listed
			o.Listed = &l
			r := predict(set{}, o)
			at := a.lo
			if at >= r.lo && at <= r.hi {
				at = a.hi
			}
			o.DelayLo, o.DelayHi, o.HasDelay = at, at+time.Microsecond, a.hasDelay
		case StatedDelay:
			o.State = a.state
			o.DelayLo, o.DelayHi, o.HasDelay = a.lo, a.hi, a.hasDelay
		case ExpiryCounted, Delivery, DeadLetterFilter, Redelivery:
			o.Yes = a.yes
		case Promotion:
			o.Late = a.lo
		}
		failed[o.Check] = failed[o.Check] || !same(predict(set{}, o), a)
	}
	return failed
}

// TestReferenceHasNoBugs: the reference's own answers fail nothing, and
// Diagnose names no model.
func TestReferenceHasNoBugs(t *testing.T) {
	obs := templates()
	failed := answered(set{}, obs)
	for c, f := range failed {
		if f {
			t.Errorf("check %s fails on the reference's answers", c)
		}
	}
	if found, un := Diagnose(obs, failed); len(found) > 0 || len(un) > 0 {
		t.Errorf("found %v, unexplained %v", found, un)
	}
}

// TestEachModelIsNamed: a server with exactly one bug of the catalogue
// fails some checks of the templates, and Diagnose explains every one of
// them by that model (or one this run cannot tell apart from it), with no
// contradiction and nothing unexplained.
func TestEachModelIsNamed(t *testing.T) {
	for _, m := range Models() {
		t.Run(m.Name, func(t *testing.T) {
			obs := templates()
			failed := answered(of(m.q), obs)
			n := 0
			for _, f := range failed {
				if f {
					n++
				}
			}
			if n == 0 {
				t.Fatalf("no template check fails under %s", m.Name)
			}
			found, un := Diagnose(obs, failed)
			if len(un) > 0 {
				t.Errorf("unexplained %v", un)
			}
			ok := false
			for _, f := range found {
				if len(f.Contradicted) > 0 {
					t.Errorf("%s contradicted by %v", f.Model.Name, f.Contradicted)
				}
				ok = ok || f.Model.Name == m.Name || contains(f.Equivalent, m.Name)
			}
			if !ok || len(found) != 1 {
				t.Errorf("found %+v, want %s alone", found, m.Name)
			}
		})
	}
}

// TestThreeBugsNamedApart: a server with three bugs of the catalogue has
// each named, none left unexplained.
func TestThreeBugsNamedApart(t *testing.T) {
	obs := templates()
	s := of(qNoMergeMax, qRegex, qHistoryFrom0)
	failed := answered(s, obs)
	found, un := Diagnose(obs, failed)
	if len(un) > 0 {
		t.Errorf("unexplained %v", un)
	}
	names := map[string]bool{}
	for _, f := range found {
		names[f.Model.Name] = true
	}
	for _, want := range []string{"no-merge-max-attempts", "regex-match", "history-attempt-from-zero"} {
		if !names[want] {
			t.Errorf("%s not named; found %+v", want, found)
		}
	}
}

// TestAnyBugSetIsExplained: for any set of up to three bugs of the
// catalogue, the answers of a server with exactly those bugs leave no
// failed check unexplained and no model taken is contradicted by a pass.
func TestAnyBugSetIsExplained(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		models := Models()
		k := rapid.IntRange(1, 3).Draw(t, "bugs")
		var s set
		for i := 0; i < k; i++ {
			s = s.with(models[rapid.IntRange(0, len(models)-1).Draw(t, "model")].q)
		}
		obs := templates()
		failed := answered(s, obs)
		found, un := Diagnose(obs, failed)
		if len(un) > 0 {
			t.Fatalf("bugs %v: unexplained %v (found %+v)", s, un, found)
		}
		for _, f := range found {
			if len(f.Contradicted) > 0 {
				t.Fatalf("bugs %v: %s contradicted by %v", s, f.Model.Name, f.Contradicted)
			}
		}
	})
}

// TestEachFamilyIsFitted: a server with one bug of a searched family
// (none of them in the catalogue) fails template checks, and Diagnose
// fits exactly that family with its parameters, alone, uncontradicted.
func TestEachFamilyIsFitted(t *testing.T) {
	for _, tc := range []struct {
		want string
		dev  deviation
	}{
		{"strategy-as(polynomial→exponential)", deviation{stratSet: true, stratFrom: 1 << backoff.Polynomial, stratTo: backoff.Exponential}},
		{"strategy-as(linear→exponential)", deviation{stratSet: true, stratFrom: 1 << backoff.Linear, stratTo: backoff.Exponential}},
		{"strategy-as(none→linear)", deviation{stratSet: true, stratFrom: 1 << backoff.None, stratTo: backoff.Linear}},
		// backoff_type constant (openapi) honoured, backoff_strategy none
		// computed as exponential, as the public servers do
		{"strategy-as(none→exponential)", deviation{stratSet: true, stratFrom: 1 << backoff.None, stratTo: backoff.Exponential}},
		{"strategy-as(none,polynomial→exponential)", deviation{stratSet: true, stratFrom: 1<<backoff.None | 1<<backoff.Polynomial, stratTo: backoff.Exponential}},
		{"time-factor(×2)", deviation{factor: 2}},
		{"exhaustion-offset(+1)", deviation{exhaustShift: 1}},
		{"exhaustion-offset(-1)", deviation{exhaustShift: -1}},
		{"handler-codes-ignored(DISCARD)", deviation{codesIgnored: 1 << 1}},
		{"exponent-offset(+1)", deviation{delayShift: 1, shiftOnly: 1 << backoff.Exponential}},
		{"promotion-late(×2)", deviation{promoteAt: 2}},
		{"promotion-late(×3)", deviation{promoteAt: 3}},
		// one strategy's formula with its attempt off: polynomial counted
		// from 0, linear for the next attempt
		{"delay-attempt-offset(polynomial,-1)", deviation{delayShift: -1, shiftOnly: 1 << backoff.Polynomial}},
		{"delay-attempt-offset(linear,+1)", deviation{delayShift: 1, shiftOnly: 1 << backoff.Linear}},
		// max_interval read as a thousandth of itself (seconds as ms)
		{"cap-factor(×0.001)", deviation{capFactor: 0.001}},
		{"cap-factor(×0.5)", deviation{capFactor: 0.5}},
		// the message matched instead of the type
		{"matched-field(message)", deviation{matchFields: fieldMessage}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			obs := templates()
			failed := answered(set{dev: tc.dev}, obs)
			found, un := Diagnose(obs, failed)
			if len(un) > 0 || len(found) != 1 || found[0].Model.Name != tc.want && !contains(found[0].Equivalent, tc.want) {
				t.Fatalf("found %+v, unexplained %v; want %s alone", found, un, tc.want)
			}
		})
	}
}

// TestIdenticalDelaysAreNoJitterRange: eight jobs of a policy without
// jitter (the default: on) whose first delays are all exactly 1 h, beside
// a failing check whose delays are jittered from [0.5, 2.25): the
// identical delays are the absent jitter, no-merge-jitter alone; a jitter
// range, which would spread them, does not explain them too.
func TestIdenticalDelaysAreNoJitterRange(t *testing.T) {
	pol := map[string]any{"max_attempts": 3, "initial_interval": "PT1H", "backoff_coefficient": 2.0, "max_interval": "PT2H"}
	var obs []Obs
	for range 8 {
		obs = append(obs, Obs{Check: "partial-jitter", Kind: FailAnswer, Policy: pol, Failure: Failure{Type: "x"}, N: 1,
			State: "retryable", Attempt: ptr(1), MaxAttempts: ptr(3), DelayLo: time.Hour, DelayHi: time.Hour + time.Millisecond, HasDelay: true})
	}
	wide := map[string]any{"max_attempts": 3, "initial_interval": "PT1S", "backoff_coefficient": 2.0, "max_interval": "PT1M", "jitter": true}
	for i := range 8 {
		d := 500*time.Millisecond + time.Duration(i)*240*time.Millisecond // 0.5 s .. 2.18 s
		obs = append(obs, Obs{Check: "wide", Kind: FailAnswer, Policy: wide, Failure: Failure{Type: "x"}, N: 1,
			State: "retryable", Attempt: ptr(1), MaxAttempts: ptr(3), DelayLo: d, DelayHi: d + time.Millisecond, HasDelay: true})
	}
	found, un := Diagnose(obs, map[string]bool{"partial-jitter": true, "wide": true})
	if len(un) > 0 {
		t.Fatalf("found %+v, unexplained %v", found, un)
	}
	ok := false
	for _, f := range found {
		if !contains(f.Explains, "partial-jitter") {
			continue
		}
		ok = f.Model.Name == "no-merge-jitter"
		for _, eq := range append(f.Equivalent, f.Model.Name) {
			if strings.HasPrefix(eq, "jitter-range") {
				t.Errorf("identical delays explained by %s", eq)
			}
		}
	}
	if !ok {
		t.Errorf("partial-jitter not explained by no-merge-jitter: %+v", found)
	}
}

func ptr(n int) *int { return &n }
