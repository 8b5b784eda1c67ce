package budget_test

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The retry extensions under a time budget (docs/extensions.md §3.1 rules
// 3 and 9): §9.1 judges the delay actually chosen, a requested delay or a
// snooze as much as a backoff, and a passed total timeout ends a snooze
// too. timeout 60 s, total_timeout 600 s, created at 0.
func TestExtensionDelaysAreJudgedBySection91(t *testing.T) {
	b := mustBudget(t, `{"timeout": 60, "total_timeout": 600}`)
	p := mustPolicy(t, `{"max_attempts": 10, "jitter": false, "max_retry_after": "PT1H", "max_snoozes": 5, "max_snooze": "PT1H"}`)
	ask := func(k errmatch.RequestKind, d time.Duration) errmatch.Request {
		return errmatch.Request{Kind: k, Delay: d}
	}
	cases := []struct {
		name   string
		at     time.Duration
		req    errmatch.Request
		action policy.Action
		reason budget.Reason
		delay  time.Duration
	}{
		{"retry-after ends at the deadline: 100 + 440 + 60 = 600", 100 * time.Second, ask(errmatch.RetryAfter, 440*time.Second), policy.Retry, budget.ReasonPolicy, 440 * time.Second},
		{"retry-after 1 s too long: 100 + 441 + 60 > 600", 100 * time.Second, ask(errmatch.RetryAfter, 441*time.Second), policy.Discard, budget.ReasonNoTimeLeft, 0},
		{"snooze ends at the deadline", 10 * time.Second, ask(errmatch.Snooze, 530*time.Second), policy.Retry, budget.ReasonPolicy, 530 * time.Second},
		{"snooze 1 ms too long", 10 * time.Second, ask(errmatch.Snooze, 530*time.Second+time.Millisecond), policy.Discard, budget.ReasonNoTimeLeft, 0},
		{"snooze after the total timeout passed", 601 * time.Second, ask(errmatch.Snooze, time.Second), policy.Discard, budget.ReasonTotalTimeout, 0},
	}
	for _, c := range cases {
		f := fail(1, "x.err", c.at)
		f.Request = c.req
		d, err := b.DecideAt(p, f, 0.5)
		if err != nil || d.Action != c.action || d.Reason != c.reason || d.Delay != c.delay {
			t.Errorf("%s: %+v %v, want %v %v after %v", c.name, d, err, c.action, c.reason, c.delay)
		}
	}
}
