package profile_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// drawProfile picks one of the profiles.
func drawProfile(t *rapid.T) profile.Profile {
	return rapid.SampledFrom(profile.All()).Draw(t, "profile")
}

// drawAttempt favours the first attempts, the ones where formulas differ,
// and also covers the whole range up to math.MaxInt.
func drawAttempt(t *rapid.T, label string) int {
	return rapid.OneOf(
		rapid.IntRange(1, 40),
		rapid.IntRange(1, math.MaxInt),
		rapid.SampledFrom([]int{1, 2, 62, 63, 64, 100, 1 << 31, math.MaxInt32, math.MaxInt - 1, math.MaxInt}),
	).Draw(t, label)
}

// drawR returns a draw in [0, 1), with both ends likely.
func drawR(t *rapid.T, label string) float64 {
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) float64 { return float64(rapid.Uint64().Draw(t, "bits")>>11) * 0x1p-53 }),
		rapid.SampledFrom([]float64{0, 0.5, 0x1.fffffffffffffp-1, 0.9999999999, 1e-300}),
	).Draw(t, label)
}

// TestPropertyBounds: every delay lies in [lo, hi], both are reached, none
// is negative, for any profile, attempt up to math.MaxInt and draw.
func TestPropertyBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawProfile(t)
		n := drawAttempt(t, "n")
		r := drawR(t, "r")
		lo, hi := p.Bounds(n)
		if lo < 0 || hi < lo {
			t.Fatalf("%s: bounds(%d) = [%v, %v]", p.Name(), n, lo, hi)
		}
		d := p.DelayAt(n, r)
		if d < lo || d > hi {
			t.Fatalf("%s: DelayAt(%d, %v) = %v outside [%v, %v]", p.Name(), n, r, d, lo, hi)
		}
		if p.DelayAt(n, 0) != lo || p.DelayAt(n, 0x1.fffffffffffffp-1) != hi {
			t.Fatalf("%s: bounds(%d) not reached at the ends", p.Name(), n)
		}
		if !p.Jitter() && lo != hi {
			t.Fatalf("%s: no jitter but bounds [%v, %v]", p.Name(), lo, hi)
		}
		if !p.Stateful() {
			if got := p.Delay(n, backoff.Fixed(r)); got != d {
				t.Fatalf("%s: Delay(%d, Fixed(%v)) = %v, DelayAt = %v", p.Name(), n, r, got, d)
			}
		}
	})
}

// TestPropertySchedule: a schedule with independent draws stays inside the
// per-attempt bounds; with a constant draw it is DelayAt; Run gives the
// same delays as Schedule for the same draws and stops at MaxAttempts.
func TestPropertySchedule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawProfile(t)
		k := rapid.IntRange(1, 30).Draw(t, "k")
		seed := rapid.Uint64().Draw(t, "seed")
		var sched []time.Duration
		for n, d := range p.Schedule(k, backoff.NewPCG(seed, 1)) {
			if n != len(sched)+1 {
				t.Fatalf("%s: schedule attempt %d after %d", p.Name(), n, len(sched))
			}
			lo, hi := p.Bounds(n)
			if d < lo || d > hi {
				t.Fatalf("%s: schedule delay %d = %v outside [%v, %v]", p.Name(), n, d, lo, hi)
			}
			sched = append(sched, d)
		}
		if len(sched) != k {
			t.Fatalf("%s: schedule of %d gave %d delays", p.Name(), k, len(sched))
		}
		r := drawR(t, "r")
		for n, d := range p.Schedule(k, backoff.Fixed(r)) {
			if want := p.DelayAt(n, r); d != want {
				t.Fatalf("%s: constant-draw schedule %d = %v, DelayAt = %v", p.Name(), n, d, want)
			}
		}
		run := p.Run()
		src := backoff.NewPCG(seed, 1)
		for n := 1; n <= k; n++ {
			d := run.Next(src)
			if run.Attempt() != n {
				t.Fatalf("%s: Attempt() = %d after %d calls", p.Name(), run.Attempt(), n)
			}
			exhausted := p.MaxAttempts() > 0 && n >= p.MaxAttempts()
			if exhausted {
				if d.Action != p.OnExhaustion() || d.Reason != policy.ReasonExhausted {
					t.Fatalf("%s: attempt %d: %+v, want exhaustion", p.Name(), n, d)
				}
				break
			}
			if d.Action != policy.Retry || d.Delay != sched[n-1] {
				t.Fatalf("%s: run attempt %d: %+v, schedule says %v", p.Name(), n, d, sched[n-1])
			}
		}
	})
}

// TestPropertyDecide: Decide retries exactly before MaxAttempts, with a
// delay equal to DelayAt.
func TestPropertyDecide(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := drawProfile(t)
		n := drawAttempt(t, "n")
		r := drawR(t, "r")
		d := p.DecideAt(n, r)
		if p.MaxAttempts() > 0 && n >= p.MaxAttempts() {
			if d != (policy.Decision{Action: p.OnExhaustion(), Reason: policy.ReasonExhausted}) {
				t.Fatalf("%s: DecideAt(%d) = %+v, want exhaustion", p.Name(), n, d)
			}
			return
		}
		if d.Action != policy.Retry || d.Delay != p.DelayAt(n, r) {
			t.Fatalf("%s: DecideAt(%d, %v) = %+v, DelayAt = %v", p.Name(), n, r, d, p.DelayAt(n, r))
		}
	})
}

func TestLookup(t *testing.T) {
	names := profile.Names()
	if !slices.IsSorted(names) || len(names) < 23 {
		t.Fatalf("Names() = %v", names)
	}
	for i, p := range profile.All() {
		if p.Name() != names[i] {
			t.Errorf("All()[%d] = %s, Names()[%d] = %s", i, p.Name(), i, names[i])
		}
		q, err := profile.Lookup(p.Name())
		if err != nil || q != p {
			t.Errorf("Lookup(%s) = %v, %v", p.Name(), q.Name(), err)
		}
		for what, s := range map[string]string{"system": p.System(), "version": p.Version(), "source": p.Source(),
			"summary": p.Summary(), "formula": p.Formula(), "exhaustion": p.Exhaustion(), "terminal": p.Terminal()} {
			if s == "" {
				t.Errorf("%s: empty %s", p.Name(), what)
			}
		}
		if p.Jitter() != (p.Draw() != "") {
			t.Errorf("%s: Jitter() = %t but Draw() = %q", p.Name(), p.Jitter(), p.Draw())
		}
	}
	_, err := profile.Lookup("Sidekiq")
	if !errors.Is(err, profile.ErrUnknown) {
		t.Fatalf("Lookup(Sidekiq) error = %v, want ErrUnknown", err)
	}
	if want := `profile: unknown profile "Sidekiq"; did you mean "sidekiq"? (known: activejob, `; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error text %q", err)
	}
}

func TestZeroProfile(t *testing.T) {
	var p profile.Profile
	if p.Name() != "" || p.DelayAt(3, 0.5) != 0 || p.MaxAttempts() != 1 {
		t.Fatalf("zero Profile: %q %v %d", p.Name(), p.DelayAt(3, 0.5), p.MaxAttempts())
	}
	if d := p.Decide(1, nil); d.Action != policy.Discard || d.Reason != policy.ReasonExhausted {
		t.Fatalf("zero Profile Decide = %+v", d)
	}
	var run profile.Run
	if d := run.Next(nil); d.Action != policy.Discard {
		t.Fatalf("zero Run Next = %+v", d)
	}
}

// TestHugeAttempts pins the saturation at the far end: every profile
// answers for math.MaxInt without panic, and the capped ones give their
// cap.
func TestHugeAttempts(t *testing.T) {
	want := map[string]time.Duration{
		"ojs": 150 * time.Second, "temporal": 100 * time.Second, "aws_go": 0,
		"grpc_connect": 96 * time.Second, "grpc_retry": 800 * time.Millisecond, "celery": 180 * time.Second,
		"resque_retry": 6 * time.Hour, "zzz_jobs": time.Hour, "chasquimq": 30 * time.Second,
		"full_jitter": 0, "equal_jitter": 150 * time.Second, "decorrelated_jitter": time.Second,
		"gax": 1, "aws": 0,
		"river": math.MaxInt64, "asynq": math.MaxInt64, "faktory": math.MaxInt64, "sidekiq": math.MaxInt64,
		"sidekiq6": math.MaxInt64, "oban": math.MaxInt64, "activejob": 3 * time.Second,
		"bullmq": 0, "flare": math.MaxInt64,
		"cenkalti": 30 * time.Second, "failsafe": 0, "go_retry": math.MaxInt64, "retryablehttp": 30 * time.Second,
		// retry-go: 100ms << maxBackOffN, 63 - bits.Len64(1e8) = 36 shifts.
		"retry_go": 100 * time.Millisecond << 36,
		"tenacity": 0, "backoff": 0, "rq": 0, "p_retry": (1<<31 - 1) * time.Millisecond, "bee_queue": 0,
		"delayed_job": math.MaxInt64, "exponential_backoff": math.MaxInt64, "pg_boss": 0,
		"graphile_worker": 22026465795 * time.Microsecond,
	}
	for _, p := range profile.All() {
		got := p.DelayAt(math.MaxInt, 0)
		if w, ok := want[p.Name()]; !ok {
			t.Errorf("%s: no expectation", p.Name())
		} else if got != w {
			t.Errorf("%s: DelayAt(MaxInt, 0) = %v, want %v", p.Name(), got, w)
		}
	}
}
