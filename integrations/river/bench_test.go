package riverretry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
	"github.com/retrykit/retrykit/policy"
)

// The cost the plugin adds to one failed River job: the middleware's
// decision (Work) and the retry hook (NextRetry), with the default policy
// and with a per-job policy read from the job's metadata.
func BenchmarkRetryDecision(b *testing.B) {
	def, err := policy.Parse([]byte(`{"max_attempts":5,"non_retryable_errors":["validation.*"]}`))
	if err != nil {
		b.Fatal(err)
	}
	p := New(def, WithSource(backoff.Fixed(0.5)))
	fail := errmatch.Wrap(errors.New("boom"), "external.timeout", "")
	inner := func(context.Context) error { return fail }
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		md   []byte
	}{
		{"default", []byte(`{"tenant":"acme"}`)},
		{"per_job", Metadata(def)},
	} {
		job := &rivertype.JobRow{ID: 1, Attempt: 2, MaxAttempts: 5, Metadata: bc.md}
		b.Run("Work/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Work(ctx, job, inner); err != fail {
					b.Fatal(err)
				}
			}
		})
		b.Run("NextRetry/"+bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var t time.Time
			for b.Loop() {
				t = p.NextRetry(job)
			}
			_ = t
		})
	}
	// A nil Plugin has no cache: the cost of the first failure of a job
	// whose metadata text the plugin has not seen (JSON decode + parse).
	var uncached *Plugin
	job := &rivertype.JobRow{ID: 1, Attempt: 2, MaxAttempts: 5, Metadata: Metadata(def)}
	b.Run("Work/per_job_uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := uncached.Work(ctx, job, inner); err != fail {
				b.Fatal(err)
			}
		}
	})
}

// The policy of a job with very large metadata (21 MiB, a per-job policy
// at the end), read again as River does on every failure. "cached": the
// plugin finds the policy by the text's SHA-256 digest; "uncached" (a nil
// Plugin, which has no cache, as every plugin had for such texts before)
// decodes the whole text each time.
func BenchmarkLargeMetadata(b *testing.B) {
	md := largeMetadata(21<<20, 5)
	for _, bc := range []struct {
		name string
		p    *Plugin
	}{{"cached", New(nil)}, {"uncached", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			job := &rivertype.JobRow{ID: 1, Attempt: 2, MaxAttempts: 5, Metadata: md}
			bc.p.Policy(job) // the first use, which decodes
			b.SetBytes(int64(len(md)))
			b.ReportAllocs()
			for b.Loop() {
				if bc.p.Policy(job).Spec().MaxAttempts != 5 {
					b.Fatal("wrong policy")
				}
			}
		})
	}
}
