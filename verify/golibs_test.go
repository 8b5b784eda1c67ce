package verify_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	gax "github.com/googleapis/gax-go/v2"
	"github.com/hibiken/asynq"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/profile"
)

// The Go libraries draw from generators they seed themselves (math/rand/v2's
// global source, crypto/rand), so no draw can be injected: each attempt is
// sampled many times and every sample must lie within the inclusive bounds,
// with the smallest and largest samples close to either end.

// samples per attempt. With a uniform draw, the chance that no sample lands
// in the lowest (or highest) twentieth of the range is 0.95^2000 < 1e-44.
const samples = 2000

// edge is how close, as a fraction of the range, the extreme samples must get
// to each bound.
const edge = 0.05

// sampler returns one real delay after attempt n as an interval [lo, hi]
// known to contain it: lo == hi for libraries that return a Duration; River
// returns a time, so its delay is only known up to the clock reads around
// the call.
type sampler func(n int) (lo, hi time.Duration)

// envelope samples attempt n and checks the samples against [min, max].
func checkSampled(t *testing.T, id string, n int, min, max time.Duration, sample sampler) (smin, smax time.Duration) {
	t.Helper()
	smin, smax = time.Duration(1<<63-1), time.Duration(-1<<63)
	bad := 0
	for range samples {
		lo, hi := sample(n)
		// The real delay d is in [lo, hi]: it is certainly below min if
		// hi < min, certainly above max if lo > max.
		if hi < min || lo > max {
			if bad < 3 {
				t.Errorf("%s: attempt %d: real delay in [%v, %v], outside [%v, %v]", id, n, lo, hi, min, max)
			}
			bad++
		}
		smin, smax = minD(smin, lo), maxD(smax, hi)
	}
	width := float64(max - min)
	if float64(smin-min) > edge*width || float64(max-smax) > edge*width {
		t.Errorf("%s: attempt %d: %d samples span [%v, %v], not close to both ends of [%v, %v]", id, n, samples, smin, smax, min, max)
	}
	return smin, smax
}

func minD(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func maxD(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// sampledSystem is a Go library checked by sampling.
type sampledSystem struct {
	profile string
	upTo    int     // attempts compared with package profile's Bounds
	sample  sampler // one real delay after attempt n
	// retry reports whether the library retries after attempt n under its
	// defaults; nil when that decision is not reachable from its exported API.
	retry func(n int) bool
}

func (s sampledSystem) check(t *testing.T) {
	t.Helper()
	f := load(t, s.profile)
	// Bounds vectors: exact envelope checks.
	for _, v := range f.Of("bounds") {
		checkSampled(t, v.ID, v.Attempt, time.Duration(v.MinNS), time.Duration(v.MaxNS), s.sample)
	}
	// Delay and schedule vectors pin one draw each; the real code's draw cannot
	// be pinned, so each vector's delay must lie within what the real code
	// produces at that attempt (its sampled range, widened by the same edge).
	within := func(id string, n int, d time.Duration) {
		smin, smax := time.Duration(1<<63-1), time.Duration(-1<<63)
		for range samples {
			lo, hi := s.sample(n)
			smin, smax = minD(smin, lo), maxD(smax, hi)
		}
		slack := time.Duration(edge*float64(smax-smin)) + 1
		// Saturate: a real delay of MaxInt64 has no room above it.
		if d < smin-min(slack, smin-(-1<<63)) || smax < 1<<63-1-slack && d > smax+slack {
			t.Errorf("%s: attempt %d: vector delay %v outside the real code's range [%v, %v]", id, n, d, smin, smax)
		}
	}
	for _, v := range f.Of("delay") {
		within(v.ID, v.Attempt, time.Duration(v.DelayNS))
	}
	for _, v := range f.Of("schedule") {
		for i, d := range v.DelaysNS {
			within(fmt.Sprintf("%s[%d]", v.ID, i), i+1, time.Duration(d))
		}
	}
	if s.retry != nil {
		for _, v := range f.Of("decision") {
			if got := s.retry(v.Attempt); got != v.Retry {
				t.Errorf("%s: after attempt %d the real code retries=%v, vector says %v", v.ID, v.Attempt, got, v.Retry)
			}
		}
	} else if n := len(f.Of("decision")); n > 0 {
		t.Logf("%s: %d decision vectors not checked: the retry limit is not reachable through the library's exported API", s.profile, n)
	}
	t.Logf("%s: %d bounds, %d delay, %d schedule vectors checked against %d real samples per attempt",
		s.profile, len(f.Of("bounds")), len(f.Of("delay")), len(f.Of("schedule")), samples)

	t.Run("profile_bounds", func(t *testing.T) {
		p := vectorProfile(t, s.profile)
		for n := 1; n <= s.upTo; n++ {
			lo, hi := p.Bounds(n)
			checkSampled(t, fmt.Sprintf("profile.Bounds(%d)", n), n, lo, hi, s.sample)
			if s.retry != nil {
				if want, got := p.MaxAttempts() == 0 || n < p.MaxAttempts(), s.retry(n); want != got {
					t.Errorf("profile %s: MaxAttempts() = %d says retry after attempt %d is %v; the real code says %v", s.profile, p.MaxAttempts(), n, want, got)
				}
			}
		}
		t.Logf("%s: real samples lie within profile.Bounds for attempts 1..%d", s.profile, s.upTo)
	})
}

// moduleVersion names the version of a module this module requires, read
// from go.mod (test binaries carry no dependency list in their build info).
func moduleVersion(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == path {
			return fields[1]
		}
	}
	t.Fatalf("go.mod does not require %s", path)
	return ""
}

// TestRiverReal samples River's DefaultClientRetryPolicy.NextRetry.
func TestRiverReal(t *testing.T) {
	t.Logf("real implementation: github.com/riverqueue/river %s", moduleVersion(t, "github.com/riverqueue/river"))
	policy := &river.DefaultClientRetryPolicy{}
	sampledSystem{
		profile: "river",
		upTo:    30,
		sample: func(n int) (time.Duration, time.Duration) {
			// River passes len(job.Errors)+1 to its formula: after attempt
			// n failed, the job carries the n-1 errors of earlier attempts.
			job := &rivertype.JobRow{Attempt: n, Errors: make([]rivertype.AttemptError, n-1)}
			before := time.Now().Round(0)
			at := policy.NextRetry(job)
			after := time.Now().Round(0)
			return at.Sub(after), at.Sub(before)
		},
		retry: func(n int) bool { return n < river.MaxAttemptsDefault },
	}.check(t)
}

// TestAsynqReal samples asynq's DefaultRetryDelayFunc.
func TestAsynqReal(t *testing.T) {
	t.Logf("real implementation: github.com/hibiken/asynq %s", moduleVersion(t, "github.com/hibiken/asynq"))
	task := asynq.NewTask("retrykit:verify", nil)
	err := errors.New("retrykit verify")
	sampledSystem{
		profile: "asynq",
		upTo:    30,
		sample: func(n int) (time.Duration, time.Duration) {
			// asynq passes msg.Retried, the retries so far: n-1 after attempt n.
			d := asynq.DefaultRetryDelayFunc(n-1, err, task)
			return d, d
		},
	}.check(t)
}

// TestGaxReal samples gax-go's Backoff.Pause: the delay after attempt n is the
// n-th Pause of a fresh zero Backoff (Initial 1s, Max 30s, Multiplier 2).
func TestGaxReal(t *testing.T) {
	t.Logf("real implementation: github.com/googleapis/gax-go/v2 %s", moduleVersion(t, "github.com/googleapis/gax-go/v2"))
	sampledSystem{
		profile: "gax",
		upTo:    40,
		sample: func(n int) (time.Duration, time.Duration) {
			var bo gax.Backoff
			var d time.Duration
			for range n {
				d = bo.Pause()
			}
			return d, d
		},
	}.check(t)
}

// TestGaxMultiplierNearOne samples gax Backoffs whose Multiplier is in
// (1, 1.01) or below 1 (gax reads that as 2), values gax accepts.
func TestGaxMultiplierNearOne(t *testing.T) {
	for _, c := range []struct {
		spec string
		bo   gax.Backoff
	}{
		{"gax:Initial=1s,Max=30s,Multiplier=1.005", gax.Backoff{Initial: time.Second, Max: 30 * time.Second, Multiplier: 1.005}},
		{"gax:Initial=100ms,Max=1s,Multiplier=0.5", gax.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 0.5}},
	} {
		p, err := profile.Parse(c.spec)
		if err != nil {
			t.Fatalf("%s: %v (gax accepts it)", c.spec, err)
		}
		for _, n := range []int{1, 2, 3, 10, 50} {
			lo, hi := p.Bounds(n)
			checkSampled(t, p.Name(), n, lo, hi, func(n int) (time.Duration, time.Duration) {
				bo := c.bo
				var d time.Duration
				for range n {
					d = bo.Pause()
				}
				return d, d
			})
		}
	}
}

// TestGaxConfigured samples a configured gax Backoff against the configured
// profile.
func TestGaxConfigured(t *testing.T) {
	p, err := profile.Parse("gax:Initial=100ms,Max=1s,Multiplier=3")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 8; n++ {
		lo, hi := p.Bounds(n)
		checkSampled(t, p.Name(), n, lo, hi, func(n int) (time.Duration, time.Duration) {
			bo := gax.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Multiplier: 3}
			var d time.Duration
			for range n {
				d = bo.Pause()
			}
			return d, d
		})
	}
}
