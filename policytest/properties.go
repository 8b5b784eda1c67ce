package policytest

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policy"
	"pgregory.net/rapid"
)

// The schedule properties below hold for every OJS implementation,
// whatever its arithmetic. Each returns a property for [rapid.Check] that
// draws a valid [Spec], sends it to impl as a delay or decide request and
// checks the answers; an implementation error or rejection fails the
// property. Durations are compared within the resolution impl declares.
// With opaque jitter no rand is sent, and the properties that need a fixed
// draw turn jitter off.

// WithinBounds checks that the delay after attempt n lies in the range the
// policy allows: the capped delay B = min(raw(n), max_interval) without
// jitter, [⌊B/2⌋, min(1.5·B, max_interval)] with it (RET-05, RET-06).
func WithinBounds(impl protocol.Implementation) func(*rapid.T) {
	s := newSession(impl)
	return func(t *rapid.T) {
		h := s.hello(t)
		sp := drawSpec(t)
		p := mustNew(t, sp)
		n := attemptAt(t, attemptEdges(sp))
		d := s.delay(t, h, sp, n, drawJitter(t))
		base := p.Backoff().Base(clampAttempt(n))
		lo, hi := base, base
		if sp.Jitter {
			lo, hi = base/2, min(addSat(base, base/2), sp.MaxInterval)
		}
		tol := slack(h, hi)
		if d < lo-tol || d > addSat(hi, tol) {
			t.Fatalf("policytest: delay after attempt %d is %v, outside [%v, %v] for %s", n, d, lo, hi, SpecJSON(sp, nil))
		}
	}
}

// CapAfterJitter checks that no delay exceeds max_interval, for draws up to
// the largest float64 below 1 and attempts at and past the cap crossing
// (RET-06, docs/decisions.md RK-05): the bug of capping only before jitter.
func CapAfterJitter(impl protocol.Implementation) func(*rapid.T) {
	s := newSession(impl)
	return func(t *rapid.T) {
		h := s.hello(t)
		sp := drawSpec(t)
		p := mustNew(t, sp)
		c := int64(min(capCrossing(p.Backoff()), math.MaxInt64-1))
		n := c + rapid.Int64Range(0, 1).Draw(t, "past_crossing")
		if rapid.Bool().Draw(t, "any_attempt") {
			n = drawAttempt(t)
		}
		r := propertiesPick1.Draw(t, "rand")
		if d := s.delay(t, h, sp, n, r); d > addSat(sp.MaxInterval, slack(h, sp.MaxInterval)) {
			t.Fatalf("policytest: delay after attempt %d with rand %v is %v, above max_interval %v for %s", n, r, d, sp.MaxInterval, SpecJSON(sp, nil))
		}
	}
}

// Monotone checks that, for a fixed draw, the delay never decreases from
// one attempt to the next and never decreases as the draw grows: every
// strategy's raw delay is non-decreasing in n (none is constant), and the
// cap and the jitter multiplier keep that order.
func Monotone(impl protocol.Implementation) func(*rapid.T) {
	s := newSession(impl)
	return func(t *rapid.T) {
		h := s.hello(t)
		sp := drawSpec(t)
		if h.Jitter == protocol.JitterOpaque {
			sp.Jitter = false
		}
		mustNew(t, sp)
		n := min(attemptAt(t, attemptEdges(sp)), math.MaxInt64-1)
		r := drawJitter(t)
		d1, d2 := s.delay(t, h, sp, n, r), s.delay(t, h, sp, n+1, r)
		if d2 < d1-slack(h, d1) {
			t.Fatalf("policytest: delay after attempt %d is %v, after attempt %d only %v (rand %v) for %s", n, d1, n+1, d2, r, SpecJSON(sp, nil))
		}
		if !sp.Jitter {
			return
		}
		r2 := r + (1-r)*rapid.Float64Range(0, 1).Draw(t, "rand_step")
		if r2 >= 1 {
			r2 = math.Nextafter(1, 0)
		}
		if d3 := s.delay(t, h, sp, n, r2); d3 < d1-slack(h, d1) {
			t.Fatalf("policytest: delay after attempt %d is %v with rand %v but %v with the larger rand %v for %s", n, d1, r, d3, r2, SpecJSON(sp, nil))
		}
	}
}

// Exhausts checks max_attempts: with no handler code (or RETRY) and an
// error type no pattern matches, attempt n is retried exactly when n <
// max(max_attempts, 1), and otherwise gets the on_exhaustion action
// (RET-08, docs/decisions.md RK-04, RK-13).
func Exhausts(impl protocol.Implementation) func(*rapid.T) {
	s := newSession(impl)
	return func(t *rapid.T) {
		h := s.hello(t)
		sp := drawSpec(t)
		mustNew(t, sp)
		n := attemptAt(t, attemptEdges(sp))
		req := protocol.Request{ID: 1, Op: protocol.OpDecide, Policy: SpecJSON(sp, nil), Attempt: n,
			Error: &protocol.FailureInput{Type: "policytest.unlisted", Code: propertiesPick2.Draw(t, "code")}}
		if h.Jitter == protocol.JitterInjectable {
			r := drawJitter(t)
			req.Rand = &r
		}
		resp := s.do(t, req)
		want := "retry"
		if n >= int64(max(sp.MaxAttempts, 1)) {
			want = sp.OnExhaustion.String()
		}
		if resp.Action != want {
			t.Fatalf("policytest: decide after attempt %d with max_attempts %d: got %q, want %q for %s", n, sp.MaxAttempts, resp.Action, want, SpecJSON(sp, nil))
		}
	}
}

// session caches an implementation's hello for a property.
type session struct {
	impl protocol.Implementation
	once sync.Once
	h    protocol.Hello
	err  error
}

func newSession(impl protocol.Implementation) *session { return &session{impl: impl} }

func (s *session) hello(t *rapid.T) protocol.Hello {
	s.once.Do(func() { s.h, s.err = s.impl.Hello(context.Background()) })
	if s.err != nil {
		t.Fatalf("policytest: hello: %v", s.err)
	}
	return s.h
}

func (s *session) do(t *rapid.T, req protocol.Request) protocol.Response {
	resp, err := s.impl.Do(context.Background(), req)
	switch {
	case err != nil:
		t.Fatalf("policytest: %s: the implementation failed: %v", req.Op, err)
	case resp.Error != nil:
		t.Fatalf("policytest: %s %s: rejected a valid request: %s: %s", req.Op, req.AppendJSON(nil), resp.Error.Type, resp.Error.Message)
	case resp.Unsupported:
		t.Fatalf("policytest: %s: answered unsupported", req.Op)
	}
	return resp
}

// delay asks impl for the delay after attempt n of sp with draw r (not sent
// to opaque-jitter implementations).
func (s *session) delay(t *rapid.T, h protocol.Hello, sp policy.Spec, n int64, r float64) time.Duration {
	req := protocol.Request{ID: 1, Op: protocol.OpDelay, Policy: SpecJSON(sp, nil), Attempt: n}
	if h.Jitter == protocol.JitterInjectable {
		req.Rand = &r
	}
	resp := s.do(t, req)
	if resp.DelayNS == nil {
		t.Fatalf("policytest: delay %s: answer has no delay_ns", req.AppendJSON(nil))
	}
	return time.Duration(*resp.DelayNS)
}

// slack is the tolerance for comparing durations near d: the declared
// resolution, and float64 rounding (d·2⁻⁴⁰, at least 1ns).
func slack(h protocol.Hello, d time.Duration) time.Duration {
	return time.Duration(h.ResolutionNS) + max(time.Nanosecond, time.Duration(float64(d)*0x1p-40))
}

func addSat(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mustNew(t *rapid.T, s policy.Spec) *policy.Policy {
	p, err := policy.New(s)
	if err != nil {
		panic(fmt.Sprintf("policytest: Spec generated an invalid spec: %v", err))
	}
	return p
}

// Generators of fixed choices, built once.
var propertiesPick1 = rapid.SampledFrom([]float64{math.Nextafter(1, 0), 0.999, 0.75, 0.5})
var propertiesPick2 = rapid.SampledFrom([]string{"", "RETRY"})
