package live_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live"
	"github.com/retrykit/retrykit/executor"
	"github.com/retrykit/retrykit/internal/ojsfault"
	"github.com/retrykit/retrykit/ojshttp"
	"github.com/retrykit/retrykit/policy"
)

// Server bugs that neither TestPlantedFaults, TestRandomFamilyParameters
// nor TestUnmodelledBugsAreNotNamed plants, drawn from what real queue code
// gets wrong. Most are planted by a proxy in front of a correct server that
// rewrites its answers the way the bug would (as an outside tester does);
// two that change a decision, not an answer, are faults planted in serve.
// Each comes out as the point 1 asks: caught, one cause or two at
// most, the largest naming it, and never reproduced under a wrong name. An
// in-family bug is its family with the right parameter; a bug outside
// every family is unexplained, grouped by the deviation observed.

// unseen is one such bug. edit rewrites one decoded JSON answer to the
// request r; pushed is the retry object the client pushed for the job of
// the answer (nil: none, or not known).
type unseen struct {
	name  string
	why   string // one sentence: the mistake in real queue code
	want  string // "bug:MODEL" (reproduced, alone or first) or "unexplained:GROUP"
	fault ojsfault.Set
	edit  func(r *http.Request, v map[string]any, pushed func(id string) map[string]any)
}

// unseenBugs is the table of the bugs; expected names are the family with
// its parameter for a bug inside one, the deviation group for the others.
var unseenBugs = []unseen{
	{name: "polynomial-attempt-from-zero", want: "bug:delay-attempt-offset(polynomial,-1)",
		why: "the polynomial delay is computed as initial × (n−1)^coefficient: the attempt counted from 0, as in a loop over retries done",
		edit: redelayed(func(sp policy.Spec, n int) (time.Duration, bool) {
			return baseFor(sp, n-1), sp.Strategy == backoff.Polynomial
		})},
	{name: "linear-attempt-plus-one", want: "bug:delay-attempt-offset(linear,+1)",
		why: "the linear delay is computed as initial × (attempt+1), the next attempt's number used for the one that failed",
		edit: redelayed(func(sp policy.Spec, n int) (time.Duration, bool) {
			return baseFor(sp, n+1), sp.Strategy == backoff.Linear
		})},
	{name: "delay-of-previous-attempt", want: "bug:delay-attempt-offset(-1)",
		why: "every strategy's delay is computed for the attempt before the one that failed (the counter read before its increment)",
		edit: redelayed(func(sp policy.Spec, n int) (time.Duration, bool) {
			return baseFor(sp, n-1), true
		})},
	{name: "jitter-upward-only", want: "bug:jitter-range([1,1.5))",
		why:  "the jitter multiplier is 1 + r/2 (delays only lengthened), as code that adds a random fraction of half the delay does",
		edit: rejittered(func(m float64) float64 { return 1 + (m-0.5)/2 })},
	{name: "max-interval-read-as-milliseconds", want: "bug:cap-factor(×0.001)",
		why:  "max_interval's ISO duration converted to seconds and then read as milliseconds: the cap is a thousandth of the policy's",
		edit: capped(func(c time.Duration) time.Duration { return c / 1000 })},
	{name: "delay-truncated-to-seconds", want: "unexplained:delay-whole-seconds",
		why:  "the delay is computed in whole seconds and truncated (a store with second resolution): sub-second delays become 0",
		edit: retimedTo(func(d time.Duration) time.Duration { return d.Truncate(time.Second) })},
	{name: "delay-rounded-up-to-seconds", want: "unexplained:delay-whole-seconds",
		why:  "the delay is rounded up to whole seconds (math.Ceil on seconds before scheduling)",
		edit: retimedTo(func(d time.Duration) time.Duration { return (d + time.Second - 1).Truncate(time.Second) })},
	{name: "coefficient-read-as-integer", want: "unexplained:delay-differs",
		why: "backoff_coefficient is stored in an integer field (a float cast to int): 1.5 is computed as 1",
		edit: redelayed(func(sp policy.Spec, n int) (time.Duration, bool) {
			sp.BackoffCoefficient = math.Floor(sp.BackoffCoefficient)
			return baseFor(sp, n), true
		})},
	{name: "initial-ignored-with-coefficient", want: "unexplained:delay-whole-seconds",
		why:  "initial_interval is read only when backoff_coefficient is absent (an if/else over the two fields): with a coefficient the delay starts from the default PT1S",
		edit: pushedRedelay()},
	{name: "scheduled-from-enqueue", want: "unexplained:delay-differs",
		why:  "the retry is scheduled from the job's original enqueue time, not from the failure: next_attempt_at = created_at + delay",
		edit: fromCreated()},
	{name: "next-attempt-at-whole-second", want: "unexplained:delay-differs",
		why:  "next_attempt_at is stored as Unix seconds, so the time announced drops its fraction of a second",
		edit: announcedAt(func(t time.Time) time.Time { return t.Truncate(time.Second) })},
	{name: "fail-answer-attempt-not-incremented", want: "unexplained:attempt-offset(-1)",
		why:  "the FAIL answer is built from the job as fetched, before the attempt that failed was counted: it shows the attempt one lower",
		edit: failAttemptLower},
	{name: "history-newest-first", want: "unexplained:history-order",
		why:  "the error history is kept newest first (LPUSH onto a list) and shown in that order",
		edit: inJobViews(func(_ *http.Request, j map[string]any) { reverse(j, "errors") })},
	{name: "dead-letter-last-error-only", want: "unexplained:own-observation",
		why: "the dead letter keeps only the last error (a field overwritten, not a list appended to)",
		edit: inDeadLetters(func(j map[string]any) {
			if l, ok := j["errors"].([]any); ok && len(l) > 1 {
				j["errors"] = l[len(l)-1:]
			}
		})},
	{name: "dead-letter-loses-args", want: "unexplained:own-observation",
		why: "the dead letter is built from the error record, not the job: its args and meta are lost",
		edit: inDeadLetters(func(j map[string]any) {
			j["args"] = []any{}
			delete(j, "meta")
		})},
	{name: "prefix-without-dot-boundary", want: "unexplained:gave-up-where-spec-retries", fault: ojsfault.PrefixNoBoundary,
		why: "\"auth.*\" is matched as the bare prefix \"auth\" (strings.TrimSuffix then HasPrefix), so \"authx\" and \"auth\" end the job too"},
	{name: "message-not-type", want: "bug:matched-field(message)", fault: ojsfault.MessageNotType,
		why: "non_retryable_errors are matched against the error message instead of its type (the wrong field of the error object read)"},
}

// baseFor is the delay of sp's strategy after attempt n, neither jittered
// nor capped; an attempt below 1 gives the formula's value there
// (exponential initial/coefficient, none initial, linear and polynomial 0).
func baseFor(sp policy.Spec, n int) time.Duration {
	init, c := float64(sp.InitialInterval), sp.BackoffCoefficient
	x := 0.0
	switch sp.Strategy {
	case backoff.None:
		x = init
	case backoff.Linear:
		x = init * float64(max(n, 0))
	case backoff.Polynomial:
		x = init * math.Pow(float64(max(n, 0)), c)
	default:
		x = init * math.Pow(c, float64(n-1))
	}
	if x >= 0x1p62 {
		return time.Duration(1 << 62)
	}
	return time.Duration(x)
}

// multiplier is the jitter multiplier the correct server drew for the
// delay d after attempt n under sp: 1 without jitter, or when the delay
// was capped after jitter (the draw is then lost).
func multiplier(sp policy.Spec, n int, d time.Duration) float64 {
	b := min(baseFor(sp, n), sp.MaxInterval)
	if !sp.Jitter || b <= 0 || d >= sp.MaxInterval {
		return 1
	}
	return min(max(float64(d)/float64(b), 0.5), 1.5)
}

// answerJob returns the job view of a FAIL or INFO answer.
func answerJob(r *http.Request, v map[string]any) (map[string]any, bool) {
	if isFail(r) {
		j, ok := v["job"].(map[string]any)
		return j, ok
	}
	if isInfo(r) {
		if j, ok := v["job"].(map[string]any); ok {
			return j, true
		}
		return v, true
	}
	return nil, false
}

// specOf reads the policy a job view shows (the default when none).
func specOf(j map[string]any) policy.Spec {
	raw, err := json.Marshal(j["retry"])
	if err != nil || j["retry"] == nil {
		return policy.DefaultSpec()
	}
	p, err := policy.Parse(raw)
	if err != nil {
		return policy.DefaultSpec()
	}
	return p.Spec()
}

// failedAt is the time of a job view's last error entry.
func failedAt(j map[string]any) (time.Time, bool) {
	l, _ := j["errors"].([]any)
	if len(l) == 0 {
		return time.Time{}, false
	}
	last, _ := l[len(l)-1].(map[string]any)
	t, err := time.Parse(time.RFC3339Nano, str(last["occurred_at"]))
	return t, err == nil
}

// rescheduled rewrites the next_attempt_at of a retryable job shown in a
// FAIL or INFO answer (and of the FAIL answer itself) to the failure time
// plus f(policy, attempt that failed, delay the server chose, job view);
// f's false leaves it.
func rescheduled(f func(sp policy.Spec, n int, d time.Duration, j map[string]any) (time.Duration, bool)) func(*http.Request, map[string]any, func(string) map[string]any) {
	return func(r *http.Request, v map[string]any, _ func(string) map[string]any) {
		j, ok := answerJob(r, v)
		if !ok || j["state"] != "retryable" {
			return
		}
		next, err := time.Parse(time.RFC3339Nano, str(j["next_attempt_at"]))
		at, ok := failedAt(j)
		if err != nil || !ok {
			return
		}
		n, _ := j["attempt"].(float64)
		d, ok := f(specOf(j), int(n), next.Sub(at), j)
		if !ok {
			return
		}
		stamp := at.Add(d).UTC().Format(time.RFC3339Nano)
		j["next_attempt_at"] = stamp
		if _, ok := j["retry_delay_ms"]; ok {
			j["retry_delay_ms"] = d.Milliseconds()
		}
		if isFail(r) {
			v["next_attempt_at"] = stamp
			if _, ok := v["retry_delay_ms"]; ok {
				v["retry_delay_ms"] = d.Milliseconds()
			}
		}
	}
}

// inForce returns the backoff in force for the last failure of a job
// under sp: sp itself, or a spec with the backoff fields of the error rule
// matching the failure's type.
func inForce(sp policy.Spec, j map[string]any) policy.Spec {
	l, _ := j["errors"].([]any)
	if len(l) == 0 {
		return sp
	}
	last, _ := l[len(l)-1].(map[string]any)
	p, err := policy.New(sp)
	if err != nil {
		return sp
	}
	if i := p.RuleFor(str(last["type"])); i > 0 {
		r := sp.ErrorRules[i-1]
		sp.InitialInterval, sp.BackoffCoefficient, sp.MaxInterval = r.InitialInterval, r.BackoffCoefficient, r.MaxInterval
		sp.Jitter, sp.JitterMode, sp.Strategy = r.Jitter, r.JitterMode, r.Strategy
	}
	sp.ErrorRules = nil
	return sp
}

// ofFormula reports whether the server's delay d after attempt n is one
// of the formula of sp (the backoff in force), not one the handler asked
// for (retry_after, a snooze): a bug in the formula changes only those.
func ofFormula(sp policy.Spec, n int, d time.Duration) bool {
	p, err := policy.New(sp)
	if err != nil {
		return false
	}
	lo, hi := p.Backoff().Bounds(n)
	return d >= lo-time.Millisecond && d <= hi+time.Millisecond
}

// formulaBug rewrites the delays of the backoff formula in force through
// f(spec in force, attempt, delay); other delays are left.
func formulaBug(f func(sp policy.Spec, n int, d time.Duration) (time.Duration, bool)) func(*http.Request, map[string]any, func(string) map[string]any) {
	return rescheduled(func(sp policy.Spec, n int, d time.Duration, j map[string]any) (time.Duration, bool) {
		sp = inForce(sp, j)
		if !ofFormula(sp, n, d) {
			return 0, false
		}
		return f(sp, n, d)
	})
}

// redelayed computes the delay from another base (f's, when it says so):
// the server's delay scaled as its capped base would be, capped again.
func redelayed(f func(sp policy.Spec, n int) (time.Duration, bool)) func(*http.Request, map[string]any, func(string) map[string]any) {
	return formulaBug(func(sp policy.Spec, n int, d time.Duration) (time.Duration, bool) {
		base, ok := f(sp, n)
		if !ok {
			return 0, false
		}
		return rescaled(d, min(baseFor(sp, n), sp.MaxInterval), min(base, sp.MaxInterval), sp.MaxInterval), true
	})
}

// rescaled is the delay d built on the capped base old, built on new
// instead (the same jitter draw), capped at c.
func rescaled(d, old, new, c time.Duration) time.Duration {
	if old <= 0 {
		return min(new, c)
	}
	return min(time.Duration(float64(d)*float64(new)/float64(old)), c)
}

// rejittered maps the server's jitter multiplier (OJS jitter) through f.
func rejittered(f func(m float64) float64) func(*http.Request, map[string]any, func(string) map[string]any) {
	return formulaBug(func(sp policy.Spec, n int, d time.Duration) (time.Duration, bool) {
		if !sp.Jitter || sp.JitterMode != 0 || d >= sp.MaxInterval {
			return 0, false
		}
		b := min(baseFor(sp, n), sp.MaxInterval)
		return min(time.Duration(float64(b)*f(multiplier(sp, n, d))), sp.MaxInterval), true
	})
}

// capped computes the delay under the cap f(max_interval), applied before
// and after jitter.
func capped(f func(time.Duration) time.Duration) func(*http.Request, map[string]any, func(string) map[string]any) {
	return formulaBug(func(sp policy.Spec, n int, d time.Duration) (time.Duration, bool) {
		c := f(sp.MaxInterval)
		b := baseFor(sp, n)
		return rescaled(d, min(b, sp.MaxInterval), min(b, c), c), true
	})
}

// retimedTo rewrites the delay the server chose through f.
func retimedTo(f func(time.Duration) time.Duration) func(*http.Request, map[string]any, func(string) map[string]any) {
	return rescheduled(func(_ policy.Spec, _ int, d time.Duration, _ map[string]any) (time.Duration, bool) {
		return f(d), true
	})
}

// announcedAt rewrites the time announced (not the delay) through f.
func announcedAt(f func(time.Time) time.Time) func(*http.Request, map[string]any, func(string) map[string]any) {
	return rescheduled(func(_ policy.Spec, _ int, d time.Duration, j map[string]any) (time.Duration, bool) {
		at, _ := failedAt(j)
		return f(at.Add(d)).Sub(at), true
	})
}

// fromCreated schedules the retry from the job's created_at.
func fromCreated() func(*http.Request, map[string]any, func(string) map[string]any) {
	return rescheduled(func(_ policy.Spec, _ int, d time.Duration, j map[string]any) (time.Duration, bool) {
		at, _ := failedAt(j)
		created, err := time.Parse(time.RFC3339Nano, str(j["created_at"]))
		if err != nil {
			return 0, false
		}
		return d - at.Sub(created), true
	})
}

// pushedRedelay computes the delay from initial_interval PT1S whenever
// the client's retry object named backoff_coefficient.
func pushedRedelay() func(*http.Request, map[string]any, func(string) map[string]any) {
	return func(r *http.Request, v map[string]any, pushed func(string) map[string]any) {
		j, ok := answerJob(r, v)
		if !ok {
			return
		}
		raw := pushed(str(j["id"]))
		if _, ok := raw["backoff_coefficient"]; !ok {
			return
		}
		redelayed(func(sp policy.Spec, n int) (time.Duration, bool) {
			sp.InitialInterval = time.Second
			return baseFor(sp, n), true
		})(r, v, pushed)
	}
}

// failAttemptLower shows a FAIL answer's attempt (and its job's) one lower.
func failAttemptLower(r *http.Request, v map[string]any, _ func(string) map[string]any) {
	if !isFail(r) {
		return
	}
	if n, ok := v["attempt"].(float64); ok && n > 0 {
		v["attempt"] = n - 1
	}
	if j, ok := v["job"].(map[string]any); ok {
		if n, ok := j["attempt"].(float64); ok && n > 0 {
			j["attempt"] = n - 1
		}
	}
}

// inJobViews applies f to every job view of an answer (a map with id,
// state and attempt), however deep.
func inJobViews(f func(r *http.Request, j map[string]any)) func(*http.Request, map[string]any, func(string) map[string]any) {
	var walk func(r *http.Request, x any)
	walk = func(r *http.Request, x any) {
		switch y := x.(type) {
		case map[string]any:
			_, id := y["id"]
			_, st := y["state"]
			_, at := y["attempt"]
			if id && st && at {
				f(r, y)
			}
			for _, z := range y {
				walk(r, z)
			}
		case []any:
			for _, z := range y {
				walk(r, z)
			}
		}
	}
	return func(r *http.Request, v map[string]any, _ func(string) map[string]any) { walk(r, v) }
}

// inDeadLetters applies f to every dead-lettered job view.
func inDeadLetters(f func(j map[string]any)) func(*http.Request, map[string]any, func(string) map[string]any) {
	return inJobViews(func(r *http.Request, j map[string]any) {
		if j["dead_letter"] == true || strings.Contains(r.URL.Path, "dead-letter") {
			f(j)
		}
	})
}

// reverse reverses the list j[k] and sets error to its new last entry.
func reverse(j map[string]any, k string) {
	l, ok := j[k].([]any)
	if !ok || len(l) < 2 {
		return
	}
	l = slices.Clone(l)
	slices.Reverse(l)
	j[k] = l
	if _, ok := j["error"]; ok {
		j["error"] = l[len(l)-1]
	}
}

// statefulProxy serves h with every JSON object answer passed through
// edit, which may read the retry object pushed for a job.
func statefulProxy(h http.Handler, edit func(*http.Request, map[string]any, func(string) map[string]any)) http.Handler {
	var pushed sync.Map // job id → the retry object pushed
	lookup := func(id string) map[string]any {
		if v, ok := pushed.Load(id); ok {
			return v.(map[string]any)
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req []byte
		if r.Body != nil {
			req, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(req))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var v map[string]any
		if json.Unmarshal(body, &v) == nil {
			if r.Method == http.MethodPost && r.URL.Path == "/ojs/v1/jobs" {
				var p struct {
					Options struct {
						Retry map[string]any `json:"retry"`
					} `json:"options"`
				}
				if j, ok := v["job"].(map[string]any); ok && json.Unmarshal(req, &p) == nil && p.Options.Retry != nil {
					pushed.Store(str(j["id"]), p.Options.Retry)
				}
			}
			if edit != nil {
				edit(r, v, lookup)
				body, _ = json.Marshal(v)
			}
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body) //nolint:errcheck // the client sees a short answer
	})
}

// TestUnseenServerBugsComeOutRight: each bug of unseenBugs is caught and
// comes out as one cause, two at most; the first is the one the table
// names (a reproduced family with its parameter, or an unexplained group
// of the deviation observed), and no cause is a bug model reproduced
// under another name.
func TestUnseenServerBugsComeOutRight(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the live checker once per bug")
	}
	for _, b := range unseenBugs {
		t.Run(b.name, func(t *testing.T) {
			run := func() *conformance.Report {
				srv := ojshttp.New(executor.New())
				ojsfault.Plant(srv, b.fault)
				defer ojsfault.Plant(srv, 0)
				hs := httptest.NewServer(statefulProxy(srv, b.edit))
				defer hs.Close()
				rep, err := live.Run(context.Background(), hs.URL, live.WithLatencyRetries(0))
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return rep
			}
			rep := run()
			if rep.OK() {
				t.Logf("not caught in a first run; played again") // a loaded host, as TestPlantedFaults
				rep = run()
			}
			if rep.OK() {
				t.Fatalf("not caught: the report is OK")
			}
			rep = judged(t, rep)
			for _, c := range rep.Causes {
				t.Logf("cause %s (reproduced %v, equivalent %q): %q; %s", c.Class, c.Reproduced, c.Equivalent, c.IDs, c.Reproduction)
			}
			for _, r := range rep.Results {
				if r.Status == conformance.StatusFail || r.Status == conformance.StatusError {
					t.Logf("%s %s: %.240s", r.Status, r.ID, r.Reason)
				}
			}
			if len(rep.Causes) == 0 || len(rep.Causes) > 2 {
				t.Fatalf("%d causes %q: one bug must come out as one cause, two at most", len(rep.Causes), causeNames(rep))
			}
			first := rep.Causes[0]
			model, isModel := strings.CutPrefix(b.want, "bug:")
			switch {
			case isModel && !names(first, model):
				t.Errorf("first cause %s (reproduced %v), want %s reproduced", first.Class, first.Reproduced, b.want)
			case !isModel && (first.Class != b.want || first.Reproduced):
				t.Errorf("first cause %s (reproduced %v), want %s", first.Class, first.Reproduced, b.want)
			}
			for _, c := range rep.Causes {
				if (c.Reproduced || strings.HasPrefix(c.Class, "bug:")) && !(isModel && names(c, model)) {
					t.Errorf("reproduced under a wrong name: %s %q", c.Class, c.IDs)
				}
			}
		})
	}
}
