package conformance

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/retrykit/retrykit/conformance/protocol"
)

// The levels of [Report.Scores] and [Result.Level] (rules in levelOf):
// "RK" is a retrykit decision where the spec is silent or contradicts
// itself (docs/decisions.md).
const (
	levelMust   = "MUST"
	levelShould = "SHOULD"
	levelRK     = "RK"
)

// levels are the levels in report order, with their labels.
var levels = [...]struct{ name, label string }{
	{levelMust, "spec requirements (MUST)"},
	{levelShould, "SHOULD-level and optional features"},
	{levelRK, "retrykit decisions (RK-nn)"},
}

// levelOf returns the level of a vector with the given requirement and
// flags.
func levelOf(requirement string, flags []string) string {
	should := false
	for _, f := range flags {
		if f == "retrykit:decision" {
			return levelRK
		}
		should = should || strings.HasPrefix(f, "should:") || strings.HasPrefix(f, "extension:")
	}
	switch {
	case strings.HasPrefix(requirement, "RK-"):
		return levelRK
	case should:
		return levelShould
	}
	return levelMust
}

// Cause is one root cause of a run's failures and errors. Every failed or
// errored result is listed under exactly one cause.
//
// A cause named "bug:…" is a bug model of package
// [github.com/retrykit/retrykit/conformance/diagnose], from its catalogue
// or a family fitted to the run ("bug:time-factor(×2)"), that reproduces
// each of its results' answers exactly and contradicts no passing vector
// (Reproduced is set); its explanation is the fix, and PassesReplayed
// says how many passes were held against it. A cause named
// "unexplained:…" groups failures no model reproduces by the deviation
// observed ("unexplained:delay-ratio(×2)"), with its smallest
// reproduction. The other causes are symptoms the runner observed
// ("accepts-invalid", "adapter-crash", ...); a vector's class flag never
// groups failures.
type Cause struct {
	Class       string   `json:"class"`       // "bug:no-post-jitter-cap", "unexplained:delay-ratio(×2)", "adapter-crash", ...
	Explanation string   `json:"explanation"` // one line; for a bug model, the fix
	IDs         []string `json:"ids"`         // the results it explains, in result order
	Reproduced  bool     `json:"reproduced"`  // a bug model reproduced every answer in IDs
	// PassesReplayed, for a bug model, is how many passing results the
	// model was replayed on, every one of which it passes too (a model
	// that a pass contradicts is never a cause): on a library, the
	// passing vectors whose request the model answers with a value of
	// its own (diagnose.Finding.Replayed); over HTTP, the passing checks
	// with an observation the model answers otherwise than the reference
	// (servermodel.Finding.Replayed; an inconclusive check is not a
	// pass). 0 means no pass of the run could
	// have contradicted the model; nil means unknown (not a bug model,
	// or a report written before the count was recorded).
	PassesReplayed *int     `json:"passes_replayed,omitempty"`
	Equivalent     []string `json:"equivalent,omitempty"` // bug model: other models this run cannot tell apart from it
	// Unclaim, for a bug model that is a missing optional feature, is the
	// vector flag the implementation declares unclaimed instead of fixing
	// it ("extension:backoff_strategy", see diagnose.Model.Unclaim).
	Unclaim string `json:"unclaim,omitempty"`
	// Reproduction, for failures no model reproduces, is the smallest
	// failure of the group as a replayable line: the request, the answer
	// and the spec's answer.
	Reproduction string `json:"reproduction,omitempty"`
}

// proof returns what proves a bug model's cause, the one sentence every
// format of the report shows: "reproduces 12 failures; replayed on 230
// passes, contradicts none". Without a count of passes replayed (a report
// written before it was recorded) it says only what the model reproduces;
// with none replayed, that no pass could contradict it. It returns "" for
// a cause that is not a bug model.
func (c Cause) proof() string {
	if !c.Reproduced {
		return ""
	}
	s := fmt.Sprintf("reproduces %d %s", len(c.IDs), plural(len(c.IDs), "failure", "failures"))
	switch n := c.PassesReplayed; {
	case n == nil:
	case *n == 0:
		s += "; replayed on no pass, so no pass could contradict it"
	default:
		s += fmt.Sprintf("; replayed on %d %s, contradicts none", *n, plural(*n, "pass", "passes"))
	}
	return s
}

// symptoms explains the causes the runner derives from answers.
var symptoms = map[string]string{
	"accepts-invalid":     "a rejection was expected and a result came back: input the spec requires rejecting is accepted (validation missing or incomplete)",
	"rejects-valid":       "a result was expected and the input was rejected",
	"wrong-error-type":    "rejected, but with another error type than the one required",
	"message-lacks-field": "rejected with the right error type, but the message does not name the offending field",
	"wrong-duration":      "a duration string parsed to another value",
	"wrong-effective":     "the effective policy differs in at least one field",
	"wrong-delay":         "a delay differs from the expected value or lies outside its bounds",
	"wrong-match":         "an error type matched where it should not, or the reverse",
	"wrong-decision":      "the decision (retry, discard, dead_letter) or its delay differs",
	"wrong-scenario":      "an observation of an executor scenario differs from the expectation",
	"jitter-distribution": "the implementation's own jitter multiplier is not Uniform[0.5, 1.5)",
	"stale-skip-entry":    "listed in the skip file but passes now (strict mode)",
	"unknown-skip-entry":  "the skip file names a vector the suite does not have (strict mode): a typo or a renamed id",
	"malformed-answer":    "an answer lacks the fields its op requires (PROTOCOL.md sections 3 and 4)",
	"scenario-rejected":   "the adapter rejected a scenario request instead of playing it",
	"hello-failed":        "the adapter's hello failed, so nothing could be judged",
	"adapter-start":       "the adapter command could not be started",
	"adapter-crash":       "the adapter process exited or closed its standard output",
	"adapter-timeout":     "the adapter did not answer within the per-request timeout",
	"adapter-protocol":    "the adapter wrote a line that is not a well-formed answer",
	"adapter-dead":        "the adapter was given up after dying twice in a row (crash, timeout or bad line) with no answer between; the request was not sent",
	"adapter-error":       "the implementation returned an error instead of an answer",
	"unjudged":            "no verdict was recorded",
}

// explain returns the one-line explanation of a cause: for a class flag the
// first sentence of its note, without the "Failure class:" prefix.
func explain(class string, notes map[string]string) string {
	if e, ok := symptoms[class]; ok {
		return e
	}
	n := strings.TrimSpace(strings.TrimPrefix(notes[class], "Failure class:"))
	if i := strings.Index(n, ". "); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimSuffix(n, ".")
	if n == "" {
		return "(no note explains this flag)"
	}
	return n
}

// findCauses groups the failed and errored results by root cause:
//
//  1. the bug models of package diagnose, catalogue or fitted family, that
//     reproduce failures exactly and contradict no pass, most failures
//     first (diagnose.Diagnose);
//  2. the failures of vectors no model reproduces, grouped by the deviation
//     observed between the answer and the spec's, largest group first,
//     each with its smallest reproduction (diagnose.Deviations): a class
//     flag of a vector is never a reason to group failures;
//  3. what is left (scenarios, errors, skip-file entries, the jitter
//     distribution) grouped by the symptom the runner observed, the
//     specific symptoms before the generic "wrong-…" ones.
func findCauses(results []Result, notes map[string]string) []Cause {
	var out []Cause
	explained := map[string]bool{}
	found, groups := diagnoseResults(results)
	for _, f := range found {
		out = append(out, Cause{Class: "bug:" + f.Model.Name, Explanation: f.Model.Fix, IDs: f.Explains,
			Reproduced: true, PassesReplayed: &f.Replayed, Equivalent: f.Equivalent, Unclaim: f.Model.Unclaim()})
		for _, id := range f.Explains {
			explained[id] = true
		}
	}
	for _, g := range groups {
		out = append(out, Cause{Class: "unexplained:" + g.Name, IDs: g.IDs, Reproduction: g.Reproduction,
			Explanation: "no bug model or fitted family reproduces these; observed: " + g.Explanation})
		for _, id := range g.IDs {
			explained[id] = true
		}
	}
	cands := map[string][]int{}
	left := 0
	for i := range results {
		res := &results[i]
		if res.Status == StatusPass || res.Status == StatusSkip || explained[res.ID] {
			continue
		}
		left++
		cands[res.symptom()] = append(cands[res.symptom()], i)
	}
	keys := make([]string, 0, len(cands))
	for k := range cands {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	done := make([]bool, len(results))
	for left > 0 {
		best, bestN := "", 0
		for _, k := range keys {
			if generic(k) && pickSpecific(keys, cands, done) {
				continue
			}
			n := 0
			for _, i := range cands[k] {
				if !done[i] {
					n++
				}
			}
			if n > bestN {
				best, bestN = k, n
			}
		}
		c := Cause{Class: best, Explanation: explain(best, notes)}
		for _, i := range cands[best] {
			if !done[i] {
				done[i] = true
				c.IDs = append(c.IDs, results[i].ID)
			}
		}
		left -= bestN
		out = append(out, c)
	}
	return out
}

// generic reports whether cause k is a generic symptom: a wrong answer of
// some kind, or an error without a known kind.
func generic(k string) bool {
	return strings.HasPrefix(k, "wrong-") || k == "adapter-error" || k == "unjudged"
}

// pickSpecific reports whether a cause that is not generic still explains
// a result not yet explained.
func pickSpecific(keys []string, cands map[string][]int, done []bool) bool {
	for _, k := range keys {
		if generic(k) {
			continue
		}
		for _, i := range cands[k] {
			if !done[i] {
				return true
			}
		}
	}
	return false
}

// symptom returns the cause the runner derived for res, or one from its
// status when none was recorded.
func (res *Result) symptom() string {
	if res.cause != "" {
		return res.cause
	}
	if res.Status == StatusError {
		return "adapter-error"
	}
	if res.Status == StatusFail {
		return wrongAnswer(res.Kind)
	}
	return "unjudged"
}

// wrongAnswer is the symptom of a wrong result (not a rejection) for a
// vector kind.
func wrongAnswer(kind string) string {
	switch kind {
	case kindDuration:
		return "wrong-duration"
	case kindValidate:
		return "wrong-effective"
	case kindMatch:
		return "wrong-match"
	case kindDecide:
		return "wrong-decision"
	case kindScenario:
		return "wrong-scenario"
	}
	return "wrong-delay"
}

// failSymptom derives the symptom of a failed comparison of got against w.
func failSymptom(kind string, w *outcome, got protocol.Response, reason string) string {
	entries := []outcome{*w}
	if w.Acceptable != nil {
		entries = w.Acceptable
	}
	allErr, anyErr := true, false
	for _, e := range entries {
		allErr = allErr && e.Error != ""
		anyErr = anyErr || e.Error != ""
	}
	switch {
	case allErr && got.Error == nil:
		return "accepts-invalid"
	case !anyErr && got.Error != nil:
		return "rejects-valid"
	case got.Error != nil && strings.HasPrefix(reason, "error type"):
		return "wrong-error-type"
	case got.Error != nil && strings.HasPrefix(reason, "error message"):
		return "message-lacks-field"
	}
	return wrongAnswer(kind)
}

// errorSymptom derives the symptom of an error returned by Do.
func errorSymptom(err error) string {
	var ae *protocol.AdapterError
	if errors.As(err, &ae) {
		return "adapter-" + ae.Kind
	}
	return "adapter-error"
}
