package bench

import (
	"testing"
	"time"
)

// expectedNoJitter is the shared schedule written out by hand: 1s doubling
// from attempt 1, capped at 300s (5m) from attempt 10, since 2^9 s = 512s > 300s.
var expectedNoJitter = [cycle]time.Duration{
	1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
	16 * time.Second, 32 * time.Second, 64 * time.Second, 128 * time.Second,
	256 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second,
	300 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second,
	300 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second,
}

// cycles is how many times each driver walks attempts 1..20 in the checks,
// so that the reset between cycles is checked too.
const cycles = 3

func collect(d nexter) []time.Duration {
	out := make([]time.Duration, 0, cycles*cycle)
	for range cycles * cycle {
		out = append(out, d.next())
	}
	return out
}

func collectFailsafe(t *testing.T, jitter bool) []time.Duration {
	t.Helper()
	var out []time.Duration
	d := newFailsafe(jitter, func(v time.Duration) { out = append(out, v) })
	for c := range cycles {
		if !d.run() {
			t.Fatalf("failsafe-go cycle %d did not end with its retries exceeded", c)
		}
	}
	return out
}

func schedules(t *testing.T, jitter bool) map[string][]time.Duration {
	return map[string][]time.Duration{
		"retrykit":            collect(newRetrykitPCG(t, jitter)),
		"retrykit-randpcg":    collect(newRetrykitRandPCG(t, jitter)),
		"retrykit-fixed":      collect(newRetrykitFixed(t, jitter)),
		"retrykit-defaultsrc": collect(newRetrykitDefaultSource(t, jitter)),
		"retrykit-DelayAt":    collect(newRetrykitAt(t, jitter)),
		"cenkalti-v5":         collect(newCenkalti(jitter)),
		"go-retry":            collect(newGoRetry(jitter)),
		"retry-go-v5":         collect(newRetryGo(jitter)),
		"failsafe-go":         collectFailsafe(t, jitter),
	}
}

// TestSameScheduleWithoutJitter checks that every driver in the benchmark
// computes exactly the same delays when jitter is off, so that the numbers
// compare the same work.
func TestSameScheduleWithoutJitter(t *testing.T) {
	for name, got := range schedules(t, false) {
		if len(got) != cycles*cycle {
			t.Errorf("%s: %d delays, want %d", name, len(got), cycles*cycle)
			continue
		}
		for i, d := range got {
			if want := expectedNoJitter[i%cycle]; d != want {
				t.Errorf("%s: delay %d (attempt %d) = %v, want %v", name, i, i%cycle+1, d, want)
			}
		}
	}
}

// TestJitterWithinModel checks each driver's jittered delays against the
// range its documented jitter model allows around the base delay b of the
// attempt (b from expectedNoJitter); 1ns of slack covers float rounding.
func TestJitterWithinModel(t *testing.T) {
	half := func(b time.Duration) time.Duration { return b / 2 }
	threeHalves := func(b time.Duration) time.Duration { return b + b/2 }
	capped := func(d time.Duration) time.Duration { return min(d, maxDelay) }
	bounds := map[string]func(b time.Duration) (lo, hi time.Duration){
		// multiplier 0.5 + r, r in [0,1), capped again after jitter.
		"retrykit":            func(b time.Duration) (time.Duration, time.Duration) { return half(b), capped(threeHalves(b)) },
		"retrykit-randpcg":    func(b time.Duration) (time.Duration, time.Duration) { return half(b), capped(threeHalves(b)) },
		"retrykit-fixed":      func(b time.Duration) (time.Duration, time.Duration) { return half(b), capped(threeHalves(b)) },
		"retrykit-defaultsrc": func(b time.Duration) (time.Duration, time.Duration) { return half(b), capped(threeHalves(b)) },
		"retrykit-DelayAt":    func(b time.Duration) (time.Duration, time.Duration) { return half(b), capped(threeHalves(b)) },
		// [0.5b, 1.5b] (+1ns by its formula), no cap after jitter.
		"cenkalti-v5": func(b time.Duration) (time.Duration, time.Duration) { return half(b), threeHalves(b) + 1 },
		// b * (1 - k/100), k in [-50, 49], then our outer cap.
		"go-retry": func(b time.Duration) (time.Duration, time.Duration) { return half(b), capped(threeHalves(b)) },
		// b + [0, 1s), capped.
		"retry-go-v5": func(b time.Duration) (time.Duration, time.Duration) { return capped(b), capped(b + additiveJitter) },
		// b * (1.5 - r), r in [0,1): (0.5b, 1.5b], no cap after jitter.
		"failsafe-go": func(b time.Duration) (time.Duration, time.Duration) { return half(b), threeHalves(b) },
	}
	for name, got := range schedules(t, true) {
		bound, ok := bounds[name]
		if !ok {
			t.Errorf("%s: no jitter model", name)
			continue
		}
		if len(got) != cycles*cycle {
			t.Errorf("%s: %d delays, want %d", name, len(got), cycles*cycle)
			continue
		}
		varied := false
		for i, d := range got {
			b := expectedNoJitter[i%cycle]
			lo, hi := bound(b)
			if d < lo-1 || d > hi+1 {
				t.Errorf("%s: delay %d (attempt %d) = %v, outside [%v, %v]", name, i, i%cycle+1, d, lo, hi)
			}
			if d != b {
				varied = true
			}
		}
		if !varied {
			t.Errorf("%s: jitter on, but every delay equals the base delay", name)
		}
	}
}

// TestRetrykitDefaultPolicyIsTheJitteredSchedule checks that the OJS default
// policy has the benchmark's schedule, so either can be used.
func TestRetrykitDefaultPolicyIsTheJitteredSchedule(t *testing.T) {
	got := mustPolicy(t, true).Backoff().Config()
	want := policyDefaultBackoffConfig()
	if got != want {
		t.Errorf("parsed policy backoff config = %+v, policy.Default() = %+v", got, want)
	}
}
