package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/profile"
)

// trFeature is what translate says of one of the five retry features of
// docs/extensions.md: what the system has of it (profile.Support) and how
// it crosses over.
type trFeature struct {
	Feature string `json:"feature"`
	Level   string `json:"level"`               // the system's: yes, partial or no
	How     string `json:"how,omitempty"`       // the system's mechanism
	Source  string `json:"source,omitempty"`    // where it was read
	Used    bool   `json:"used,omitempty"`      // --to: the policy uses the feature
	Carried string `json:"carried"`             // yes, partly or no
	Note    string `json:"note"`                // how it is carried, or why not
	JSON    string `json:"extension,omitempty"` // the extension JSON that carries it (--profile)
}

// extensionField is where each feature lives in the extension JSON.
var extensionField = map[profile.Feature]string{
	profile.FeatureErrorRules:  "error_rules entries (match, and the backoff and max_attempts of each error type), §3.2",
	profile.FeatureRetryAfter:  "the FAIL member retry_after (errmatch.WithRetryAfter in Go), bounded by max_retry_after, §3.3",
	profile.FeatureSnooze:      "the FAIL member snooze (errmatch.Snoozed in Go), with max_snoozes and max_snooze, §3.5",
	profile.FeatureJitterMode:  "jitter_mode (full, equal or decorrelated), §3.4",
	profile.FeatureRetryBudget: "the queue's retry_budget (a token_bucket or a ratio), §2.3 and §3.6",
}

// budgetOf is the retry_budget that stands for a system's own budget,
// where one carries over: a token bucket whose counts are the system's
// divided by its retry cost (docs/decisions.md RK-321).
var budgetOf = map[string]struct{ json, note string }{
	"aws_go": {`{"token_bucket": {"capacity": 100, "credit_per_success": 0.2}}`,
		"the retry quota of 500 tokens at 5 per retry and 1 back per success, divided by the retry cost 5; a timeout retry's 10 and the refund of a successful retry's cost are not carried"},
	"aws": {`{"token_bucket": {"capacity": 100, "credit_per_success": 0.2}}`,
		"standard mode's quota of 500 tokens at 5 per retry, divided by the retry cost 5; legacy mode, botocore's default, has none; a timeout retry's 10 and the refund of a successful retry's cost are not carried"},
	"grpc_retry": {`{"token_bucket": {"capacity": 5, "credit_per_success": 0.1}}`,
		"for retryThrottling {maxTokens: 10, tokenRatio: 0.1}: capacity maxTokens/2, credit_per_success tokenRatio; gRPC also takes a token for a failure it does not retry, which this bucket does not (RK-321)"},
	"failsafe": {`{"ratio": {"ratio": 0.2, "min_per_second": 3, "window": "PT1S"}}`,
		"closest, not exact: failsafe-go counts retries in flight (maxRate 0.2 of executions in flight, at least minConcurrency 3), the extension counts retries over a window; with executions of about a second each the two agree"},
}

// jitterModeOf is the jitter_mode that gives a profile's jitter, where one
// does.
var jitterModeOf = map[string]string{
	"full_jitter": "full", "equal_jitter": "equal", "decorrelated_jitter": "decorrelated",
	"aws": "full", "aws_go": "full", "celery": "full", "gax": "full", "bullmq": "full (backoff.jitter 1) or equal (0.5)",
}

// featuresFrom says, for translate --profile, how each feature the system
// has crosses into the extension.
func featuresFrom(p profile.Profile) []trFeature {
	var out []trFeature
	for _, s := range p.Supports() {
		f := trFeature{Feature: string(s.Feature), Level: string(s.Level), How: s.How, Source: s.Source}
		switch {
		case s.Level == profile.Absent:
			f.Carried, f.Note = "no", baseName(p)+" has nothing to carry"
		case s.Feature == profile.FeatureRetryBudget:
			if b, ok := budgetOf[baseName(p)]; ok {
				f.Carried, f.JSON, f.Note = "yes", b.json, "as retry_budget "+b.json+": "+b.note
			} else {
				f.Carried, f.Note = "partly", "as "+extensionField[s.Feature]
			}
		case s.Feature == profile.FeatureJitterMode:
			if m, ok := jitterModeOf[baseName(p)]; ok {
				f.Carried, f.Note = "yes", "as jitter_mode "+m+" (§3.4)"
				if len(m) < 13 {
					f.JSON = fmt.Sprintf(`{"jitter": true, "jitter_mode": %q}`, m)
				}
			} else {
				f.Carried, f.Note = "no", "its jitter is none of full, equal and decorrelated: the policy's own jitter stands for it"
			}
		case s.Level == profile.Native:
			f.Carried, f.Note = "yes", "as "+extensionField[s.Feature]
		default:
			f.Carried, f.Note = "partly", "what the hook computes becomes "+extensionField[s.Feature]+"; code in the hook beyond that is not carried"
		}
		out = append(out, f)
	}
	return out
}

// usedFeatures returns the features an effective policy uses, read from
// its JSON: error_rules, a jitter_mode other than proportional, a
// max_retry_after, max_snoozes above 0. A retry budget is queue
// configuration, never in a policy.
func usedFeatures(pol *policy.Policy) map[profile.Feature]bool {
	js, err := pol.MarshalJSON()
	used := map[profile.Feature]bool{}
	if err != nil {
		return used
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(js, &m) != nil {
		return used
	}
	if v, ok := m["error_rules"]; ok && string(v) != "null" && string(v) != "[]" {
		used[profile.FeatureErrorRules] = true
	}
	if v, ok := m["jitter_mode"]; ok && string(v) != `"proportional"` && string(v) != "null" {
		used[profile.FeatureJitterMode] = true
	}
	if _, ok := m["max_retry_after"]; ok {
		used[profile.FeatureRetryAfter] = true
	}
	if v, ok := m["max_snoozes"]; ok && string(v) != "0" {
		used[profile.FeatureSnooze] = true
	}
	return used
}

// featuresTo says, for translate --to, whether the target carries each
// feature the policy uses, and what it has of the others.
func featuresTo(pol *policy.Policy, base profile.Profile) []trFeature {
	used := usedFeatures(pol)
	name := baseName(base)
	var out []trFeature
	for _, s := range base.Supports() {
		f := trFeature{Feature: string(s.Feature), Level: string(s.Level), How: s.How, Source: s.Source, Used: used[s.Feature]}
		switch {
		case !f.Used && s.Feature == profile.FeatureRetryBudget:
			f.Carried, f.Note = "no", budgetNote(name, s)
		case !f.Used:
			f.Carried, f.Note = "no", "the policy does not use it"
		case s.Level == profile.Native:
			f.Carried, f.Note = "yes", name+" expresses it: "+s.How
		case s.Level == profile.Partial:
			f.Carried, f.Note = "partly", name+" expresses part of it: "+s.How
		default:
			f.Carried, f.Note = "no", name+" cannot express it: the translation drops it"
			if s.How != "" {
				f.Note += " (nearest: " + s.How + ")"
			}
		}
		out = append(out, f)
	}
	return out
}

// budgetNote says what a target has for a queue's retry budget, which is
// queue configuration and never in a policy.
func budgetNote(name string, s profile.Support) string {
	switch b, ok := budgetOf[name]; {
	case s.Level == profile.Absent:
		return "a queue's retry_budget cannot be carried to " + name + ": it has none"
	case ok:
		return "not in a policy: a queue's retry_budget " + b.json + " is the equivalent of its own (" + b.note + ")"
	}
	return "not in a policy: a queue's retry_budget maps onto its own only in part"
}

// writeFeatures writes the features section of a translation: one line
// per feature the system has or the policy uses.
func writeFeatures(w io.Writer, t *translation) {
	var lines []string
	to := t.Profile != ""
	for _, f := range t.Features {
		switch {
		case to && !f.Used && (f.Feature != string(profile.FeatureRetryBudget) || f.Level == string(profile.Absent)):
			continue // --to: what the policy does not use, but the target's own budget
		case !to && f.Level == string(profile.Absent):
			continue // --profile: what the system has
		}
		line := fmt.Sprintf("  %-12s %s has: %s", f.Feature, t.systemName(), f.Level)
		if f.How != "" {
			line += " (" + f.How + ")"
		}
		line += "; carried: " + f.Carried + ": " + f.Note
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		if to {
			fmt.Fprintln(w, "retry features (docs/extensions.md): the policy uses none of the five")
		} else {
			fmt.Fprintf(w, "retry features (docs/extensions.md): %s has none of the five\n", t.systemName())
		}
		return
	}
	fmt.Fprintln(w, "retry features (docs/extensions.md, docs/profiles/features.md):")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// systemName is the system side of a translation.
func (t *translation) systemName() string {
	if t.Profile != "" {
		return t.To
	}
	return t.From
}
