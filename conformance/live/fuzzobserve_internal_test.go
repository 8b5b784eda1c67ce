package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
)

// A delay that differs is grouped by the deviation seen, not by the
// policy's strategy: a jittered delay above max_interval is one kind
// under exponential and linear alike; the first retry (I for every
// strategy) is one kind whatever the strategy; a later retry whose
// growth is wrong keeps its strategy's kind; the binding's spelling of a
// field makes no kind of its own. Delays below are the retry
// spec's formulas (ojs-retry §3) written out.
func TestDelayKindGroupsByDeviation(t *testing.T) {
	const i = 20 * time.Millisecond
	plain := []FuzzFailure{plainFailure, plainFailure, plainFailure, plainFailure}
	for _, tc := range []struct {
		name   string
		policy map[string]any
		n      int           // the failure the retry follows
		lo     time.Duration // the server's delay
		want   string
	}{
		// Cap I, jitter: the reference's first delay is in [I/2, I]; one
		// not capped after jitter is up to 1.5·I.
		{"exponential, jitter above the cap", map[string]any{"initial_interval": "PT0.02S", "jitter": true, "max_interval": "PT0.02S", "max_attempts": 2},
			1, 26 * ms, "delay:above-cap"},
		// linear, cap 4·I: the third delay is 3·I (in [1.5·I, 4·I] with
		// jitter); 4.25·I is above the cap, under 1.5·3·I.
		{"linear, jitter above the cap", map[string]any{"initial_interval": "PT0.02S", "backoff_strategy": "linear", "backoff_coefficient": 1, "jitter": true, "max_interval": "PT0.08S", "max_attempts": 4},
			3, 85 * ms, "delay:above-cap"},
		{"max_interval_ms, above the cap", map[string]any{"initial_interval": "PT0.02S", "jitter": true, "max_interval_ms": 20, "max_attempts": 2},
			1, 26 * ms, "delay:above-cap"},
		// initial_interval_ms unread: the 1 s default, far above what
		// the uncapped policy gives, at the first retry of any strategy.
		{"initial_interval_ms unread, exponential", map[string]any{"initial_interval_ms": 20, "max_interval_ms": 80, "jitter": false, "max_attempts": 2},
			1, time.Second, "delay:initial"},
		{"initial_interval_ms unread, polynomial", map[string]any{"initial_interval_ms": 20, "max_interval_ms": 80, "backoff_type": "polynomial", "jitter": false, "max_attempts": 2},
			1, time.Second, "delay:initial"},
		{"first retry doubled", map[string]any{"initial_interval": "PT0.02S", "backoff_strategy": "none", "jitter": false},
			1, 2 * i, "delay:initial"},
		// polynomial I·n^2 is 4·I at n = 2; exponential gives 2·I.
		{"polynomial computed as exponential", map[string]any{"initial_interval": "PT0.02S", "backoff_strategy": "polynomial", "jitter": false, "max_attempts": 3},
			2, 2 * i, "delay:polynomial"},
		{"backoff_type polynomial computed as exponential", map[string]any{"initial_interval": "PT0.02S", "backoff_type": "polynomial", "jitter": false, "max_attempts": 3},
			2, 2 * i, "delay:polynomial"},
		// Above a cap of 8·I yet beyond 1.5 × the uncapped delay (2·I at
		// n = 2): not a cap deviation.
		{"far above the cap", map[string]any{"initial_interval": "PT0.02S", "jitter": true, "max_interval": "PT0.16S"},
			2, time.Second, "delay:exponential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &FuzzCase{Policy: tc.policy, Failures: plain}
			ref := reference(c)
			if ref.refused != nil || len(ref.steps) < tc.n {
				t.Fatalf("reference: %v, %d steps", ref.refused, len(ref.steps))
			}
			if got := delayKind(c, ref, tc.n, tc.lo); got != tc.want {
				t.Errorf("delayKind = %q, want %q", got, tc.want)
			}
		})
	}
}

// Only an answer not seen in time is inconclusive: the late bound
// passed, a timeout while the run still had time, a FAIL refused with
// 409 (the reservation lapsed). A server error, a refusal of another
// kind, or the run's own deadline are not.
func TestUnobservedOnlyForAnswersNotSeenInTime(t *testing.T) {
	live := context.Background()
	over, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want bool
	}{
		{live, &lateError{msg: "job x not fetchable within 2s"}, true},
		{live, fmt.Errorf("FETCH: %w", context.DeadlineExceeded), true},
		{live, &serverError{Op: "FAIL", Status: http.StatusConflict}, true},
		{live, &serverError{Op: "FAIL", Status: http.StatusInternalServerError}, false},
		{live, &serverError{Op: "PUSH", Status: http.StatusConflict}, false},
		{live, errors.New("connection refused"), false},
		{over, &lateError{msg: "job x not fetchable within 2s"}, false},
	} {
		got := unobserved(tc.ctx, "the FETCH of delivery 2", tc.err)
		if errors.Is(got, ErrInconclusive) != tc.want {
			t.Errorf("unobserved(%v) = %v, inconclusive want %v", tc.err, got, tc.want)
		}
		if !tc.want && got != tc.err {
			t.Errorf("unobserved(%v) = %v, want the error itself", tc.err, got)
		}
	}
}

// A case with a cap above its initial interval has a variant with the
// cap brought down to it, in the spelling the case uses, and smaller: a
// delay above the cap then shrinks to the first retry.
func TestVariantsBringTheCapDownToTheInitialInterval(t *testing.T) {
	for _, tc := range []struct {
		policy map[string]any
		key    string
		want   any
	}{
		{map[string]any{"initial_interval": "PT0.02S", "max_interval": "PT0.08S", "jitter": true}, "max_interval", "PT0.02S"},
		{map[string]any{"initial_interval_ms": int64(20), "max_interval_ms": int64(80), "jitter": true}, "max_interval_ms", int64(20)},
		// As read back from a case file: JSON numbers are float64.
		{map[string]any{"initial_interval_ms": 20.0, "max_interval_ms": 80.0, "jitter": true}, "max_interval_ms", int64(20)},
	} {
		c := FuzzCase{Policy: tc.policy, Failures: []FuzzFailure{plainFailure, plainFailure, plainFailure}}
		found := false
		for _, v := range variants(c) {
			if v.Policy[tc.key] == tc.want && len(v.Failures) == 3 && v.size() < c.size() {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: no smaller variant with %s %v", tc.policy, tc.key, tc.want)
		}
		c.Policy[tc.key] = tc.want
		for _, v := range variants(c) {
			if iv, mx, ok := v.intervals(); ok && mx < iv {
				t.Errorf("%v: variant with a cap below the initial interval: %v", c.Policy, v.Policy)
			}
		}
	}
}

// A FAIL answer whose max_attempts differs is grouped under max_attempts
// alone: the state it leads to (discarded after one attempt when 0 is
// read for an absent max_attempts) is the same deviation. A state that
// differs under the same max_attempts is a state, of the kind stateKind
// gives for the server's state.
func TestMaxAttemptsExplainsTheState(t *testing.T) {
	one, zero, three := 1, 0, 3
	want := refStep{state: "retryable", attempt: 1, max: 3, lo: 20 * ms, hi: 20 * ms}
	e := &env{}
	noDelay := func(time.Duration) string { return "delay:x" }
	byState := func(got string) string { return "state:" + got }
	for _, tc := range []struct {
		got  nackAnswer
		want string
	}{
		{nackAnswer{State: "discarded", Attempt: &one, MaxAttempts: &zero}, "max_attempts"},
		{nackAnswer{State: "discarded", Attempt: &one, MaxAttempts: &three}, "state:discarded"},
		{nackAnswer{State: "discarded", Attempt: &one}, "state:discarded"},
	} {
		_, _, kinds := e.sameAnswer(&tc.got, nil, want, byState, noDelay)
		if len(kinds) != 1 || kinds[0] != tc.want {
			t.Errorf("%+v: kinds %q, want [%s]", tc.got, kinds, tc.want)
		}
	}
}

// A state that differs is grouped by the deviation seen: which side
// retried, and why the reference ended the job (the rule of ojs-retry
// §7.2 that applied: a handler code, a non_retryable_errors match, the
// last attempt) or, when the reference retried, what the case shows that
// the server may have read. Each expected kind is written out from the
// case: the rule is read off its failure and policy, not from the code
// under test.
func TestStateKindGroupsByDeviation(t *testing.T) {
	base := func(extra map[string]any) map[string]any {
		p := map[string]any{"initial_interval": "PT0.02S", "jitter": false, "max_attempts": 2}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		policy  map[string]any
		failure FuzzFailure
		got     string // the server's state at the first FAIL
		want    string
	}{
		// DEAD_LETTER decides whatever the policy (§7.2 rule 3): a server
		// retrying it ignores the code.
		{"DEAD_LETTER retried", base(nil), FuzzFailure{Type: "fz.timeout", Code: "DEAD_LETTER"}, "retryable", "state:retried-not-dead-lettered(DEAD_LETTER)"},
		{"DISCARD retried", base(nil), FuzzFailure{Type: "fz.timeout", Code: "DISCARD"}, "retryable", "state:retried-not-discarded(DISCARD)"},
		// FAIL is DISCARD (RK-13), under dead_letter too.
		{"FAIL retried", base(map[string]any{"on_exhaustion": "dead_letter"}), FuzzFailure{Type: "fz.timeout", Code: "FAIL"}, "retryable", "state:retried-not-discarded(FAIL)"},
		// "fz.*" matches "fz.fatal" by the prefix rule: on_exhaustion.
		{"pattern match retried", base(map[string]any{"non_retryable_errors": []string{"fz.*"}, "on_exhaustion": "dead_letter"}), FuzzFailure{Type: "fz.fatal"}, "retryable", "state:retried-not-dead-lettered(non_retryable_errors)"},
		// max_attempts 1: the first failure is the last attempt.
		{"last attempt retried", base(map[string]any{"max_attempts": 1}), FuzzFailure{Type: "fz.timeout"}, "retryable", "state:retried-not-discarded(max_attempts)"},
		// "fz.f.tal" matches "fz.fxtal" only as a regexp: the spec retries.
		{"near miss ended", base(map[string]any{"non_retryable_errors": []string{"fz.f.tal"}}), FuzzFailure{Type: "fz.fxtal"}, "discarded", "state:ended-not-retried(non_retryable_errors)"},
		{"RETRY ended", base(map[string]any{"non_retryable_errors": []string{"fz.f.tal"}}), FuzzFailure{Type: "fz.timeout", Code: "RETRY"}, "discarded", "state:ended-not-retried(RETRY)"},
		{"plain failure ended", base(nil), FuzzFailure{Type: "fz.timeout"}, "discarded", "state:ended-not-retried"},
		{"ended under another name", base(map[string]any{"max_attempts": 1}), FuzzFailure{Type: "fz.timeout"}, "dead", "state:ended-otherwise(max_attempts)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := FuzzCase{Policy: tc.policy, Failures: []FuzzFailure{tc.failure}}
			tr := reference(&c)
			if len(tr.steps) != 1 {
				t.Fatalf("reference: %+v (refused %v)", tr.steps, tr.refused)
			}
			got := stateKind(&c, tr.steps[0], 1, tc.got)
			if got != tc.want {
				t.Errorf("kind %q, want %q", got, tc.want)
			}
			if !knownKind(got) {
				t.Errorf("kind %q is not known: its case file would be refused", got)
			}
		})
	}
}

// A dead letter that differs is grouped by the side that dead-lettered
// and the rule that chose between dead letter and discard on the
// reference: a handler code, or on_exhaustion (for an exhausted job and
// a non_retryable_errors match alike, §7.2 rules 5 and 7).
func TestDeadLetterKindGroupsByDeviation(t *testing.T) {
	for _, tc := range []struct {
		policy  map[string]any
		failure FuzzFailure
		want    string
	}{
		// Exhausted under discard: the reference keeps no dead letter.
		{map[string]any{"initial_interval": "PT0.02S", "max_attempts": 1}, FuzzFailure{Type: "fz.timeout"}, "dead-letter:dead-lettered-not-discarded(on_exhaustion)"},
		{map[string]any{"initial_interval": "PT0.02S", "non_retryable_errors": []string{"fz.*"}, "on_exhaustion": "dead_letter"}, FuzzFailure{Type: "fz.fatal"}, "dead-letter:discarded-not-dead-lettered(on_exhaustion)"},
		// FAIL is DISCARD (RK-13) under dead_letter.
		{map[string]any{"initial_interval": "PT0.02S", "on_exhaustion": "dead_letter"}, FuzzFailure{Type: "fz.timeout", Code: "FAIL"}, "dead-letter:dead-lettered-not-discarded(FAIL)"},
		{map[string]any{"initial_interval": "PT0.02S", "max_attempts": 1}, FuzzFailure{Type: "fz.timeout", Code: "DEAD_LETTER"}, "dead-letter:discarded-not-dead-lettered(DEAD_LETTER)"},
	} {
		c := FuzzCase{Policy: tc.policy, Failures: []FuzzFailure{tc.failure}}
		tr := reference(&c)
		if len(tr.steps) != 1 {
			t.Fatalf("%v: reference %+v", tc.policy, tr.steps)
		}
		if got := deadLetterKind(tr.steps[0]); got != tc.want || !knownKind(got) {
			t.Errorf("%v %v: kind %q (known %v), want %q", tc.policy, tc.failure, got, knownKind(got), tc.want)
		}
	}
}

// The reason of a state:ended-not-retried kind is what the case shows
// (non_retryable_errors in the policy), so it is confirmed by one play
// without it. On a server that matches patterns as regexps the server
// then retries: the reason stands and the case keeps its patterns. On a
// server that ends every job one attempt early (exhaustion offset −1)
// the server still ends it: the case loses the patterns, which were not
// why, and its kind gives no reason.
func TestSettleWhyKeepsOnlyAReasonThePlayConfirms(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fault    ojsfault.Set
		params   ojsfault.Params
		kind     string
		patterns bool
	}{
		{"regexp matching", ojsfault.RegexMatch, ojsfault.Params{}, "state:ended-not-retried(non_retryable_errors)", true},
		{"one attempt early", 0, ojsfault.Params{ExhaustShift: -1}, "state:ended-not-retried", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := ojshttp.New(executor.New())
			ojsfault.Plant(srv, tc.fault)
			ojsfault.PlantParams(srv, tc.params)
			hs := httptest.NewServer(srv)
			defer func() { hs.Close(); ojsfault.Plant(srv, 0); ojsfault.PlantParams(srv, ojsfault.Params{}) }()
			e, err := fuzzEnv(context.Background(), hs.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			// "fz.f.tal" matches "fz.fxtal" as a regexp only; the spec
			// retries the first of two attempts.
			c := FuzzCase{Policy: map[string]any{"initial_interval": "PT0.02S", "jitter": false, "max_attempts": 2, "non_retryable_errors": []string{"fz.f.tal"}},
				Failures: []FuzzFailure{{Type: "fz.fxtal"}}}
			bad, err := e.playCase(context.Background(), &c, only(""))
			if err != nil || !bad || c.Kind != "state:ended-not-retried(non_retryable_errors)" {
				t.Fatalf("first play: disagrees %v in %q, err %v: %s", bad, c.Kind, err, c.Got)
			}
			plays := e.settleWhy(context.Background(), &c, 10, &FuzzResult{})
			_, kept := c.Policy["non_retryable_errors"]
			if plays != 1 || c.Kind != tc.kind || kept != tc.patterns {
				t.Errorf("settled in %d plays (want 1) to %q (want %q), patterns kept %v: %v", plays, c.Kind, tc.kind, kept, c.Policy)
			}
		})
	}
}
