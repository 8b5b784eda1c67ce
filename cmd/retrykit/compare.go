package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/internal/chart"
	"github.com/retrykit/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

func init() {
	commands["compare"] = command{
		summary: "compare policies and other systems' profiles side by side",
		run:     runCompare,
	}
}

const compareUsage = `usage: retrykit compare [--limit N] [--svg FILE] (policy.json | --profile NAME)...

Shows, for each attempt, the inclusive range of the delay before the next
attempt under each policy or profile (or where it is exhausted), then the
cumulative time to exhaustion and the largest difference. Give at least two
subjects, in any order; --profile may repeat and takes a comma list.

  --profile NAME   another system's profile (retrykit schedule --list-profiles)
  --limit N        show at most N attempts (default 30, 1 to 10000); unbounded
                   profiles are shown up to this many attempts
  --svg FILE       also write a chart: delay per attempt, log scale, jitter bands
`

// compareArgs are the parsed arguments of compare and fit: flags may come
// before, between and after the policy files, and the order of subjects is
// kept.
type compareArgs struct {
	subjects []subject
	limit    int
	svg      string
}

// parseSubjects reads compare's arguments. It returns a usage error text,
// or help when -h/--help was asked for.
func parseSubjects(args []string, stdin io.Reader) (a compareArgs, help bool, err error) {
	a.limit = 30
	value := func(i *int, name string) (string, error) {
		arg := args[*i]
		if k := strings.IndexByte(arg, '='); k >= 0 {
			return arg[k+1:], nil
		}
		if *i+1 >= len(args) {
			return "", fmt.Errorf("%s: needs a value", name)
		}
		*i++
		return args[*i], nil
	}
	stdinUsed := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name := arg
		if k := strings.IndexByte(arg, '='); k >= 0 {
			name = arg[:k]
		}
		switch name {
		case "-h", "-help", "--help":
			return a, true, nil
		case "-profile", "--profile":
			v, err := value(&i, "--profile")
			if err != nil {
				return a, false, err
			}
			names := splitList(v)
			if len(names) == 0 {
				return a, false, fmt.Errorf("--profile: needs a profile name")
			}
			for _, n := range names {
				p, err := profile.Lookup(n)
				if err != nil {
					return a, false, fmt.Errorf("--profile: %w", err)
				}
				a.subjects = append(a.subjects, profileSubject(p))
			}
		case "-limit", "--limit":
			v, err := value(&i, "--limit")
			if err != nil {
				return a, false, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxScheduleLimit {
				return a, false, fmt.Errorf("--limit: must be between 1 and %d, got %q", maxScheduleLimit, v)
			}
			a.limit = n
		case "-svg", "--svg":
			v, err := value(&i, "--svg")
			if err != nil {
				return a, false, err
			}
			a.svg = v
		default:
			if strings.HasPrefix(arg, "-") && arg != "-" {
				return a, false, fmt.Errorf("unknown flag %s%s", quoteName(name), flagSuggestion(name, []string{"profile", "limit", "svg"}))
			}
			if arg == "-" {
				if stdinUsed {
					return a, false, fmt.Errorf("-: standard input can be read only once")
				}
				stdinUsed = true
			}
			data, err := readPolicyFile(arg, stdin)
			if err != nil {
				return a, false, err
			}
			p, err := policy.Parse(data)
			if err != nil {
				return a, false, fmt.Errorf("%s: %w", arg, err)
			}
			a.subjects = append(a.subjects, policySubject(policyName(arg), p))
		}
	}
	return a, false, nil
}

func runCompare(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a, help, err := parseSubjects(args, stdin)
	if help {
		fmt.Fprint(stdout, compareUsage)
		return 0
	}
	if err == nil && len(a.subjects) < 2 {
		err = fmt.Errorf("give at least two policies or profiles")
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrykit compare: %v\n", err)
		fmt.Fprint(stderr, compareUsage)
		return 2
	}
	k := 1 // attempts shown: up to the last exhaustion, at most limit
	for _, s := range a.subjects {
		k = max(k, min(s.retries(a.limit)+1, a.limit))
	}
	if a.svg != "" {
		c := chart.Delays{Title: "Retry delays compared", Note: "per attempt; line: " + chart.Middle + ", band: jitter range (inclusive)"}
		for _, s := range a.subjects {
			c.Series = append(c.Series, s.series(max(min(s.retries(a.limit), k), 1)))
		}
		if err := writeChart(a.svg, c); err != nil {
			fmt.Fprintf(stderr, "retrykit compare: --svg: %v\n", err)
			return 2
		}
	}
	writeCompare(stdout, a.subjects, k, a.limit)
	return 0
}

// writeCompare prints the side-by-side table and the summary.
func writeCompare(w io.Writer, subs []subject, k, limit int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "attempt")
	for _, s := range subs {
		fmt.Fprintf(tw, "\t%s", s.name)
	}
	fmt.Fprintln(tw)
	// Largest difference between the nominal delays at one attempt where
	// every subject still retries.
	var bigD time.Duration
	bigAt, bigLo, bigHi := 0, 0, 0
	for n := 1; n <= k; n++ {
		fmt.Fprint(tw, n)
		allRetry := true
		for _, s := range subs {
			switch r := s.retries(limit); {
			case n <= r:
				lo, hi := s.bounds(n)
				fmt.Fprintf(tw, "\t%s", inclusive(lo, hi))
			case n == r+1 && s.attempts > 0:
				fmt.Fprintf(tw, "\texhausted: %s", s.action)
				allRetry = false
			default:
				fmt.Fprint(tw, "\t")
				allRetry = false
			}
		}
		fmt.Fprintln(tw)
		if allRetry {
			iLo, iHi := 0, 0
			for i, s := range subs {
				if s.nominal(n) < subs[iLo].nominal(n) {
					iLo = i
				}
				if s.nominal(n) > subs[iHi].nominal(n) {
					iHi = i
				}
			}
			if d := subs[iHi].nominal(n) - subs[iLo].nominal(n); d > bigD {
				bigD, bigAt, bigLo, bigHi = d, n, iLo, iHi
			}
		}
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "subject\tattempts\tthen\ttime to exhaustion, "+chart.Middle+"\trange (inclusive)")
	type total struct {
		mid, lo, hi time.Duration
		bounded     bool
	}
	totals := make([]total, len(subs))
	for i, s := range subs {
		var t total
		r := s.retries(limit)
		for n := 1; n <= r; n++ {
			lo, hi := s.bounds(n)
			t.mid, t.lo, t.hi = sat.AddInt(t.mid, s.nominal(n)), sat.AddInt(t.lo, lo), sat.AddInt(t.hi, hi)
		}
		t.bounded = s.attempts > 0
		totals[i] = t
		attempts, then := strconv.Itoa(s.attempts), s.action
		mid := human.Round(t.mid)
		if !t.bounded {
			attempts, then = "unbounded", "-"
			mid = fmt.Sprintf("%s after %d retries", human.Round(t.mid), r)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.name, attempts, then, mid, inclusive(t.lo, t.hi))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if bigAt > 0 {
		fmt.Fprintf(w, "largest difference per attempt: %s at attempt %d (%s %s, %s %s)\n", human.Round(bigD), bigAt,
			subs[bigHi].name, human.Round(subs[bigHi].nominal(bigAt)), subs[bigLo].name, human.Round(subs[bigLo].nominal(bigAt)))
	}
	iLo, iHi := -1, -1
	for i, t := range totals {
		if !t.bounded {
			continue
		}
		if iLo < 0 || t.mid < totals[iLo].mid {
			iLo = i
		}
		if iHi < 0 || t.mid > totals[iHi].mid {
			iHi = i
		}
	}
	if iLo >= 0 && iLo != iHi {
		fmt.Fprintf(w, "largest difference in time to exhaustion: %s (%s %s, %s %s)\n", human.Round(totals[iHi].mid-totals[iLo].mid),
			subs[iHi].name, human.Round(totals[iHi].mid), subs[iLo].name, human.Round(totals[iLo].mid))
	}
}
