package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/chart"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
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
subjects and at most 64, in any order; --profile may repeat and takes a
comma list.

flags:
`

// compareFlags are compare's flags as its help lists them, in the help
// style of every command (writeFlags); parseSubjects reads the arguments
// itself, since policy files and --profile interleave.
func compareFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.String("profile", "", "another system's profile (retrykit schedule --list-profiles); repeatable, and a comma list")
	fs.Int("limit", 30, "show at most this many attempts, 1 to 10000; unbounded profiles are shown up to this many attempts")
	fs.String("svg", "", "also write a chart: delay per attempt, log scale, jitter bands")
	return fs
}

// writeCompareHelp writes compare's help.
func writeCompareHelp(w io.Writer) {
	fmt.Fprint(w, compareUsage)
	writeFlags(w, compareFlags())
}

// maxCompareSubjects bounds the subjects of one compare: a side-by-side
// table wider than this is unreadable, and every subject costs a column of
// work per attempt shown.
const maxCompareSubjects = 64

// errTooManySubjects is the usage error for more than maxCompareSubjects
// subjects.
var errTooManySubjects = errors.New("too many subjects")

// compareArgs are the parsed arguments of compare and fit: flags may come
// before, between and after the policy files, and the order of subjects is
// kept.
type compareArgs struct {
	subjects []subject
	limit    int
	svg      string
	notes    []string // for stderr: empty policy inputs
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
		if len(a.subjects) >= maxCompareSubjects && (args[i] == "-" || !strings.HasPrefix(args[i], "-")) {
			return a, false, fmt.Errorf("%w: at most %d, and more are given", errTooManySubjects, maxCompareSubjects)
		}
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
			if len(a.subjects)+len(names) > maxCompareSubjects {
				return a, false, fmt.Errorf("%w: at most %d, and more are given", errTooManySubjects, maxCompareSubjects)
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
			if strings.TrimSpace(v) == "" {
				return a, false, fmt.Errorf("--svg: empty value (leave the flag out to go without a chart)")
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
			if note := emptyPolicyNote(arg, data); note != "" {
				a.notes = append(a.notes, note)
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
		writeCompareHelp(stdout)
		return 0
	}
	if err == nil && len(a.subjects) < 2 {
		err = fmt.Errorf("give at least two policies or profiles")
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrykit compare: %v\n", err)
		writeCompareHelp(stderr)
		return 2
	}
	for _, n := range a.notes {
		fmt.Fprintf(stderr, "retrykit compare: %s\n", n)
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

// writeCompare prints the side-by-side table and the summary. The table
// is written row by row (writeColumns), so memory does not grow with the
// attempts shown; the times to exhaustion come from subject.total, which is
// bounded work whatever max_attempts is.
func writeCompare(w io.Writer, subs []subject, k, limit int) {
	// Largest difference between the nominal delays at one attempt where
	// every subject still retries.
	var bigD time.Duration
	bigAt, bigLo, bigHi := 0, 0, 0
	row := func(i int, cells []string) []string {
		if i == 0 {
			cells = append(cells, "attempt")
			for _, s := range subs {
				cells = append(cells, s.name)
			}
			return cells
		}
		n := i
		cells = append(cells, strconv.Itoa(n))
		for _, s := range subs {
			switch r := s.retries(limit); {
			case n <= r:
				lo, hi := s.bounds(n)
				cells = append(cells, inclusive(lo, hi))
			case n == r+1 && s.attempts > 0:
				cells = append(cells, "exhausted: "+s.action)
			default:
				cells = append(cells, "")
			}
		}
		return cells
	}
	// A column cut by the table's end, not by exhaustion, says so in a
	// last row, so that it does not read as a subject that stopped there.
	cut := false
	for _, s := range subs {
		cut = cut || s.retries(limit) >= k
	}
	rows := k + 1
	if cut {
		rows++
	}
	writeColumns(w, rows, func(i int, cells []string) []string {
		if i <= k {
			return row(i, cells)
		}
		cells = append(cells, "…")
		for _, s := range subs {
			switch r := s.retries(limit); {
			case s.attempts == 0:
				cells = append(cells, fmt.Sprintf("unbounded (--limit %d)", limit))
			case r >= k:
				cells = append(cells, fmt.Sprintf("%d more retries, then %s (--limit %d)", r-k, s.action, limit))
			default:
				cells = append(cells, "")
			}
		}
		return cells
	})
	for n := 1; n <= k; n++ {
		allRetry := true
		for _, s := range subs {
			if n > s.retries(limit) {
				allRetry = false
				break
			}
		}
		if !allRetry {
			continue
		}
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

	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "subject\tattempts\tthen\ttime to exhaustion, "+chart.Middle+"\trange (inclusive)")
	totals := make([]total, len(subs))
	for i, s := range subs {
		r := s.retries(limit)
		t := s.total(r)
		totals[i] = t
		attempts, then := strconv.Itoa(s.attempts), s.action
		mid := totalText(t.mid)
		if !t.exact && t.mid != math.MaxInt64 {
			mid = fmt.Sprintf("between %s and %s (retries past %d bounded, not summed)", human.Floor(t.mid), ceilTotal(t.midHi), t.summed)
		}
		if s.attempts == 0 {
			attempts, then = "unbounded", "-"
			mid = fmt.Sprintf("%s after %d retries", mid, r)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.name, attempts, then, mid, inclusiveTotal(t.lo, t.hi))
	}
	tw.Flush()
	fmt.Fprintln(w)
	// every is the last attempt that every subject retries.
	every := k
	for _, s := range subs {
		every = min(every, s.retries(limit))
	}
	if bigAt > 0 {
		fmt.Fprintf(w, "largest difference per attempt: %s at attempt %d (%s %s, %s %s), over attempts 1 to %d, which every subject retries\n", human.Round(bigD), bigAt,
			subs[bigHi].name, human.Round(subs[bigHi].nominal(bigAt)), subs[bigLo].name, human.Round(subs[bigLo].nominal(bigAt)), every)
	}
	// Past that, the subjects that still retry: their longest delay, which
	// the per-attempt difference cannot show.
	var longest []string
	for _, s := range subs {
		r := min(s.retries(limit), k)
		at := 1
		for n := 2; n <= r; n++ {
			if s.nominal(n) > s.nominal(at) {
				at = n
			}
		}
		if r >= 1 {
			longest = append(longest, fmt.Sprintf("%s %s (after attempt %d)", s.name, human.Round(s.nominal(at)), at))
		}
	}
	if every < k && len(longest) > 0 {
		fmt.Fprintf(w, "longest delay of each (%s): %s\n", chart.Middle, strings.Join(longest, ", "))
	}
	iLo, iHi := -1, -1
	for i, t := range totals {
		// Only exact, unsaturated totals of bounded subjects compare.
		if subs[i].attempts == 0 || !t.exact || t.mid == math.MaxInt64 {
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

// totalText shows a cumulative time (internal/human, rounded to the
// nearest); a sum that saturated (beyond about 292 years) says so instead
// of showing the largest Duration as a value.
func totalText(d time.Duration) string {
	if d == math.MaxInt64 {
		return "over " + human.Floor(d) + " (saturated)"
	}
	return human.Round(d)
}

// ceilTotal is totalText rounded up, for an upper bound.
func ceilTotal(d time.Duration) string {
	if d == math.MaxInt64 {
		return totalText(d)
	}
	return human.Ceil(d)
}

// inclusiveTotal is inclusive (human.Range) for cumulative times,
// saturation shown.
func inclusiveTotal(lo, hi time.Duration) string {
	switch {
	case lo == math.MaxInt64:
		return totalText(lo)
	case hi == math.MaxInt64:
		return fmt.Sprintf("[%s, %s]", human.Floor(lo), totalText(hi))
	}
	return human.Range(lo, hi)
}

// writeColumns writes rows of cells in columns two spaces apart, left
// aligned, as text/tabwriter lays out a table whose every row has the same
// cells (the last cell of a row is not padded). Unlike tabwriter it does
// not hold the table: row is called twice for each row, once to measure the
// columns and once to print, so memory is one row whatever the number of
// rows.
func writeColumns(w io.Writer, rows int, row func(i int, cells []string) []string) {
	var widths []int
	var cells []string
	for i := 0; i < rows; i++ {
		cells = row(i, cells[:0])
		for c, x := range cells {
			if c == len(widths) {
				widths = append(widths, 0)
			}
			widths[c] = max(widths[c], utf8.RuneCountInString(x))
		}
	}
	var line []byte
	for i := 0; i < rows; i++ {
		cells = row(i, cells[:0])
		line = line[:0]
		for c, x := range cells {
			line = append(line, x...)
			if c < len(cells)-1 {
				for pad := widths[c] - utf8.RuneCountInString(x) + 2; pad > 0; pad-- {
					line = append(line, ' ')
				}
			}
		}
		line = append(line, '\n')
		w.Write(line) //nolint:errcheck // run checks the command's writes
	}
}

// total is the cumulative delay of a subject's retries: the middle draw and
// the inclusive range. When exact is false, the retries after the first
// summed are bounded rather than summed, and the middle draw's total lies
// between mid and midHi.
type total struct {
	mid, midHi, lo, hi time.Duration
	exact              bool
	summed             int // retries summed exactly (all of them when exact)
}

// Work bounds of subject.total.
const (
	totalDirect = 10_000 // retries summed one by one
	totalRuns   = 4096   // runs of equal delays summed per subject
)

// total sums the delays of retries 1..r, saturating. A subject whose
// delays are non-decreasing and depend on the attempt only through the
// nominal delay (an OJS policy: base delays capped at max_interval) is
// summed by runs of equal nominal delays, each found by galloping and
// bisection, so max_attempts 2^63-1 costs as much as 30: the result is
// exact unless the delays take more than totalRuns distinct values (a
// coefficient within a hair of 1, a nanosecond linear step) and more than
// 100 000 retries remain after them, in which case the rest is bounded by
// the first remaining and the last retry's delays.
// Other subjects are summed one retry at a time up to totalDirect retries
// and bounded the same way beyond (profiles stop far sooner).
func (s subject) total(r int) total {
	t := total{exact: true}
	add := func(from, to int, mid time.Duration, lo, hi time.Duration) {
		c := time.Duration(to - from + 1)
		t.mid = sat.AddInt(t.mid, sat.MulInt(c, mid))
		t.lo = sat.AddInt(t.lo, sat.MulInt(c, lo))
		t.hi = sat.AddInt(t.hi, sat.MulInt(c, hi))
	}
	n := 1
	if !s.monotone {
		for ; n <= r && n <= totalDirect; n++ {
			lo, hi := s.bounds(n)
			add(n, n, s.nominal(n), lo, hi)
		}
	} else {
		for runs := 0; n <= r && runs < totalRuns; runs++ {
			v := s.nominal(n)
			last, bad := n, r+1 // nominal(last) == v; bad is past the run
			for step := 1; ; step *= 2 {
				m := n + step
				if m > r || m < n || step <= 0 {
					if s.nominal(r) == v {
						last = r
					} else {
						bad = r
					}
					break
				}
				if s.nominal(m) != v {
					bad = m
					break
				}
				last = m
			}
			for bad-last > 1 {
				m := last + (bad-last)/2
				if s.nominal(m) == v {
					last = m
				} else {
					bad = m
				}
			}
			lo, hi := s.bounds(n)
			add(n, last, v, lo, hi)
			n = last + 1
		}
		// Many distinct delays (a coefficient near 1): sum a moderate rest
		// one by one.
		if r-n < totalDirect*10 {
			for ; n <= r; n++ {
				lo, hi := s.bounds(n)
				add(n, n, s.nominal(n), lo, hi)
			}
		}
	}
	t.summed = n - 1
	t.midHi = t.mid
	if n <= r {
		// Not summed: retries n..r, bounded by monotonicity where it holds,
		// else by the retries summed so far being a lower bound only.
		t.exact = false
		c := time.Duration(r - n + 1)
		lo, _ := s.bounds(n)
		_, hi := s.bounds(r)
		t.mid = sat.AddInt(t.mid, sat.MulInt(c, s.nominal(n)))
		t.midHi = sat.AddInt(t.midHi, sat.MulInt(c, s.nominal(r)))
		t.lo = sat.AddInt(t.lo, sat.MulInt(c, lo))
		t.hi = sat.AddInt(t.hi, sat.MulInt(c, hi))
	}
	return t
}
