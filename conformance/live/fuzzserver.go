// Differential fuzzing of a live server: generated policies and failure
// sequences, each answer compared with what the reference executor,
// run in process, does with the same job.

package live

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/retrykit/retrykit/backoff"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retrykit/executor"
)

// FuzzCase is one job of [FuzzServer]: a retry policy (the JSON object
// sent as options.retry) and the failures a worker reports, one per
// delivery. Written as JSON it replays with [ReplayCase].
type FuzzCase struct {
	Policy   map[string]any `json:"policy"`
	Failures []FuzzFailure  `json:"failures"`
	// Step is the 1-based delivery at which the server and the reference
	// executor part (0: at the PUSH); Got says how, the server's answer
	// beside the reference's (set on a disagreement).
	Step int    `json:"step,omitempty"`
	Got  string `json:"got,omitempty"`
	// Kind names what differs (set on a disagreement): "push",
	// "fetch-attempt", a state by the deviation seen
	// ("state:retried-not-discarded(DISCARD)", "state:ended-not-retried(non_retryable_errors)";
	// see stateKind), "attempt", "max_attempts", a delay by the
	// deviation seen ("delay:above-cap", a delay above max_interval
	// whatever the strategy; "delay:initial", the first retry's;
	// "delay:STRATEGY", a later retry's growth under the policy's
	// strategy; "delay:unreadable"; see delayKind), a dead letter by the
	// deviation seen ("dead-letter:dead-lettered-not-discarded(FAIL)";
	// see deadLetterKind) or "history". It groups what was observed; it
	// names no cause. A case file of an earlier build may say "state" or
	// "dead-letter": it replays judged in any kind of that group (RK-400).
	Kind string `json:"kind,omitempty"`
}

// FuzzFailure is one FAIL a case reports: error.type and error.code.
type FuzzFailure struct {
	Type string `json:"type"`
	Code string `json:"code,omitempty"`
}

// FuzzResult is the outcome of [FuzzServer].
type FuzzResult struct {
	Jobs  int       // jobs pushed, shrinking included
	Found *FuzzCase // the first disagreement, shrunk; nil: none
	// More holds, with WithFuzzAll, the disagreements found after Found,
	// one of each further Kind, each shrunk.
	More []*FuzzCase
	// Shrinks is how many smaller cases were replayed to shrink Found.
	Shrinks int
	// Stopped says why the run ended before its jobs ("" when it did not):
	// its time, or an error of the server.
	Stopped string
	// Inconclusive counts the cases that could not be observed in time
	// even when played again (a retry not handed out within the late
	// bound, a request timed out, a reservation lapsed): neither agreement
	// nor disagreement, never a reason to stop. Reasons says why, for the
	// first few (at most 5); Reobserved counts the plays repeated so, in
	// the run and in shrinking (each a job).
	Inconclusive int
	Reasons      []string
	Reobserved   int
	// Left says what the cleanup did and what it could not remove.
	Left string
	// Elapsed is the run's time, the cleanup excluded.
	Elapsed time.Duration
}

// FuzzServer plays up to jobs generated cases (seed makes them
// reproducible; see genCase for what they cover) against the server at
// serverURL within budget, each beside the reference executor (package
// executor, which retrykit serve puts on HTTP) run in process on a manual
// clock: the case's policy is read by the reader serve uses
// (policy.ParseWith with the binding dialect), the job is enqueued,
// fetched and failed with the same failures, and every answer of the
// server is compared with what the executor did: the PUSH accepted or
// refused, the attempt of each FETCH, each FAIL answer's state, attempt,
// max_attempts and next_attempt_at (the delay on the server's clock
// against the executor's delays at the lowest and the highest jitter
// draw, so a jittered delay is judged by its exact range), and at the end
// dead letter or not and the dead letter's error history. The first
// disagreement is shrunk (failures dropped, fewer attempts, policy fields
// dropped, made plain or left to their defaults, the binding's spellings
// respelled, plainer failures, each replayed unless the reference shows
// it cannot disagree: canShow) to a minimal case. At most jobs jobs are ever
// pushed; at the end every job of the run is cancelled or its dead letter
// deleted, and Left says what could not be. With [WithFuzzAll] the run
// goes on after the first disagreement with the jobs left: a disagreement
// of a Kind not found yet is shrunk and added to More, and the kinds found
// are no longer judged (a server that shows attempts from 0 everywhere
// still has its delays compared). A state:ended-not-retried kind's reason
// is confirmed by one more play before shrinking (settleWhy). A case
// that could not be observed in
// time (see playCase) is played again, at most twice, and then counted in
// FuzzResult.Inconclusive with its reason: a loaded host or a slow
// promoter is not a failing server, and the run goes on.
func FuzzServer(ctx context.Context, serverURL string, jobs int, seed uint64, budget time.Duration, opts ...Option) (*FuzzResult, error) {
	e, err := fuzzEnv(ctx, serverURL, opts)
	if err != nil {
		return nil, err
	}
	if jobs < 1 || budget <= 0 {
		return nil, fmt.Errorf("%w: fuzz: jobs must be at least 1 and the budget positive, got %d and %v", ErrInvalidOption, jobs, budget)
	}
	res := &FuzzResult{}
	start := time.Now()
	run, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	rng := mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	found := map[string]bool{} // the kinds found, no longer judged
	for res.Jobs < jobs {
		c := genCase(rng)
		bad, plays, err := e.observe(run, &c, jobs-res.Jobs, func(k string) bool { return !found[k] })
		res.Jobs += plays
		res.Reobserved += plays - 1
		if errors.Is(err, ErrInconclusive) {
			res.inconclusive(err)
			continue
		}
		if err != nil {
			res.Stopped = stopReason(run, err)
			break
		}
		if !bad {
			continue
		}
		if n := e.settleWhy(run, &c, jobs-res.Jobs, res); n > 0 {
			res.Jobs += n
			if found[c.Kind] {
				continue
			}
		}
		n, total := e.shrink(run, &c, jobs-res.Jobs, res.Jobs, res)
		found[c.Kind] = true
		res.Shrinks += n
		res.Jobs = total
		if res.Found == nil {
			res.Found = &c
		} else {
			res.More = append(res.More, &c)
		}
		if !e.cfg.fuzzAll {
			break
		}
	}
	res.Elapsed = time.Since(start)
	clean, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancelClean()
	res.Left = e.cleanup(clean)
	return res, nil
}

// inconclusive counts a case that could not be observed, keeping the
// first maxReasons reasons.
func (res *FuzzResult) inconclusive(err error) {
	res.Inconclusive++
	if len(res.Reasons) < maxReasons {
		res.Reasons = append(res.Reasons, strings.TrimPrefix(err.Error(), "live: inconclusive: "))
	}
}

// MaxCaseFailures bounds the failures of a case [ReplayCase] plays (the
// generator draws at most 5), so a case file cannot hold a replay for
// hours.
const MaxCaseFailures = 64

// ErrInvalidCase is wrapped by ReplayCase's error for a case it cannot
// play: no policy, or no failures or more than MaxCaseFailures.
var ErrInvalidCase = errors.New("live: invalid fuzz case")

// WithFuzzAll makes [FuzzServer] go on after the first disagreement with
// the jobs left, reporting one shrunk case of each further Kind in
// FuzzResult.More (default false: the run ends at the first). Other runs
// ignore it.
func WithFuzzAll(on bool) Option { return func(c *config) { c.fuzzAll = on } }

// ReplayCase plays one case (as FuzzServer writes it) against the server
// and reports whether the server still disagrees (in the case's Kind, when
// it has one), with the case's Step, Got and Kind set anew. A case whose
// delays the reference gives as a range (jitter) may disagree on some
// draws only: it is played up to 16 times, until it disagrees. left is
// the cleanup's statement. When no play could be observed in time, err
// wraps ErrInconclusive. A case without a policy, or with no failures
// or more than MaxCaseFailures, is refused with an error wrapping
// ErrInvalidCase before any request.
func ReplayCase(ctx context.Context, serverURL string, c *FuzzCase, opts ...Option) (bad bool, left string, err error) {
	if c == nil || c.Policy == nil || len(c.Failures) == 0 || len(c.Failures) > MaxCaseFailures {
		n := 0
		if c != nil {
			n = len(c.Failures)
		}
		return false, "", fmt.Errorf("%w: fuzz case: a policy object and 1 to %d failures are required, got %d failures", ErrInvalidCase, MaxCaseFailures, n)
	}
	if !knownKind(c.Kind) {
		return false, "", fmt.Errorf("%w: fuzz case: kind %q is none this checker judges (push, fetch-attempt, state:OUTCOME(RULE), attempt, max_attempts, delay:above-cap, delay:initial, delay:STRATEGY, delay:unreadable, dead-letter:OUTCOME(RULE), history, or an earlier build's state or dead-letter; empty judges every kind)", ErrInvalidCase, trunc(c.Kind, 64))
	}
	e, err := fuzzEnv(ctx, serverURL, opts)
	if err != nil {
		return false, "", err
	}
	bad, _, err = e.playTries(ctx, c, replayJitterTries, replayJitterTries*(1+maxReobserve), only(c.Kind), nil)
	clean, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	left = e.cleanup(clean)
	return bad, left, err
}

// knownKind reports whether k is a FuzzCase.Kind this checker judges
// ("" judges every kind; "state" and "dead-letter", an earlier build's,
// judge their group): a misspelled kind, or one an older build wrote that
// no longer exists, would judge nothing and replay as agreement.
func knownKind(k string) bool {
	switch k {
	case "", "push", "fetch-attempt", "state", "attempt", "max_attempts", "dead-letter", "history",
		"delay:above-cap", "delay:initial", "delay:unreadable":
		return true
	}
	if outcomeKind(k, "state", stateOutcomes) || outcomeKind(k, "dead-letter", deadLetterOutcomes) {
		return true
	}
	st, ok := strings.CutPrefix(k, "delay:")
	if !ok {
		return false
	}
	for _, s := range []backoff.Strategy{backoff.None, backoff.Linear, backoff.Exponential, backoff.Polynomial} {
		if s.String() == st {
			return true
		}
	}
	return false
}

// only judges kind alone; "" judges every kind, and an earlier build's
// "state" or "dead-letter" every kind of its group (RK-400).
func only(kind string) func(string) bool {
	group := slices.Contains(legacyKinds, kind)
	return func(k string) bool {
		return kind == "" || k == kind || group && strings.HasPrefix(k, kind+":")
	}
}

// How many times a jittered case is played before it is said to agree:
// on replay, and for each variant while shrinking (at most the jobs left).
const (
	replayJitterTries = 16
	shrinkJitterTries = 6
)

// playTries plays c once, or, when the reference gives one of its delays
// as a range (jitter), up to tries times until it disagrees, pushing at
// most jobs jobs; it returns the plays (the jobs pushed). A play that
// could not be observed in time is played again (observe); when no play
// could be observed, err wraps ErrInconclusive. res, when not nil, counts
// the plays repeated. judged is as for playCase.
func (e *env) playTries(ctx context.Context, c *FuzzCase, tries, jobs int, judged func(string) bool, res *FuzzResult) (bad bool, plays int, err error) {
	if !reference(c).jittered() {
		tries = 1
	}
	var unseen error // the last play's, while none was observed
	observed := false
	for i := 0; i < max(tries, 1) && plays < max(jobs, 1); i++ {
		b, n, err := e.observe(ctx, c, max(jobs, 1)-plays, judged)
		plays += n
		if res != nil {
			res.Reobserved += n - 1
		}
		switch {
		case errors.Is(err, ErrInconclusive):
			unseen = err
			continue
		case err != nil:
			return false, plays, err
		case b:
			return true, plays, nil
		}
		observed = true
	}
	if !observed && unseen != nil {
		return false, plays, unseen
	}
	return false, plays, nil
}

// fuzzEnv is the environment of a fuzz run: the client, no checks.
func fuzzEnv(ctx context.Context, serverURL string, opts []Option) (*env, error) {
	cfg, c, err := setup(serverURL, opts)
	if err != nil {
		return nil, err
	}
	if err := c.checkServer(ctx); err != nil {
		return nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &env{c: c, cfg: cfg, prefix: "rk-fuzz-" + hex.EncodeToString(b[:]), verdicts: map[string]*verdict{}, runCtx: ctx}, nil
}

// fmtDur writes d as an ISO 8601 duration in seconds ("PT0.02S").
func fmtDur(d time.Duration) string { return fmt.Sprintf("PT%gS", d.Seconds()) }

// playCase pushes c's job and plays its failures against the server and
// the reference executor (reference) side by side: the PUSH (accepted or
// refused), then for each delivery the attempt FETCH shows, the FAIL
// answer (state, attempt, max_attempts, the delay of next_attempt_at
// against the reference's delay range) and, once the job has ended, whether
// it is in the dead-letter list and, if so, its error history (attempt,
// type and message of each entry, by INFO). It returns true, with c.Step,
// c.Got and c.Kind set, at the first answer the reference gives otherwise
// in a kind judged; a FETCH attempt of a kind not judged is passed over,
// and so is an attempt or max_attempts of the FAIL answer; a state or
// delay of a kind not judged ends the case. Only answers received are
// judged: when one cannot be observed in time (a retry not fetchable
// within the late bound, a request timed out, a FAIL refused with 409 as
// after a lapsed reservation) the play stops with an error wrapping
// ErrInconclusive.
func (e *env) playCase(ctx context.Context, c *FuzzCase, judged func(kind string) bool) (bool, error) {
	c.Step, c.Got, c.Kind = 0, "", ""
	ref := reference(c)
	q := e.queue("fuzz")
	id, err := e.c.push(ctx, q, "retrykit.fuzz", c.Policy)
	var se *serverError
	switch {
	case err != nil && errors.As(err, &se) && (se.Status == http.StatusBadRequest || se.Status == http.StatusUnprocessableEntity):
		if ref.refused != nil || !judged("push") {
			return false, nil
		}
		c.Kind, c.Got = "push", fmt.Sprintf("PUSH: the server refused the policy (HTTP %d: %s); the reference executor accepts it", se.Status, se.Reason)
		return true, nil
	case err != nil:
		return false, unobserved(ctx, "the PUSH", err)
	case ref.refused != nil:
		e.c.cancel(ctx, id)
		if !judged("push") {
			return false, nil
		}
		c.Kind, c.Got = "push", fmt.Sprintf("PUSH: the server accepted the policy; the reference executor refuses it (%v)", ref.refused)
		return true, nil
	}
	disagree := func(step int, kind, format string, a ...any) (bool, error) {
		c.Step, c.Kind, c.Got = step, kind, fmt.Sprintf(format, a...)
		e.c.cancel(ctx, id)
		return true, nil
	}
	var due time.Time
	for i, f := range c.Failures {
		if i >= len(ref.steps) {
			break
		}
		want, n := ref.steps[i], i+1
		got, err := e.await(ctx, q, id, due, 0)
		if err != nil {
			e.c.cancel(ctx, id)
			return false, unobserved(ctx, fmt.Sprintf("the FETCH of delivery %d", n), err)
		}
		if a := got.job.Attempt; a != nil && *a != want.fetchAttempt && judged("fetch-attempt") {
			return disagree(n, "fetch-attempt", "FETCH of delivery %d: the server shows attempt %d; the reference executor %d", n, *a, want.fetchAttempt)
		}
		fl := failure{Type: f.Type, Code: f.Code, Message: failMessage(n)}
		a, ex, err := e.nackOK(ctx, id, fl)
		if err != nil {
			e.c.cancel(ctx, id)
			return false, unobserved(ctx, fmt.Sprintf("the FAIL of delivery %d", n), err)
		}
		answer, next, kinds := e.sameAnswer(a, ex, want,
			func(got string) string { return stateKind(c, want, n, got) },
			func(lo time.Duration) string { return delayKind(c, ref, n, lo) })
		for _, k := range kinds {
			if judged(k) {
				pats := ""
				if strings.HasSuffix(k, "(non_retryable_errors)") {
					pats = fmt.Sprintf(" (non_retryable_errors %v)", c.Policy["non_retryable_errors"])
				}
				return disagree(n, k, "FAIL of attempt %d (error type %q, code %q)%s: the server answered %s; the reference executor: %s", n, f.Type, f.Code, pats, answer, want.answer())
			}
		}
		if a.State != want.state || slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(k, "delay:") }) {
			// A state or delay of a kind not judged: the case cannot go on
			// meaningfully (nor wait for a retry the reference does not
			// have, or one due at another time).
			e.c.cancel(ctx, id)
			return false, nil
		}
		if want.state == executor.Retryable.String() {
			due = next
			continue
		}
		kind, diff, err := e.sameEnd(ctx, q, id, want)
		if err != nil {
			return false, unobserved(ctx, fmt.Sprintf("the dead-letter list after delivery %d", n), err)
		}
		if diff != "" && judged(kind) {
			return disagree(n, kind, "after the FAIL of attempt %d (error type %q, code %q), %s", n, f.Type, f.Code, diff)
		}
		return false, nil
	}
	e.c.cancel(ctx, id)
	return false, nil
}

// sameAnswer compares the FAIL answer a (received in ex) with the
// reference's want: max_attempts (when the server gives it), the state
// (not a kind of its own when max_attempts differs; its kind is
// stateKind's, given the server's state), the attempt, and for
// a retry a next_attempt_at whose delay, on the
// server's clock, meets [want.lo, want.hi] within the timestamp
// resolution (an absent next_attempt_at is not judged). It returns the
// answer as it reads it, the retry's next_attempt_at, and the kinds that
// differ, in that order (a delay's kind is delayKind's, given the
// shortest delay the answer allows).
func (e *env) sameAnswer(a *nackAnswer, ex *exchange, want refStep, stateKind func(got string) string, delayKind func(lo time.Duration) string) (string, time.Time, []string) {
	got := fmt.Sprintf("%s, attempt %s", a.State, intOr(a.Attempt))
	if a.MaxAttempts != nil {
		got += ", max_attempts " + intOr(a.MaxAttempts)
	}
	// A server that reads max_attempts otherwise (0 for an absent one,
	// say) ends or retries the job otherwise too: that state is the same
	// deviation, not a kind of its own.
	var kinds []string
	if a.MaxAttempts != nil && *a.MaxAttempts != want.max {
		kinds = append(kinds, "max_attempts")
	} else if a.State != want.state {
		kinds = append(kinds, stateKind(a.State))
	}
	if !is(a.Attempt, want.attempt) {
		kinds = append(kinds, "attempt")
	}
	next, err := parseTime("next_attempt_at", a.NextAttemptAt)
	switch {
	case err != nil:
		return got + ", " + err.Error(), time.Time{}, append(kinds, "delay:unreadable")
	case !next.IsZero() && a.State == executor.Retryable.String():
		lo, hi := e.delayRange(ex, next)
		got += fmt.Sprintf(", retry after %v..%v", lo.Round(10*time.Microsecond), hi.Round(10*time.Microsecond))
		if want.state == a.State && (hi < want.lo-resolution || lo > want.hi+resolution) {
			got += ratio(lo, hi, want.lo, want.hi)
			kinds = append(kinds, delayKind(lo))
		}
	}
	return got, next, kinds
}

// sameEnd compares an ended job with the reference's last step: listed in
// the dead-letter list of its queue exactly when the reference
// dead-lettered it (deadLetterKind's kind), and then with the reference's error
// history ("history"). A server without the dead-letter list (404, 405 or
// 501) is not judged on it. It returns "" when they agree, else the kind
// and what differs.
func (e *env) sameEnd(ctx context.Context, q, id string, want refStep) (kind, diff string, err error) {
	r, err := e.c.deadLetterFind(ctx, q, id)
	var se *serverError
	if err != nil && errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed || se.Status == http.StatusNotImplemented) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	listed := r.found[id]
	if listed != want.dead {
		word := map[bool]string{true: "lists", false: "does not list"}
		return deadLetterKind(want), fmt.Sprintf("the server's dead-letter list %s the job; the reference executor %s", word[listed], map[bool]string{true: "dead-lettered it", false: "discarded it without a dead letter"}[want.dead]), nil
	}
	if !listed {
		return "", "", nil
	}
	j, err := e.c.info(ctx, id)
	if err != nil {
		return "", "", err
	}
	got := j.errorList()
	gs, ws := make([]string, len(got)), make([]string, len(want.errors))
	for i, g := range got {
		gs[i] = fmt.Sprintf("%s %s %q", intOr(g.Attempt), g.Type, g.Message)
	}
	for i, w := range want.errors {
		ws[i] = fmt.Sprintf("%d %s %q", w.Attempt, w.Type, w.Message)
	}
	if !slices.Equal(gs, ws) {
		return "history", fmt.Sprintf("the dead letter's error history is [%s]; the reference executor's [%s]", strings.Join(gs, ", "), strings.Join(ws, ", ")), nil
	}
	return "", "", nil
}

// shrink replays smaller variants of c on the server (at most left jobs)
// with shrinkWith, keeping those that disagree in c's Kind (the only kind
// judged); a variant in which the reference shows the kind cannot
// disagree (canShow) is not played, so the jobs go to the variants that
// may keep the disagreement. It returns the replays and the jobs played
// in all (played before it plus its own).
func (e *env) shrink(ctx context.Context, c *FuzzCase, left, played int, res *FuzzResult) (replays, total int) {
	kind := c.Kind
	replays = shrinkWith(ctx, c, left, func(v *FuzzCase, left int) (bool, int) {
		if !canShow(kind, v) {
			return false, 0
		}
		bad, plays, err := e.playTries(ctx, v, shrinkJitterTries, left, only(kind), res)
		return err == nil && bad && v.Kind == kind, plays
	})
	return replays, played + replays
}

// settleWhy confirms the reason a "state:ended-not-retried(WHY)" kind
// gives, which is what the case shows (stateKind), not a rule the
// reference applied: it plays c once without it (the failure's RETRY
// code dropped, or the policy's non_retryable_errors), judged in any
// ended-not-retried kind, at most left jobs. When that variant, smaller,
// still has the server end the job, the reason was not why: c becomes
// the variant, with its own kind, and the next reason is tried. It
// returns the jobs played (0 for any other kind).
func (e *env) settleWhy(ctx context.Context, c *FuzzCase, left int, res *FuzzResult) (plays int) {
	const group = "state:ended-not-retried"
	for plays < left && ctx.Err() == nil && strings.HasPrefix(c.Kind, group+"(") {
		v := FuzzCase{Policy: make(map[string]any, len(c.Policy)), Failures: slices.Clone(c.Failures)}
		for k, x := range c.Policy {
			v.Policy[k] = x
		}
		switch {
		case strings.HasSuffix(c.Kind, "(RETRY)") && c.Step >= 1 && c.Step <= len(v.Failures):
			v.Failures[c.Step-1].Code = ""
		case strings.HasSuffix(c.Kind, "(non_retryable_errors)"):
			delete(v.Policy, "non_retryable_errors")
		default:
			return plays
		}
		bad, n, err := e.playTries(ctx, &v, shrinkJitterTries, left-plays, func(k string) bool { return strings.HasPrefix(k, group) }, res)
		plays += n
		if err != nil || !bad || !strings.HasPrefix(v.Kind, group) {
			return plays // the server retries without it: the reason stands
		}
		*c = v
	}
	return plays
}

// shrinkWith replaces c by its first variant that still disagrees (play
// returns true, having set the variant's Step and Got), again and again
// until none does, within left plays and ctx; it returns the plays. play
// gets the plays left (at least 1) and returns how many it made (0, a
// variant it did not play, to that). Every variant is smaller than its
// case (FuzzCase.size), so the shrunk case is never larger than the one
// found.
func shrinkWith(ctx context.Context, c *FuzzCase, left int, play func(v *FuzzCase, left int) (bad bool, plays int)) (plays int) {
	for progress := true; progress && left > 0 && ctx.Err() == nil; {
		progress = false
		for _, v := range variants(*c) {
			if left <= 0 || ctx.Err() != nil {
				break
			}
			bad, n := play(&v, left)
			n = min(max(n, 0), left)
			left -= n
			plays += n
			if bad {
				*c = v
				progress = true
				break
			}
		}
	}
	return plays
}

// canShow reports whether c can disagree in kind at all, judged by the
// reference's play of c alone: a delay kind needs a retry (above-cap a
// retry the cap shortens, STRATEGY a later retry under that strategy);
// a state kind a step whose reference answer and rule give that kind
// (stateKind); a dead-letter kind, or history, the job's end on the
// reference. Kinds judged on the server's answers alone (push, the
// attempts, max_attempts, an unreadable delay) and an earlier build's
// groups can always show.
func canShow(kind string, c *FuzzCase) bool {
	tr := reference(c)
	if tr.refused != nil {
		return kind == "push"
	}
	var last refStep
	if len(tr.steps) > 0 {
		last = tr.steps[len(tr.steps)-1]
	}
	ended := len(tr.steps) > 0 && last.state != retryable
	switch {
	case kind == "delay:above-cap":
		u := FuzzCase{Policy: make(map[string]any, len(c.Policy)), Failures: c.Failures}
		for k, v := range c.Policy {
			if k != "max_interval" && k != "max_interval_ms" {
				u.Policy[k] = v
			}
		}
		ur := reference(&u)
		for i, s := range tr.steps {
			if s.state == retryable && i < len(ur.steps) && ur.steps[i].state == retryable && ur.steps[i].hi > s.hi+resolution {
				return true
			}
		}
		return false
	case kind == "delay:initial":
		return len(tr.steps) > 0 && tr.steps[0].state == retryable
	case kind == "delay:unreadable":
		return true
	case strings.HasPrefix(kind, "delay:"):
		return kind == "delay:"+tr.strategy && len(tr.steps) > 1 && tr.steps[1].state == retryable
	case strings.HasPrefix(kind, "state:"):
		for i, s := range tr.steps {
			if stateKind(c, s, i+1, retryable) == kind || stateKind(c, s, i+1, "") == kind {
				return true
			}
		}
		return false
	case strings.HasPrefix(kind, "dead-letter:"):
		return ended && deadLetterKind(last) == kind
	case kind == "history":
		return ended && last.dead
	}
	return true
}

// stopReason says why a fuzz run stopped on err.
func stopReason(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "its time ran out"
	}
	return "the server failed a request: " + err.Error()
}
