package asynqretry

import (
	"context"
	"errors"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The cost the plugin adds to one failed asynq task: the middleware's
// decision (Handler) and the retry hook (RetryDelay), with the default
// policy and with a per-task policy in the task header.
func BenchmarkRetryDecision(b *testing.B) {
	def, err := policy.Parse([]byte(`{"max_attempts":5,"non_retryable_errors":["validation.*"]}`))
	if err != nil {
		b.Fatal(err)
	}
	p := New(def, WithSource(backoff.Fixed(0.5)))
	p.count = func(context.Context) (int, bool) { return 1, true } // asynq's context key is internal
	fail := errmatch.Wrap(errors.New("boom"), "external.timeout", "")
	h := p.Handler(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return fail }))
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		task *asynq.Task
	}{
		{"default", asynq.NewTask("t", nil)},
		{"per_task", NewTask("t", nil, def)},
	} {
		b.Run("Handler/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := h.ProcessTask(ctx, bc.task); err != fail {
					b.Fatal(err)
				}
			}
		})
		b.Run("RetryDelay/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p.RetryDelay(1, fail, bc.task) <= 0 {
					b.Fatal("no delay")
				}
			}
		})
	}
}
