package profile

import (
	"time"

	"github.com/retrykit/retrykit/internal/sat"

	"github.com/retrykit/retrykit/policy"
)

// The generic jitter schemes of the AWS Architecture Blog post
// "Exponential Backoff And Jitter" (Marc Brooker, 2015). The post fixes
// neither base nor cap; these profiles use the OJS defaults' 1s and 5m so
// that they compare with the ojs profile. The exponent is attempt, as in
// the post's formula and its simulator (aws-samples/aws-arch-backoff-simulator,
// which increments its attempt counter before the first backoff call), so
// the first retry's envelope is 2*base (docs/decisions.md RK-50).
const (
	blogBase = time.Second
	blogCap  = 5 * time.Minute
	blogURL  = "https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/"
	blogSrc  = blogURL + "; the post's simulator: https://github.com/aws-samples/aws-arch-backoff-simulator/blob/66cb169277051eea207dbef8c7f71767fe6af144/src/backoff_simulator.py"
)

// blogEnvelope is min(cap, base * 2^n).
func blogEnvelope(n int) time.Duration { return shifted(blogBase, n, blogCap) }

// uniformBelow returns trunc(r * d) for d > 0, held below d: a draw from
// random_between(0, d), half-open.
func uniformBelow(r float64, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return min(nanos(unit(r)*float64(d)), d-1)
}

func fullJitterModel() *model {
	return &model{
		name:         "full_jitter",
		system:       "Full jitter (AWS Architecture Blog), base 1s, cap 5m",
		version:      "blog post of 2015-03-04",
		release:      "2015-03-04",
		source:       blogSrc,
		summary:      "uniform in [0, min(5m, 1s*2^attempt)); unbounded attempts",
		formula:      "sleep = random_between(0, min(cap, base * 2^attempt)), base = 1s, cap = 5m",
		draw:         "random_between(0, e) = trunc(r * e) in ns, held below e",
		exhaustion:   "none: the scheme does not bound attempts",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			return uniformBelow(d.next(), blogEnvelope(n))
		},
	}
}

func equalJitterModel() *model {
	return &model{
		name:         "equal_jitter",
		system:       "Equal jitter (AWS Architecture Blog), base 1s, cap 5m",
		version:      "blog post of 2015-03-04",
		release:      "2015-03-04",
		source:       blogSrc,
		summary:      "e/2 + uniform in [0, e/2), e = min(5m, 1s*2^attempt); unbounded attempts",
		formula:      "temp = min(cap, base * 2^attempt); sleep = temp/2 + random_between(0, temp/2), base = 1s, cap = 5m",
		draw:         "random_between(0, h) = trunc(r * h) in ns, held below h; temp/2 is integer division in ns",
		exhaustion:   "none: the scheme does not bound attempts",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		delay: func(n int, _ time.Duration, d draws) time.Duration {
			half := blogEnvelope(n) / 2
			return half + uniformBelow(d.next(), half)
		},
	}
}

func decorrelatedJitterModel() *model {
	return &model{
		name:         "decorrelated_jitter",
		system:       "Decorrelated jitter (AWS Architecture Blog), base 1s, cap 5m",
		version:      "blog post of 2015-03-04",
		release:      "2015-03-04",
		source:       blogSrc,
		summary:      "min(5m, uniform in [1s, 3*previous)), previous starting at 1s; stateful; unbounded attempts",
		formula:      "sleep_0 = base; sleep_n = min(cap, random_between(base, sleep_(n-1) * 3)), base = 1s, cap = 5m",
		draw:         "random_between(a, b) = a + trunc(r * (b - a)) in ns, held below b",
		exhaustion:   "none: the scheme does not bound attempts",
		terminal:     "none (unbounded)",
		onExhaustion: policy.Discard,
		jitter:       true,
		stateful:     true,
		delay: func(_ int, prev time.Duration, d draws) time.Duration {
			if prev <= 0 {
				prev = blogBase
			}
			hi := time.Duration(sat.MulInt(int64(prev), 3))
			return min(blogBase+uniformBelow(d.next(), hi-blogBase), blogCap)
		},
	}
}
