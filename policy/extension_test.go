package policy_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// extPolicy is the policy of docs/extensions.md §2.1.
const extPolicy = `{
  "max_attempts": 5,
  "initial_interval": "PT1S",
  "backoff_coefficient": 2.0,
  "max_interval": "PT5M",
  "jitter": true,
  "jitter_mode": "decorrelated",
  "non_retryable_errors": ["validation.*"],
  "on_exhaustion": "dead_letter",
  "error_rules": [
    {"match": ["rate_limit.*", "http.429"], "max_attempts": 10, "initial_interval": "PT1M",
     "backoff_strategy": "none", "jitter": false, "max_retry_after": "PT1H"},
    {"match": ["network.*"], "max_attempts": 8, "initial_interval": "PT0.2S", "max_interval": "PT10S"}
  ],
  "max_retry_after": "PT10M",
  "max_snoozes": 20,
  "max_snooze": "PT15M"
}`

func mustParse(t *testing.T, s string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return p
}

func TestParseExtensionMergesRulesOverThePolicy(t *testing.T) {
	s := mustParse(t, extPolicy).Spec()
	if s.JitterMode != backoff.Decorrelated || s.MaxRetryAfter != 10*time.Minute || s.MaxSnoozes != 20 || s.MaxSnooze != 15*time.Minute {
		t.Errorf("top-level extension fields: %+v", s)
	}
	if len(s.ErrorRules) != 2 {
		t.Fatalf("ErrorRules = %+v", s.ErrorRules)
	}
	rate := policy.ErrorRule{Match: []string{"rate_limit.*", "http.429"}, MaxAttempts: 10, InitialInterval: time.Minute,
		BackoffCoefficient: 2, MaxInterval: 5 * time.Minute, Jitter: false, JitterMode: backoff.Proportional,
		Strategy: backoff.None, MaxRetryAfter: time.Hour}
	net := policy.ErrorRule{Match: []string{"network.*"}, MaxAttempts: 8, InitialInterval: 200 * time.Millisecond,
		BackoffCoefficient: 2, MaxInterval: 10 * time.Second, Jitter: true, JitterMode: backoff.Decorrelated}
	for i, want := range []policy.ErrorRule{rate, net} {
		got := s.ErrorRules[i]
		if strings.Join(got.Match, ",") != strings.Join(want.Match, ",") || got.MaxAttempts != want.MaxAttempts ||
			got.InitialInterval != want.InitialInterval || got.BackoffCoefficient != want.BackoffCoefficient ||
			got.MaxInterval != want.MaxInterval || got.Jitter != want.Jitter || got.JitterMode != want.JitterMode ||
			got.Strategy != want.Strategy || got.MaxRetryAfter != want.MaxRetryAfter {
			t.Errorf("rule %d = %+v, want %+v", i, got, want)
		}
	}
}

// A rule inherits what the policy says even when the policy's field comes
// after error_rules in the document.
func TestRuleInheritsFieldsGivenLater(t *testing.T) {
	p := mustParse(t, `{"error_rules":[{"match":["a"]}],"initial_interval":"PT3S","max_attempts":7}`)
	r := p.Spec().ErrorRules[0]
	if r.InitialInterval != 3*time.Second || r.MaxAttempts != 7 {
		t.Errorf("rule = %+v, want initial 3s, 7 attempts", r)
	}
}

func TestMarshalRoundTripsTheExtension(t *testing.T) {
	p := mustParse(t, extPolicy)
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	q := mustParse(t, string(b))
	if !q.Equal(p) {
		t.Errorf("Parse(Marshal) differs:\n%s", b)
	}
	if d, _ := policy.Default().MarshalJSON(); strings.Contains(string(d), "jitter_mode") || strings.Contains(string(d), "snooze") {
		t.Errorf("the default policy is written with extension fields: %s", d)
	}
	if mustParse(t, `{"max_snoozes":1}`).Equal(policy.Default()) {
		t.Error("Equal ignores max_snoozes")
	}
}

func TestExtensionRefusalsNameTheField(t *testing.T) {
	cases := []struct {
		json, field string
	}{
		{`{"jitter_mode":"random"}`, "jitter_mode"},
		{`{"jitter_mode":"full","jitter":false}`, "jitter_mode"},
		{`{"jitter_mode":1}`, "jitter_mode"},
		{`{"max_snoozes":-1}`, "max_snoozes"},
		{`{"max_snoozes":1.5}`, "max_snoozes"},
		{`{"max_snooze":"PT0S"}`, "max_snooze"},
		{`{"max_retry_after":"P"}`, "max_retry_after"},
		{`{"max_retry_after":null}`, "max_retry_after"},
		{`{"error_rules":{}}`, "error_rules"},
		{`{"error_rules":[3]}`, "error_rules[0]"},
		{`{"error_rules":[{}]}`, "error_rules[0].match"},
		{`{"error_rules":[{"match":[]}]}`, "error_rules[0].match"},
		{`{"error_rules":[{"match":[".*"]}]}`, "error_rules[0].match[0]"},
		{`{"error_rules":[{"match":["a", 1]}]}`, "error_rules[0].match[1]"},
		{`{"error_rules":[{"match":["a"],"on_exhaustion":"discard"}]}`, "error_rules[0].on_exhaustion"},
		{`{"error_rules":[{"match":["a"],"max_atempts":3}]}`, "error_rules[0].max_atempts"},
		{`{"error_rules":[{"match":["a"],"match":["b"]}]}`, "error_rules[0].match"},
		{`{"error_rules":[{"match":["a"],"max_interval":"PT0.5S"}]}`, "error_rules[0].max_interval"},
		{`{"error_rules":[{"match":["a"],"initial_interval":"PT10M"}]}`, "error_rules[0].max_interval"},
		{`{"error_rules":[{"match":["a"],"backoff_coefficient":0.5}]}`, "error_rules[0].backoff_coefficient"},
		{`{"error_rules":[{"match":["a"],"jitter":false,"jitter_mode":"equal"}]}`, "error_rules[0].jitter_mode"},
		{`{"jitter":false,"error_rules":[{"match":["a"],"jitter_mode":"equal"}]}`, "error_rules[0].jitter_mode"},
		{`{"match":["a"]}`, "match"},
		{`{"error_rules":[],"error_rules":[]}`, "error_rules"},
	}
	for _, c := range cases {
		_, err := policy.Parse([]byte(c.json))
		var ve *policy.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, policy.ErrInvalidPolicy) {
			t.Errorf("Parse(%s) = %v, want a ValidationError", c.json, err)
			continue
		}
		found := false
		for _, fe := range ve.Errors {
			found = found || fe.Field == c.field
		}
		if !found {
			t.Errorf("Parse(%s): %v; want a problem with %s", c.json, err, c.field)
		}
	}
}

// One bad field is reported once, not again under each rule that
// inherits it.
func TestBadInheritedFieldIsReportedOnce(t *testing.T) {
	_, err := policy.Parse([]byte(`{"initial_interval":"PT0S","error_rules":[{"match":["a"]},{"match":["b"]}]}`))
	var ve *policy.ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Field != "initial_interval" {
		t.Errorf("err = %v, want one problem with initial_interval", err)
	}
}

func TestTooManyRules(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"error_rules":[`)
	for i := range policy.MaxErrorRules + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"match":["a"]}`)
	}
	b.WriteString(`]}`)
	if _, err := policy.Parse([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "at most 64 rules") {
		t.Errorf("65 rules: %v", err)
	}
	s := policy.DefaultSpec()
	for range policy.MaxErrorRules + 1 {
		s.ErrorRules = append(s.ErrorRules, s.Rule("a"))
	}
	if _, err := policy.New(s); err == nil {
		t.Error("New accepted 65 rules")
	}
}

func TestNewChecksRulesAsParseDoes(t *testing.T) {
	s := policy.DefaultSpec()
	r := s.Rule()
	r.MaxInterval = time.Millisecond
	s.ErrorRules = []policy.ErrorRule{r}
	s.MaxSnoozes = -1
	_, err := policy.New(s)
	for _, want := range []string{"error_rules[0].match", "error_rules[0].max_interval", "max_snoozes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v, want a problem with %s", err, want)
		}
	}
}

// The worked table of docs/extensions.md §3.1, on the §2.1 policy: values
// from the rules, worked by hand.
func TestDecideExtensionWorkedTable(t *testing.T) {
	p := mustParse(t, extPolicy)
	retryAfter := func(d time.Duration) errmatch.Request { return errmatch.Request{Kind: errmatch.RetryAfter, Delay: d} }
	snooze := func(d time.Duration) errmatch.Request { return errmatch.Request{Kind: errmatch.Snooze, Delay: d} }
	cases := []struct {
		name string
		f    policy.Failure
		want policy.Decision
	}{
		{"rate limit: the rule's fixed minute", policy.Failure{Attempt: 6, ErrorType: "rate_limit.exceeded"},
			policy.Decision{Action: policy.Retry, Delay: time.Minute, Reason: policy.ReasonRetry}},
		{"rate limit: exhausted at the rule's 10", policy.Failure{Attempt: 10, ErrorType: "http.429"},
			policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonExhausted}},
		{"network: decorrelated from prev 1s, r=0.5: 0.2s + 0.5 × (3s − 0.2s)", policy.Failure{Attempt: 2, ErrorType: "network.reset", PrevDelay: time.Second},
			policy.Decision{Action: policy.Retry, Delay: 1600 * time.Millisecond, Reason: policy.ReasonRetry}},
		{"network: decorrelated capped at the rule's 10s", policy.Failure{Attempt: 7, ErrorType: "network.reset", PrevDelay: 9 * time.Second},
			policy.Decision{Action: policy.Retry, Delay: 10 * time.Second, Reason: policy.ReasonRetry}},
		{"other type: the policy's 5 attempts", policy.Failure{Attempt: 5, ErrorType: "db.deadlock"},
			policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonExhausted}},
		{"other type: decorrelated from I = 1s", policy.Failure{Attempt: 1, ErrorType: "db.deadlock"},
			policy.Decision{Action: policy.Retry, Delay: 2 * time.Second, Reason: policy.ReasonRetry}},
		{"non-retryable before the rules", policy.Failure{Attempt: 1, ErrorType: "validation.bad", Request: retryAfter(time.Second)},
			policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonNonRetryable}},
		{"retry-after bounded by the rule's PT1H", policy.Failure{Attempt: 1, ErrorType: "rate_limit.x", Request: retryAfter(2 * time.Hour)},
			policy.Decision{Action: policy.Retry, Delay: time.Hour, Reason: policy.ReasonRetryAfter}},
		{"retry-after bounded by the policy's PT10M", policy.Failure{Attempt: 1, ErrorType: "network.x", Request: retryAfter(time.Hour)},
			policy.Decision{Action: policy.Retry, Delay: 10 * time.Minute, Reason: policy.ReasonRetryAfter}},
		{"retry-after below the bound, not jittered", policy.Failure{Attempt: 1, ErrorType: "db.x", Request: retryAfter(30 * time.Second)},
			policy.Decision{Action: policy.Retry, Delay: 30 * time.Second, Reason: policy.ReasonRetryAfter}},
		{"retry-after never extends max_attempts", policy.Failure{Attempt: 5, ErrorType: "db.x", Request: retryAfter(time.Second)},
			policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonExhausted}},
		{"retry-after 0: at once", policy.Failure{Attempt: 1, Request: retryAfter(0)},
			policy.Decision{Action: policy.Retry, Delay: 0, Reason: policy.ReasonRetryAfter}},
		{"snooze bounded by max_snooze", policy.Failure{Attempt: 5, ErrorType: "db.x", Request: snooze(time.Hour), Snoozes: 19},
			policy.Decision{Action: policy.Retry, Delay: 15 * time.Minute, Reason: policy.ReasonSnoozed}},
		{"snooze even of a non-retryable type", policy.Failure{Attempt: 1, ErrorType: "validation.x", Request: snooze(time.Minute)},
			policy.Decision{Action: policy.Retry, Delay: time.Minute, Reason: policy.ReasonSnoozed}},
		{"the 21st snooze spends the attempt", policy.Failure{Attempt: 1, ErrorType: "db.x", Request: snooze(time.Hour), Snoozes: 20},
			policy.Decision{Action: policy.Retry, Delay: 10 * time.Minute, Reason: policy.ReasonRetryAfter}},
		{"past max_snoozes at the last attempt: exhausted", policy.Failure{Attempt: 5, Request: snooze(time.Minute), Snoozes: 20},
			policy.Decision{Action: policy.DeadLetter, Reason: policy.ReasonExhausted}},
		{"a handler code overrides a snooze", policy.Failure{Attempt: 1, Code: errmatch.CodeDiscard, Request: snooze(time.Minute)},
			policy.Decision{Action: policy.Discard, Reason: policy.ReasonHandlerCode}},
	}
	for _, c := range cases {
		got, err := p.DecideAt(c.f, 0.5)
		if err != nil || got != c.want {
			t.Errorf("%s: DecideAt = %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestDefaultPolicyTurnsASnoozeIntoARetry(t *testing.T) {
	// max_snoozes 0: the snooze is a requested delay, bounded by PT5M.
	d, err := policy.Default().DecideAt(policy.Failure{Attempt: 1, Request: errmatch.Request{Kind: errmatch.Snooze, Delay: time.Hour}}, 0.5)
	if err != nil || d != (policy.Decision{Action: policy.Retry, Delay: 5 * time.Minute, Reason: policy.ReasonRetryAfter}) {
		t.Errorf("DecideAt = %+v, %v", d, err)
	}
}

func TestDecideRefusesBadRequests(t *testing.T) {
	for _, f := range []policy.Failure{
		{Attempt: 1, Request: errmatch.Request{Kind: errmatch.RetryAfter, Delay: -1}},
		{Attempt: 1, Request: errmatch.Request{Kind: errmatch.Snooze, Delay: -time.Second}},
		{Attempt: 1, Request: errmatch.Request{Kind: 3}},
		{Attempt: 1, PrevDelay: -1},
		{Attempt: 1, Snoozes: -1},
	} {
		_, err := policy.Default().DecideAt(f, 0)
		var fe *policy.FailureError
		if !errors.Is(err, policy.ErrInvalidFailure) || !errors.As(err, &fe) {
			t.Errorf("DecideAt(%+v) = %v, want a FailureError", f, err)
		}
	}
}

func TestRuleForAndBackoffFor(t *testing.T) {
	p := mustParse(t, extPolicy)
	for typ, want := range map[string]int{"rate_limit.x": 1, "http.429": 1, "network.reset": 2, "db.x": 0, "": 0, "validation.x": 0} {
		if got := p.RuleFor(typ); got != want {
			t.Errorf("RuleFor(%q) = %d, want %d", typ, got, want)
		}
	}
	if b := p.BackoffFor("network.x"); b.Config().Max != 10*time.Second {
		t.Errorf("BackoffFor(network.x).Max = %v", b.Config().Max)
	}
	if b := p.BackoffFor("db.x"); b != p.Backoff() {
		t.Error("BackoffFor without a rule is not the policy's")
	}
}
