// The causes of a run's failures: a failing server, then the server bug
// models and fitted families that reproduce the answers (package
// servermodel), then the rest grouped by the deviation observed.

package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/live/servermodel"
)

// wireCheck names the checks judged on every answer's headers and error
// bodies, which a failing server can pass.
var wireCheck = map[string]bool{"http-content-type": true, "http-ojs-version": true, "http-error-object": true}

// diagnose replaces the report's causes (computed by Report.Tally from
// the checks' classes) by the diagnosis of the run:
//
//  1. a server that passed no retry check (the wireCheck checks aside) and
//     answered at least half of the requests with 5xx or not at all is
//     failing: one cause lists every failed and errored check;
//  2. else the bug models of package servermodel that reproduce the
//     server's answers and contradict no pass (a pass the timing
//     resolution made inconclusive counts among the passes that could
//     contradict it), each with the checks it explains, the count of
//     passing checks it was replayed on, and the dialect flag that
//     explains it, if any;
//  3. the failed checks no model explains, grouped by the deviation
//     observed (servermodel.Deviations), each with an example;
//  4. errored checks keep the runner's symptoms.
func (e *env) diagnose(rep *conformance.Report) {
	if rep.Totals.Fail+rep.Totals.Error == 0 {
		return
	}
	e.c.mu.Lock()
	failing, requests := e.c.failing, e.c.requests
	e.c.mu.Unlock()
	// The Content-Type of error answers says nothing of retries: a server
	// failing with well-typed 500s passes that check alone.
	passed := 0
	for _, r := range rep.Results {
		if r.Status == conformance.StatusPass && !wireCheck[r.ID] {
			passed++
		}
	}
	if passed == 0 && failing > 0 && 2*failing >= requests {
		c := conformance.Cause{Class: "server-failing",
			Explanation: fmt.Sprintf("the server answered %d of %d requests with HTTP 5xx or not at all and passed no check: it is failing, so no retry behaviour could be judged; look at its log and its backing service first", failing, requests)}
		for _, r := range rep.Results {
			if r.Status == conformance.StatusFail || r.Status == conformance.StatusError {
				c.IDs = append(c.IDs, r.ID)
			}
		}
		rep.Causes = []conformance.Cause{c}
		return
	}
	failed := map[string]bool{}
	isPass := map[string]bool{} // the checks the report calls passes
	for _, r := range rep.Results {
		switch r.Status {
		case conformance.StatusPass:
			failed[r.ID], isPass[r.ID] = false, true
		case conformance.StatusFail:
			failed[r.ID] = true
		}
	}
	e.mu.Lock()
	// a pass made inconclusive by a window too wide still saw what it
	// saw: its answers contradict a model that predicts otherwise even
	// through the wide window (whether a job was retried at all, say), so it
	// counts as a pass for the contradictions (RK-395)
	for _, id := range e.res.coarsePasses {
		if _, judged := failed[id]; !judged {
			failed[id] = false
		}
	}
	obs := append([]servermodel.Obs(nil), e.obs...)
	e.mu.Unlock()
	found, unexplained := servermodel.Diagnose(obs, failed)
	explained := map[string]bool{}
	var causes []conformance.Cause
	passesOf := map[string][]string{} // a bug model's cause → the passing checks it was replayed on
	for _, f := range found {
		expl := f.Model.Fix
		if f.Model.Flag != "" && e.flagFits(f.Model.Flag) {
			expl += "; or, if the server means this dialect of the binding, run with " + f.Model.Flag
		}
		// the passes it was replayed on, as the report calls them: an
		// inconclusive check held against it is not counted a pass
		var replayed []string
		for _, id := range f.Replayed {
			if isPass[id] {
				replayed = append(replayed, id)
			}
		}
		n := len(replayed)
		causes = append(causes, conformance.Cause{Class: "bug:" + f.Model.Name, Explanation: expl, IDs: f.Explains,
			Reproduced: true, PassesReplayed: &n, Equivalent: f.Equivalent})
		passesOf["bug:"+f.Model.Name] = replayed
		for _, id := range f.Explains {
			explained[id] = true
		}
	}
	causes = joinNoMerge(causes, passesOf)
	order := map[string]int{}
	for i, r := range rep.Results {
		order[r.ID] = i
	}
	for i := range causes { // a joined cause's checks in result order too
		byResult := func(a, b string) int { return order[a] - order[b] }
		slices.SortStableFunc(causes[i].IDs, byResult)
	}
	// the largest first: a joined cause may hold more than those taken
	// before it
	slices.SortStableFunc(causes, func(a, b conformance.Cause) int { return len(b.IDs) - len(a.IDs) })
	reason := map[string]string{}
	for _, r := range rep.Results {
		reason[r.ID] = r.Reason
	}
	// failed checks without an observation the models read are judged by
	// what the check saw itself, each a group of its own
	seen := map[string]bool{}
	for _, o := range obs {
		seen[o.Check] = true
	}
	for _, r := range rep.Results {
		if r.Status == conformance.StatusFail && !seen[r.ID] && !explained[r.ID] {
			unexplained = append(unexplained, r.ID)
		}
	}
	for _, g := range servermodel.Deviations(obs, unexplained) {
		c := conformance.Cause{Class: "unexplained:" + g.Name, IDs: g.Checks,
			Explanation: "no bug model or fitted family reproduces these; observed: " + g.Explanation}
		c.Reproduction = g.Example
		if c.Reproduction == "" && len(g.Checks) > 0 {
			c.Reproduction = g.Checks[0] + ": " + reason[g.Checks[0]]
		}
		causes = append(causes, c)
		for _, id := range g.Checks {
			explained[id] = true
		}
	}
	// what is left (errors, checks Diagnose does not judge) keeps the
	// runner's symptoms
	for _, c := range rep.Causes {
		if c.Reproduced {
			continue
		}
		var ids []string
		for _, id := range c.IDs {
			if !explained[id] {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			c.IDs = ids
			causes = append(causes, c)
		}
	}
	rep.Causes = causes
}

// flagFits reports whether flag differs from what the run used, so that
// suggesting it changes something.
func (e *env) flagFits(flag string) bool {
	switch flag {
	case "--interval-form iso":
		return e.cfg.intervalMs
	case "--interval-form ms":
		return !e.cfg.intervalMs
	case "--error-type-field code":
		return e.sendsType()
	case "--nonretryable-discards":
		return !e.cfg.nrDiscards
	}
	return true
}

// judgeContentType judges the media types of the answers with a body
// (binding §4.1): application/openjobspec+json passes, application/json
// (the alias servers must accept from clients) passes with a note, any
// other fails.
func (e *env) judgeContentType() {
	const check = "http-content-type"
	e.c.mu.Lock()
	n := e.c.jsonAnswers
	var alias int64
	var bad []string
	for ct, k := range e.c.contentTypes {
		switch ct {
		case contentType:
		case "application/json":
			alias += k
		default:
			name := ct
			if name == "" {
				name = "no Content-Type"
			}
			bad = append(bad, fmt.Sprintf("%q ×%d", name, k))
		}
	}
	e.c.mu.Unlock()
	switch {
	case n == 0:
		e.notRun(check, "no answer had a body")
	case len(bad) > 0:
		slices.Sort(bad)
		e.fail(check, "%d answers with a body; media types other than %s: %s", n, contentType, strings.Join(bad, ", "))
	case alias > 0:
		e.pass(check, fmt.Sprintf("%d of %d answers are application/json, the alias the binding makes servers accept; %s is its MUST", alias, n, contentType))
	default:
		e.pass(check, "")
	}
}
