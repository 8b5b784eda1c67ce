package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
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

// isFlagSet reports whether the flag name was given on the command line.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func runFit(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("profile", "", "the profile to fit: NAME, NAME@VERSION or NAME:key=value,... (retrykit schedule --list-profiles)")
	class := fs.String("error-class", "", "the class of error to fit, where the system tells them apart (aws_go: ordinary, throttling)")
	horizon := fs.Int("horizon", 20, "retries to fit for a profile without an attempt limit, 1 to 1000")
	svg := fs.String("svg", "", "also write a chart of the profile and the fitted policy to this SVG file")
	asJSON := fs.Bool("json", false, "print the fit as JSON (durations in nanoseconds)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: retrykit fit --profile NAME [--error-class C] [--horizon N] [--svg FILE] [--json]")
		fmt.Fprintln(fs.Output(), "\nPrints the OJS retry policy (strategy, initial interval, coefficient, cap,\nattempts) whose delays come closest to the profile's, least squares on the\nlogarithm of the middle (r = 0.5) delay of each retry, and how far it is off\nper attempt: the middles and both ends of the jitter ranges. A cap the data\ncannot pin (no plateau within the retries fitted) is left unconstrained.")
		fmt.Fprintln(fs.Output(), "\nflags:")
		writeFlags(fs.Output(), fs)
	}
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "retrykit fit: unexpected argument %q\n", pos[0])
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
	if p, err = applyFailure(p, *class, ""); err != nil {
		fmt.Fprintf(stderr, "retrykit fit: %v\n", err)
		return 2
	}
	// A bounded profile is fitted over all its retries, up to maxFitRetries;
	// an unbounded one over --horizon.
	k := min(p.MaxAttempts()-1, maxFitRetries)
	if p.MaxAttempts() == 0 {
		k = *horizon
	} else if isFlagSet(fs, "horizon") {
		fmt.Fprintf(stderr, "retrykit fit: note: --horizon is for profiles without an attempt limit; %s makes %d attempts, so its %d retries are fitted\n", p.Name(), p.MaxAttempts(), max(k, 1))
	}
	k = max(k, 1)
	f, err := fitPolicy(p, k)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit fit: %v\n", err)
		return 1
	}
	rep := buildFit(p, f, k)
	if *svg != "" {
		c := chart.Delays{Title: "Closest OJS policy to " + p.Name(), Note: p.System(),
			Series: []chart.Series{profileSubject(p).series(k), policySubject("fitted OJS policy", f.pol).series(k)}}
		if err := writeChart(*svg, c); err != nil {
			fmt.Fprintf(stderr, "retrykit fit: --svg: %v\n", err)
			return 2
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "retrykit fit: %v\n", err)
			return 1
		}
		return 0
	}
	writeFit(stdout, p, f, rep)
	return 0
}

// maxFitRetries bounds the retries a bounded profile is fitted over (a
// configured asynq:MaxRetry=2147483647 has two billion).
const maxFitRetries = 1000

// center is the middle (r = 0.5) delay of a profile after attempt n, the
// value an OJS policy's middle (its base delay, the r = 0.5 draw) is
// matched with: the same middle schedule and the charts show. Zero becomes
// 1ms, since an OJS interval is positive.
func center(p profile.Profile, n int) float64 {
	return max(float64(p.DelayAt(n, 0.5)), float64(time.Millisecond))
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

// fit is a fitted policy and whether the data pinned its cap.
type fit struct {
	pol *policy.Policy
	// capPinned says the profile's middles level off within the retries
	// fitted (the cap binds at two or more of them); otherwise max_interval
	// is left unconstrained: set where it never binds within the fit.
	capPinned bool
}

// fitPolicy searches strategies, coefficients, caps and initial intervals
// for the OJS policy whose base delays over attempts 1..k are closest to
// the profile's centres in squared log error, then rounds the intervals to
// three significant digits and builds the policy. A cap counts only where
// it binds at two or more attempts: one point cannot tell a cap from a
// slower curve.
func fitPolicy(p profile.Profile, k int) (fit, error) {
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
	// Prefix sums of lt and lt², so that the capped part of a cost is O(1).
	t1, t2 := make([]float64, k+1), make([]float64, k+1)
	for n := 1; n <= k; n++ {
		t1[n], t2[n] = t1[n-1]+lt[n], t2[n-1]+lt[n]*lt[n]
	}
	lg := make([]float64, k+1)
	a1, a2 := make([]float64, k+1), make([]float64, k+1)
	for _, s := range shapes {
		for n := 1; n <= k; n++ {
			lg[n] = math.Log(s.g(n))
			d := lg[n] - lt[n]
			a1[n], a2[n] = a1[n-1]+d, a2[n-1]+d*d
		}
		for _, lnM := range caps {
			// The best ln I for this cap: a coarse scan, then a finer one.
			// Every shape's g grows with n, so the attempts below the cap
			// are a prefix 1..m (found by bisection), and the squared
			// errors sum in closed form from the prefix sums: O(log k) a
			// cost instead of O(k), which made --horizon 1000 take 15 s.
			cost := func(lnI float64) float64 {
				if lnI > lnM {
					return math.Inf(1)
				}
				m := sort.Search(k, func(i int) bool { return lnI+lg[i+1] >= lnM })
				fm, fr := float64(m), float64(k-m)
				e := fm*lnI*lnI + 2*lnI*a1[m] + a2[m]
				if m < k {
					e += fr*lnM*lnM - 2*lnM*(t1[k]-t1[m]) + (t2[k] - t2[m])
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
			binding := 0
			for n := 1; n <= k; n++ {
				if bi+lg[n] >= lnM {
					binding++
				}
			}
			if !math.IsInf(lnM, 1) && binding < 2 {
				continue // one point cannot pin a cap
			}
			// The closed form loses a little to cancellation; candidates
			// are compared on the plain sum, as exact fits tie at 0.
			be = 0
			for n := 1; n <= k; n++ {
				d := min(bi+lg[n], lnM) - lt[n]
				be += d * d
			}
			if be < bestErr-1e-12 {
				bestErr = be
				best.s, best.lnI, best.lnM = s, bi, lnM
			}
		}
	}
	initial := roundSig(time.Duration(math.Exp(best.lnI)), time.Millisecond)
	var maxI time.Duration
	pinned := !math.IsInf(best.lnM, 1)
	if !pinned {
		// No cap the data shows: unconstrained, at ten times the largest
		// base delay fitted (rounded up) and at least the OJS default 5m,
		// so that it binds nowhere within the fit.
		top := float64(initial) * best.s.g(k) * 10
		maxI = time.Duration(math.MaxInt64)
		if top < float64(math.MaxInt64)/2 {
			maxI = max(roundUpSig(time.Duration(top), time.Second), 5*time.Minute)
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
	pol, err := policy.New(spec)
	return fit{pol: pol, capPinned: pinned}, err
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

// fitRow is one attempt of a fit: both ranges and both middles (r = 0.5).
type fitRow struct {
	Attempt       int     `json:"attempt"`
	ProfileMinNS  int64   `json:"profile_min_ns"`
	ProfileMidNS  int64   `json:"profile_middle_ns"`
	ProfileMaxNS  int64   `json:"profile_max_ns"`
	PolicyMinNS   int64   `json:"policy_min_ns"`
	PolicyMidNS   int64   `json:"policy_middle_ns"`
	PolicyMaxNS   int64   `json:"policy_max_ns"`
	OffNS         int64   `json:"middle_off_ns"`
	OffPercent    float64 `json:"middle_off_percent"`
	LowOffNS      int64   `json:"low_off_ns"`
	HighOffNS     int64   `json:"high_off_ns"`
	RangeOffRatio float64 `json:"range_off_percent"`
}

// fitReport is the --json output of fit; the text shows the same numbers.
type fitReport struct {
	Profile   string          `json:"profile"`
	Policy    json.RawMessage `json:"policy"`
	Middle    string          `json:"middle"`
	Retries   int             `json:"retries_fitted"`
	CapPinned bool            `json:"cap_pinned"`
	Rows      []fitRow        `json:"attempts"`
	Worst     struct {
		MiddleOffPercent float64 `json:"middle_off_percent"`
		MiddleAttempt    int     `json:"middle_attempt"`
		RangeOffPercent  float64 `json:"range_off_percent"`
		RangeAttempt     int     `json:"range_attempt"`
	} `json:"largest"`
	ProfileTotalNS int64 `json:"profile_time_to_exhaustion_ns"`
	PolicyTotalNS  int64 `json:"policy_time_to_exhaustion_ns"`
}

// middleName is what fit, schedule and the charts call the r = 0.5 draw.
const middleName = chart.Middle

func pct(off, of time.Duration) float64 {
	if of <= 0 {
		if off == 0 {
			return 0
		}
		of = time.Millisecond // a zero middle: relative to 1ms, as the fit
	}
	return float64(off) / float64(of) * 100
}

func buildFit(p profile.Profile, f fit, k int) *fitReport {
	js, _ := f.pol.MarshalJSON()
	rep := &fitReport{Profile: p.Name(), Policy: js, Middle: middleName, Retries: k, CapPinned: f.capPinned}
	b := f.pol.Backoff()
	var cumP, cumO time.Duration
	for n := 1; n <= k; n++ {
		lo, hi := p.Bounds(n)
		mid := p.DelayAt(n, 0.5)
		plo, phi := b.Bounds(n)
		pm := b.DelayAt(n, 0.5)
		cumP, cumO = sat.AddInt(cumP, mid), sat.AddInt(cumO, pm)
		row := fitRow{Attempt: n, ProfileMinNS: int64(lo), ProfileMidNS: int64(mid), ProfileMaxNS: int64(hi),
			PolicyMinNS: int64(plo), PolicyMidNS: int64(pm), PolicyMaxNS: int64(phi),
			OffNS: int64(pm - mid), OffPercent: pct(pm-mid, mid), LowOffNS: int64(plo - lo), HighOffNS: int64(phi - hi)}
		// How far the ranges differ: the larger end difference, relative
		// to the profile's middle.
		row.RangeOffRatio = max(math.Abs(pct(plo-lo, mid)), math.Abs(pct(phi-hi, mid)))
		if math.Abs(row.OffPercent) > math.Abs(rep.Worst.MiddleOffPercent) || rep.Worst.MiddleAttempt == 0 {
			rep.Worst.MiddleOffPercent, rep.Worst.MiddleAttempt = row.OffPercent, n
		}
		if row.RangeOffRatio > rep.Worst.RangeOffPercent || rep.Worst.RangeAttempt == 0 {
			rep.Worst.RangeOffPercent, rep.Worst.RangeAttempt = row.RangeOffRatio, n
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.ProfileTotalNS, rep.PolicyTotalNS = int64(cumP), int64(cumO)
	return rep
}

func writeFit(w io.Writer, p profile.Profile, f fit, rep *fitReport) {
	s := f.pol.Spec()
	k := rep.Retries
	fmt.Fprintf(w, "profile: %s — %s\n", p.Name(), p.Summary())
	fmt.Fprintf(w, "closest OJS policy over attempts 1..%d (least squares on the log of the %s delay):\n  %s\n", k, middleName, rep.Policy)
	coef := strconv.FormatFloat(s.BackoffCoefficient, 'f', -1, 64)
	if s.Strategy == backoff.None || s.Strategy == backoff.Linear {
		coef += " (unused)"
	}
	fmt.Fprintf(w, "  strategy %s, initial_interval %v, coefficient %s, max_interval %v, max_attempts %d, jitter %t, on_exhaustion %s\n",
		s.Strategy, human.Exact(s.InitialInterval), coef, human.Exact(s.MaxInterval), s.MaxAttempts, s.Jitter, s.OnExhaustion)
	if !f.capPinned {
		fmt.Fprintf(w, "  max_interval is unconstrained: the profile's delays do not level off within the %d retries fitted, so the data cannot pin a cap;\n  %v binds nowhere here: set it to the system's own cap if it has one\n", k, human.Exact(s.MaxInterval))
	}
	if p.MaxAttempts() == 0 {
		fmt.Fprintf(w, "  (the profile has no attempt limit; the fit covers %d retries and max_attempts is set to %d)\n", k, k+1)
	} else if p.MaxAttempts()-1 > k {
		fmt.Fprintf(w, "  (the fit covers the first %d of the profile's %d retries; max_attempts is set to %d)\n", k, p.MaxAttempts()-1, k+1)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "attempt\tprofile range\tprofile %s\tpolicy range\tpolicy %s\toff\toff %%\trange ends off (low, high)\t\n", middleName, middleName)
	for _, r := range rep.Rows {
		d := func(ns int64) time.Duration { return time.Duration(ns) }
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%+.1f%%\t%s, %s\t\n", r.Attempt, inclusive(d(r.ProfileMinNS), d(r.ProfileMaxNS)), human.Round(d(r.ProfileMidNS)),
			inclusive(d(r.PolicyMinNS), d(r.PolicyMaxNS)), human.Round(d(r.PolicyMidNS)), human.Round(d(r.OffNS)), r.OffPercent, human.Round(d(r.LowOffNS)), human.Round(d(r.HighOffNS)))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nlargest relative difference of the %s delays: %+.1f%% at attempt %d\n", middleName, rep.Worst.MiddleOffPercent, rep.Worst.MiddleAttempt)
	fmt.Fprintf(w, "largest difference of the jitter ranges: an end %.1f%% of the profile's middle away, at attempt %d\n", rep.Worst.RangeOffPercent, rep.Worst.RangeAttempt)
	fmt.Fprintf(w, "time to exhaustion (%s delays): profile %s, policy %s (off %s)\n", middleName, human.Round(time.Duration(rep.ProfileTotalNS)), human.Round(time.Duration(rep.PolicyTotalNS)), human.Round(time.Duration(rep.PolicyTotalNS-rep.ProfileTotalNS)))
}
