package conformance

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/retrykit/retrykit/conformance/protocol"
)

// The statistical check of the jitter multiplier (PROTOCOL.md section 5,
// rule 5).
const (
	// JitterCheckID is the id under which the check is reported: K delay
	// requests without rand for PT100S at attempt 1, whose multipliers
	// must pass a Kolmogorov–Smirnov test against Uniform[0.5, 1.5) at a
	// false-alarm rate of 10⁻⁶. It is selected like a vector with
	// requirement RET-05 and flag "statistical".
	JitterCheckID = "stat-jitter-uniform"
	// jitterFalseAlarm is the probability that a correct implementation
	// fails the check: α in the Dvoretzky–Kiefer–Wolfowitz bound.
	jitterFalseAlarm = 1e-6
	// DefaultJitterSamples is the default number of delay requests K.
	DefaultJitterSamples = 2000

	jitterBaseNS = int64(100e9) // PT100S
	jitterPolicy = `{"initial_interval":"PT100S","max_interval":"PT1H","jitter":true}`
)

// jitterCheckVector is the pseudo-vector the check is selected and reported as.
var jitterCheckVector = &Vector{
	ID:          JitterCheckID,
	Requirement: "RET-05",
	Section:     "5.1",
	Description: fmt.Sprintf("own-randomness jitter multiplier is Uniform[0.5, 1.5): Kolmogorov–Smirnov over K delays of PT100S at attempt 1, false-alarm rate %g", jitterFalseAlarm),
	Flags:       []string{"statistical"},
	Kind:        kindDelay,
}

// ksThreshold is the largest Kolmogorov–Smirnov statistic accepted for k
// samples: by the DKW inequality P(D_k > ε) ≤ 2·exp(−2kε²), so
// ε = sqrt(ln(2/α)/(2k)) bounds the false-alarm rate by α.
func ksThreshold(k int, alpha float64) float64 {
	return math.Sqrt(math.Log(2/alpha) / (2 * float64(k)))
}

// Hand-written (ten lines): a statistics library such as gonum would be a
// heavy run-time dependency of the main module for one statistic.
//
// ksUniform returns the one-sample Kolmogorov–Smirnov statistic of u against
// Uniform[0, 1). u is sorted in place.
func ksUniform(u []float64) float64 {
	sort.Float64s(u)
	n := float64(len(u))
	d := 0.0
	for i, x := range u {
		x = math.Min(math.Max(x, 0), 1)
		d = math.Max(d, math.Max(float64(i+1)/n-x, x-float64(i)/n))
	}
	return d
}

// jitterCheck runs the statistical check against impl and returns its result.
// It keeps one float64 per sample: answers are judged as they arrive, and
// the first problem (in sample order) decides a result other than a pass.
func jitterCheck(ctx context.Context, impl protocol.Implementation, h protocol.Hello, k, parallel int) Result {
	res := resultFor(jitterCheckVector)
	res.Random = true
	res.Want = []byte(fmt.Sprintf(`{"distribution":"uniform[0.5,1.5)","samples":%d,"false_alarm":%g}`, k, jitterFalseAlarm))
	resNS := h.ResolutionNS
	lo, hi := jitterBaseNS/2-resNS, jitterBaseNS*3/2+resNS
	u := make([]float64, k)

	var mu sync.Mutex
	firstBad := k // sample index of the first problem
	var bad Result
	report := func(i int, r Result) {
		mu.Lock()
		defer mu.Unlock()
		if i < firstBad {
			firstBad, bad = i, r
		}
	}
	reqs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(parallel, k); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range reqs {
				req := protocol.Request{ID: int64(i + 1), Op: protocol.OpDelay, Policy: []byte(jitterPolicy), Attempt: 1}
				a, err := impl.Do(ctx, req)
				r := res
				switch {
				case err != nil:
					r.Status, r.Reason, r.Stderr, r.cause = StatusError, err.Error(), stderrOf(err), errorSymptom(err)
				case a.Unsupported:
					r.Status, r.Reason = StatusSkip, "delay answered unsupported"
				case a.Error != nil:
					r.Status, r.Reason, r.cause = StatusFail, fmt.Sprintf("delay rejected the policy: %s: %s", a.Error.Type, a.Error.Message), "rejects-valid"
				case a.DelayNS == nil:
					r.Status, r.Reason, r.cause = StatusError, "answer has no delay_ns", "malformed-answer"
				case *a.DelayNS <= lo || *a.DelayNS >= hi:
					d := *a.DelayNS
					r.Status, r.cause = StatusFail, "wrong-delay"
					r.Reason = fmt.Sprintf("sample %d: delay_ns %d outside [%d, %d] (multiplier %.6f)", i+1, d, jitterBaseNS/2, jitterBaseNS*3/2, float64(d)/float64(jitterBaseNS))
					r.Got = []byte(fmt.Sprintf(`{"delay_ns":%d}`, d))
					r.draws = []float64{float64(d) / float64(jitterBaseNS)}
				default:
					u[i] = float64(*a.DelayNS)/float64(jitterBaseNS) - 0.5
					continue
				}
				report(i, r)
			}
		}()
	}
	for i := 0; i < k; i++ {
		reqs <- i
	}
	close(reqs)
	wg.Wait()
	if firstBad < k {
		return bad
	}
	mean := 0.0
	for _, x := range u {
		mean += x
	}
	mean = mean/float64(k) + 0.5
	stat := ksUniform(u)
	limit := ksThreshold(k, jitterFalseAlarm) + float64(resNS)/float64(jitterBaseNS)
	res.Got = []byte(fmt.Sprintf(`{"ks_statistic":%.6f,"threshold":%.6f,"mean_multiplier":%.6f}`, stat, limit, mean))
	if stat > limit {
		lo, hi := math.Inf(1), math.Inf(-1)
		res.draws = make([]float64, k)
		for i, x := range u {
			res.draws[i] = x + 0.5
			lo, hi = math.Min(lo, x+0.5), math.Max(hi, x+0.5)
		}
		res.Status, res.cause = StatusFail, "jitter-distribution"
		res.Reason = fmt.Sprintf("jitter multiplier is not Uniform[0.5, 1.5): KS statistic %.4f > %.4f (K=%d, mean multiplier %.4f); %s",
			stat, limit, k, mean, rangeEstimate(lo, hi, k))
		return res
	}
	res.Status = StatusPass
	return res
}

// rangeEstimate states the multiplier range [lo, hi] seen in k draws and
// how far the range drawn from can reach beyond it: for a uniform range of
// width w, no draw falls within δ·w of an end with probability (1 − δ)^k,
// so both ends lie within δ·w of the extremes seen with confidence
// 1 − 2·jitterFalseAlarm for δ = ln(1/jitterFalseAlarm)/k.
func rangeEstimate(lo, hi float64, k int) string {
	d := math.Log(1/jitterFalseAlarm) / float64(k) * (hi - lo)
	return fmt.Sprintf("the multipliers drawn lie in [%.4f, %.4f]: the range they come from is within %.4f of these ends (confidence 1 − %g)", lo, hi, d, 2*jitterFalseAlarm)
}
