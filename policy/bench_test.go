package policy

import (
	"testing"
	"time"
)

var fullPolicy = []byte(`{
  "max_attempts": 25,
  "initial_interval": "PT15S",
  "backoff_coefficient": 4.0,
  "max_interval": "PT1H",
  "jitter": true,
  "non_retryable_errors": ["payment.card_stolen", "payment.card_expired", "validation.*"],
  "on_exhaustion": "dead_letter",
  "backoff_strategy": "polynomial"
}`)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(fullPolicy); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	p, _ := Parse(fullPolicy)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := p.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDuration(b *testing.B) {
	for _, s := range []string{"PT1S", "PT1M30.5S", "P1Y2M3DT4H5M6.789S"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := ParseDuration(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFormatDuration(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = FormatDuration(90*time.Second + 500*time.Millisecond)
	}
}

var sinkDur time.Duration
var sinkDec Decision

func BenchmarkBackoffDelayAt(b *testing.B) {
	p, _ := Parse(fullPolicy)
	bo := p.Backoff()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkDur = bo.DelayAt(i%20+1, 0.5)
	}
}

func BenchmarkDecideAt(b *testing.B) {
	p, _ := Parse(fullPolicy)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := p.DecideAt(Failure{Attempt: i%20 + 1, ErrorType: "payment.gateway_timeout"}, 0.5)
		if err != nil {
			b.Fatal(err)
		}
		sinkDec = d
	}
}
