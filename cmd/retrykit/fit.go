package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/internal/chart"
	"github.com/retrykit/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

func init() {
	commands["fit"] = command{
		summary: "find the OJS retry policy closest to another system's profile",
		run:     runFit,
	}
}

func runFit(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("profile", "", "the profile to fit (retrykit schedule --list-profiles)")
	horizon := fs.Int("horizon", 20, "retries to fit for a profile without an attempt limit, 1 to 1000")
	svg := fs.String("svg", "", "also write a chart of the profile and the fitted policy to this SVG file")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: retrykit fit --profile NAME [--horizon N] [--svg FILE]")
		fmt.Fprintln(fs.Output(), "\nPrints the OJS retry policy (strategy, initial interval, coefficient, cap,\nattempts) whose delays come closest to the profile's, least squares on the\nlogarithm of the middle delay of each retry, and how far it is off per attempt.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "retrykit fit: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *name == "" {
		fmt.Fprintln(stderr, "retrykit fit: --profile: required")
		return 2
	}
	if *horizon < 1 || *horizon > 1000 {
		fmt.Fprintf(stderr, "retrykit fit: --horizon: must be between 1 and 1000, got %d\n", *horizon)
		return 2
	}
	p, err := profile.Lookup(*name)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fit: --profile: %v\n", err)
		return 2
	}
	k := p.MaxAttempts() - 1
	if p.MaxAttempts() == 0 {
		k = *horizon
	}
	pol, err := fitPolicy(p, k)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fit: %v\n", err)
		return 1
	}
	if *svg != "" {
		c := chart.Delays{Title: "Closest OJS policy to " + p.Name(), Note: p.System(),
			Series: []chart.Series{profileSubject(p).series(k), policySubject("fitted OJS policy", pol).series(k)}}
		if err := writeChart(*svg, c); err != nil {
			fmt.Fprintf(stderr, "retrykit fit: --svg: %v\n", err)
			return 2
		}
	}
	writeFit(stdout, p, pol, k)
	return 0
}

// center is the middle of a profile's delay range after attempt n, the
// value an OJS policy's base delay (the middle of its jitter range) is
// matched with. Zero becomes 1ms, since an OJS interval is positive.
func center(p profile.Profile, n int) float64 {
	lo, hi := p.Bounds(n)
	return max(float64(lo)/2+float64(hi)/2, float64(time.Millisecond))
}

// shape is one candidate formula g(n) with g(1) = 1.
type shape struct {
	strategy backoff.Strategy
	coef     float64
}

func (s shape) g(n int) float64 {
	switch s.strategy {
	case backoff.None:
		return 1
	case backoff.Linear:
		return float64(n)
	case backoff.Polynomial:
		return math.Pow(float64(n), s.coef)
	}
	return math.Pow(s.coef, float64(n-1))
}

// fitPolicy searches strategies, coefficients, caps and initial intervals
// for the OJS policy whose base delays over attempts 1..k are closest to
// the profile's centres in squared log error, then rounds the intervals to
// three significant digits and builds the policy.
func fitPolicy(p profile.Profile, k int) (*policy.Policy, error) {
	k = max(k, 1)
	lt := make([]float64, k+1)
	for n := 1; n <= k; n++ {
		lt[n] = math.Log(center(p, n))
	}
	shapes := []shape{{backoff.None, 1}, {backoff.Linear, 1}}
	for c := 105; c <= 500; c += 5 {
		shapes = append(shapes, shape{backoff.Exponential, float64(c) / 100})
	}
	for c := 4; c <= 24; c++ {
		shapes = append(shapes, shape{backoff.Polynomial, float64(c) / 4})
	}
	noCap := math.Inf(1)
	caps := []float64{noCap}
	for n := 1; n <= k; n++ {
		caps = append(caps, lt[n])
	}
	best, bestErr := struct {
		s        shape
		lnI, lnM float64
	}{}, math.Inf(1)
	for _, s := range shapes {
		lg := make([]float64, k+1)
		for n := 1; n <= k; n++ {
			lg[n] = math.Log(s.g(n))
		}
		for _, lnM := range caps {
			// The best ln I for this cap: a coarse scan, then a finer one.
			cost := func(lnI float64) float64 {
				if lnI > lnM {
					return math.Inf(1)
				}
				e := 0.0
				for n := 1; n <= k; n++ {
					d := min(lnI+lg[n], lnM) - lt[n]
					e += d * d
				}
				return e
			}
			lo, hi := lt[1]-7, lt[1]+7
			bi, be := lo, math.Inf(1)
			for i := 0; i <= 140; i++ {
				x := lo + (hi-lo)*float64(i)/140
				if e := cost(x); e < be {
					bi, be = x, e
				}
			}
			for i := -20; i <= 20; i++ {
				x := bi + float64(i)*0.1/20
				if e := cost(x); e < be {
					bi, be = x, e
				}
			}
			if be < bestErr-1e-12 {
				bestErr = be
				best.s, best.lnI, best.lnM = s, bi, lnM
			}
		}
	}
	initial := roundSig(time.Duration(math.Exp(best.lnI)), time.Millisecond)
	var maxI time.Duration
	if math.IsInf(best.lnM, 1) {
		// No cap within the horizon: the largest base delay, rounded up.
		top := float64(initial) * best.s.g(k)
		maxI = time.Duration(math.MaxInt64)
		if top < float64(math.MaxInt64)/2 {
			maxI = roundUpSig(time.Duration(top), time.Second)
		}
	} else {
		maxI = roundSig(time.Duration(math.Exp(best.lnM)), time.Second)
	}
	spec := policy.DefaultSpec()
	spec.MaxAttempts = k + 1
	spec.InitialInterval = initial
	spec.MaxInterval = max(maxI, initial)
	spec.BackoffCoefficient = best.s.coef
	spec.Strategy = best.s.strategy
	spec.Jitter = p.Jitter()
	spec.OnExhaustion = p.OnExhaustion()
	return policy.New(spec)
}

// roundSig rounds d to three significant digits, and to a multiple of unit
// (at least one unit).
func roundSig(d, unit time.Duration) time.Duration {
	if d <= unit {
		return unit
	}
	p := math.Pow(10, math.Floor(math.Log10(float64(d)))-2)
	r := time.Duration(math.Round(float64(d)/p) * p)
	return max(r/unit*unit, unit)
}

// roundUpSig rounds d up to two significant digits and to a whole unit.
func roundUpSig(d, unit time.Duration) time.Duration {
	if d <= unit {
		return unit
	}
	p := math.Pow(10, math.Floor(math.Log10(float64(d)))-1)
	r := time.Duration(math.Ceil(float64(d)/p) * p)
	return (r + unit - 1) / unit * unit
}

func writeFit(w io.Writer, p profile.Profile, pol *policy.Policy, k int) {
	s := pol.Spec()
	js, _ := pol.MarshalJSON()
	fmt.Fprintf(w, "profile: %s — %s\n", p.Name(), p.Summary())
	fmt.Fprintf(w, "closest OJS policy over attempts 1..%d (least squares on log delay):\n  %s\n", k, js)
	coef := strconv.FormatFloat(s.BackoffCoefficient, 'f', -1, 64)
	if s.Strategy == backoff.None || s.Strategy == backoff.Linear {
		coef += " (unused)"
	}
	fmt.Fprintf(w, "  strategy %s, initial_interval %v, coefficient %s, max_interval %v, max_attempts %d, jitter %t, on_exhaustion %s\n",
		s.Strategy, human.Exact(s.InitialInterval), coef, human.Exact(s.MaxInterval), s.MaxAttempts, s.Jitter, s.OnExhaustion)
	if p.MaxAttempts() == 0 {
		fmt.Fprintf(w, "  (the profile has no attempt limit; the fit covers %d retries and max_attempts is set to %d)\n", k, k+1)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "attempt\tprofile range\tprofile middle\tpolicy range\tpolicy middle\toff\toff %\t")
	b := pol.Backoff()
	var worst float64
	worstAt := 0
	var cumP, cumO time.Duration
	for n := 1; n <= k; n++ {
		lo, hi := p.Bounds(n)
		mid := lo/2 + hi/2
		plo, phi := b.Bounds(n)
		pm := b.Base(n)
		cumP, cumO = sat.AddInt(cumP, mid), sat.AddInt(cumO, pm)
		rel := 0.0
		if mid > 0 {
			rel = (float64(pm) - float64(mid)) / float64(mid) * 100
		}
		if math.Abs(rel) > math.Abs(worst) || worstAt == 0 {
			worst, worstAt = rel, n
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%+.1f%%\t\n", n, inclusive(lo, hi), human.Round(mid), inclusive(plo, phi), human.Round(pm), human.Round(pm-mid), rel)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlargest relative difference: %+.1f%% at attempt %d\n", worst, worstAt)
	fmt.Fprintf(w, "time to exhaustion (middle delays): profile %s, policy %s (off %s)\n", human.Round(cumP), human.Round(cumO), human.Round(cumO-cumP))
}
