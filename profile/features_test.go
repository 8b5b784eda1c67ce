package profile_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/profile"
)

var updateFeatures = flag.Bool("update-features", false, "rewrite docs/profiles/features.md from the table")

// Every profile answers for all five features, in order; what a system
// has (wholly or partly) names its mechanism and where it was read.
func TestEveryProfileStatesTheFiveFeatures(t *testing.T) {
	for _, p := range profile.All() {
		ss := p.Supports()
		if len(ss) != len(profile.Features()) {
			t.Fatalf("%s: %d supports", p.Name(), len(ss))
		}
		for i, s := range ss {
			if s.Feature != profile.Features()[i] {
				t.Errorf("%s: support %d is %s", p.Name(), i, s.Feature)
			}
			switch s.Level {
			case profile.Native, profile.Partial:
				if s.How == "" || s.Source == "" {
					t.Errorf("%s %s: %s without a mechanism or a source: %+v", p.Name(), s.Feature, s.Level, s)
				}
			case profile.Absent:
			default:
				t.Errorf("%s %s: level %q", p.Name(), s.Feature, s.Level)
			}
		}
	}
}

// The mechanisms docs/extensions.md cites are where the table says, by
// their own names.
func TestFeatureMechanismsByName(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     profile.Feature
		level profile.Level
		has   string
	}{
		{"sidekiq", profile.FeatureErrorRules, profile.Partial, "sidekiq_retry_in"},
		{"celery", profile.FeatureRetryAfter, profile.Native, "countdown"},
		{"bullmq", profile.FeatureErrorRules, profile.Partial, "custom backoff strategy"},
		{"bullmq", profile.FeatureSnooze, profile.Native, "DelayedError"},
		{"temporal", profile.FeatureRetryAfter, profile.Native, "NextRetryDelay"},
		{"temporal", profile.FeatureSnooze, profile.Absent, ""},
		{"river", profile.FeatureSnooze, profile.Native, "JobSnooze"},
		{"river", profile.FeatureErrorRules, profile.Partial, "NextRetry"},
		{"asynq", profile.FeatureErrorRules, profile.Partial, "RetryDelayFunc"},
		{"asynq", profile.FeatureSnooze, profile.Native, "IsFailure"},
		{"failsafe", profile.FeatureRetryBudget, profile.Native, "maxRate"},
		{"grpc_retry", profile.FeatureRetryBudget, profile.Native, "retryThrottling"},
		{"aws_go", profile.FeatureRetryBudget, profile.Native, "retry quota"},
		{"full_jitter", profile.FeatureJitterMode, profile.Partial, "full jitter"},
		{"ojs", profile.FeatureSnooze, profile.Absent, ""},
		{"sidekiq@6.4.1", profile.FeatureErrorRules, profile.Partial, "|count, exception|"},
		{"river:MaxAttempts=5", profile.FeatureSnooze, profile.Native, "JobSnooze"},
	} {
		p, err := profile.Parse(c.name)
		if err != nil {
			t.Fatal(err)
		}
		s := p.Support(c.f)
		if s.Level != c.level || !strings.Contains(s.How, c.has) {
			t.Errorf("%s %s: %s %q, want %s naming %q", c.name, c.f, s.Level, s.How, c.level, c.has)
		}
	}
}

// docs/profiles/features.md is the table, as FeaturesMarkdown writes it
// (go test ./profile -run TestFeaturesPage -update-features rewrites it).
func TestFeaturesPage(t *testing.T) {
	var b strings.Builder
	b.WriteString("# The retry features each system has\n\n")
	b.WriteString("Which of the five features of the retry extensions ([extensions.md](../extensions.md)) each\n")
	b.WriteString("profiled system has, and through what, read from its source at the release the profile\n")
	b.WriteString("names (`profile.Profile.Supports`). **yes**: a mechanism of its own; **partial**: part of the\n")
	b.WriteString("feature, or a hook through which a user builds it; **no**: nothing (the nearest thing, if any,\n")
	b.WriteString("in the notes). `retrykit translate` reads this table: it carries a feature to a system that\n")
	b.WriteString("has it and says so where the system cannot express it.\n\n")
	b.WriteString("| profile | error_rules | retry_after | snooze | jitter_mode | retry_budget |\n|---|---|---|---|---|---|\n")
	for _, p := range profile.All() {
		fmt.Fprintf(&b, "| `%s` |", p.Name())
		for _, s := range p.Supports() {
			fmt.Fprintf(&b, " %s |", s.Level)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## How, and where it was read\n")
	for _, p := range profile.All() {
		fmt.Fprintf(&b, "\n### `%s`\n\n", p.Name())
		for _, s := range p.Supports() {
			if s.How == "" {
				continue
			}
			fmt.Fprintf(&b, "- **%s** (%s): %s. Source: %s.\n", s.Feature, s.Level, s.How, s.Source)
		}
	}
	const path = "../docs/profiles/features.md"
	if *updateFeatures {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Fatalf("%s is out of date: go test ./profile -run TestFeaturesPage -update-features", path)
	}
}
