package fuzz

import (
	"context"
	"math"
	"sort"
	"strings"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
	"github.com/retrykit/retrykit/policytest"
)

// Cause is what a disagreement shows of the implementation: the bug model
// that reproduces its answer, and the rule it breaks, with the labels a
// vector of it carries. The zero value is a disagreement no model
// reproduces and no rule was found for.
type Cause struct {
	// Model is the most specific bug model of package diagnose that
	// reproduces the implementation's answer exactly; ok is false when
	// none does.
	Model diagnose.Model
	ok    bool
	// Requirement and Section name the rule broken ("RET-06", "5.3").
	Requirement, Section string
	// Flags are the flags a vector of the disagreement carries: the
	// failure class of the rule ("class:post-jitter-cap"),
	// "retrykit:decision" exactly when Requirement is a retrykit decision
	// (RK-nn), and the flags of the request itself ("extension:…",
	// "should:…", "float-tolerance").
	Flags []string
}

// Found reports whether a bug model reproduces the disagreement (c.Model).
func (c Cause) Found() bool { return c.ok }

// Explain returns the cause of d. It applies these rules, in order:
//
//  1. the bug models of package diagnose that reproduce the
//     implementation's answer exactly name the broken rule;
//  2. the shipped vectors of the same kind that such a model fails (its
//     answer differs from the reference's) are the rule's vectors; of the
//     reproducing models the most specific one (the fewest such vectors)
//     is taken;
//  3. of that model's vectors, those of the requirement read from the
//     request and the reference's answer come first (so a missing cap
//     after jitter stays the MUST of section 5, RET-06, even where the
//     nearest vector is a retrykit decision about draws next to 1), then
//     the one whose input is closest to d's (same value, policy fields,
//     attempt, rand, patterns): it gives the requirement, the section and
//     the class flags, so that a vector of d counts at that level;
//  4. the flags that describe an input (extension:…, should:…,
//     float-tolerance) are d's own, never the near vector's: a vector of
//     a policy without backoff_strategy is not one an implementation
//     without the extension may leave unclaimed; but when the model is a
//     missing extension ([diagnose.Model.Unclaim]), its flag is added, so
//     that an implementation that declares it unclaimed skips the vector;
//  5. without a reproducing model or a matching vector, the requirement
//     is read from the request and the reference's answer, with d's own
//     flags.
//
// With opaque set (the implementation draws its own jitter, so a vector
// holds bounds, not an exact value), float-tolerance is dropped.
func Explain(d *policytest.Disagreement, opaque bool) Cause {
	return describe(d, explain(d, nil), opaque)
}

// confirmProbes is how many of a model's vectors Confirm replays.
const confirmProbes = 4

// Confirm is Explain with the model checked against the implementation
// itself, as a conformance report checks a cause against the passes: of
// the shipped vectors that tell a reproducing model from the reference
// (rule 2), the confirmProbes nearest to d's input are sent to impl, and a
// model is contradicted when impl answers one of them as the reference
// does, not as the model would. The most specific model not contradicted is
// named; with every reproducing model contradicted, none is (the answer is
// unexplained). A single answer can fit a narrower bug than the
// implementation has: "P0M" rejected fits both "zero durations rejected"
// and "no months or years", and only PT0S, sent to the implementation,
// tells them apart. An answer impl cannot give (an error, unsupported, a
// malformed line) contradicts nothing.
func Confirm(ctx context.Context, impl protocol.Implementation, d *policytest.Disagreement, opaque bool) Cause {
	ref := conformance.Reference()
	check := func(m diagnose.Model, probes []*conformance.Vector) bool {
		for _, v := range probes {
			vr, _ := requestOf(v)
			want, err := ref.Do(ctx, vr)
			if err != nil {
				continue
			}
			a, _ := m.Answer(vr)
			got, err := impl.Do(ctx, vr)
			if err != nil || got.Unsupported || got.Check(vr.Op) != nil {
				continue
			}
			if sameResponse(got, want) && !sameResponse(got, a) {
				return false
			}
		}
		return true
	}
	return describe(d, explain(d, check), opaque)
}

// describe applies rule 4 of Explain to the cause c of d.
func describe(d *policytest.Disagreement, c Cause, opaque bool) Cause {
	describesInput := func(f string) bool {
		return strings.HasPrefix(f, "should:") || strings.HasPrefix(f, "extension:") || f == "float-tolerance"
	}
	var flags []string
	for _, f := range c.Flags {
		if !describesInput(f) && f != "retrykit:decision" {
			flags = append(flags, f)
		}
	}
	if strings.HasPrefix(c.Requirement, "RK-") {
		flags = append(flags, "retrykit:decision")
	}
	inputFlags := append([]string(nil), d.Flags...)
	if c.ok && c.Model.Unclaim() != "" {
		inputFlags = append(inputFlags, strings.Split(c.Model.Unclaim(), ",")...)
	}
	for _, f := range inputFlags {
		if describesInput(f) && !hasFlag(flags, f) && !(opaque && f == "float-tolerance") {
			flags = append(flags, f)
		}
	}
	if flags == nil {
		flags = []string{}
	}
	c.Flags = flags
	return c
}

// reproduces reports whether a model's answer a is the implementation's
// answer got. With tolerant set (the request carries float-tolerance, so
// the vectors accept either float rounding, RK-05, RK-06), delays within
// max(1ns, want·2⁻⁴⁰) of each other are the same, as the runner judges
// them: a model in exact arithmetic still reproduces an implementation
// whose 0.5 + r rounds.
func reproduces(a, got protocol.Response, tolerant bool) bool {
	if sameResponse(a, got) || !tolerant || a.DelayNS == nil || got.DelayNS == nil || a.Action != got.Action || a.Error != nil || got.Error != nil {
		return sameResponse(a, got)
	}
	x, y := *a.DelayNS, *got.DelayNS
	diff := float64(x) - float64(y)
	return math.Abs(diff) <= math.Max(1, math.Abs(float64(y))*0x1p-40)
}

// explain applies rules 1 to 3 and 5 of Explain, with the near vector's
// flags as they are. With check set, a model is taken only when check
// accepts it given its vectors, nearest to d's input first (Confirm).
func explain(d *policytest.Disagreement, check func(diagnose.Model, []*conformance.Vector) bool) Cause {
	req := requirement(d)
	c := Cause{Requirement: req, Section: sections[req], Flags: append([]string(nil), d.Flags...)}
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		return c
	}
	tolerant := hasFlag(d.Flags, "float-tolerance")
	var models []diagnose.Model
	for _, m := range diagnose.Models() {
		if a, ok := m.Answer(d.Request); ok && !diagnose.Drawn(a) && reproduces(a, d.Got, tolerant) {
			models = append(models, m)
		}
	}
	kind := d.Request.Op
	if kind == protocol.OpParseDuration {
		kind = "duration"
	}
	ref := conformance.Reference()
	var best *conformance.Vector
	bestCaught := 0
	var confirmed []diagnose.Model
	for _, m := range models {
		var near *conformance.Vector
		nearScore, caught := -1, 0
		var mine []*conformance.Vector
		score := map[*conformance.Vector]int{}
		for _, v := range suite.Vectors {
			if v.Kind != kind || hasFlag(v.Flags, "implementation-defined") {
				continue
			}
			vr, ok := requestOf(v)
			if !ok {
				continue
			}
			a, ok := m.Answer(vr)
			if !ok || diagnose.Drawn(a) {
				continue
			}
			if w, err := ref.Do(context.Background(), vr); err != nil || sameResponse(a, w) {
				continue
			}
			caught++
			sc := closeness(d.Request, vr)
			if check != nil {
				mine, score[v] = append(mine, v), sc
			}
			if v.Requirement == req {
				sc += 1 << 20 // rule 3: the requirement the answer itself shows first
			}
			if sc > nearScore {
				near, nearScore = v, sc
			}
		}
		if check != nil {
			sort.SliceStable(mine, func(i, j int) bool { return score[mine[i]] > score[mine[j]] })
			if !check(m, mine[:min(len(mine), confirmProbes)]) {
				continue
			}
			confirmed = append(confirmed, m)
		}
		if near != nil && (best == nil || caught < bestCaught) {
			best, bestCaught = near, caught
			c.Model, c.ok = m, true
		}
	}
	if best == nil {
		if check != nil {
			models = confirmed
		}
		if len(models) > 0 {
			c.Model, c.ok = models[0], true
		}
		return c
	}
	c.Requirement, c.Section, c.Flags = best.Requirement, best.Section, append([]string(nil), best.Flags...)
	return c
}
