package main

import (
	"bytes"
	"encoding/json"
	"github.com/retrykit/retrykit/retrybudget"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTranslateToOJS(t *testing.T) {
	for _, c := range []struct {
		spec, policy string
		exact        bool
	}{
		// Temporal: min(2s * 3^(n-1), 1m), 6 attempts = OJS exponential, no jitter.
		{"temporal:initial_interval=2s,backoff_coefficient=3,maximum_interval=1m,maximum_attempts=6",
			`"max_attempts":6,"initial_interval":"PT2S","backoff_coefficient":3.0,"max_interval":"PT1M","jitter":false`, true},
		// BullMQ exponential: 3s * 2^(n-1), 5 attempts; the largest delay used is 24s.
		{"bullmq:type=exponential,delay=3000,attempts=5",
			`"max_attempts":5,"initial_interval":"PT3S","backoff_coefficient":2.0,"max_interval":"PT24S","jitter":false`, true},
		// BullMQ fixed: 1.5s each time.
		{"bullmq:type=fixed,delay=1500,attempts=4", `"initial_interval":"PT1.5S"`, true},
		// BullMQ's jitter is not OJS's, River's formula not an OJS one.
		{"bullmq:type=exponential,delay=1000,attempts=3,jitter=0.5", "", false},
		{"river", "", false},
		// resque-retry's table 10, 20, 40 s is 10s * 2^(n-1): the fit finds it exactly.
		{"resque_retry:backoff_strategy=10/20/40/80,retry_limit=3",
			`"max_attempts":4,"initial_interval":"PT10S","backoff_coefficient":2.0`, true},
	} {
		code, out, errOut := runCLI(t, "", "translate", "--profile", c.spec, "--json")
		var tr translation
		if code != 0 || json.Unmarshal([]byte(out), &tr) != nil {
			t.Fatalf("%s: exit %d: %s %s", c.spec, code, out, errOut)
		}
		var compact bytes.Buffer
		json.Compact(&compact, tr.Policy)
		if tr.Exact != c.exact || !strings.Contains(compact.String(), c.policy) {
			t.Errorf("%s: exact %t, policy %s; want exact %t and %s", c.spec, tr.Exact, tr.Policy, c.exact, c.policy)
		}
		// An exact translation never carries the note that it is only the closest.
		if notes := strings.Join(tr.Notes, "\n"); tr.Exact && strings.Contains(notes, "no OJS policy gives this schedule exactly") {
			t.Errorf("%s: exact, yet the notes say it is not: %s", c.spec, notes)
		}
	}
}

func TestTranslateToSystem(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.json")
	os.WriteFile(pol, []byte(`{"max_attempts":5,"initial_interval":"PT2S","backoff_coefficient":3,"max_interval":"PT1M","jitter":false}`), 0o600)
	dlq := filepath.Join(dir, "dlq.json")
	os.WriteFile(dlq, []byte(`{"max_attempts":5,"initial_interval":"PT2S","backoff_coefficient":3,"max_interval":"PT1M","jitter":false,"on_exhaustion":"dead_letter"}`), 0o600)
	for _, c := range []struct {
		args  []string
		conf  string
		exact bool
	}{
		{[]string{"--to", "temporal", pol}, "temporal:initial_interval=2s,backoff_coefficient=3,maximum_interval=1m0s,maximum_attempts=5", true},
		// BullMQ doubles; a coefficient of 3 has no BullMQ setting.
		{[]string{"--to", "bullmq", pol}, "bullmq:type=exponential,delay=2000,attempts=5", false},
		// The default policy: 1s * 2^(n-1) * [0.5, 1.5): BullMQ's jitter 2/3
		// of 1.5s draws from [0.5s, 1.5s).
		{[]string{"--to", "bullmq"}, "bullmq:type=exponential,delay=1500,attempts=3,jitter=0.6666666666666666", false},
		{[]string{"--to", "river"}, "river:MaxAttempts=3", false},
		{[]string{"--to", "sidekiq"}, "sidekiq:retry=2", false},
		// pg-boss's backoff waits retryDelay * 2^(n-1) * [1, 2) whole
		// seconds: retryDelay round(2/3 of the first interval) = 1 s, with
		// the policy's cap as retryDelayMax, is closer than a flat wait.
		{[]string{"--to", "pg_boss", pol}, "pg_boss:retryLimit=4,retryDelay=1,retryBackoff=true,retryDelayMax=60", false},
		{[]string{"--to", "pg_boss"}, "pg_boss:retryLimit=2,retryDelay=1,retryBackoff=true,retryDelayMax=300", false},
		// resque-retry's @backoff_strategy holds the policy's delays, 2, 6, 18
		// and 54 s; it gives up to the failed queue where the policy discards.
		{[]string{"--to", "resque_retry", pol}, "resque_retry:retry_limit=4,backoff_strategy=2/6/18/54", false},
		// With dead_letter at exhaustion the two are the same schedule.
		{[]string{"--to", "resque_retry", dlq}, "resque_retry:retry_limit=4,backoff_strategy=2/6/18/54", true},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"translate", "--json"}, c.args...)...)
		var tr translation
		if code != 0 || json.Unmarshal([]byte(out), &tr) != nil {
			t.Fatalf("%q: exit %d: %s %s", c.args, code, out, errOut)
		}
		if tr.Profile != c.conf || tr.Exact != c.exact {
			t.Errorf("%q: %s (exact %t), want %s (exact %t)", c.args, tr.Profile, tr.Exact, c.conf, c.exact)
		}
		if len(tr.Rows) == 0 {
			t.Errorf("%q: no per-attempt rows", c.args)
		}
	}
	// max_attempts 2^63-1 saturates at each system's own limit.
	huge := filepath.Join(dir, "huge.json")
	os.WriteFile(huge, []byte(`{"max_attempts":9223372036854775807,"initial_interval":"PT1S","jitter":false}`), 0o600)
	for sys, want := range map[string]string{"temporal": "maximum_attempts=2147483646", "sidekiq": "sidekiq", "river": "river", "asynq": "asynq", "pg_boss": "retryLimit=2147483645,"} {
		code, out, errOut := runCLI(t, "", "translate", "--json", "--to", sys, huge)
		var tr translation
		if code != 0 || json.Unmarshal([]byte(out), &tr) != nil || !strings.Contains(tr.Profile, want) {
			t.Errorf("--to %s with max_attempts 2^63-1: exit %d, %q, want %q (%s)", sys, code, tr.Profile, want, errOut)
		}
	}
	// gRPC keeps more than 5 attempts only with the channel's
	// grpc.WithMaxCallAttempts: 8 attempts come out as both settings.
	eight := filepath.Join(dir, "eight.json")
	os.WriteFile(eight, []byte(`{"max_attempts":8,"initial_interval":"PT1S","max_interval":"PT1M","jitter":false}`), 0o600)
	if code, out, errOut := runCLI(t, "", "translate", "--json", "--to", "grpc_retry", eight); code != 0 ||
		!strings.Contains(out, "maxAttempts=8,") || !strings.Contains(out, "maxCallAttempts=8") {
		t.Errorf("--to grpc_retry with max_attempts 8: exit %d, %s %s; want maxAttempts=8 and maxCallAttempts=8", code, out, errOut)
	}
	code, out, _ := runCLI(t, "", "translate", "--to", "bullmq", pol)
	if code != 0 || !strings.Contains(out, "-33.3%") || !strings.Contains(out, "closest, not exact") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}

func TestTranslateErrors(t *testing.T) {
	for _, args := range [][]string{{"translate"}, {"translate", "--profile", "river", "--to", "bullmq"},
		{"translate", "--profile", "sidkiq"}, {"translate", "--to", "nope"}, {"translate", "--profile", "river", "x.json"},
		{"translate", "--to", "river", "a", "b"}, {"translate", "--to", "river", "/nonexistent/p.json"}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.HasPrefix(errOut, "retrykit translate: ") {
			t.Errorf("%q: exit %d, %q", args, code, errOut)
		}
	}
	code, out, errOut := runCLI(t, "", "translate", "--help")
	if code != 0 || strings.Count(out+errOut, "usage: retrykit translate") != 1 {
		t.Errorf("--help: exit %d\n%s%s", code, out, errOut)
	}
}

// A configured value that is an OJS field comes out as that field, not as
// whatever the fit finds: Celery's retry_backoff_max 60 is max_interval 1m.
func TestTranslateKeepsConfiguredCap(t *testing.T) {
	code, out, errOut := runCLI(t, "", "translate", "--profile", "celery:retry_backoff=true,retry_backoff_max=60,max_retries=5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tr struct {
		Policy struct {
			MaxInterval string `json:"max_interval"`
			MaxAttempts int    `json:"max_attempts"`
		} `json:"policy"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Policy.MaxInterval != "PT1M" || tr.Policy.MaxAttempts != 6 {
		t.Errorf("policy max_interval %q, max_attempts %d; want PT1M (retry_backoff_max=60) and 6 (max_retries=5)\n%s", tr.Policy.MaxInterval, tr.Policy.MaxAttempts, out)
	}
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "retry_backoff_max=60 is kept as max_interval") {
		t.Errorf("no note that retry_backoff_max is kept: %v", tr.Notes)
	}
}

// A profile that never retries is exactly max_attempts 1, whatever its
// delay formula or jitter.
func TestTranslateNoRetryIsExact(t *testing.T) {
	for _, spec := range []string{"sidekiq:retry=0", "river:MaxAttempts=1", "faktory:retry=0", "bullmq"} {
		code, out, errOut := runCLI(t, "", "translate", "--profile", spec, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", spec, code, errOut)
		}
		var tr struct {
			Exact  bool `json:"exact"`
			Policy struct {
				MaxAttempts int `json:"max_attempts"`
			} `json:"policy"`
		}
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatal(err)
		}
		if !tr.Exact || tr.Policy.MaxAttempts != 1 {
			t.Errorf("%s: exact %v, max_attempts %d; want exact max_attempts 1\n%s", spec, tr.Exact, tr.Policy.MaxAttempts, out)
		}
	}
}

// When the target's settings cannot give the policy's schedule, translate
// says so and names what the system would need.
func TestTranslateSaysWhatTheTargetNeeds(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(pol, []byte(`{"max_attempts": 6, "initial_interval": "PT1S", "max_interval": "PT10S", "jitter": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "translate", "--to", "bullmq", pol)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// 1, 2, 4, 8, then the 10 s cap; BullMQ's exponential has no cap: 16 s, +60 %.
	for _, want := range []string{"bullmq cannot express this schedule", "+60.0% off at attempt 5", "custom backoff strategy"} {
		if !strings.Contains(out, want) {
			t.Errorf("translate --to bullmq lacks %q:\n%s", want, out)
		}
	}
}

// translate --profile says how each retry feature the system has crosses
// into the extension; a retry quota comes out as a retry_budget that
// retrybudget.Parse reads.
func TestTranslateCarriesSystemFeatures(t *testing.T) {
	get := func(name string) map[string]trFeature {
		code, out, errOut := runCLI(t, "", "translate", "--profile", name, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var tr translation
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatal(err)
		}
		m := map[string]trFeature{}
		for _, f := range tr.Features {
			m[f.Feature] = f
		}
		if len(m) != 5 {
			t.Fatalf("%s: %d features", name, len(m))
		}
		return m
	}
	aws := get("aws_go")
	b := aws["retry_budget"]
	if b.Carried != "yes" || b.JSON == "" {
		t.Fatalf("aws_go retry_budget: %+v", b)
	}
	bud, err := retrybudget.Parse([]byte(b.JSON))
	if err != nil {
		t.Fatal(err)
	}
	if s := bud.(*retrybudget.TokenBucket).Spec(); s.Capacity != 100 || s.CreditPerSuccess != 0.2 {
		t.Fatalf("aws_go budget %+v: want 500 tokens and 1 per success divided by the retry cost 5", s)
	}
	if f := aws["jitter_mode"]; f.Carried != "yes" || !strings.Contains(f.Note, "full") {
		t.Fatalf("aws_go jitter: %+v", f)
	}
	if f := get("river")["snooze"]; f.Level != "yes" || f.Carried != "yes" || !strings.Contains(f.How, "JobSnooze") {
		t.Fatalf("river snooze: %+v", f)
	}
	if f := get("temporal")["snooze"]; f.Level != "no" || f.Carried != "no" {
		t.Fatalf("temporal snooze: %+v", f)
	}
	_, out, _ := runCLI(t, "", "translate", "--profile", "bee_queue")
	if !strings.Contains(out, "bee_queue has none of the five") {
		t.Fatalf("bee_queue:\n%s", out)
	}
	_, out, _ = runCLI(t, "", "translate", "--to", "grpc_retry")
	if !strings.Contains(out, `retry_budget {"token_bucket": {"capacity": 5, "credit_per_success": 0.1}}`) {
		t.Fatalf("--to grpc_retry names no budget equivalent:\n%s", out)
	}
}

// translate --to carries the retry features a policy uses where the
// target has them, and says so where it cannot express them.
func TestTranslateToSaysWhichFeaturesCross(t *testing.T) {
	pol := `{"max_attempts": 5, "jitter_mode": "full", "max_snoozes": 3, "max_retry_after": "PT1M",
		"error_rules": [{"match": ["http.429"], "initial_interval": "PT1M"}]}`
	get := func(system string) map[string]trFeature {
		code, out, errOut := runCLI(t, pol, "translate", "--to", system, "-", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", system, code, errOut)
		}
		var tr translation
		if err := json.Unmarshal([]byte(out), &tr); err != nil {
			t.Fatal(err)
		}
		m := map[string]trFeature{}
		for _, f := range tr.Features {
			m[f.Feature] = f
		}
		return m
	}
	river := get("river")
	if f := river["snooze"]; !f.Used || f.Carried != "yes" || !strings.Contains(f.Note, "JobSnooze") {
		t.Errorf("river snooze: %+v", f)
	}
	if f := river["jitter_mode"]; !f.Used || f.Carried != "no" || !strings.Contains(f.Note, "cannot express") {
		t.Errorf("river jitter_mode: %+v", f)
	}
	temporal := get("temporal")
	if f := temporal["snooze"]; f.Carried != "no" || !strings.Contains(f.Note, "temporal cannot express it") {
		t.Errorf("temporal snooze: %+v", f)
	}
	if f := temporal["retry_after"]; !f.Used || f.Carried != "yes" || !strings.Contains(f.Note, "NextRetryDelay") {
		t.Errorf("temporal retry_after: %+v", f)
	}
	if f := get("sidekiq")["error_rules"]; !f.Used || f.Carried != "partly" {
		t.Errorf("sidekiq error_rules: %+v", f)
	}
	_, out, _ := runCLI(t, pol, "translate", "--to", "temporal", "-")
	if !strings.Contains(out, "snooze") || !strings.Contains(out, "cannot express it") {
		t.Errorf("text output says nothing of what temporal cannot carry:\n%s", out)
	}
}

// A policy that discards on exhaustion, translated to Sidekiq (which keeps
// an exhausted job in its Dead set), is told the difference and the option
// that discards; one that dead-letters agrees with Sidekiq and is told
// nothing about it.
func TestTranslateToSidekiqExplainsDiscardAndDeadSet(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		policy string
		note   bool
	}{
		{`{"max_attempts": 5, "on_exhaustion": "discard"}`, true},
		{`{"max_attempts": 5}`, true}, // the default is discard
		{`{"max_attempts": 5, "on_exhaustion": "dead_letter"}`, false},
	} {
		file := filepath.Join(dir, "p.json")
		if err := os.WriteFile(file, []byte(tc.policy), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, "", "translate", "--to", "sidekiq", file)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.policy, code, errOut)
		}
		got := strings.Contains(out, "note: on exhaustion the policy says discard; sidekiq does dead_letter: Sidekiq moves a job whose retries ran out to the Dead set") &&
			strings.Contains(out, "add dead: false to the job's sidekiq_options")
		if got != tc.note {
			t.Errorf("%s: note shown %v, want %v:\n%s", tc.policy, got, tc.note, out)
		}
	}
}
