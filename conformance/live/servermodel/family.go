package servermodel

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

// deviation holds the parameter values of one fitted family of server
// bugs; the zero deviation is the reference server.
type deviation struct {
	delayShift   int   // delay-attempt-offset: the delay after attempt n is the one for n+delayShift
	shiftOnly    uint8 // the strategies delayShift applies to (bit s for backoff.Strategy s); 0: all (exponent-offset: the exponential one)
	exhaustShift int   // exhaustion-offset: exhausted from attempt max_attempts+exhaustShift
	stratFrom    uint8 // strategy-as: the strategies (bit s for backoff.Strategy s) computed as stratTo
	stratTo      backoff.Strategy
	stratSet     bool
	stratTyped   bool    // strategy-as applies to openapi's backoff_type too (a strategy computed wrong whatever field named it)
	jitterLo     float64 // jitter-range: multipliers in [jitterLo, jitterHi); 0, 0: [0.5, 1.5)
	jitterHi     float64
	noCap        bool    // no-cap
	codesIgnored uint8   // handler-codes-ignored: bit i for codes[i]
	factor       float64 // time-factor: every delay times factor (0: 1)
	promoteAt    float64 // promotion-late: a retry fetchable at promoteAt× its delay (0: on time)
	capFactor    float64 // cap-factor: max_interval read as capFactor× itself, before and after jitter (0: 1)
	matchFields  uint8   // matched-field: the error fields non_retryable_errors are matched against (fieldType, fieldMessage, fieldCode); 0: the type
}

// The error fields a server may match non_retryable_errors against
// (deviation.matchFields).
const (
	fieldType uint8 = 1 << iota
	fieldMessage
	fieldCode
)

// timed reports whether d changes the delay a FAIL answer announces: a
// server with such a bug that still hands a retry out at the spec's time
// (a proxy, or a server that announces from one formula and schedules
// from another) hands it out before its next_attempt_at.
func (d deviation) timed() bool {
	return d.delayShift != 0 || d.jitterLo != 0 || d.jitterHi != 0 || d.noCap || d.factor != 0 || d.capFactor != 0 || d.stratSet
}

// codes are the handler codes, in the order of deviation.codesIgnored's bits.
var codes = [...]string{"RETRY", "DISCARD", "FAIL", "DEAD_LETTER"}

// ignores reports whether d ignores the handler code c.
func (d deviation) ignores(c string) bool {
	for i, k := range codes {
		if k == c {
			return d.codesIgnored&(1<<i) != 0
		}
	}
	return false
}

// Families names the families of server bugs [Diagnose] fits to a run's
// observations, each with what its parameters mean; a fresh slice on
// every call.
func Families() []string {
	return []string{
		"strategy-as(A,…→B): the strategies A (none, linear, exponential, polynomial) named in backoff_strategy are computed as B; polynomial→exponential is a server that ignores polynomial",
		"delay-attempt-offset(±k): the delay after attempt n is the one for n±k",
		"exponent-offset(±k): the exponential delay's exponent is off by k",
		"exhaustion-offset(±k): the job is exhausted after max_attempts±k attempts",
		"handler-codes-ignored(codes): the handler codes listed are ignored and the policy decides",
		"jitter-range([lo,hi)): the jitter multiplier is drawn from [lo, hi), fitted from the delays of many jobs",
		"no-cap: max_interval is never applied",
		"delay-attempt-offset(S,±k): as delay-attempt-offset(±k), for the one strategy S only (linear, polynomial, none)",
		"cap-factor(×k): max_interval is read as k times itself (a unit mixed up), before and after jitter (k fitted)",
		"matched-field(F,…): non_retryable_errors are matched against the error fields F (message, code) instead of the type",
		"time-factor(×k): every delay is k times the spec's (k fitted)",
		"promotion-late(×k): a retry becomes fetchable only at k times its delay after the failure, though next_attempt_at is right (k fitted, judged within half the delay)",
	}
}

var strategyNames = map[backoff.Strategy]string{backoff.None: "none", backoff.Linear: "linear", backoff.Exponential: "exponential", backoff.Polynomial: "polynomial"}

// fitted returns the family models the failed observations suggest.
func fitted(obs []Obs, failedObs []int) []Model {
	var out []Model
	add := func(name, fix, family string, d deviation) {
		out = append(out, Model{Name: name, Fix: fix, Family: family, dev: d})
	}
	strategies := map[backoff.Strategy]bool{}
	codesSeen := uint8(0)
	var ratios [][2]float64
	var mults []float64
	anyFail, anyDelay := false, false
	var late []float64
	var capRatios [][2]float64 // the factors of max_interval a delay below the spec's allows
	patterns := false          // a failure under non_retryable_errors failed
	for _, i := range failedObs {
		o := &obs[i]
		switch o.Kind {
		case Promotion:
			if o.DelayLo > 0 && o.Late >= o.DelayLo {
				late = append(late, 1+float64(o.Late)/float64(o.DelayLo))
			}
			continue
		case StatedDelay:
			if o.HasDelay && o.WantLo == o.WantHi && o.WantLo > 0 {
				anyDelay = true
				ratios = append(ratios, [2]float64{float64(o.DelayLo-resolution) / float64(o.WantLo), float64(o.DelayHi+resolution) / float64(o.WantLo)})
			}
			continue
		case FailAnswer:
		default:
			continue
		}
		anyFail = true
		e := read(set{}, o.Policy)
		patterns = patterns || len(e.patterns) > 0
		strategies[e.spec.Strategy] = true
		for b, k := range codes {
			if o.Failure.Code == k {
				codesSeen |= 1 << b
			}
		}
		ref := predict(set{}, o)
		if !ref.hasDelay || !o.HasDelay || ref.hi <= 0 {
			continue
		}
		anyDelay = true
		if mx := e.spec.MaxInterval; ref.lo == ref.hi && o.DelayHi < ref.lo-resolution && mx > 0 {
			// under a cap of k × max_interval below the delay (jitter
			// off), the delay is k × max_interval
			capRatios = append(capRatios, [2]float64{float64(max(o.DelayLo-resolution, 0)) / float64(mx), float64(o.DelayHi+resolution) / float64(mx)})
		}
		if ref.lo == ref.hi {
			ratios = append(ratios, [2]float64{float64(o.DelayLo-resolution) / float64(ref.lo), float64(o.DelayHi+resolution) / float64(ref.lo)})
		} else if base := float64(ref.lo) * 2; o.DelayHi < e.spec.MaxInterval-resolution {
			// the draw lies in the window: its largest value bounds the
			// range's low end, its smallest the high end
			mults = append(mults, float64(o.DelayHi)/base, float64(o.DelayLo)/base)
		}
	}
	if len(late) > 0 {
		// the factor of the earliest promotion seen, to a half
		k := math.Max(2, math.Floor(slicesMin(late)*2)/2)
		add(fmt.Sprintf("promotion-late(×%g)", k), fmt.Sprintf("make a retry fetchable at its next_attempt_at: it became fetchable only at about %g× its delay after the failure (judged within half the delay)", k),
			"promotion-late", deviation{promoteAt: k})
	}
	if !anyFail && !anyDelay {
		return out
	}
	if anyDelay {
		for _, k := range []int{-2, -1, 1, 2} {
			add(fmt.Sprintf("delay-attempt-offset(%+d)", k), fmt.Sprintf("compute the delay after attempt n for n itself, not n%+d", k), "delay-attempt-offset", deviation{delayShift: k})
			add(fmt.Sprintf("exponent-offset(%+d)", k), fmt.Sprintf("the exponential delay after attempt n is initial_interval × coefficient^(n−1), not coefficient^(n−1%+d)", k), "exponent-offset", deviation{delayShift: k, shiftOnly: 1 << backoff.Exponential})
			// one other strategy's formula with its attempt off (the
			// exponential one is exponent-offset)
			for _, st := range []backoff.Strategy{backoff.None, backoff.Linear, backoff.Polynomial} {
				if strategies[st] {
					add(fmt.Sprintf("delay-attempt-offset(%s,%+d)", strategyNames[st], k), fmt.Sprintf("compute the %s delay after attempt n for n itself, not n%+d", strategyNames[st], k), "delay-attempt-offset", deviation{delayShift: k, shiftOnly: 1 << st})
				}
			}
		}
		add("no-cap", "cap the delay at max_interval (cap, jitter, cap)", "no-cap", deviation{noCap: true})
		if f, ok := commonRatio(capRatios); ok && f < 1 {
			add(fmt.Sprintf("cap-factor(×%g)", f), fmt.Sprintf("cap the delay at max_interval itself: it is capped at %g× max_interval (a unit mixed up when reading it)", f), "cap-factor", deviation{capFactor: f})
		}
		if f, ok := commonRatio(ratios); ok {
			add(fmt.Sprintf("time-factor(×%g)", f), fmt.Sprintf("every delay is %g× the spec's: drop the factor (a unit mixed up, a base doubled)", f), "time-factor", deviation{factor: f})
		}
		if len(mults) >= 8 {
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := 0; i+1 < len(mults); i += 2 {
				lo, hi = math.Min(lo, mults[i]), math.Max(hi, mults[i+1])
			}
			for _, step := range []float64{0.05, 0.25} {
				l, h := math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
				l, h = math.Round(l*100)/100, math.Round(h*100)/100
				if l >= 0 && h > l && !(l == 0.5 && h == 1.5) {
					add(fmt.Sprintf("jitter-range([%g,%g))", l, h),
						fmt.Sprintf("draw the jitter multiplier from [0.5, 1.5), not from about [%g, %g) (%d delays lie in [%.3f, %.3f]; %s)", l, h, len(mults)/2, lo, hi, rangeConfidence(len(mults)/2)),
						"jitter-range", deviation{jitterLo: l, jitterHi: h})
				}
			}
		}
	}
	all := []backoff.Strategy{backoff.Exponential, backoff.None, backoff.Linear, backoff.Polynomial}
	for _, to := range all {
		var from []backoff.Strategy
		for _, f := range all {
			if f != to && strategies[f] {
				from = append(from, f)
			}
		}
		// every non-empty subset of the strategies seen failing, each
		// computed as to
		for sub := 1; sub < 1<<len(from); sub++ {
			var mask uint8
			var names []string
			for i, f := range from {
				if sub&(1<<i) != 0 {
					mask |= 1 << f
					names = append(names, strategyNames[f])
				}
			}
			t := strategyNames[to]
			fix := "compute the " + strings.Join(names, " and ") + " strateg" + map[bool]string{true: "y", false: "ies"}[len(names) == 1] + " by " + map[bool]string{true: "its", false: "their"}[len(names) == 1] + " own formula, not as " + t
			if t == "exponential" {
				fix = "implement backoff_strategy " + strings.Join(names, " and ") + " (retrykit's extension, RK-01) or reject it at PUSH; never accept it and compute exponential"
			}
			name := "strategy-as(" + strings.Join(names, ",") + "→" + t + ")"
			add(name, fix, "strategy-as", deviation{stratFrom: mask, stratTo: to, stratSet: true})
			// the same bug in the computation, whichever field named the
			// strategy (backoff_type's constant and linear too)
			add(name, fix+" (whether backoff_strategy or backoff_type names it)", "strategy-as", deviation{stratFrom: mask, stratTo: to, stratSet: true, stratTyped: true})
		}
	}
	for _, k := range []int{-2, -1, 1, 2} {
		what := fmt.Sprintf("it retries %d attempt(s) past max_attempts", k)
		if k < 0 {
			what = fmt.Sprintf("it gives up %d attempt(s) early", -k)
		}
		add(fmt.Sprintf("exhaustion-offset(%+d)", k), "exhaust a job when the attempt that failed is max_attempts: "+what, "exhaustion-offset", deviation{exhaustShift: k})
	}
	if patterns {
		// the fields matched instead of the type alone; type+message is
		// the catalogue's message-match, code alone its type-from-code-only
		for _, f := range []uint8{fieldMessage, fieldMessage | fieldCode, fieldType | fieldCode} {
			var names []string
			for b, n := range []string{"type", "message", "code"} {
				if f&(1<<b) != 0 {
					names = append(names, n)
				}
			}
			add("matched-field("+strings.Join(names, ",")+")", "match non_retryable_errors against the error type alone: this server matches the error's "+strings.Join(names, " and "),
				"matched-field", deviation{matchFields: f})
		}
	}
	for sub := uint8(1); sub < 16; sub++ {
		if sub&^codesSeen != 0 {
			continue
		}
		var names []string
		for b, k := range codes {
			if sub&(1<<b) != 0 {
				names = append(names, k)
			}
		}
		add("handler-codes-ignored("+strings.Join(names, ",")+")", "obey the handler code(s) "+strings.Join(names, ", ")+" in error.code before the policy",
			"handler-codes-ignored", deviation{codesIgnored: sub})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// rangeConfidence states how close n uniform draws bring their extremes to
// the ends of the range drawn from: within a tenth of its width with
// probability 1 − 2·0.9ⁿ.
func rangeConfidence(n int) string {
	return fmt.Sprintf("with %d draws the range's ends lie within a tenth of its width of the extremes seen, confidence %.4g", n, 1-2*math.Pow(0.9, float64(n)))
}

// commonRatio returns the factor inside the most of the ranges rs (each
// range is the factors one delay window allows), the simplest on a tie:
// fewest significant digits, then nearest 1. A simpler factor inside only
// most of them is not taken over one inside more: under load the windows
// widen, and ×2 can hold most windows of a server that multiplies by 1.5
// while ×1.5 holds them all.
func commonRatio(rs [][2]float64) (float64, bool) {
	if len(rs) == 0 {
		return 0, false
	}
	best, bestN, bestDigits := 0.0, 0, 0
	for digits := 1; digits <= 3; digits++ {
		for _, r := range rs {
			for _, x := range []float64{r[0], r[1], (r[0] + r[1]) / 2} {
				if x <= 0 {
					continue
				}
				f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
				n := 0
				for _, q := range rs {
					if q[0] <= f && f <= q[1] {
						n++
					}
				}
				if n > bestN || n == bestN && digits == bestDigits && math.Abs(math.Log(f)) < math.Abs(math.Log(best)) {
					best, bestN, bestDigits = f, n, digits
				}
			}
		}
	}
	if best == 1 || best <= 0 || bestN < 2 && len(rs) > 1 {
		return 0, false
	}
	return best, true
}

func slicesMin(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func slicesMax(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// scale multiplies d by f, saturating.
func scale(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= 0x1p63 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(x)
}
