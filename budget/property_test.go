package budget_test

import (
	"testing"
	"time"

	"github.com/retrykit/retrykit/budget"
	"github.com/retrykit/retrykit/policy"
	"pgregory.net/rapid"
)

// A budgeted decision never schedules an attempt that would end past the
// deadline, never retries once the total timeout has passed, and is the
// policy's own decision when there is no total timeout.
func TestDecisionNeverSchedulesPastTheDeadline(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		timeout := rapid.Int64Range(1, 100000).Draw(t, "timeout")
		spec := budget.DefaultSpec()
		spec.Timeout = time.Duration(timeout) * time.Second
		if rapid.Bool().Draw(t, "total") {
			spec.TotalTimeout = time.Duration(rapid.Int64Range(timeout, budget.MaxSeconds).Draw(t, "total_timeout")) * time.Second
		}
		b, err := budget.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		ps := policy.DefaultSpec()
		ps.MaxAttempts = rapid.IntRange(0, 1000).Draw(t, "max_attempts")
		ps.InitialInterval = time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "initial"))
		ps.MaxInterval = ps.InitialInterval + time.Duration(rapid.Int64Range(0, int64(1000*time.Hour)).Draw(t, "extra"))
		ps.Jitter = rapid.Bool().Draw(t, "jitter")
		if rapid.Bool().Draw(t, "dead_letter") {
			ps.OnExhaustion = policy.DeadLetter
		}
		p, err := policy.New(ps)
		if err != nil {
			t.Fatal(err)
		}
		created := time.Unix(rapid.Int64Range(0, 1<<34).Draw(t, "created"), 0)
		at := created.Add(time.Duration(rapid.Int64Range(0, int64(200*365*24*time.Hour)).Draw(t, "since")))
		f := budget.Failure{Failure: policy.Failure{Attempt: rapid.IntRange(1, 2000).Draw(t, "attempt"), ErrorType: "x.err"}, CreatedAt: created, At: at}
		r := rapid.Float64Range(0, 0.999999).Draw(t, "r")
		d, err := b.DecideAt(p, f, r)
		if err != nil {
			t.Fatal(err)
		}
		pd, _ := p.DecideAt(f.Failure, r)
		deadline, has := b.Deadline(created)
		switch {
		case !has:
			if d.Action != pd.Action || d.Delay != pd.Delay || d.Reason != budget.ReasonPolicy {
				t.Fatalf("no total timeout: %+v, policy alone %+v", d, pd)
			}
		case d.Action == policy.Retry:
			if end := at.Add(d.Delay).Add(spec.Timeout); end.After(deadline) {
				t.Fatalf("retry whose attempt ends at %v, after the deadline %v", end, deadline)
			}
		default:
			if d.Delay != 0 || d.Action != ps.OnExhaustion && d.Reason != budget.ReasonPolicy {
				t.Fatalf("budget ended the job with %+v (on_exhaustion %v)", d, ps.OnExhaustion)
			}
		}
		if _, over := b.Total(created, at); over && d.Action == policy.Retry {
			t.Fatalf("retry after the total timeout passed: %+v", d)
		}
	})
}
