package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// subject is one thing compare, fit and the charts show: an OJS policy or
// another system's profile, seen through the same few questions.
type subject struct {
	name string
	// attempts is the total number of attempts; 0 means unbounded.
	attempts int
	// action is the outcome when attempts run out (policy action text).
	action string
	// bounds is the inclusive delay range after attempt n.
	bounds func(n int) (lo, hi time.Duration)
	// nominal is the middle (r = 0.5) delay: the base delay for an OJS
	// policy, the median for a uniform jitter; schedule, fit and the charts
	// all use it.
	nominal func(n int) time.Duration
	// at is the delay for the draw r.
	at func(n int, r float64) time.Duration
	// monotone says that the delays never decrease with n and that equal
	// nominal delays mean equal bounds (an OJS policy); compare sums such
	// a subject by runs.
	monotone bool
}

func policySubject(name string, p *policy.Policy) subject {
	b := p.Backoff()
	return subject{
		name:     name,
		attempts: max(p.Spec().MaxAttempts, 1),
		action:   p.Spec().OnExhaustion.String(),
		bounds:   b.Bounds,
		nominal:  func(n int) time.Duration { return b.DelayAt(n, 0.5) },
		at:       b.DelayAt,
		monotone: true,
	}
}

func profileSubject(p profile.Profile) subject {
	return subject{
		name:     p.Name(),
		attempts: p.MaxAttempts(),
		action:   p.OnExhaustion().String(),
		bounds:   p.Bounds,
		nominal:  func(n int) time.Duration { return p.DelayAt(n, 0.5) },
		at:       p.DelayAt,
	}
}

// retries returns the number of retries shown for s: attempts-1, or
// horizon when s is unbounded.
func (s subject) retries(horizon int) int {
	if s.attempts == 0 {
		return horizon
	}
	return s.attempts - 1
}

// series turns the first k retries of s into a chart series.
func (s subject) series(k int) chart.Series {
	c := chart.Series{Name: s.name}
	for n := 1; n <= k; n++ {
		lo, hi := s.bounds(n)
		c.Points = append(c.Points, chart.Point{Attempt: n, Lo: lo, Mid: s.nominal(n), Hi: hi})
	}
	return c
}

// writeChart renders a delay chart to the file name.
func writeChart(name string, c chart.Delays) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = c.WriteSVG(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// inclusive shows an inclusive range, or the one value when exact. (The
// commands of this file use the library's inclusive bounds everywhere.)
func inclusive(lo, hi time.Duration) string { return human.Range(lo, hi) }

// scheduleExtra holds the schedule command's profile and chart flags; it
// is the hook schedule.go calls, so that the profile code stays here.
type scheduleExtra struct {
	profile    string
	list       bool
	svg        string
	class      string
	retryAfter string
	fs         *flag.FlagSet // to tell which flags were given
}

// addScheduleFlags registers --profile, --list-profiles and --svg on fs.
func addScheduleFlags(fs *flag.FlagSet) *scheduleExtra {
	x := &scheduleExtra{fs: fs}
	fs.StringVar(&x.profile, "profile", "", "print the schedule of another system's profile instead of a policy (see --list-profiles);\nNAME, NAME@VERSION or NAME:key=value,... in the system's own setting names")
	fs.StringVar(&x.class, "error-class", "", "with --profile: the class of error the delays are for, where the system tells them apart (aws_go: ordinary, throttling)")
	fs.StringVar(&x.retryAfter, "retry-after", "", "with --profile: a retry-after hint the failures carried (aws_go: x-amz-retry-after), as a duration")
	fs.BoolVar(&x.list, "list-profiles", false, "list the profiles, one line each, then the older releases (NAME@VERSION)")
	fs.StringVar(&x.svg, "svg", "", "also write a chart of the delays (log scale, jitter band) to this SVG file")
	return x
}

// run handles the profile forms of schedule. done is false when the
// command is about a policy and schedule.go goes on.
func (x *scheduleExtra) run(nargs int, asJSON bool, limit int, r *float64, stdout, stderr io.Writer) (code int, done bool) {
	if x.list {
		// --list-profiles prints the list and nothing else: a flag that
		// would be silently dropped (no chart written, no schedule printed)
		// is refused instead. --json lists them as JSON.
		var given []string
		x.fs.Visit(func(f *flag.Flag) {
			if f.Name != "list-profiles" && f.Name != "json" {
				given = append(given, "--"+f.Name)
			}
		})
		if nargs > 0 {
			given = append(given, "a policy file")
		}
		if len(given) > 0 {
			fmt.Fprintf(stderr, "retrykit schedule: --list-profiles only lists the profiles (with --json, as JSON); it takes no %s. Chart a profile with: retrykit schedule --profile NAME --svg FILE\n", strings.Join(given, ", "))
			return 2, true
		}
		if asJSON {
			type entry struct {
				Name    string `json:"name"`
				System  string `json:"system"`
				Release string `json:"release"`
				Summary string `json:"summary"`
			}
			list := []entry{}
			for _, p := range profile.All() {
				list = append(list, entry{p.Name(), p.System(), p.Release(), p.Summary()})
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(list); err != nil {
				fmt.Fprintf(stderr, "retrykit schedule: %v\n", err)
				return 1, true
			}
			return 0, true
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		// Each line: the name, the release it models, the summary.
		for _, p := range profile.All() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name(), p.Release(), p.Summary())
		}
		// An older release is listed by a NAME@VERSION that selects it
		// ("aws_go@1.47", "sidekiq@6.4.1"), never by a profile name
		// without one, which is another current profile's ("sidekiq6").
		for _, v := range profile.Versions() {
			if p, err := profile.Parse(v); err == nil {
				name := p.Name()
				if !strings.Contains(name, "@") {
					name = v
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", name, p.Release(), p.Summary())
			}
		}
		tw.Flush()
		return 0, true
	}
	if x.profile == "" {
		// --error-class and --retry-after describe a profile's failures;
		// an OJS policy has neither, so they are refused, not dropped.
		var given []string
		x.fs.Visit(func(f *flag.Flag) {
			if f.Name == "error-class" || f.Name == "retry-after" {
				given = append(given, "--"+f.Name)
			}
		})
		if len(given) > 0 {
			fmt.Fprintf(stderr, "retrykit schedule: %s: only with --profile (an OJS policy has no error classes or retry-after hints)\n", strings.Join(given, ", "))
			return 2, true
		}
		return 0, false
	}
	if nargs > 0 {
		fmt.Fprintln(stderr, "retrykit schedule: --profile and a policy file exclude each other")
		return 2, true
	}
	p, err := profile.Lookup(x.profile)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit schedule: --profile: %v\n", err)
		return 2, true
	}
	if p, err = applyFailure(p, x.class, x.retryAfter); err != nil {
		fmt.Fprintf(stderr, "retrykit schedule: %v\n", err)
		return 2, true
	}
	rep := buildProfileSchedule(p, limit, r)
	if x.svg != "" {
		k := min(p.MaxAttempts()-1, limit)
		if p.MaxAttempts() == 0 {
			k = min(limit, 30)
		}
		c := chart.Delays{Title: fmt.Sprintf("Retry delays of %s", p.Name()), Note: p.System(), Series: []chart.Series{profileSubject(p).series(max(k, 1))}}
		if err := writeChart(x.svg, c); err != nil {
			fmt.Fprintf(stderr, "retrykit schedule: --svg: %v\n", err)
			return 2, true
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "retrykit schedule: %v\n", err)
			return 1, true
		}
		return 0, true
	}
	writeProfileSchedule(stdout, p, rep)
	return 0, true
}

// applyFailure gives p the error class and retry-after hint of the
// --error-class and --retry-after flags ("" when not given).
func applyFailure(p profile.Profile, class, retryAfter string) (profile.Profile, error) {
	var err error
	if class != "" {
		if p, err = p.WithClass(class); err != nil {
			return p, fmt.Errorf("--error-class: %w", err)
		}
	}
	if retryAfter != "" {
		d, perr := time.ParseDuration(retryAfter)
		if perr != nil {
			return p, fmt.Errorf("--retry-after: %q is not a duration (write it as 1500ms or 2s)", cutText(retryAfter))
		}
		if p, err = p.WithRetryAfter(d); err != nil {
			return p, fmt.Errorf("--retry-after: %w", err)
		}
	}
	return p, nil
}

// svgPolicy writes the chart of a policy's schedule when --svg was given.
func (x *scheduleExtra) svgPolicy(p *policy.Policy, name string, limit int, stderr io.Writer) int {
	if x.svg == "" {
		return 0
	}
	s := policySubject(name, p)
	k := max(min(s.attempts-1, limit), 1)
	c := chart.Delays{Title: "Retry delays of " + name, Note: "OJS retry policy", Series: []chart.Series{s.series(k)}}
	if err := writeChart(x.svg, c); err != nil {
		fmt.Fprintf(stderr, "retrykit schedule: --svg: %v\n", err)
		return 2
	}
	return 0
}

// profileScheduleReport is the --json output of schedule --profile.
type profileScheduleReport struct {
	Profile struct {
		Name        string `json:"name"`
		System      string `json:"system"`
		Version     string `json:"version"`
		Source      string `json:"source"`
		Formula     string `json:"formula"`
		Draw        string `json:"draw,omitempty"`
		MaxAttempts int    `json:"max_attempts"`
		Terminal    string `json:"terminal"`
		ErrorClass  string `json:"error_class,omitempty"`
		RetryAfter  *int64 `json:"retry_after_ns,omitempty"`
	} `json:"profile"`
	Rand       *float64      `json:"rand,omitempty"`
	Rows       []scheduleRow `json:"attempts"`
	Truncated  bool          `json:"truncated"`
	Exhaustion *struct {
		AfterAttempt int    `json:"after_attempt"`
		Action       string `json:"action"`
	} `json:"exhaustion"` // null when the profile is unbounded
}

func buildProfileSchedule(p profile.Profile, limit int, r *float64) *profileScheduleReport {
	rep := &profileScheduleReport{Rand: r}
	m := &rep.Profile
	m.Name, m.System, m.Version, m.Source = p.Name(), p.System(), p.Version(), p.Source()
	m.Formula, m.Draw, m.MaxAttempts, m.Terminal = p.Formula(), p.Draw(), p.MaxAttempts(), p.Terminal()
	m.ErrorClass = p.Class()
	if ra, ok := p.RetryAfter(); ok {
		ns := int64(ra)
		m.RetryAfter = &ns
	}
	var cum, cumLo, cumHi time.Duration
	for n := 1; n <= limit; n++ {
		rv := 0.5
		if r != nil {
			rv = *r
		}
		d := p.DecideAt(n, rv)
		if d.Action != policy.Retry {
			rep.Rows = append(rep.Rows, scheduleRow{Attempt: n, Action: d.Action.String()})
			rep.Exhaustion = &struct {
				AfterAttempt int    `json:"after_attempt"`
				Action       string `json:"action"`
			}{n, d.Action.String()}
			return rep
		}
		lo, hi := p.Bounds(n)
		cum, cumLo, cumHi = sat.AddInt(cum, d.Delay), sat.AddInt(cumLo, lo), sat.AddInt(cumHi, hi)
		rep.Rows = append(rep.Rows, scheduleRow{Attempt: n, Action: d.Action.String(), DelayNS: int64(d.Delay),
			MinNS: int64(lo), MaxNS: int64(hi), CumulativeNS: int64(cum), CumulativeMinNS: int64(cumLo), CumulativeMaxNS: int64(cumHi)})
	}
	rep.Truncated = true
	if n := p.MaxAttempts(); n > 0 {
		rep.Exhaustion = &struct {
			AfterAttempt int    `json:"after_attempt"`
			Action       string `json:"action"`
		}{n, p.OnExhaustion().String()}
	}
	return rep
}

func writeProfileSchedule(w io.Writer, p profile.Profile, rep *profileScheduleReport) {
	fmt.Fprintf(w, "profile: %s — %s (%s)\n", p.Name(), p.System(), p.Version())
	if p.Class() != "" {
		fmt.Fprintf(w, "error class: %s (classes: %s)\n", p.Class(), strings.Join(p.Classes(), ", "))
	}
	if ra, ok := p.RetryAfter(); ok {
		fmt.Fprintf(w, "retry-after hint: %v\n", ra)
	}
	fmt.Fprintf(w, "source: %s\nformula: %s\n", p.Source(), p.Formula())
	if p.Draw() != "" {
		fmt.Fprintf(w, "draw: %s\n", p.Draw())
	}
	fmt.Fprintf(w, "exhaustion: %s\nterminal: %s\n\n", p.Exhaustion(), p.Terminal())
	head := "delay"
	switch {
	case rep.Rand != nil:
		head = fmt.Sprintf("delay (r = %g)", *rep.Rand)
	case p.Jitter():
		head = chart.Middle
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "attempt\tthen\t%s\trange (inclusive)\tcumulative\tcumulative range\n", head)
	for _, row := range rep.Rows {
		if row.Action != policy.Retry.String() {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t-\n", row.Attempt, row.Action)
			continue
		}
		fmt.Fprintf(tw, "%d\tretry\t%s\t%s\t%s\t%s\n", row.Attempt, human.Round(time.Duration(row.DelayNS)),
			inclusive(time.Duration(row.MinNS), time.Duration(row.MaxNS)), human.Round(time.Duration(row.CumulativeNS)),
			inclusive(time.Duration(row.CumulativeMinNS), time.Duration(row.CumulativeMaxNS)))
	}
	if rep.Truncated {
		fmt.Fprintln(tw, "…\t\t\t\t\t")
	}
	tw.Flush()
	switch {
	case rep.Exhaustion == nil:
		fmt.Fprintf(w, "\nno attempt limit: %s\n", p.Exhaustion())
	default:
		fmt.Fprintf(w, "\nafter attempt %d fails: %s (%s)\n", rep.Exhaustion.AfterAttempt, rep.Exhaustion.Action, p.Terminal())
	}
}

// splitList splits "a,b" flag values; used by compare for --profile a,b.
// A piece with '=' but no ':' is a further setting of the configured
// profile before it, so "bullmq:type=fixed,delay=3000,river" is two
// profiles.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case len(out) > 0 && strings.Contains(f, "=") && !strings.Contains(f, ":") && strings.Contains(out[len(out)-1], ":"):
			out[len(out)-1] += "," + f
		default:
			out = append(out, f)
		}
	}
	return out
}

// policyName is how a policy file is named in tables and charts.
func policyName(file string) string {
	switch file {
	case "":
		return "OJS default policy"
	case "-":
		return "policy (stdin)"
	}
	return file
}

// cutText shortens a user's text to 64 bytes for an error message.
func cutText(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}
