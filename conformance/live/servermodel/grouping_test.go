package servermodel

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
)

// failAfter is a FAIL answer of attempt 1 of a job under policy pol,
// retryable after a delay window [lo, lo+1ms].
func failAfter(check string, pol map[string]any, lo time.Duration) Obs {
	return Obs{Check: check, Kind: FailAnswer, Policy: pol, Failure: Failure{Type: "x"}, N: 1,
		State: "retryable", Attempt: ptr(1), MaxAttempts: ptr(3), DelayLo: lo, DelayHi: lo + time.Millisecond, HasDelay: true}
}

// TestWholeSecondDelaysAreOneGroup: delays truncated to the second (20ms
// and 700ms become 0, 1.7s becomes 1s) and rounded up (20ms becomes 1s)
// are one unexplained group, delay-whole-seconds; a delay 2× the spec's
// is not of it. Windows too wide to tell join the group without voting.
func TestWholeSecondDelaysAreOneGroup(t *testing.T) {
	pol := func(initial string) map[string]any {
		return map[string]any{"max_attempts": 3, "initial_interval": initial, "backoff_coefficient": 2.0, "max_interval": "PT1M", "jitter": false}
	}
	for _, tc := range []struct {
		name string
		obs  []Obs
		want string
	}{
		{"truncated", []Obs{failAfter("a", pol("PT0.02S"), 0), failAfter("b", pol("PT0.7S"), 0), failAfter("c", pol("PT1.7S"), time.Second)}, "delay-whole-seconds"},
		{"rounded-up", []Obs{failAfter("a", pol("PT0.02S"), time.Second), failAfter("b", pol("PT0.7S"), time.Second), failAfter("c", pol("PT1.2S"), 2*time.Second)}, "delay-whole-seconds"},
		// 2× the spec's: 40ms, 1.4s, 3.4s (none a whole second)
		// on a loaded host two windows are 1.5 s wide: they hold 1 s by
		// chance, so they join the group the narrow ones found without
		// voting on it
		{"rounded-up-wide-windows", []Obs{failAfter("a", pol("PT0.02S"), time.Second), failAfter("b", pol("PT0.7S"), time.Second),
			wide(failAfter("c", pol("PT0.02S"), 980*time.Millisecond)), wide(failAfter("d", pol("PT0.05S"), 970*time.Millisecond)),
			wide(failAfter("e", pol("PT0.03S"), 990*time.Millisecond))}, "delay-whole-seconds"},
		{"doubled", []Obs{failAfter("a", pol("PT0.02S"), 40*time.Millisecond), failAfter("b", pol("PT0.7S"), 1400*time.Millisecond), failAfter("c", pol("PT1.7S"), 3400*time.Millisecond)}, "delay-ratio(×2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var checks []string
			for _, o := range tc.obs {
				checks = append(checks, o.Check)
			}
			groups := Deviations(tc.obs, checks)
			if len(groups) != 1 || groups[0].Name != tc.want || len(groups[0].Checks) != len(checks) {
				t.Fatalf("groups %+v, want one %s of %d checks", groups, tc.want, len(checks))
			}
		})
	}
}

// wide widens o's delay window to 1.5 s, as a FAIL round trip on a
// loaded host does.
func wide(o Obs) Obs {
	o.DelayHi = o.DelayLo + 1500*time.Millisecond
	return o
}

// TestNewestFirstHistoryIsOneGroup: an error history shown newest first
// (entries 1..4 show attempts 4..1) on two checks is history-order, not
// an attempt offset; a history numbered from 0 stays attempt-offset(-1).
func TestNewestFirstHistoryIsOneGroup(t *testing.T) {
	hist := func(check string, shown ...int) []Obs {
		var out []Obs
		for i, a := range shown {
			out = append(out, Obs{Check: check, Kind: HistoryAttempt, N: i + 1, Attempt: ptr(a)})
		}
		return out
	}
	for _, tc := range []struct {
		shown []int
		want  string
	}{
		{[]int{4, 3, 2, 1}, "history-order"},
		{[]int{0, 1, 2, 3}, "attempt-offset(-1)"},
	} {
		obs := append(hist("a", tc.shown...), hist("b", tc.shown...)...)
		groups := Deviations(obs, []string{"a", "b"})
		if len(groups) != 1 || groups[0].Name != tc.want {
			t.Errorf("history %v: groups %+v, want one %s", tc.shown, groups, tc.want)
		}
	}
}

// TestRandomNewFamiliesAreFitted: a server with one bug of the families of
// RK-405, its parameter drawn (one strategy's attempt offset, a cap
// factor, the field matched), fails template checks, and Diagnose names
// exactly that family with its parameter (or one this run cannot tell
// apart from it), alone and uncontradicted.
func TestRandomNewFamiliesAreFitted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var dev deviation
		var want string
		switch rapid.IntRange(0, 2).Draw(t, "family") {
		case 0:
			st := rapid.SampledFrom([]backoff.Strategy{backoff.Linear, backoff.Polynomial}).Draw(t, "strategy")
			k := rapid.SampledFrom([]int{-2, -1, 1, 2}).Draw(t, "k")
			dev = deviation{delayShift: k, shiftOnly: 1 << st}
			want = fmt.Sprintf("delay-attempt-offset(%s,%+d)", strategyNames[st], k)
		case 1:
			f := rapid.SampledFrom([]float64{0.001, 0.01, 0.1, 0.5}).Draw(t, "factor")
			dev = deviation{capFactor: f}
			want = fmt.Sprintf("cap-factor(×%g)", f)
		case 2:
			dev = deviation{matchFields: fieldMessage}
			want = "matched-field(message)"
		}
		obs := templates()
		failed := answered(set{dev: dev}, obs)
		found, un := Diagnose(obs, failed)
		if len(un) > 0 || len(found) != 1 || found[0].Model.Name != want && !contains(found[0].Equivalent, want) || len(found[0].Contradicted) > 0 {
			t.Fatalf("found %+v, unexplained %v; want %s alone", found, un, want)
		}
	})
}
