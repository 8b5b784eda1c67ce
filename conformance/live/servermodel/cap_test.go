package servermodel

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// TestDelaysAtTheCapAreNotConstantDraws: under exponent-offset(+2) the
// first delay of a policy without jitter (1 h, coefficient 2, cap 2 h) is
// the cap before jitter, 2 h, and the jittered 2 h × m is capped again at
// 2 h for every m ≥ 1: half the draws. Eight jobs all at 2 h (chance
// 2⁻⁸) are then draws of that server, not a constant delay: the
// exponent offset explains them alone, with no no-merge-jitter beside it.
func TestDelaysAtTheCapAreNotConstantDraws(t *testing.T) {
	dev := deviation{delayShift: 2, shiftOnly: 1 << backoff.Exponential}
	obs := templates()
	failed := answered(set{dev: dev}, obs)
	pol := map[string]any{"max_attempts": 3, "initial_interval": "PT1H", "backoff_coefficient": 2.0, "max_interval": "PT2H", "on_exhaustion": "discard"}
	for range 8 {
		obs = append(obs, Obs{Check: "partial-jitter-capped", Kind: FailAnswer, Policy: pol, Failure: Failure{Type: "x.timeout"}, N: 1,
			State: "retryable", Attempt: ptr(1), MaxAttempts: ptr(3), DelayLo: 2*time.Hour - time.Millisecond, DelayHi: 2*time.Hour + time.Millisecond, HasDelay: true})
	}
	failed["partial-jitter-capped"] = true
	found, un := Diagnose(obs, failed)
	if len(un) > 0 || len(found) != 1 || found[0].Model.Name != "exponent-offset(+2)" && !contains(found[0].Equivalent, "exponent-offset(+2)") {
		t.Fatalf("found %+v, unexplained %v; want exponent-offset(+2) alone", found, un)
	}
}
