package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// Errors of Run. A server that answers badly during the checks does not
// end the run: the checks concerned are reported as errors.
var (
	// ErrInvalidOption is wrapped for a bad server URL or option value.
	ErrInvalidOption = errors.New("live: invalid option")
	// ErrServer is wrapped by every error about the server's answers: a
	// transport error, a timeout, an unexpected status, an answer over
	// MaxAnswerSize or not the binding's JSON. Run returns it when the
	// server cannot be reached at all (GET /ojs/v1/health) or a reset fails.
	ErrServer = errors.New("live: server error")
	// ErrBudget is wrapped by the error of a check the run's time budget
	// (WithBudget) cut short.
	ErrBudget = errors.New("live: time budget exhausted")
)

// Where the HTTP binding contradicts the retry spec (docs/decisions.md
// RK-100 … RK-103 for the server, RK-111 … RK-115 for the checker), the
// options below choose the dialect the checker speaks; the checks of the
// readings themselves are at level RK, so they never touch the MUST score.

// Defaults and bounds of the options.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultLateBound = 2 * time.Second
	DefaultPoll      = 2 * time.Millisecond
	MaxLateBound     = 10 * time.Minute
	// DefaultBudget bounds a whole run (WithBudget).
	DefaultBudget = 2 * time.Minute
	// DefaultLatencyRetries is how many extra retries a run times for the
	// promotion latency (WithLatencyRetries), so that its p99 is not
	// simply the maximum.
	DefaultLatencyRetries = 100
	// MaxLatencyRetries bounds WithLatencyRetries.
	MaxLatencyRetries = 10_000
)

// Option configures Run; a nil Option is ignored, and an option given an
// invalid value makes Run return ErrInvalidOption naming it.
type Option func(*config)

type config struct {
	timeout       time.Duration
	lateBound     time.Duration
	poll          time.Duration
	resetURL      string
	typeField     string // "type" or "code"
	intervalMs    bool
	strategyField string // "", "backoff_strategy" or "backoff_type"
	nrDiscards    bool
	handlerCodes  bool
	ids           []string
	skips         conformance.SkipList
	strict        bool
	specOnly      bool
	hc            *http.Client
	budget        time.Duration
	latRetries    int
	noCleanup     bool
	noProbe       bool
	fuzzAll       bool // WithFuzzAll
	errs          []string
}

// WithBudget bounds the whole run (default DefaultBudget; 0 for none):
// when it runs out, the checks not yet judged are errors naming the
// budget (ErrBudget) and the report is still returned.
func WithBudget(d time.Duration) Option { return func(c *config) { c.budget = d } }

// WithLatencyRetries sets how many extra retries (of 20ms) the run times
// for the promotion latency figure (default DefaultLatencyRetries, at most
// MaxLatencyRetries; 0 for none).
func WithLatencyRetries(n int) Option { return func(c *config) { c.latRetries = n } }

// WithCleanup makes the run cancel the jobs it left pending and delete
// its dead letters at the end, and report what it left behind (default
// true).
func WithCleanup(on bool) Option { return func(c *config) { c.noCleanup = !on } }

// WithDialectProbe makes the run probe the server's dialect before the
// checks (default true): which interval form and error type field it
// reads, and whether the run's flags fit.
func WithDialectProbe(on bool) Option { return func(c *config) { c.noProbe = !on } }

// WithTimeout bounds every request to the server (default
// DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithLateBound sets how long after its next_attempt_at a retry may become
// fetchable before the check fails (default DefaultLateBound, at most
// MaxLateBound). A later promotion within the bound is only a figure of
// the report.
func WithLateBound(d time.Duration) Option { return func(c *config) { c.lateBound = d } }

// WithPollInterval sets the pause between fetches while a job is awaited
// (default DefaultPoll, 100µs..1s); it adds to the measured latency.
func WithPollInterval(d time.Duration) Option { return func(c *config) { c.poll = d } }

// WithResetURL makes Run POST to u before the checks, for servers that
// offer a reset; queues are unique to the run either way.
func WithResetURL(u string) Option { return func(c *config) { c.resetURL = u } }

// WithErrorTypeField names the field of a FAIL request's error that
// carries the error type: "type" (the default; openapi's JobError and the
// retry spec) or "code" (for servers that follow the nack schema, which
// has no type and reads error.code). With "code" the handler-code checks
// are not run, since the code is taken by the type (RK-111).
func WithErrorTypeField(f string) Option {
	return func(c *config) {
		if f != "type" && f != "code" {
			c.errs = append(c.errs, fmt.Sprintf("error type field: want type or code, got %q", trunc(f, 40)))
			return
		}
		c.typeField = f
	}
}

// WithIntervalForm sets how the checker's policies give their intervals:
// "iso" (the default: initial_interval, max_interval as ISO 8601
// durations, the retry spec) or "ms" (initial_interval_ms, max_interval_ms
// integers, the binding's examples); RK-113.
func WithIntervalForm(f string) Option {
	return func(c *config) {
		if f != "iso" && f != "ms" {
			c.errs = append(c.errs, fmt.Sprintf("interval form: want iso or ms, got %q", trunc(f, 40)))
			return
		}
		c.intervalMs = f == "ms"
	}
}

// WithStrategyField makes every policy the checker pushes name its
// strategy (exponential) in the given field, "backoff_strategy"
// (retrykit's extension) or "backoff_type" (openapi); by default the
// policies name none and rely on the retry spec's default (RK-114).
func WithStrategyField(f string) Option {
	return func(c *config) {
		if f != "" && f != "backoff_strategy" && f != "backoff_type" {
			c.errs = append(c.errs, fmt.Sprintf("strategy field: want backoff_strategy or backoff_type, got %q", trunc(f, 40)))
			return
		}
		c.strategyField = f
	}
}

// WithNonRetryableDiscards accepts a plain discard (no dead letter) for a
// non-retryable failure under on_exhaustion dead_letter, as the binding's
// L1-RET-003 has it; by default the retry spec's dead letter is required
// (RK-115).
func WithNonRetryableDiscards(on bool) Option { return func(c *config) { c.nrDiscards = on } }

// WithHandlerCodes sends the retry spec's handler codes (RETRY, DISCARD,
// FAIL, DEAD_LETTER) in error.code (default true); false reports their
// checks as not run. A server that rejects them gets the same (RK-112).
func WithHandlerCodes(on bool) Option { return func(c *config) { c.handlerCodes = on } }

// WithIDs runs only the named checks (and the scenarios that judge them).
func WithIDs(ids ...string) Option { return func(c *config) { c.ids = append(c.ids, ids...) } }

// WithSkips reports the listed checks as skipped (a known-failure list).
func WithSkips(s conformance.SkipList) Option { return func(c *config) { c.skips = s } }

// WithStrict runs skip-listed checks anyway and fails those that pass.
func WithStrict(on bool) Option { return func(c *config) { c.strict = on } }

// WithSpecOnly runs only the checks of spec requirements (MUST), leaving
// out the readings of contradictions (RK-nn).
func WithSpecOnly() Option { return func(c *config) { c.specOnly = true } }

// WithHTTPClient sends the requests through hc (its Timeout is replaced by
// WithTimeout's bound per request); by default a client of its own that
// never follows redirects.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// validate checks the options.
func (c *config) validate() error {
	switch {
	case c.timeout <= 0:
		c.errs = append(c.errs, fmt.Sprintf("timeout: must be positive, got %v", c.timeout))
	case c.lateBound <= 0 || c.lateBound > MaxLateBound:
		c.errs = append(c.errs, fmt.Sprintf("late bound: must be in (0, %v], got %v", MaxLateBound, c.lateBound))
	case c.poll < 100*time.Microsecond || c.poll > time.Second:
		c.errs = append(c.errs, fmt.Sprintf("poll interval: must be in [100µs, 1s], got %v", c.poll))
	case c.budget < 0:
		c.errs = append(c.errs, fmt.Sprintf("time budget: must not be negative, got %v", c.budget))
	case c.latRetries < 0 || c.latRetries > MaxLatencyRetries:
		c.errs = append(c.errs, fmt.Sprintf("latency retries: must be in [0, %d], got %d", MaxLatencyRetries, c.latRetries))
	}
	if c.resetURL != "" {
		if _, err := parseServerURL(c.resetURL); err != nil {
			c.errs = append(c.errs, "reset URL: "+err.Error())
		}
	}
	for _, id := range c.ids {
		if !slices.ContainsFunc(checks, func(k Check) bool { return k.ID == id }) {
			c.errs = append(c.errs, fmt.Sprintf("check %q: no such check", id))
		}
	}
	if len(c.errs) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidOption, strings.Join(c.errs, "; "))
	}
	return nil
}

// parseServerURL checks an http(s) URL with a host.
func parseServerURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", trunc(s, 100), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q: want http://HOST[:PORT] or https://…", trunc(s, 100))
	}
	return u, nil
}

// level returns the report level of a check (conformance.Result.Level).
func (k Check) level() string {
	if strings.HasPrefix(k.Requirement, "RK-") {
		return "RK"
	}
	for _, f := range k.Flags {
		if strings.HasPrefix(f, "should:") {
			return "SHOULD"
		}
	}
	return "MUST"
}

// Run checks the OJS server at serverURL (the URL before /ojs/v1) and
// returns the report: one result per check, in the library suite's report
// format, with the promotion latency among the figures. Every job it
// pushes goes to a queue whose name is unique to the run.
//
// Run returns an error only for bad options (ErrInvalidOption) and for a
// server it cannot talk to at all (ErrServer); answers that break the
// binding during the checks are errors of the checks concerned. Every
// request is bounded in time (WithTimeout) and every answer in size
// (MaxAnswerSize), so a hostile server can neither hang nor exhaust the
// checker.
func Run(ctx context.Context, serverURL string, opts ...Option) (*conformance.Report, error) {
	cfg, c, err := setup(serverURL, opts)
	if err != nil {
		return nil, err
	}
	root := c.root
	start := time.Now()
	parent := ctx
	if cfg.budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.budget)
		defer cancel()
	}

	if cfg.resetURL != "" {
		ex, err := c.do(ctx, "RESET", http.MethodPost, "", map[string]any{}, cfg.resetURL)
		if err != nil {
			return nil, err
		}
		if ex.status < 200 || ex.status > 299 {
			return nil, unexpected("RESET", ex)
		}
	}
	if err := c.checkServer(ctx); err != nil {
		return nil, err
	}
	name, version := c.manifest(ctx)
	if name == "" {
		name = root
	}

	var b [4]byte
	_, _ = rand.Read(b[:])
	e := &env{c: c, cfg: cfg, prefix: "rk-live-" + hex.EncodeToString(b[:]), verdicts: map[string]*verdict{}, runCtx: ctx}
	var dialect []string
	if !cfg.noProbe {
		dialect = e.probe(ctx)
	}

	selected := map[string]bool{}
	for _, k := range checks {
		switch {
		case len(cfg.ids) > 0 && !slices.Contains(cfg.ids, k.ID):
		case cfg.specOnly && k.level() != "MUST":
		default:
			selected[k.ID] = true
		}
	}
	skipped := func(id string) bool { _, ok := cfg.skips[id]; return ok && !cfg.strict }
	stopTimers := e.sampleTimers()
	play := func(want func(id string) bool) {
		var wg sync.WaitGroup
		for _, s := range scenarios {
			if !slices.ContainsFunc(s.ids, func(id string) bool { return selected[id] && !skipped(id) && want(id) }) {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.run(ctx, e)
			}()
		}
		wg.Wait()
	}
	play(func(string) bool { return true })
	// a delay check passed through windows too wide for it is observed
	// again, once, by its scenarios (RK-395)
	// (not when the budget has run out: the replay would not come, and
	// the passes stay, to be made inconclusive by judgeResolution)
	if ctx.Err() == nil {
		if again := e.unresolved(); len(again) > 0 {
			play(func(id string) bool { return again[id] })
		}
	}
	stopTimers()
	e.judgeTiming()
	e.judgeWire(ctx, func(id string) bool { return selected[id] && !skipped(id) })
	e.judgeContentType()
	if selected["http-dead-letter-filter"] && !skipped("http-dead-letter-filter") {
		e.judgeDeadLetterFilter(ctx)
	}
	resolutionFigure, resolutionWarning := e.judgeResolution()
	var left string
	if !cfg.noCleanup {
		// The cleanup has its own short bound, so that a spent budget
		// still leaves the server tidy where it can.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(parent), cleanupBudget)
		left = e.cleanup(cctx)
		cancel()
	}

	rep := &conformance.Report{
		Implementation: protocol.Hello{Implementation: name, Version: version},
		SuiteVersion:   SuiteVersion,
		SpecVersion:    "1.0",
		Repeat:         1,
	}
	for _, k := range checks {
		if !selected[k.ID] {
			rep.NotSelected++
			continue
		}
		res := conformance.Result{
			ID: k.ID, Requirement: k.Requirement, Section: k.Section, Kind: "live",
			Description: k.Description, Flags: append([]string(nil), k.Flags...), Level: k.level(),
		}
		v := e.verdicts[k.ID]
		if v == nil {
			v = &verdict{}
		}
		reason, listed := cfg.skips[k.ID]
		switch {
		case listed && !cfg.strict:
			res.Status, res.Reason = conformance.StatusSkip, "listed in the skip file: "+reason
		case v.status == conformance.StatusUnknown && v.notRun != "":
			rep.NotRun = append(rep.NotRun, conformance.Uncovered{ID: k.ID, Requirement: k.Requirement, Kind: "live", Reason: v.notRun, Level: k.level()})
			continue
		case v.status == conformance.StatusUnknown:
			res.Status, res.Reason = conformance.StatusError, "no scenario judged this check"
		case listed && v.status == conformance.StatusPass:
			res.Status, res.Reason = conformance.StatusFail, "listed in skip file but passes now"
		default:
			res.Status, res.Reason = v.status, v.reason
		}
		for _, n := range v.notes {
			rep.Figures = append(rep.Figures, fmt.Sprintf("%s: %s", k.ID, n))
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Figures = append([]string{e.latency(), resolutionFigure}, rep.Figures...)
	rep.Figures = append(rep.Figures, dialect...)
	if left != "" {
		rep.Figures = append(rep.Figures, left)
	}
	c.mu.Lock()
	rep.Figures = append(rep.Figures, fmt.Sprintf("requests sent: %d", c.requests))
	if n := c.failing; n > 0 {
		rep.Figures = append(rep.Figures, fmt.Sprintf("answers 5xx or none at all: %d of %d requests", n, c.requests))
	}
	if c.inconsistentTS {
		rep.Warnings = append(rep.Warnings, "the server's timestamps contradict each other (a clock that jumps?); the clock window was widened")
	}
	c.mu.Unlock()
	if resolutionWarning != "" {
		rep.Warnings = append(rep.Warnings, resolutionWarning)
	}
	if e.noClock {
		rep.Warnings = append(rep.Warnings, "the server's answers carry no timestamps; times were judged on the local clock")
	}
	rep.SpecOnly = cfg.specOnly
	rep.Elapsed = time.Since(start)
	rep.Tally(notes)
	e.diagnose(rep)
	if w := e.dialectWarning(); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	return rep, nil
}

// cleanupBudget bounds the cleanup after the checks.
const cleanupBudget = 15 * time.Second

// judgeTiming turns the deliveries of the whole run into the verdicts of
// http-not-early and http-promoted.
func (e *env) judgeTiming() {
	e.mu.Lock()
	early, late, promoted, worst, lateSlow := e.early, e.late, e.promoted, e.worstMsg, e.lateSlow
	polled, resolved, gap := e.res.polled, e.res.pollResolved, e.res.pollGap
	e.mu.Unlock()
	switch {
	case len(early) > 0:
		e.fail("http-not-early", "%d of %d deliveries before their time; the earliest: %s", len(early), len(early)+promoted, worst)
	case promoted > 0 && polled > 0 && resolved == 0:
		// a retry handed out early by half its delay is seen only by a
		// FETCH within that half before its time (RK-399)
		e.notRun("http-not-early", fmt.Sprintf("inconclusive: host too busy: none of %d retries was polled within half its delay before its next_attempt_at (the FETCHes left gaps of up to %v), so a retry handed out early by half its delay, which this check must resolve, would have been fetched as if on time",
			polled, gap.Round(10*time.Microsecond)))
	case promoted > 0:
		e.pass("http-not-early", "")
	default:
		e.notRun("http-not-early", "no retry was fetched")
	}
	switch {
	case len(late) > 0:
		e.fail("http-promoted", "%d retries not fetchable within the late bound; first: %s", len(late), late[0])
	case len(lateSlow) > 0:
		e.notRun("http-promoted", fmt.Sprintf("inconclusive: %d retries not seen within the late bound while this host's FETCHes were slow or timed out; first: %s", len(lateSlow), lateSlow[0]))
	case promoted > 0:
		e.pass("http-promoted", "")
	default:
		e.notRun("http-promoted", "no retry was fetched")
	}
}

// newClient returns the client of a run against the server at u.
func newClient(cfg *config, u *url.URL) *client {
	root := strings.TrimRight(u.String(), "/")
	hc := &http.Client{}
	if cfg.hc != nil {
		*hc = *cfg.hc
	} else {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		tr.ResponseHeaderTimeout = cfg.timeout
		tr.DialContext = (&net.Dialer{Timeout: cfg.timeout}).DialContext
		hc.Transport = tr
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	hc.Timeout = cfg.timeout
	return &client{root: root, base: root + "/ojs/v1", hc: hc, timeout: cfg.timeout}
}

// setup applies opts over the defaults, validates them and the server
// URL, and returns the run's configuration and client.
func setup(serverURL string, opts []Option) (*config, *client, error) {
	cfg := &config{timeout: DefaultTimeout, lateBound: DefaultLateBound, poll: DefaultPoll, handlerCodes: true, typeField: "type",
		budget: DefaultBudget, latRetries: DefaultLatencyRetries}
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
	u, err := parseServerURL(serverURL)
	if err != nil {
		cfg.errs = append(cfg.errs, "server URL: "+err.Error())
	}
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	return cfg, newClient(cfg, u), nil
}
