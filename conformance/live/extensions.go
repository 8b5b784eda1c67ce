// Checks of the retry extensions (docs/extensions.md): each runs only
// against a server whose manifest lists its feature under
// "x-retry-extensions", and is reported as not run otherwise, never failed.

package live

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// retryExtensions is the manifest's name of the retry extensions.
const retryExtensions = "x-retry-extensions"

// The checks, one per feature served over HTTP, with the feature each
// needs claimed.
var extensionChecks = []struct {
	check, feature string
}{
	{"http-ext-error-rules", "error_rules"},
	{"http-ext-retry-after", "retry_after"},
	{"http-ext-snooze", "snooze"},
	{"http-ext-jitter-mode", "jitter_mode"},
}

func init() {
	checks = append(checks,
		Check{"http-ext-error-rules", "RK-302", "3.2", "when the manifest claims error_rules (x-retry-extensions): a type an error rule matches gets the rule's delay and attempt limit (PT0.2S, 3 attempts, where the policy allows 1), another type the policy's", []string{"extension:error_rules"}},
		Check{"http-ext-retry-after", "RK-304", "3.3", "when the manifest claims retry_after: a FAIL with retry_after PT7S is retried after exactly 7 s although jitter is on, one with PT1M after max_retry_after PT20S", []string{"extension:retry_after"}},
		Check{"http-ext-snooze", "RK-306", "3.5", "when the manifest claims snooze: a FAIL with snooze PT10S under max_snooze PT0.3S waits 0.3 s and gives the attempt back (the redelivery shows the same attempt); past max_snoozes 1 a snooze spends the attempt and waits as a requested delay", []string{"extension:snooze"}},
		Check{"http-ext-jitter-mode", "RK-305", "3.4", "when the manifest claims jitter_mode: full jitter of PT10S gives first delays in [0, 10 s] with some below 5 s over 12 jobs, decorrelated first delays in [10 s, 30 s] with some above 15 s over 8 jobs; a mode with none is observed again over as many jobs before it fails (false alarm below 2·10⁻⁷)", []string{"extension:jitter_mode"}},
	)
	ids := make([]string, len(extensionChecks))
	for i, x := range extensionChecks {
		ids[i] = x.check
	}
	scenarios = append(scenarios, scenario{"retry-extensions", ids, func(ctx context.Context, e *env) {
		feats := e.c.retryFeatures(ctx)
		for _, x := range extensionChecks {
			if !slices.Contains(feats, x.feature) {
				e.notRun(x.check, "the server's manifest does not claim the "+x.feature+" feature of "+retryExtensions)
				continue
			}
			switch x.feature {
			case "error_rules":
				e.extErrorRules(ctx, x.check)
			case "retry_after":
				e.extRetryAfter(ctx, x.check)
			case "snooze":
				e.extSnooze(ctx, x.check)
			case "jitter_mode":
				e.extJitterMode(ctx, x.check)
			}
		}
	}})
}

// retryFeatures reads the features the manifest claims under
// x-retry-extensions: the extension named in extensions and its object's
// features list; none when either is missing.
func (c *client) retryFeatures(ctx context.Context) []string {
	ex, err := c.do(ctx, "MANIFEST", http.MethodGet, "", nil, c.root+"/ojs/manifest")
	if err != nil || ex.status != http.StatusOK {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(ex.body, &m) != nil {
		return nil
	}
	var exts []json.RawMessage
	if json.Unmarshal(m["extensions"], &exts) != nil {
		return nil
	}
	named := false
	for _, raw := range exts {
		var s string
		named = named || json.Unmarshal(raw, &s) == nil && s == retryExtensions
	}
	var obj struct {
		Features []string `json:"features"`
	}
	if !named || json.Unmarshal(m[retryExtensions], &obj) != nil {
		return nil
	}
	return obj.Features
}

// extPush pushes a job under retry and fetches it; a refused PUSH fails
// check, since the server claims the feature the policy uses.
func (e *env) extPush(ctx context.Context, check, q string, retry map[string]any) (string, bool) {
	id, err := e.c.push(ctx, q, "retrykit.live.ext", retry)
	if err != nil {
		if se, ok := err.(*serverError); ok && se.Status >= 400 && se.Status < 500 {
			e.fail(check, "the manifest claims the feature, but a PUSH with retry %v was refused: %v", retry, err)
		} else {
			e.errored(err, check)
		}
		return "", false
	}
	if f, err := e.fetchWithin(ctx, q, 2*time.Second); err != nil || f == nil {
		e.errored(orNotFetched(err), check)
		return "", false
	}
	return id, true
}

// extFail sends a FAIL with extra members and returns its answer; a
// refusal fails check (the feature is claimed).
func (e *env) extFail(ctx context.Context, check, id, typ string, extra map[string]any) (*nackAnswer, *exchange, bool) {
	a, ex, err := e.c.nackWith(ctx, id, failure{Type: typ, Message: "retry extensions"}, extra)
	switch {
	case err != nil:
		e.errored(err, check)
		return nil, nil, false
	case a == nil && ex != nil && ex.status >= 400 && ex.status < 500:
		e.fail(check, "the manifest claims the feature, but a FAIL with %v answered %d %s", extra, ex.status, snippet(ex.body))
		return nil, nil, false
	case a == nil:
		e.errored(orStatus(err, ex), check)
		return nil, nil, false
	}
	return a, ex, true
}

// recordStated keeps the answer a to a first FAIL whose spec answer is
// retryable after a delay in [lo, hi], built on the first delay of the
// policy base (jitter off), for the diagnosis; slack, if not 0, is the
// time left for the retry.
func (e *env) recordStated(check string, base map[string]any, a *nackAnswer, ex *exchange, lo, hi, slack time.Duration) {
	e.recordStatedObs(servermodel.Obs{Check: check, Kind: servermodel.StatedDelay, Policy: base, N: 1, WantLo: lo, WantHi: hi, Slack: slack}, a, ex)
}

// recordStatedObs keeps o (a StatedDelay) with the answer a filled in.
func (e *env) recordStatedObs(o servermodel.Obs, a *nackAnswer, ex *exchange) {
	o.State, o.Attempt = a.State, a.Attempt
	if next, err := parseTime("next_attempt_at", a.NextAttemptAt); err == nil && !next.IsZero() && ex != nil {
		o.DelayLo, o.DelayHi = e.delayRange(ex, next)
		o.HasDelay = true
	}
	e.record(o)
}

// extDelay judges that a FAIL answer is retryable with a delay in [lo, hi];
// it returns what is wrong, or "".
func (e *env) extDelay(check string, a *nackAnswer, ex *exchange, lo, hi time.Duration) string {
	if a.State != "retryable" {
		return fmt.Sprintf("state %q, want retryable", a.State)
	}
	why, _ := e.judgeDelay(check, ex, a, lo, hi)
	return why
}

func (e *env) extErrorRules(ctx context.Context, check string) {
	q := e.queue("ext-rules")
	pol := map[string]any{"max_attempts": 1, "initial_interval": "PT0.1S", "jitter": false, "error_rules": []any{
		map[string]any{"match": []any{"live.rate.*"}, "max_attempts": 3, "initial_interval": "PT0.2S", "backoff_strategy": "none"}}}
	var problems []string
	id, ok := e.extPush(ctx, check, q, pol)
	if !ok {
		return
	}
	a, ex, ok := e.extFail(ctx, check, id, "live.rate.limited", nil)
	if !ok {
		return
	}
	e.recordStated(check, map[string]any{"max_attempts": 3, "initial_interval": "PT0.2S", "backoff_strategy": "none", "jitter": false}, a, ex, 200*time.Millisecond, 200*time.Millisecond, 0)
	if why := e.extDelay(check, a, ex, 200*time.Millisecond, 200*time.Millisecond); why != "" {
		problems = append(problems, "a failure of type live.rate.limited (rule: 3 attempts, PT0.2S): "+why)
	}
	if id, ok = e.extPush(ctx, check, e.queue("ext-rules-other"), pol); !ok {
		return
	}
	if a, ex, ok = e.extFail(ctx, check, id, "live.other", nil); !ok {
		return
	}
	// no rule matches: the policy's answer, which the models compute
	e.recordFail(check, pol, failure{Type: "live.other", Message: "retry extensions"}, 1, ex, a, nil)
	if a.State != "discarded" {
		problems = append(problems, fmt.Sprintf("a failure of type live.other (no rule: the policy's 1 attempt) answered %q, want discarded", a.State))
	}
	e.verdict(check, problems)
}

func (e *env) extRetryAfter(ctx context.Context, check string) {
	pol := map[string]any{"max_attempts": 3, "initial_interval": "PT1S", "max_retry_after": "PT20S"}
	var problems []string
	for _, c := range []struct {
		ask  string
		want time.Duration
	}{{"PT7S", 7 * time.Second}, {"PT1M", 20 * time.Second}} {
		id, ok := e.extPush(ctx, check, e.queue("ext-retry-after"), pol)
		if !ok {
			return
		}
		a, ex, ok := e.extFail(ctx, check, id, "live.unavailable", map[string]any{"retry_after": c.ask})
		if !ok {
			return
		}
		e.recordStatedObs(servermodel.Obs{Check: check, Kind: servermodel.StatedDelay, Policy: pol, N: 1, WantLo: c.want, WantHi: c.want, Asked: true}, a, ex)
		if why := e.extDelay(check, a, ex, c.want, c.want); why != "" {
			problems = append(problems, "retry_after "+c.ask+": "+why)
		}
	}
	e.verdict(check, problems)
}

func (e *env) extSnooze(ctx context.Context, check string) {
	q := e.queue("ext-snooze")
	pol := map[string]any{"max_attempts": 2, "jitter": false, "max_snoozes": 1, "max_snooze": "PT0.3S"}
	id, ok := e.extPush(ctx, check, q, pol)
	if !ok {
		return
	}
	a, ex, ok := e.extFail(ctx, check, id, "", map[string]any{"snooze": "PT10S"})
	if !ok {
		return
	}
	// the first snooze's delay is the one asked, capped by max_snooze: no
	// model computes or scales it, but a delay (or state) off from it is
	// grouped with the other delays that differ
	e.recordStatedObs(servermodel.Obs{Check: check, Kind: servermodel.StatedDelay, N: 1, WantLo: 300 * time.Millisecond, WantHi: 300 * time.Millisecond, Asked: true}, a, ex)
	var problems []string
	if why := e.extDelay(check, a, ex, 300*time.Millisecond, 300*time.Millisecond); why != "" {
		problems = append(problems, "the first snooze (PT10S, max_snooze PT0.3S): "+why)
	}
	if a.Attempt != nil && *a.Attempt != 0 {
		problems = append(problems, fmt.Sprintf("the snooze answered attempt %d, want 0 (the attempt given back)", *a.Attempt))
	}
	if len(problems) > 0 { // the snooze was not one: waiting for its redelivery judges nothing more
		e.verdict(check, problems)
		return
	}
	f, err := e.fetchWithin(ctx, q, 2*time.Second)
	if err != nil || f == nil {
		e.errored(orNotFetched(err), check)
		return
	}
	e.recordAttempt(check, servermodel.FetchAttempt, 1, f.job.Attempt)
	if f.job.Attempt != nil && *f.job.Attempt != 1 {
		problems = append(problems, fmt.Sprintf("the redelivery after the snooze shows attempt %d, want 1 again", *f.job.Attempt))
	}
	if a, ex, ok = e.extFail(ctx, check, id, "live.busy", map[string]any{"snooze": "PT10S"}); !ok {
		return
	}
	e.recordAttempt(check, servermodel.AnswerAttempt, 1, a.Attempt)
	e.recordStatedObs(servermodel.Obs{Check: check, Kind: servermodel.StatedDelay, Policy: pol, N: 1, WantLo: 10 * time.Second, WantHi: 10 * time.Second, Asked: true}, a, ex)
	if why := e.extDelay(check, a, ex, 10*time.Second, 10*time.Second); why != "" {
		problems = append(problems, "the second snooze, past max_snoozes 1 (a requested delay of 10 s): "+why)
	}
	if a.Attempt != nil && *a.Attempt != 1 {
		problems = append(problems, fmt.Sprintf("the second snooze answered attempt %d, want 1 (spent)", *a.Attempt))
	}
	e.verdict(check, problems)
}

// extJitterMode judges the jitter modes full and decorrelated on the
// first delays of n jobs each: every delay within the mode's range, and
// some on the far side of a value the spec's range passes half the time
// (full) or three quarters of the time (decorrelated). A mode with none
// there is observed again over n more jobs before it fails, since a
// correct server shows none with chance 2⁻¹² (full) and 4⁻⁸
// (decorrelated): the false alarm is then the square of that, below
// 2·10⁻⁷ for the check, while a range that never reaches the far side
// fails both rounds.
func (e *env) extJitterMode(ctx context.Context, check string) {
	var problems []string
	for _, c := range []struct {
		mode       string
		n          int
		lo, hi, at time.Duration // the range, and a value some delay must pass (below for full, above for decorrelated)
	}{{"full", 12, 0, 10 * time.Second, 5 * time.Second}, {"decorrelated", 8, 10 * time.Second, 30 * time.Second, 15 * time.Second}} {
		pol := map[string]any{"max_attempts": 3, "initial_interval": "PT10S", "max_interval": "PT1M", "jitter_mode": c.mode}
		spread, wrong := false, false
		for round := 0; round < jitterModeRounds && !spread && !wrong; round++ {
			for range c.n {
				id, ok := e.extPush(ctx, check, e.queue("ext-jitter"), pol)
				if !ok {
					return
				}
				a, ex, ok := e.extFail(ctx, check, id, "live.jitter", nil)
				if !ok {
					return
				}
				e.recordStated(check, map[string]any{"max_attempts": 3, "initial_interval": "PT10S", "max_interval": "PT1M", "jitter": false}, a, ex, c.lo, c.hi, 0)
				why, next := e.judgeDelay(check, ex, a, c.lo, c.hi)
				if why != "" {
					problems, wrong = append(problems, c.mode+": "+why), true
					break
				}
				lo, hi := e.delayRange(ex, next)
				spread = spread || (c.mode == "full" && hi < c.at) || (c.mode == "decorrelated" && lo > c.at)
			}
		}
		if !spread && !wrong {
			problems = append(problems, fmt.Sprintf("%s: none of %d first delays (%d rounds of %d jobs) is on the far side of %v: the range is not the mode's", c.mode, jitterModeRounds*c.n, jitterModeRounds, c.n, c.at))
		}
	}
	e.verdict(check, problems)
}

// jitterModeRounds is how many rounds of jobs extJitterMode plays at most
// for a mode whose delays show no spread.
const jitterModeRounds = 2

// verdict records a pass, or a failure listing the problems.
func (e *env) verdict(check string, problems []string) {
	if len(problems) > 0 {
		e.fail(check, "%s", strings.Join(problems, "; "))
		return
	}
	e.pass(check, "")
}
