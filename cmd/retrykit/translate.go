package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/cmd/retrykit/internal/human"
	"github.com/retrykit/retrykit/internal/sat"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

func init() {
	commands["translate"] = command{
		summary: "translate another system's retry configuration to an OJS policy, or an OJS policy to a system's configuration",
		run:     runTranslate,
	}
}

const translateUsage = `usage: retrykit translate --profile NAME[:key=value,...] [--json]
       retrykit translate --to SYSTEM [policy.json | -] [--json]

With --profile: the OJS retry policy that gives the system's schedule. Where
one exists it is exact (Temporal's RetryPolicy is OJS exponential without
jitter; BullMQ's fixed and exponential types are OJS none and exponential),
and translate says so after checking every attempt; otherwise it is the
closest policy (as retrykit fit finds it), with how far it is off per
attempt.

With --to: the configuration of SYSTEM (a profile name: temporal, bullmq,
celery, river, sidekiq, ...) whose schedule comes closest to the OJS
policy's (the default policy when no file is given), in that system's own
setting names, with how far it is off per attempt: what a user of SYSTEM
sets to keep the policy's schedule.

flags:
`

// translateCheck is how many attempts a translation is checked over.
const translateCheck = 1000

func runTranslate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("profile", "", "the system's profile to translate to OJS: NAME, NAME@VERSION or NAME:key=value,...")
	to := fs.String("to", "", "the system to translate an OJS policy to (a profile name)")
	asJSON := fs.Bool("json", false, "print the translation as JSON (durations in nanoseconds)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), translateUsage)
		writeFlags(fs.Output(), fs)
	}
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case (*from == "") == (*to == ""):
		fmt.Fprintln(stderr, "retrykit translate: give exactly one of --profile (system to OJS) and --to (OJS to system)")
		return 2
	case *from != "" && len(pos) > 0:
		fmt.Fprintf(stderr, "retrykit translate: --profile takes no policy file, got %q\n", cutText(pos[0]))
		return 2
	case len(pos) > 1:
		fmt.Fprintf(stderr, "retrykit translate: one policy file at most, got %d\n", len(pos))
		return 2
	}
	if *from != "" {
		p, err := profile.Lookup(*from)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit translate: --profile: %v\n", err)
			return 2
		}
		rep, err := toOJS(p)
		if err != nil {
			fmt.Fprintf(stderr, "retrykit translate: %v\n", err)
			return 1
		}
		return writeTranslation(stdout, stderr, rep, *asJSON)
	}
	pol := policy.Default()
	name := policyName("")
	if len(pos) == 1 {
		data, err := readPolicyFile(pos[0], stdin)
		if err == nil {
			if note := emptyPolicyNote(pos[0], data); note != "" {
				fmt.Fprintf(stderr, "retrykit translate: %s\n", note)
			}
			pol, err = policy.Parse(data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "retrykit translate: %v\n", err)
			return 2
		}
		name = policyName(pos[0])
	}
	base, err := profile.Lookup(*to)
	if err != nil {
		fmt.Fprintf(stderr, "retrykit translate: --to: %v\n", err)
		return 2
	}
	rep := toSystem(pol, name, base)
	return writeTranslation(stdout, stderr, rep, *asJSON)
}

// translation is the answer of translate, in either direction.
type translation struct {
	From   string          `json:"from"`
	To     string          `json:"to"`
	Policy json.RawMessage `json:"policy,omitempty"`
	// Profile is the configured profile of the target system (--to).
	Profile string `json:"profile,omitempty"`
	// Exact says every attempt checked gives the same delay range, the
	// same middle (r = 0.5) and the same exhaustion.
	Exact   bool     `json:"exact"`
	Checked int      `json:"attempts_checked"`
	Notes   []string `json:"notes,omitempty"`
	Rows    []trRow  `json:"attempts"`
	// Features says, for each of the five retry features of
	// docs/extensions.md, what the system has and how it crosses over.
	Features []trFeature `json:"features"`
}

// trRow compares one attempt: the source's and the target's range and
// middle (r = 0.5); after exhaustion the action instead.
type trRow struct {
	Attempt    int     `json:"attempt"`
	FromAction string  `json:"from_action"`
	ToAction   string  `json:"to_action"`
	FromMinNS  int64   `json:"from_min_ns"`
	FromMidNS  int64   `json:"from_middle_ns"`
	FromMaxNS  int64   `json:"from_max_ns"`
	ToMinNS    int64   `json:"to_min_ns"`
	ToMidNS    int64   `json:"to_middle_ns"`
	ToMaxNS    int64   `json:"to_max_ns"`
	OffPercent float64 `json:"middle_off_percent"`
}

// compareSubjects fills t.Rows for attempts 1..k of from and to, and says
// whether they agree exactly. Rows are kept for the first shown attempts
// (and every one that differs, up to a bound) so that output stays short.
func compareSubjects(t *translation, from, to subject, k int) {
	const shown, maxRows = 12, 40
	t.Exact, t.Checked = true, k
	for n := 1; n <= k; n++ {
		fa, ta := actionAt(from, n), actionAt(to, n)
		row := trRow{Attempt: n, FromAction: fa, ToAction: ta}
		same := fa == ta
		if fa == "retry" {
			lo, hi := from.bounds(n)
			row.FromMinNS, row.FromMidNS, row.FromMaxNS = int64(lo), int64(from.nominal(n)), int64(hi)
		}
		if ta == "retry" {
			lo, hi := to.bounds(n)
			row.ToMinNS, row.ToMidNS, row.ToMaxNS = int64(lo), int64(to.nominal(n)), int64(hi)
		}
		if fa == "retry" && ta == "retry" {
			row.OffPercent = pct(time.Duration(row.ToMidNS-row.FromMidNS), time.Duration(row.FromMidNS))
			same = row.FromMinNS == row.ToMinNS && row.FromMidNS == row.ToMidNS && row.FromMaxNS == row.ToMaxNS
		}
		if !same {
			t.Exact = false
		}
		if (n <= shown || !same) && len(t.Rows) < maxRows {
			t.Rows = append(t.Rows, row)
		}
		if fa != "retry" && ta != "retry" {
			t.Checked = n
			return // both exhausted: nothing further to compare
		}
	}
}

// actionAt is what s does after attempt n: "retry" or its exhaustion
// action.
func actionAt(s subject, n int) string {
	if s.attempts > 0 && n >= s.attempts {
		return s.action
	}
	return "retry"
}

// horizonOf is how many attempts to compare for subjects with these
// attempt limits (0 = unlimited).
func horizonOf(a, b int) int {
	k := max(a, b)
	if a == 0 || b == 0 {
		k = max(k, 30)
	}
	return min(max(k, 1), translateCheck)
}

// toOJS translates a profile to an OJS policy: an exact one where the
// system's formula is an OJS formula, else the closest fit.
func toOJS(p profile.Profile) (*translation, error) {
	t := &translation{From: p.Name(), To: "OJS retry policy"}
	pol, notes := exactPolicy(p)
	if pol == nil {
		k := min(p.MaxAttempts()-1, maxFitRetries)
		if p.MaxAttempts() == 0 {
			k = 20
		}
		f, err := fitPolicy(p, max(k, 1))
		if err != nil {
			return nil, err
		}
		pol = f.pol
		notes = append(notes, notExactNote)
		kept, keptNotes := keepConfigured(p, pol)
		pol, notes = kept, append(notes, keptNotes...)
		if !f.capPinned && !slices.ContainsFunc(keptNotes, func(n string) bool { return strings.Contains(n, "max_interval") }) {
			notes = append(notes, "max_interval is unconstrained: the data cannot pin a cap")
		}
	}
	js, _ := pol.MarshalJSON()
	t.Policy = js
	t.Notes = notes
	t.Features = featuresFrom(p)
	ps := profileSubject(p)
	os := policySubject("OJS policy", pol)
	compareSubjects(t, ps, os, horizonOf(ps.attempts, os.attempts))
	if t.Exact {
		// The fit can land on the schedule itself (a table that doubles, say):
		// then the policy is exact, and the note that it is only the closest
		// would contradict the check.
		t.Notes = slices.DeleteFunc(t.Notes, func(n string) bool { return n == notExactNote })
	}
	return t, nil
}

// notExactNote is toOJS's note for a policy found by fitting.
const notExactNote = "no OJS policy gives this schedule exactly: this is the closest (least squares on the log of the middle (r = 0.5) delay, as retrykit fit)"

// exactPolicy returns the OJS policy with the profile's schedule where the
// system's formula is an OJS one (Temporal; BullMQ fixed and exponential
// without jitter), checked attempt by attempt by the caller; nil when
// there is none.
func exactPolicy(p profile.Profile) (*policy.Policy, []string) {
	set := map[string]string{}
	for _, s := range p.Settings() {
		set[s.Key] = s.Value
	}
	base, _, _ := strings.Cut(p.Name(), ":")
	spec := policy.DefaultSpec()
	spec.Jitter = false
	spec.OnExhaustion = p.OnExhaustion()
	spec.MaxAttempts = p.MaxAttempts()
	var notes []string
	if p.MaxAttempts() == 1 {
		// No retry at all: every delay is moot, and max_attempts 1 with the
		// same outcome is the same behaviour whatever the formula.
		spec.Strategy = backoff.None
		spec.MaxInterval = spec.InitialInterval
		pol, err := policy.New(spec)
		if err != nil {
			return nil, nil
		}
		return pol, []string{base + " makes one attempt and never retries: max_attempts 1 is exact whatever the delay formula"}
	}
	if p.MaxAttempts() == 0 {
		spec.MaxAttempts = math.MaxInt32
		notes = append(notes, fmt.Sprintf("%s has no attempt limit; OJS needs one: max_attempts %d is effectively unlimited", base, math.MaxInt32))
	}
	switch base {
	case "temporal":
		// Delay after attempt n: min(initial * coefficient^(n-1), maximum).
		spec.Strategy = backoff.Exponential
		spec.InitialInterval, _ = time.ParseDuration(set["initial_interval"])
		spec.BackoffCoefficient, _ = strconv.ParseFloat(set["backoff_coefficient"], 64)
		spec.MaxInterval, _ = time.ParseDuration(set["maximum_interval"])
		if spec.MaxInterval == 0 {
			spec.MaxInterval = time.Duration(sat.MulInt(int64(spec.InitialInterval), 100))
		}
	case "bullmq":
		if set["jitter"] != "0" {
			return nil, nil // BullMQ's jitter draws from [(1-j)d, d): not OJS's 0.5 + r
		}
		ms, _ := strconv.ParseInt(set["delay"], 10, 64)
		spec.InitialInterval = time.Duration(ms) * time.Millisecond
		spec.Strategy = backoff.None
		spec.MaxInterval = spec.InitialInterval
		if set["type"] == "exponential" {
			// delay * 2^(n-1), no cap: a max_interval at the last delay
			// used binds nowhere.
			spec.Strategy, spec.BackoffCoefficient = backoff.Exponential, 2
			spec.MaxInterval = p.DelayAt(max(p.MaxAttempts()-1, 1), 0)
		}
	default:
		return nil, nil
	}
	pol, err := policy.New(spec)
	if err != nil {
		return nil, nil // e.g. BullMQ delay 0: OJS intervals are positive
	}
	return pol, notes
}

// toSystem finds the configuration of base's system closest to pol over
// the policy's retries: candidates built from the policy's own numbers in
// the system's setting names, scored by squared log error of the middle
// (r = 0.5) delays plus a large penalty per attempt of differing
// exhaustion.
func toSystem(pol *policy.Policy, name string, base profile.Profile) *translation {
	ps := policySubject(name, pol)
	k := horizonOf(ps.attempts, ps.attempts)
	best, bestScore := base, math.Inf(1)
	for _, spec := range candidates(pol, baseName(base)) {
		c, err := profile.Parse(spec)
		if err != nil {
			continue
		}
		if s := score(ps, profileSubject(c), k); s < bestScore-1e-12 {
			best, bestScore = c, s
		}
	}
	if s := score(ps, profileSubject(base), k); s < bestScore-1e-12 {
		best = base
	}
	js, _ := pol.MarshalJSON()
	t := &translation{From: name, To: baseName(base), Policy: js, Profile: best.Name(), Features: featuresTo(pol, base)}
	if len(best.Settings()) == 0 {
		t.Notes = append(t.Notes, baseName(base)+" has no settings that change its schedule: its fixed scheme is shown as it is")
	}
	cs := profileSubject(best)
	compareSubjects(t, ps, cs, horizonOf(ps.attempts, cs.attempts))
	if !t.Exact {
		worst, at := 0.0, 0
		var firstDiff *trRow
		for i, r := range t.Rows {
			if r.FromAction == "retry" && r.ToAction == "retry" && math.Abs(r.OffPercent) > math.Abs(worst) {
				worst, at = r.OffPercent, r.Attempt
			}
			if firstDiff == nil && (r.FromAction != r.ToAction || r.FromMinNS != r.ToMinNS || r.FromMaxNS != r.ToMaxNS) {
				firstDiff = &t.Rows[i]
			}
		}
		what := fmt.Sprintf("the closest configuration is %+.1f%% off at attempt %d", worst, at)
		switch {
		case at != 0:
		case firstDiff != nil && firstDiff.FromAction != firstDiff.ToAction:
			what = fmt.Sprintf("after attempt %d the policy does %s, the closest configuration %s", firstDiff.Attempt, firstDiff.FromAction, firstDiff.ToAction)
		case firstDiff != nil:
			what = fmt.Sprintf("at attempt %d its delays range over %s, the policy's over %s", firstDiff.Attempt,
				inclusive(time.Duration(firstDiff.ToMinNS), time.Duration(firstDiff.ToMaxNS)), inclusive(time.Duration(firstDiff.FromMinNS), time.Duration(firstDiff.FromMaxNS)))
		default:
			what = "the closest configuration differs past the attempts shown"
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%s cannot express this schedule with its settings: %s; to keep the policy's schedule it needs %s",
			baseName(base), what, customNeed(baseName(base))))
	}
	if n := exhaustionNote(pol, baseName(base), cs.action); n != "" {
		t.Notes = append(t.Notes, n)
	}
	return t
}

// exhaustionNote explains, where the policy's on_exhaustion and the
// system's own outcome for an exhausted job differ, what the system does
// and how to get the policy's outcome from it; "" when they agree.
func exhaustionNote(pol *policy.Policy, system, systemAction string) string {
	want := pol.Spec().OnExhaustion.String()
	if want == systemAction {
		return ""
	}
	how, ok := exhaustionHow[system+" "+want]
	if !ok {
		how = "its own handler for an exhausted job"
	}
	return fmt.Sprintf("on exhaustion the policy says %s; %s does %s: %s", want, system, systemAction, how)
}

// exhaustionHow says, per system and wanted on_exhaustion, how the system
// gets it.
var exhaustionHow = map[string]string{
	"sidekiq discard": "Sidekiq moves a job whose retries ran out to the Dead set, its dead letter queue " +
		"(kept 6 months, at most 10000 jobs; sidekiq_retries_exhausted runs first); " +
		"add dead: false to the job's sidekiq_options to discard it instead, as discard means " +
		"(retry: false discards too, but without any retry)",
	"sidekiq6 discard": "Sidekiq moves a job whose retries ran out to the Dead set, its dead letter queue " +
		"(kept 6 months, at most 10000 jobs; sidekiq_retries_exhausted runs first); " +
		"add dead: false to the job's sidekiq_options to discard it instead, as discard means " +
		"(retry: false discards too, but without any retry)",
}

// customNeed says what a system needs, beyond its settings, to follow an
// arbitrary schedule: its own hook for a computed delay.
func customNeed(system string) string {
	if n, ok := customNeeds[system]; ok {
		return n
	}
	return "its own hook for a computed delay, returning the policy's delay for each attempt"
}

var customNeeds = map[string]string{
	"bullmq":          "a custom backoff strategy (the Worker's settings.backoffStrategy, with backoff {type: 'custom'}) returning the policy's delay for attemptsMade",
	"celery":          "an explicit countdown: self.retry(countdown=...) with the policy's delay for self.request.retries",
	"sidekiq":         "a sidekiq_retry_in block returning the policy's delay for count",
	"sidekiq6":        "a sidekiq_retry_in block returning the policy's delay for count",
	"activejob":       "a wait proc: retry_on ..., wait: ->(executions) { the policy's delay }",
	"river":           "a custom ClientRetryPolicy (Config.RetryPolicy) whose NextRetry returns the policy's delay",
	"asynq":           "a RetryDelayFunc (Config.RetryDelayFunc) returning the policy's delay",
	"faktory":         "the worker to fail the job and re-push it with an 'at' time from the policy (Faktory's server owns the retry schedule)",
	"oban":            "a backoff/1 callback in the worker returning the policy's delay in seconds",
	"temporal":        "no more than its RetryPolicy for jitter-free exponential schedules; jitter or other shapes need the activity to fail non-retryably and the workflow to sleep the policy's delay",
	"aws":             "a custom retry handler (botocore's retryhandler or a before-sleep event hook)",
	"aws_go":          "a custom retry.BackoffDelayer set through retry.StandardOptions.Backoff",
	"gax":             "a custom gax.Retryer returning the policy's delay",
	"grpc_retry":      "application-level retries: the service config's retryPolicy has no other shape",
	"grpc_connect":    "a custom backoff.Strategy in grpc.ConnectParams",
	"graphile_worker": "the task to catch its own error, re-add the job itself with helpers.addJob(..., {runAt: now + the policy's delay}) carrying the attempt in its payload, and return: failJob's exp(least(attempts, 10)) s is SQL with no setting or hook",
	"resque_retry":    "a retry_delay method returning the policy's delay for retry_attempt (its @backoff_strategy holds whole seconds only, and its jitter is one multiplicand range for every entry)",
}

func baseName(p profile.Profile) string {
	n, _, _ := strings.Cut(p.Name(), ":")
	return n
}

// score is the squared log error of the middles over attempts 1..k, a
// quarter of it for each end of the ranges (so that of two equal middles
// the closer jitter wins), plus 100 per attempt at which one retries and
// the other does not.
func score(a, b subject, k int) float64 {
	e := 0.0
	for n := 1; n <= k; n++ {
		ra, rb := actionAt(a, n) == "retry", actionAt(b, n) == "retry"
		switch {
		case ra && rb:
			sq := func(x, y time.Duration) float64 {
				d := math.Log(max(float64(x), 1e6) / max(float64(y), 1e6))
				return d * d
			}
			alo, ahi := a.bounds(n)
			blo, bhi := b.bounds(n)
			e += sq(a.nominal(n), b.nominal(n)) + 0.25*(sq(alo, blo)+sq(ahi, bhi))
		case ra != rb:
			e += 100
		}
		if !ra && !rb {
			break
		}
	}
	return e
}

// candidates are configured profiles of system for the policy pol, in the
// system's own setting names, built from the policy's numbers.
func candidates(pol *policy.Policy, system string) []string {
	s := pol.Spec()
	// Attempt limits saturate at what the systems store (int32 at most;
	// River's and graphile-worker's smallint below), never wrap.
	a := min(max(s.MaxAttempts, 1), math.MaxInt32-1)
	I, M, c := s.InitialInterval, s.MaxInterval, s.BackoffCoefficient
	ms := func(d time.Duration) string { return strconv.FormatInt(max(int64(d/time.Millisecond), 1), 10) }
	secs := func(d time.Duration) string { return strconv.FormatInt(max(int64(math.Round(d.Seconds())), 1), 10) }
	coefs := []float64{c}
	if s.Strategy != backoff.Exponential {
		coefs = []float64{1, 1.5, 2, 3, 4}
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch system {
	case "temporal":
		for _, k := range coefs {
			add("temporal:initial_interval=%v,backoff_coefficient=%s,maximum_interval=%v,maximum_attempts=%d", I, f(k), M, a)
		}
	case "bullmq":
		// BullMQ's exponential type has no cap: past the policy's cap its
		// delays run away, so fixed delays are candidates too, at the
		// policy's first delay, at its cap, and at the geometric mean of
		// its middle delays (the fixed delay of least squared log error).
		fixed := []time.Duration{I, M, geoMeanDelay(pol, min(a-1, translateCheck))}
		for _, d := range fixed {
			add("bullmq:type=fixed,delay=%s,attempts=%d", ms(d), a)
		}
		add("bullmq:type=exponential,delay=%s,attempts=%d", ms(I), a)
		if s.Jitter {
			// BullMQ draws from [(1-j)d, d): d = 1.5 I, j = 2/3 is OJS's [0.5 I, 1.5 I).
			for _, d := range fixed {
				add("bullmq:type=fixed,delay=%s,attempts=%d,jitter=0.6666666666666666", ms(sat.MulInt(d, 3)/2), a)
			}
			add("bullmq:type=exponential,delay=%s,attempts=%d,jitter=0.6666666666666666", ms(I*3/2), a)
		}
	case "celery":
		for _, jit := range []string{"true", "false"} {
			add("celery:retry_backoff=%s,retry_backoff_max=%s,retry_jitter=%s,max_retries=%d", secs(I), secs(M), jit, a-1)
			add("celery:retry_backoff=%s,retry_backoff_max=%s,retry_jitter=%s,max_retries=%d", secs(2*I), secs(2*M), jit, a-1)
		}
		add("celery:retry_backoff=false,default_retry_delay=%s,max_retries=%d", secs(I), a-1)
	case "pg_boss":
		// pg-boss waits whole seconds: flat retryDelay, or with
		// retryBackoff retryDelay * 2^(n-1) * [1, 2), whose middle is
		// 1.5 retryDelay * 2^(n-1), capped by retryDelayMax.
		for _, d := range []time.Duration{I, geoMeanDelay(pol, min(a-1, translateCheck))} {
			add("pg_boss:retryLimit=%d,retryDelay=%s", a-1, secs(d))
		}
		add("pg_boss:retryLimit=%d,retryBackoff=true,retryDelay=%s,retryDelayMax=%s", a-1, secs(I*2/3), secs(M))
	case "river":
		add("river:MaxAttempts=%d", min(a, math.MaxInt16))
	case "graphile_worker":
		// The delay is fixed SQL; only the job's maxAttempts (a smallint) is set.
		add("graphile_worker:maxAttempts=%d", min(a, math.MaxInt16))
	case "sidekiq", "sidekiq6":
		add("%s:retry=%d", system, a-1)
	case "asynq":
		add("asynq:MaxRetry=%d", a-1)
	case "faktory":
		add("faktory:retry=%d", a-1)
	case "oban":
		add("oban:max_attempts=%d", a)
	case "activejob":
		add("activejob:attempts=%d,jitter=0", a)
		add("activejob:attempts=%d", a)
	case "aws":
		add("aws:total_max_attempts=%d", a)
	case "aws_go":
		for _, b := range []time.Duration{I, 2 * I} {
			add("aws_go:MaxAttempts=%d,BaseDelay=%v,MaxBackoff=%v", a, b, 2*M)
			add("aws_go:MaxAttempts=%d,BaseDelay=%v,MaxBackoff=%v", a, b, M)
		}
	case "gax":
		for _, k := range coefs {
			if k > 1 && k < 1.01 {
				continue
			}
			add("gax:Initial=%v,Max=%v,Multiplier=%s", 2*I, 2*M, f(k))
		}
	case "grpc_retry":
		for _, k := range coefs {
			if a <= 5 {
				add("grpc_retry:maxAttempts=%d,initialBackoff=%v,maxBackoff=%v,backoffMultiplier=%s", max(a, 2), I, M, f(k))
				continue
			}
			// More than 5 attempts needs the channel's grpc.WithMaxCallAttempts too.
			add("grpc_retry:maxAttempts=%d,maxCallAttempts=%[1]d,initialBackoff=%v,maxBackoff=%v,backoffMultiplier=%s", a, I, M, f(k))
		}
	case "resque_retry":
		// @backoff_strategy holds any table of whole seconds (the last entry
		// repeats), and the multiplicand range 0.5..1.5 is OJS's jitter
		// factor 0.5 + r: the policy's own delays before jitter.
		n := min(max(a-1, 1), 64)
		table := make([]string, n)
		for i := range table {
			table[i] = strconv.FormatInt(int64(math.Round(pol.Backoff().DelayAt(i+1, 0.5).Seconds())), 10)
		}
		add("resque_retry:backoff_strategy=%s,retry_limit=%d", strings.Join(table, "/"), a-1)
		if s.Jitter {
			add("resque_retry:backoff_strategy=%s,retry_limit=%d,retry_delay_multiplicand_min=0.5,retry_delay_multiplicand_max=1.5", strings.Join(table, "/"), a-1)
		}
	case "grpc_connect":
		for _, k := range coefs {
			for _, j := range []string{"0", "0.2", "0.5"} {
				add("grpc_connect:BaseDelay=%v,Multiplier=%s,MaxDelay=%v,Jitter=%s", I, f(max(k, 1.01)), M, j)
			}
		}
	}
	return out
}

func writeTranslation(stdout, stderr io.Writer, t *translation, asJSON bool) int {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(t); err != nil {
			fmt.Fprintf(stderr, "retrykit translate: %v\n", err)
			return 1
		}
		return 0
	}
	w := stdout
	fmt.Fprintf(w, "from: %s\nto: %s\n", t.From, t.To)
	if t.Profile != "" {
		fmt.Fprintf(w, "configuration: %s\n", t.Profile)
	} else {
		fmt.Fprintf(w, "policy: %s\n", t.Policy)
	}
	verdict := "closest, not exact"
	if t.Exact {
		verdict = "exact"
	}
	fmt.Fprintf(w, "%s: checked over attempts 1..%d (ranges, middle (r = 0.5) delays and exhaustion)\n", verdict, t.Checked)
	for _, n := range t.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	writeFeatures(w, t)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "attempt\tfrom range\tfrom middle (r = 0.5)\tto range\tto middle (r = 0.5)\toff %\t")
	cell := func(action string, lo, mid, hi int64) (string, string) {
		if action != "retry" {
			return action, "-"
		}
		return inclusive(time.Duration(lo), time.Duration(hi)), human.Round(time.Duration(mid))
	}
	for _, r := range t.Rows {
		fr, fm := cell(r.FromAction, r.FromMinNS, r.FromMidNS, r.FromMaxNS)
		tr, tm := cell(r.ToAction, r.ToMinNS, r.ToMidNS, r.ToMaxNS)
		off := "-"
		if r.FromAction == "retry" && r.ToAction == "retry" {
			off = fmt.Sprintf("%+.1f%%", r.OffPercent)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t\n", r.Attempt, fr, fm, tr, tm, off)
	}
	tw.Flush()
	return 0
}

// geoMeanDelay is the geometric mean of the policy's middle (r = 0.5)
// delays after attempts 1..k (the first delay when k < 1).
func geoMeanDelay(pol *policy.Policy, k int) time.Duration {
	b := pol.Backoff()
	if k < 1 {
		return b.DelayAt(1, 0.5)
	}
	sum := 0.0
	for n := 1; n <= k; n++ {
		sum += math.Log(max(float64(b.DelayAt(n, 0.5)), 1))
	}
	g := math.Exp(sum / float64(k))
	if g >= math.MaxInt64 { // float64(MaxInt64) rounds up: no conversion at the top
		return math.MaxInt64
	}
	return time.Duration(g)
}

// ojsFields names, per system, the settings whose value is an OJS policy
// field: translate keeps a configured one as it is, rather than fitting it.
var ojsFields = map[string]map[string]string{
	"celery":        {"retry_backoff_max": "max_interval"},
	"aws_go":        {"MaxBackoff": "max_interval"},
	"gax":           {"Initial": "initial_interval", "Max": "max_interval"},
	"grpc_connect":  {"BaseDelay": "initial_interval", "MaxDelay": "max_interval"},
	"grpc_retry":    {"initialBackoff": "initial_interval", "maxBackoff": "max_interval"},
	"full_jitter":   {"cap": "max_interval"},
	"equal_jitter":  {"cap": "max_interval"},
	"cenkalti":      {"InitialInterval": "initial_interval", "MaxInterval": "max_interval"},
	"failsafe":      {"MaxDelay": "max_interval"},
	"retry_go":      {"MaxDelay": "max_interval"},
	"tenacity":      {"max": "max_interval"},
	"retryablehttp": {"RetryWaitMin": "initial_interval", "RetryWaitMax": "max_interval"},
}

// keepConfigured returns pol with every configured setting of p that is an
// OJS field put back at its configured value, and notes saying so (or
// why one could not be kept).
func keepConfigured(p profile.Profile, pol *policy.Policy) (*policy.Policy, []string) {
	fields := ojsFields[baseName(p)]
	if len(fields) == 0 {
		return pol, nil
	}
	configured := map[string]bool{}
	_, rest, _ := strings.Cut(p.Name(), ":")
	for _, kv := range strings.Split(rest, ",") {
		k, _, _ := strings.Cut(kv, "=")
		configured[k] = true
	}
	spec := pol.Spec()
	var notes []string
	for _, s := range p.Settings() {
		field, ok := fields[s.Key]
		if !ok || !configured[s.Key] {
			continue
		}
		d, err := settingDuration(baseName(p), s.Key, s.Value)
		if err != nil || d <= 0 {
			continue
		}
		switch field {
		case "max_interval":
			spec.MaxInterval = d
		case "initial_interval":
			spec.InitialInterval = d
		}
		notes = append(notes, fmt.Sprintf("%s=%s is kept as %s %s", s.Key, s.Value, field, human.Exact(d)))
	}
	if len(notes) == 0 {
		return pol, nil
	}
	spec.MaxInterval = max(spec.MaxInterval, spec.InitialInterval)
	kept, err := policy.New(spec)
	if err != nil {
		return pol, []string{fmt.Sprintf("the configured values cannot all be kept (%v): the fitted policy is shown", err)}
	}
	return kept, notes
}

// settingDuration reads a setting's value as a duration: Go duration text,
// or whole seconds for the systems that count them (Celery).
func settingDuration(system, key, v string) (time.Duration, error) {
	if system == "celery" {
		n, err := strconv.ParseInt(v, 10, 64)
		return time.Duration(sat.MulInt(n, int64(time.Second))), err
	}
	if system == "tenacity" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0) || f > 9e9 {
			return 0, fmt.Errorf("not seconds")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(v)
}
