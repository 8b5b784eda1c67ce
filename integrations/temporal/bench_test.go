package temporalretry

import (
	"context"
	"errors"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The cost the interceptor adds to one failed activity: its decision and
// the ApplicationError it builds, with the type's policy, with a call
// policy in the header, and for a non-retryable error. The activity info
// comes from the test seam (the SDK's context key is internal).
func BenchmarkHandle(b *testing.B) {
	def, err := policy.Parse([]byte(`{"max_attempts":5,"non_retryable_errors":["validation.*"]}`))
	if err != nil {
		b.Fatal(err)
	}
	i := New(def, WithSource(backoff.Fixed(0.5)))
	i.infoOf = func(context.Context) (activity.Info, bool) {
		return activity.Info{ActivityType: activity.Type{Name: "charge"}, Attempt: 2}, true
	}
	pj, _ := def.MarshalJSON()
	pl, err := converter.GetDefaultDataConverter().ToPayload(string(pj))
	if err != nil {
		b.Fatal(err)
	}
	header := map[string]*commonpb.Payload{HeaderKey: pl}
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		header map[string]*commonpb.Payload
		err    error
	}{
		{"retry/type_policy", nil, errmatch.Wrap(errors.New("boom"), "external.timeout", "")},
		{"retry/call_policy", header, errmatch.Wrap(errors.New("boom"), "external.timeout", "")},
		{"retry/untyped", nil, errors.New("boom")},
		{"end/non_retryable", nil, errmatch.Wrap(errors.New("bad"), "validation.bad_input", "")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if i.handle(ctx, bc.err, bc.header, nil) == bc.err {
					b.Fatal("error not decided")
				}
			}
		})
	}
}
