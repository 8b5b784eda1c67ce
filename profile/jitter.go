package profile

import (
	"fmt"
	"math"
	"time"

	"github.com/retrykit/retrykit/internal/sat"

	"github.com/retrykit/retrykit/policy"
)

// The generic jitter schemes of the AWS Architecture Blog post
// "Exponential Backoff And Jitter" (Marc Brooker, 2015). The post fixes
// neither base nor cap; these profiles default to the OJS defaults' 1s and
// 5m so that they compare with the ojs profile (settings base and cap). The exponent is attempt, as in
// the post's formula and its simulator (aws-samples/aws-arch-backoff-simulator,
// which increments its attempt counter before the first backoff call), so
// the first retry's envelope is 2*base (docs/decisions.md RK-50).
const (
	blogURL = "https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/"
	blogSrc = blogURL + "; the post's simulator: https://github.com/aws-samples/aws-arch-backoff-simulator/blob/66cb169277051eea207dbef8c7f71767fe6af144/src/backoff_simulator.py"
)

// blogEnvelope is min(cap, base * 2^n).
func blogEnvelope(n int, base, cp time.Duration) time.Duration { return shifted(base, n, cp) }

// jitterSettings are the post's two parameters, base and cap.
var jitterSettings = []setting{
	{key: "base", kind: kDuration, def: "1s", lo: 1, hi: math.MaxInt64, help: "base: the envelope's start"},
	{key: "cap", kind: kDuration, def: "5m", lo: 1, hi: math.MaxInt64, help: "cap: the envelope's cap"},
}

// jitterConf reads base and cap, refusing a cap below the base.
func jitterConf(name string, c conf) (time.Duration, time.Duration, error) {
	b, cp := c.dur("base"), c.dur("cap")
	if cp < b {
		return 0, 0, badValue(name, "cap", c, "must not be less than base")
	}
	return b, cp, nil
}

// uniformBelow returns trunc(r * d) for d > 0, held below d: a draw from
// random_between(0, d), half-open.
func uniformBelow(r float64, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return min(nanos(unit(r)*float64(d)), d-1)
}

func fullJitterModel(c conf) (*model, error) {
	base, cp, err := jitterConf("full_jitter", c)
	if err != nil {
		return nil, err
	}
	return &model{
		name:         "full_jitter",
		system:       fmt.Sprintf("Full jitter (AWS Architecture Blog), base %v, cap %v", base, cp),
		version:      "blog post of 2015-03-04",
		release:      "2015-03-04",
		source:       blogSrc,
		summary:      fmt.Sprintf("uniform in [0, min(%v, %v*2^attempt)); unbounded attempts", cp, base),
		formula:      fmt.Sprintf("sleep = random_between(0, min(cap, base * 2^attempt)), base = %v, cap = %v", base, cp),
		draw:         "random_between(0, e) = trunc(r * e) in ns, held below e",
		exhaustion:   "none: the scheme does not bound attempts",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return uniformBelow(d.next(), blogEnvelope(n, base, cp))
		},
	}, nil
}

func equalJitterModel(c conf) (*model, error) {
	base, cp, err := jitterConf("equal_jitter", c)
	if err != nil {
		return nil, err
	}
	return &model{
		name:         "equal_jitter",
		system:       fmt.Sprintf("Equal jitter (AWS Architecture Blog), base %v, cap %v", base, cp),
		version:      "blog post of 2015-03-04",
		release:      "2015-03-04",
		source:       blogSrc,
		summary:      fmt.Sprintf("e/2 + uniform in [0, e/2), e = min(%v, %v*2^attempt); unbounded attempts", cp, base),
		formula:      fmt.Sprintf("temp = min(cap, base * 2^attempt); sleep = temp/2 + random_between(0, temp/2), base = %v, cap = %v", base, cp),
		draw:         "random_between(0, h) = trunc(r * h) in ns, held below h; temp/2 is integer division in ns",
		exhaustion:   "none: the scheme does not bound attempts",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			half := blogEnvelope(n, base, cp) / 2
			return half + uniformBelow(d.next(), half)
		},
	}, nil
}

func decorrelatedJitterModel(c conf) (*model, error) {
	base, cp, err := jitterConf("decorrelated_jitter", c)
	if err != nil {
		return nil, err
	}
	return &model{
		name:         "decorrelated_jitter",
		system:       fmt.Sprintf("Decorrelated jitter (AWS Architecture Blog), base %v, cap %v", base, cp),
		version:      "blog post of 2015-03-04",
		release:      "2015-03-04",
		source:       blogSrc,
		summary:      fmt.Sprintf("min(%v, uniform in [%v, 3*previous)), previous starting at %[2]v; stateful; unbounded attempts", cp, base),
		formula:      fmt.Sprintf("sleep_0 = base; sleep_n = min(cap, random_between(base, sleep_(n-1) * 3)), base = %v, cap = %v", base, cp),
		draw:         "random_between(a, b) = a + trunc(r * (b - a)) in ns, held below b",
		exhaustion:   "none: the scheme does not bound attempts",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		stateful:     true,
		delay: func(_ int, prev time.Duration, d draws) time.Duration {
			if prev <= 0 {
				prev = base
			}
			hi := time.Duration(sat.MulInt(int64(prev), 3))
			return min(base+uniformBelow(d.next(), hi-base), cp)
		},
	}, nil
}
