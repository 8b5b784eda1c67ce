package conformance

import (
	"context"
	"fmt"
	"github.com/retrykit/retrykit/conformance/protocol"
	"math"
	"sort"
	"sync"
)

// The statistical check of the jitter multiplier (PROTOCOL.md section 5,
// rule 5).
const (
	// JitterCheckID is the id under which the check is reported. It is
	// selected like a vector with requirement RET-05 and flag "statistical".
	JitterCheckID = "stat-jitter-uniform"
	// JitterFalseAlarm is the probability that a correct implementation
	// fails the check: α in the Dvoretzky–Kiefer–Wolfowitz bound.
	JitterFalseAlarm = 1e-6
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
	Description: fmt.Sprintf("own-randomness jitter multiplier is Uniform[0.5, 1.5): Kolmogorov–Smirnov over K delays of PT100S at attempt 1, false-alarm rate %g", JitterFalseAlarm),
	Flags:       []string{"statistical"},
	Kind:        KindDelay,
}

// ksThreshold is the largest Kolmogorov–Smirnov statistic accepted for k
// samples: by the DKW inequality P(D_k > ε) ≤ 2·exp(−2kε²), so
// ε = sqrt(ln(2/α)/(2k)) bounds the false-alarm rate by α.
func ksThreshold(k int, alpha float64) float64 {
	return math.Sqrt(math.Log(2/alpha) / (2 * float64(k)))
}

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
func jitterCheck(ctx context.Context, impl protocol.Implementation, h protocol.Hello, k, parallel int) Result {
	res := resultFor(jitterCheckVector)
	reqs := make(chan int)
	delays := make([]int64, k)
	errs := make([]error, k)
	answers := make([]protocol.Response, k)
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range reqs {
				req := protocol.Request{ID: int64(i + 1), Op: protocol.OpDelay, Policy: []byte(jitterPolicy), Attempt: 1}
				answers[i], errs[i] = impl.Do(ctx, req)
			}
		}()
	}
	for i := 0; i < k; i++ {
		reqs <- i
	}
	close(reqs)
	wg.Wait()
	res.Want = []byte(fmt.Sprintf(`{"distribution":"uniform[0.5,1.5)","samples":%d,"false_alarm":%g}`, k, JitterFalseAlarm))
	resNS := h.ResolutionNS
	lo, hi := jitterBaseNS/2-resNS, jitterBaseNS*3/2+resNS
	u := make([]float64, 0, k)
	for i := 0; i < k; i++ {
		if errs[i] != nil {
			res.Status, res.Reason = StatusError, errs[i].Error()
			res.Stderr = stderrOf(errs[i])
			return res
		}
		a := answers[i]
		switch {
		case a.Unsupported:
			res.Status, res.Reason = StatusSkip, "delay answered unsupported"
			return res
		case a.Error != nil:
			res.Status, res.Reason = StatusFail, fmt.Sprintf("delay rejected the policy: %s: %s", a.Error.Type, a.Error.Message)
			return res
		case a.DelayNS == nil:
			res.Status, res.Reason = StatusError, "answer has no delay_ns"
			return res
		}
		d := *a.DelayNS
		if d <= lo || d >= hi {
			res.Status = StatusFail
			res.Reason = fmt.Sprintf("sample %d: delay_ns %d outside [%d, %d] (multiplier %.6f)", i+1, d, jitterBaseNS/2, jitterBaseNS*3/2, float64(d)/float64(jitterBaseNS))
			res.Got = []byte(fmt.Sprintf(`{"delay_ns":%d}`, d))
			return res
		}
		delays[i] = d
		u = append(u, float64(d)/float64(jitterBaseNS)-0.5)
	}
	stat := ksUniform(u)
	limit := ksThreshold(k, JitterFalseAlarm) + float64(resNS)/float64(jitterBaseNS)
	mean := 0.0
	for _, x := range u {
		mean += x
	}
	mean = mean/float64(k) + 0.5
	res.Got = []byte(fmt.Sprintf(`{"ks_statistic":%.6f,"threshold":%.6f,"mean_multiplier":%.6f}`, stat, limit, mean))
	if stat > limit {
		res.Status = StatusFail
		res.Reason = fmt.Sprintf("jitter multiplier is not Uniform[0.5, 1.5): KS statistic %.4f > %.4f (K=%d, mean multiplier %.4f)", stat, limit, k, mean)
		return res
	}
	res.Status = StatusPass
	return res
}
