package live

import (
	"context"
	"encoding/json"
	mrand "math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
	"pgregory.net/rapid"
)

// The reference of fuzz --server plays a case as the retry spec's
// formulas say (ojs-retry §3: exponential I·C^(n−1), linear I·n,
// polynomial I·n^C, none I; capped at max_interval; jitter a multiplier
// in [0.5, 1.5)), reading the binding's dialect and merging a partial
// policy over the defaults (3 attempts, coefficient 2, jitter on).
func TestReferenceFollowsTheRetryFormulas(t *testing.T) {
	const i = 20 * time.Millisecond
	// top is the largest jittered delay of a base: the multiplier's
	// half-open range ends just below 1.5, which truncation makes 1 ns
	// under 1.5·base for these bases.
	top := func(base time.Duration) time.Duration { return base*3/2 - 1 }
	plain := func(n int) []FuzzFailure {
		out := make([]FuzzFailure, n)
		for k := range out {
			out[k] = plainFailure
		}
		return out
	}
	exact := func(ds ...time.Duration) [][2]time.Duration {
		var out [][2]time.Duration
		for _, d := range ds {
			out = append(out, [2]time.Duration{d, d})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		policy   map[string]any
		failures []FuzzFailure
		delays   [][2]time.Duration // of the retries, in order
		end      string             // the last step's state
		dead     bool
	}{
		{"exponential", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 4, "jitter": false, "backoff_strategy": "exponential"},
			plain(4), exact(i, 2*i, 4*i), "discarded", false},
		{"linear", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 4, "jitter": false, "backoff_strategy": "linear"},
			plain(4), exact(i, 2*i, 3*i), "discarded", false},
		{"polynomial", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 4, "jitter": false, "backoff_strategy": "polynomial", "backoff_coefficient": 2},
			plain(4), exact(i, 4*i, 9*i), "discarded", false},
		{"none", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 4, "jitter": false, "backoff_strategy": "none", "backoff_coefficient": 3},
			plain(4), exact(i, i, i), "discarded", false},
		{"capped", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 4, "jitter": false, "max_interval": "PT0.05S"},
			plain(4), exact(i, 2*i, 50*ms), "discarded", false},
		{"binding dialect", map[string]any{"initial_interval_ms": 20, "max_attempts": 3, "jitter": false, "backoff_type": "POLYNOMIAL", "backoff_coefficient": 3, "on_exhaustion": "dead_letter"},
			plain(3), exact(i, 8*i), "discarded", true},
		{"jitter", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 3, "jitter": true},
			plain(3), [][2]time.Duration{{i / 2, top(i)}, {i, top(2 * i)}}, "discarded", false},
		{"jitter under a cap", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 2, "jitter": true, "max_interval": "PT0.025S"},
			plain(2), [][2]time.Duration{{i / 2, 25 * ms}}, "discarded", false},
		{"partial: defaults merged", map[string]any{"initial_interval": "PT0.02S"},
			plain(4), [][2]time.Duration{{i / 2, top(i)}, {i, top(2 * i)}}, "discarded", false},
		{"prefix pattern", map[string]any{"initial_interval": "PT0.02S", "non_retryable_errors": []string{"fz.*"}, "on_exhaustion": "dead_letter"},
			[]FuzzFailure{{Type: "fz.fatal.db"}}, nil, "discarded", true},
		{"near miss of a prefix pattern", map[string]any{"initial_interval": "PT0.02S", "jitter": false, "max_attempts": 2, "non_retryable_errors": []string{"fz.*"}},
			[]FuzzFailure{{Type: "fzx.fatal"}, {Type: "fzx.fatal"}}, exact(i), "discarded", false},
		{"DISCARD over dead_letter", map[string]any{"initial_interval": "PT0.02S", "on_exhaustion": "dead_letter"},
			[]FuzzFailure{{Type: "fz.timeout", Code: "DISCARD"}}, nil, "discarded", false},
		{"DEAD_LETTER over discard", map[string]any{"initial_interval": "PT0.02S"},
			[]FuzzFailure{{Type: "fz.timeout", Code: "DEAD_LETTER"}}, nil, "discarded", true},
		{"RETRY at the last attempt", map[string]any{"initial_interval": "PT0.02S", "max_attempts": 1},
			[]FuzzFailure{{Type: "fz.timeout", Code: "RETRY"}}, nil, "discarded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := FuzzCase{Policy: tc.policy, Failures: tc.failures}
			tr := reference(&c)
			if tr.refused != nil {
				t.Fatalf("refused: %v", tr.refused)
			}
			if len(tr.steps) != len(tc.delays)+1 {
				t.Fatalf("%d steps, want %d retries and an end: %+v", len(tr.steps), len(tc.delays), tr.steps)
			}
			for k, d := range tc.delays {
				s := tr.steps[k]
				if s.state != "retryable" || s.lo != d[0] || s.hi != d[1] || s.attempt != k+1 || s.fetchAttempt != k+1 {
					t.Errorf("step %d: %s (fetch attempt %d), want retryable, attempt %d, retry after %s", k+1, s.answer(), s.fetchAttempt, k+1, span(d[0], d[1]))
				}
			}
			end := tr.steps[len(tr.steps)-1]
			if end.state != tc.end || end.dead != tc.dead || end.attempt != len(tr.steps) || len(end.errors) != len(tr.steps) {
				t.Errorf("end: %s with %d errors, want %s (dead letter %v) at attempt %d", end.answer(), len(end.errors), tc.end, tc.dead, len(tr.steps))
			}
			for k, e := range end.errors {
				if e.Attempt != k+1 || e.Type != tc.failures[k].Type || e.Message != failMessage(k+1) {
					t.Errorf("error %d: %+v", k+1, e)
				}
			}
		})
	}
	// A policy serve refuses, the reference refuses.
	if tr := reference(&FuzzCase{Policy: map[string]any{"initial_interval": "PT0.02S", "max_attempts": -1}, Failures: plain(1)}); tr.refused == nil {
		t.Errorf("max_attempts -1 accepted: %+v", tr.steps)
	}
}

// caseGen draws generated cases, with a disagreement step.
func caseGen() *rapid.Generator[FuzzCase] {
	return rapid.Custom(func(t *rapid.T) FuzzCase {
		seed := rapid.Uint64().Draw(t, "seed")
		c := genCase(mrand.New(mrand.NewPCG(seed, seed^1)))
		c.Step = rapid.IntRange(0, len(c.Failures)).Draw(t, "step")
		return c
	})
}

// Every variant of a case is smaller than the case, so shrinking ends.
func TestFuzzVariantsAreSmaller(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := caseGen().Draw(t, "case")
		for _, v := range variants(c) {
			if v.size() >= c.size() {
				t.Fatalf("variant %v %v (size %d) not smaller than %v %v (size %d)", v.Policy, v.Failures, v.size(), c.Policy, c.Failures, c.size())
			}
		}
	})
}

// Shrinking never grows a case, keeps the disagreement it shrinks, stays
// within its plays, and leaves no variant of the result that still
// disagrees (it is a local minimum) when the plays suffice.
func TestFuzzShrinkNeverGrows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := caseGen().Draw(t, "case")
		// A disagreement that shows when a chosen feature of the case is
		// there: a policy key, a failure of some type or code, attempts.
		key := rapid.SampledFrom([]string{"backoff_strategy", "backoff_type", "jitter", "non_retryable_errors", "max_interval_ms"}).Draw(t, "key")
		typ := rapid.SampledFrom(fuzzTypes).Draw(t, "type")
		minFailures := rapid.IntRange(1, 3).Draw(t, "failures")
		bad := func(v *FuzzCase) bool {
			_, has := v.Policy[key]
			hasType := false
			for _, f := range v.Failures {
				hasType = hasType || f.Type == typ
			}
			return has && hasType && len(v.Failures) >= minFailures
		}
		if !bad(&c) {
			t.Skip("the case does not show the drawn disagreement")
		}
		left := rapid.IntRange(1, 200).Draw(t, "left")
		before := c.size()
		plays := shrinkWith(context.Background(), &c, left, func(v *FuzzCase, _ int) (bool, int) { return bad(v), 1 })
		if c.size() > before || !bad(&c) || plays > left {
			t.Fatalf("shrunk to size %d from %d (still bad %v) in %d plays of %d: %v %v", c.size(), before, bad(&c), plays, left, c.Policy, c.Failures)
		}
		if plays < left {
			for _, v := range variants(c) {
				if bad(&v) {
					t.Fatalf("shrink stopped with a smaller disagreeing variant %v %v", v.Policy, v.Failures)
				}
			}
		}
	})
}

// genCase is a function of its seed: a written seed repeats the run.
func TestFuzzCasesRepeatBySeed(t *testing.T) {
	a, b := mrand.New(mrand.NewPCG(9, 9^1)), mrand.New(mrand.NewPCG(9, 9^1))
	for range 50 {
		if x, y := genCase(a), genCase(b); !reflect.DeepEqual(x, y) {
			t.Fatalf("same seed, different cases: %v and %v", x, y)
		}
	}
}

// Property: retrykit serve, the reference executor behind HTTP, agrees
// with the reference executor run in process on every generated case.
func TestServeAgreesWithTheReferenceOnGeneratedCases(t *testing.T) {
	hs := httptest.NewServer(ojshttp.New(executor.New()))
	defer hs.Close()
	e, err := fuzzEnv(context.Background(), hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		c := caseGen().Draw(t, "case")
		bad, err := e.playCase(context.Background(), &c, only(""))
		if err != nil || bad {
			t.Fatalf("policy %v, failures %v: %v %s", c.Policy, c.Failures, err, c.Got)
		}
	})
	if left := e.cleanup(context.Background()); !strings.Contains(left, "could not remove 0 (") {
		t.Errorf("cleanup: %q", left)
	}
}

// FuzzCaseFile reads arbitrary bytes as a case file (what --replay
// reads) and plays it on the reference: nothing panics, and the trace
// keeps its invariants (at most one step per failure, attempts 1, 2, …,
// each delay range ordered, only the last step final); every variant
// shrinking tries is smaller.
func FuzzCaseFile(f *testing.F) {
	for _, s := range []string{
		`{"policy":{"initial_interval":"PT0.02S","max_attempts":1},"failures":[{"type":"fz.timeout"}]}`,
		`{"policy":{"initial_interval_ms":20,"backoff_type":"POLYNOMIAL","jitter":true,"max_interval":"PT0.05S"},"failures":[{"type":"a"},{"code":"DEAD_LETTER"},{"type":"b","code":"x"}]}`,
		`{"policy":{"max_attempts":9223372036854775807,"initial_interval":"PT1000000H","backoff_coefficient":1e308},"failures":[{"type":"t"},{"type":"t"},{"type":"t"}]}`,
		`{"policy":{"non_retryable_errors":["fz.*"],"on_exhaustion":"dead_letter"},"failures":[{"type":"fz.x"}]}`,
		`{"policy":{"max_attempts":-1},"failures":[{}]}`, `{"policy":null}`, `[]`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c FuzzCase
		if json.Unmarshal(data, &c) != nil || c.Policy == nil || len(c.Failures) == 0 || len(c.Failures) > MaxCaseFailures {
			return
		}
		tr := reference(&c)
		if tr.refused != nil && len(tr.steps) > 0 || len(tr.steps) > len(c.Failures) {
			t.Fatalf("%d steps for %d failures (refused %v)", len(tr.steps), len(c.Failures), tr.refused)
		}
		for i, s := range tr.steps {
			final := s.state != "retryable"
			if s.attempt != i+1 || s.fetchAttempt != i+1 || s.lo > s.hi || s.lo < 0 || final != (i == len(tr.steps)-1 && final) {
				t.Fatalf("step %d: %+v", i+1, s)
			}
		}
		_ = tr.jittered()
		for _, v := range variants(c) {
			if v.size() >= c.size() {
				t.Fatalf("variant %v %v (size %d) not smaller than %v %v (size %d)", v.Policy, v.Failures, v.size(), c.Policy, c.Failures, c.size())
			}
		}
		for _, k := range []string{"push", "delay:above-cap", "delay:linear", "state:retried-not-discarded(DISCARD)", "state:ended-not-retried(RETRY)", "dead-letter:dead-lettered-not-discarded(on_exhaustion)", "history"} {
			_ = canShow(k, &c)
		}
	})
}

func TestKnownKinds(t *testing.T) {
	for _, k := range []string{"", "push", "state", "max_attempts", "delay:above-cap", "delay:exponential", "delay:polynomial", "delay:none", "delay:linear", "history",
		"dead-letter", "state:retried-not-discarded(DISCARD)", "state:ended-not-retried", "state:ended-not-retried(non_retryable_errors)",
		"dead-letter:dead-lettered-not-discarded(FAIL)", "dead-letter:discarded-not-dead-lettered(DEAD_LETTER)"} {
		if !knownKind(k) {
			t.Errorf("knownKind(%q) = false", k)
		}
	}
	for _, k := range []string{"delay:exponential+ms", "delay:", "Push", "delay:fibonacci", "states",
		"state:", "state:retried", "state:retried-not-discarded(", "state:retried-not-discarded(discard)", "state:retried-not-discarded(DISCARD))",
		"dead-letter:retried-not-discarded(DISCARD)", "state:dead-lettered-not-discarded(FAIL)"} {
		if knownKind(k) {
			t.Errorf("knownKind(%q) = true", k)
		}
	}
}

// Shrinking spends its jobs on variants that can keep the disagreement:
// a jitter above the cap (no-cap-after-jitter planted), found on a case
// of three failures and five policy fields (the shape ojs-backend-kafka's
// case was found in), shrinks within 40 jobs to one failure under a
// policy of one field, max_interval, every other field at its default
// (ojs-retry §8: PT1S initial interval, jitter on, 3 attempts): the
// reference caps the first delay at max_interval, the server's jitter
// goes up to half again above it. Before variants the reference shows
// cannot disagree were skipped, 400 jobs gave 71 to 80 plays and kept
// four fields. A variant kept on a jitter draw may be missed (1 in 64 at
// these draws), so two of three shrinks must get there.
func TestAboveCapShrinksToOneFieldWithinTheDefaultJobs(t *testing.T) {
	srv := ojshttp.New(executor.New())
	ojsfault.Plant(srv, ojsfault.NoCapAfterJitter)
	hs := httptest.NewServer(srv)
	defer func() { hs.Close(); ojsfault.Plant(srv, 0) }()
	e, err := fuzzEnv(context.Background(), hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 40
	oneField := 0
	for run := range 3 {
		c := FuzzCase{Policy: map[string]any{"initial_interval": "PT0.03S", "jitter": true, "max_attempts": 3, "max_interval": "PT0.06S", "on_exhaustion": "dead_letter"},
			Failures: []FuzzFailure{{Type: "fz.timeout", Code: "RETRY"}, {Type: "fz.fatal"}, {Type: "fz.timeout"}}}
		// Found: the second retry, 60 ms uncapped, above the 60 ms cap on
		// the server on some draws.
		found := false
		for range 40 {
			if found, _, _ = e.playTries(context.Background(), &c, 1, 1, only("delay:above-cap"), nil); found {
				break
			}
		}
		if !found {
			t.Fatal("the planted fault never showed in 40 plays")
		}
		n, _ := e.shrink(context.Background(), &c, budget, 0, &FuzzResult{})
		t.Logf("run %d: %d plays: %v %+v", run, n, c.Policy, c.Failures)
		if n > budget || c.Kind != "delay:above-cap" || len(c.Failures) != 1 || c.Policy["max_interval"] == nil {
			t.Fatalf("run %d: %d plays (at most %d), kind %s: %v %+v", run, n, budget, c.Kind, c.Policy, c.Failures)
		}
		if len(c.Policy) == 1 {
			oneField++
		}
	}
	if oneField < 2 {
		t.Errorf("%d of 3 shrinks reached a one-field policy", oneField)
	}
}
