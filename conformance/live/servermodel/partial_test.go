package servermodel

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// skewed returns n failed checks whose first delay, 100 ms by the policy,
// was answered 5, 9, 13, ... ms early: a per-job skew no model describes
// (no two delays within twice the 1 ms resolution of each other, so a
// fitted time factor reproduces one check at most).
func skewed(n int) (obs []Obs, failed map[string]bool) {
	pol := map[string]any{"max_attempts": 3, "initial_interval": "PT0.1S", "backoff_coefficient": 2.0, "max_interval": "PT1S", "jitter": false, "on_exhaustion": "discard"}
	failed = map[string]bool{}
	for i := range n {
		d := 100*time.Millisecond - time.Duration(5+4*i)*time.Millisecond
		c := fmt.Sprintf("delay-%d", i)
		obs = append(obs, Obs{Check: c, Kind: FailAnswer, Policy: pol, Failure: Failure{Type: "x.timeout"}, N: 1,
			State: "retryable", Attempt: ptr(1), MaxAttempts: ptr(3), DelayLo: d, DelayHi: d + time.Microsecond, HasDelay: true})
		failed[c] = true
	}
	return obs, failed
}

// early is a retry handed out before its next_attempt_at: the early-retry
// model of the catalogue reproduces it.
func early() Obs { return Obs{Check: "not-early", Kind: Delivery, Yes: true} }

// TestPartialModelIsRefused: a model of the catalogue that reproduces one
// check (a retry handed out early: the time a retry is due) beside ten
// unexplained delays that differ (the same kind of deviation, more than
// 4× as many) is not named; the early retry joins the delay group as its
// remnant, so the one bug comes out as one group.
func TestPartialModelIsRefused(t *testing.T) {
	obs, failed := skewed(10)
	obs = append(obs, early())
	failed["not-early"] = true
	found, un := Diagnose(obs, failed)
	if len(found) > 0 {
		t.Errorf("named %+v beside %d unexplained delays", found, len(un))
	}
	if len(un) != 11 {
		t.Errorf("unexplained %v, want all 11 checks", un)
	}
	groups := Deviations(obs, un)
	if len(groups) != 1 || groups[0].Name != "delay-differs" || len(groups[0].Checks) != 11 {
		t.Fatalf("groups %+v, want one delay-differs of 11 checks", groups)
	}
	if want := "(10 of these 11; the other 1: a retry was handed out before its next_attempt_at)"; !strings.Contains(groups[0].Explanation, want) {
		t.Errorf("explanation %q lacks %q", groups[0].Explanation, want)
	}
}

// TestModelBesideFewDeviationsIsKept: the same early retry beside four
// delays that differ (not more than 4× the one check it explains) is
// named early-retry; and a model of another kind of deviation (a regex
// match: a state) is named beside any number of delays that differ.
func TestModelBesideFewDeviationsIsKept(t *testing.T) {
	named := func(obs []Obs, failed map[string]bool) []string {
		found, _ := Diagnose(obs, failed)
		var out []string
		for _, f := range found {
			out = append(out, f.Model.Name)
		}
		return out
	}
	obs, failed := skewed(4)
	obs = append(obs, early())
	failed["not-early"] = true
	// (a time factor fitted to one of the four delays is not: a fitted
	// family beside more unexplained delays than it explains is refused)
	if got := named(obs, failed); len(got) != 1 || got[0] != "early-retry" {
		t.Errorf("beside 4 delays: named %v, want early-retry alone", got)
	}

	var regex []Obs
	for _, o := range templates() {
		if o.Check == "regex" {
			regex = append(regex, o)
		}
	}
	if f := answered(of(qRegex), regex); !f["regex"] {
		t.Fatalf("the regex template does not fail under regex-match")
	}
	obs, failed = skewed(12)
	obs = append(obs, regex...)
	failed["regex"] = true
	if got := named(obs, failed); len(got) != 1 || got[0] != "regex-match" {
		t.Errorf("beside 12 delays: named %v, want regex-match", got)
	}
}

// TestCommonRatioHoldsTheMostWindows: a time factor is the one inside
// the most delay windows, the simplest only on a tie: windows widened by
// a loaded host (1.2..2.1, 1.3..2.05) beside a tight one at 1.5 give ×1.5,
// which holds all three, not ×2, which holds two; tight windows around 2
// give ×2, not a longer number inside them.
func TestCommonRatioHoldsTheMostWindows(t *testing.T) {
	for _, tc := range []struct {
		rs   [][2]float64
		want float64
	}{
		{[][2]float64{{1.2, 2.1}, {1.3, 2.05}, {1.45, 1.55}}, 1.5},
		{[][2]float64{{1.99, 2.01}, {1.995, 2.004}, {1.98, 2.02}}, 2},
		{[][2]float64{{0.49, 0.51}, {0.3, 0.8}}, 0.5},
	} {
		if got, ok := commonRatio(tc.rs); !ok || got != tc.want {
			t.Errorf("commonRatio(%v) = %v, %v; want %v", tc.rs, got, ok, tc.want)
		}
	}
}
