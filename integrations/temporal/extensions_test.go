package temporalretry

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
)

// A requested delay, given with errmatch or as Temporal's own
// NextRetryDelay, is the NextRetryDelay sent, bounded by max_retry_after
// and never jittered; an error rule's backoff and attempt limit apply to
// its type; a snooze is a delay that spends the attempt (Temporal counts
// every failed attempt).
func TestHandleExtensions(t *testing.T) {
	p := mustParse(t, `{"max_attempts": 3, "initial_interval": "PT1S", "jitter": true, "max_retry_after": "PT30S",
		"max_snoozes": 5, "max_snooze": "PT10S",
		"error_rules": [{"match": ["rate_limit.*"], "max_attempts": 6, "initial_interval": "PT1M", "backoff_strategy": "none", "jitter": false}]}`)
	for _, tc := range []struct {
		name     string
		attempt  int32
		err      error
		want     time.Duration // 0: ends the activity
		reason   string
		nonRetry bool
	}{
		{"errmatch retry-after, bounded", 1, errmatch.WithRetryAfter(errors.New("429"), time.Hour), 30 * time.Second, "retry_after", false},
		{"errmatch retry-after, under the bound", 1, errmatch.WithRetryAfter(errors.New("429"), 5*time.Second), 5 * time.Second, "retry_after", false},
		{"Temporal's NextRetryDelay", 2, temporal.NewApplicationErrorWithOptions("slow down", "upstream.busy",
			temporal.ApplicationErrorOptions{NextRetryDelay: 2 * time.Minute}), 30 * time.Second, "retry_after", false},
		{"rule backoff", 4, errmatch.Wrap(errors.New("429"), "rate_limit.exceeded", ""), time.Minute, "retry", false},
		{"rule limit", 6, errmatch.Wrap(errors.New("429"), "rate_limit.exceeded", ""), 0, "exhausted", true},
		{"policy limit for other types", 3, errmatch.Wrap(errors.New("x"), "db.down", ""), 0, "exhausted", true},
		{"snooze, bounded", 1, errmatch.Snoozed(time.Minute), 10 * time.Second, "snoozed", false},
	} {
		i := at(New(p, WithSource(backoff.Fixed(0.25))), "charge", tc.attempt)
		err := i.Handle(context.Background(), tc.err)
		app := appErr(t, err)
		o, _ := OutcomeOf(err)
		if app.NonRetryable() != tc.nonRetry || o.Reason != tc.reason || !tc.nonRetry && app.NextRetryDelay() != tc.want {
			t.Errorf("%s: non-retryable %v, NextRetryDelay %v, reason %q; want %v, %v, %q", tc.name, app.NonRetryable(), app.NextRetryDelay(), o.Reason, tc.nonRetry, tc.want, tc.reason)
		}
	}
	if got := RetryPolicy(p).MaximumAttempts; got != 6 {
		t.Errorf("RetryPolicy MaximumAttempts %d, want the rule's 6", got)
	}
}
