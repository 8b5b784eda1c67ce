package policy

import (
	"strconv"
	"testing"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/errmatch"
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

// BenchmarkPolicyDelay is the hot path of a queue: the delay after attempt
// n (cycling 1..20) of a policy parsed from JSON, for every strategy
// (integral and non-integral coefficients), without jitter and with jitter
// drawn from an injected source.
func BenchmarkPolicyDelay(b *testing.B) {
	policies := []struct{ name, json string }{
		{"exponential-2.0", `{"backoff_coefficient": 2.0}`},
		{"exponential-1.5", `{"backoff_coefficient": 1.5}`},
		{"polynomial-4.0", `{"backoff_strategy": "polynomial", "backoff_coefficient": 4.0, "initial_interval": "PT15S", "max_interval": "PT1H"}`},
		{"polynomial-2.5", `{"backoff_strategy": "polynomial", "backoff_coefficient": 2.5, "max_interval": "PT24H"}`},
		{"linear", `{"backoff_strategy": "linear", "initial_interval": "PT5S"}`},
		{"none", `{"backoff_strategy": "none", "initial_interval": "PT5S"}`},
	}
	for _, pc := range policies {
		for _, jitter := range []bool{false, true} {
			name := pc.name + "/nojitter"
			js := pc.json[:len(pc.json)-1] + `, "jitter": false}`
			if jitter {
				name = pc.name + "/jitter-fixed"
				js = pc.json[:len(pc.json)-1] + `, "jitter": true}`
			}
			b.Run(name, func(b *testing.B) {
				p, err := Parse([]byte(js))
				if err != nil {
					b.Fatal(err)
				}
				bo := p.Backoff()
				var src backoff.Source = backoff.Fixed(0.25)
				b.ReportAllocs()
				n := 0
				var s time.Duration
				for i := 0; i < b.N; i++ {
					n++
					if n > 20 {
						n = 1
					}
					s += bo.Delay(n, src)
				}
				sinkDur = s
			})
		}
	}
}

// sizedPolicy returns a valid policy document of about n bytes: the seven
// fields plus as many distinct non_retryable_errors entries (exact names
// and prefixes, ~150 bytes each) as fit. It is the shape a large policy
// really has; the per-byte cost of white space, escapes and long strings is
// no higher.
func sizedPolicy(n int) []byte {
	b := []byte(`{"max_attempts": 25, "initial_interval": "PT15S", "backoff_coefficient": 4.0, "max_interval": "PT1H", "jitter": true, "on_exhaustion": "dead_letter", "backoff_strategy": "polynomial", "non_retryable_errors": [`)
	for i := 0; len(b) < n-80; i++ {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `"service_`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `.payment.gateway.card_declined_with_a_descriptive_name.and_a_subsystem_path.that_makes_it_about_one_hundred_and_fifty_bytes`...)
		if i%3 == 0 {
			b = append(b, ".*"...)
		}
		b = append(b, '"')
	}
	b = append(b, "]}"...)
	for len(b) < n {
		b = append(b, ' ')
	}
	return b
}

// BenchmarkParseSize reports the cost of Parse per input byte for policies
// of 1 KB to 10 MB (docs/benchmarks.md, "Parse cost per byte"): linear
// parsing shows the same ns/byte at every size.
func BenchmarkParseSize(b *testing.B) {
	for _, size := range []int{1 << 10, 10 << 10, 100 << 10, 1 << 20, 10 << 20} {
		doc := sizedPolicy(size)
		if _, err := Parse(doc); err != nil {
			b.Fatal(err)
		}
		b.Run(byteSize(size), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Parse(doc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(doc)), "ns/byte")
		})
	}
}

// BenchmarkParseHostileDuration parses the hostile 1 MB policy whose
// duration is "PT1." + a million zeros + "1S" (204 s before the limits).
func BenchmarkParseHostileDuration(b *testing.B) {
	doc := []byte(`{"initial_interval": "` + hostileDuration() + `"}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(doc); err == nil {
			b.Fatal("accepted")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(doc)), "ns/byte")
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KB"
	}
	return strconv.Itoa(n) + "B"
}

// BenchmarkDecideAtExtension decides under the policy of docs/extensions.md
// §2.1: a rule lookup, decorrelated jitter from the previous delay, and a
// bounded Retry-After, each without allocating.
func BenchmarkDecideAtExtension(b *testing.B) {
	p, err := Parse([]byte(`{"max_attempts":5,"jitter_mode":"decorrelated","non_retryable_errors":["validation.*"],
		"error_rules":[{"match":["rate_limit.*","http.429"],"max_attempts":10,"initial_interval":"PT1M","backoff_strategy":"none","jitter":false},
		{"match":["network.*"],"max_attempts":8,"initial_interval":"PT0.2S","max_interval":"PT10S"}],"max_retry_after":"PT10M"}`))
	if err != nil {
		b.Fatal(err)
	}
	fs := []Failure{
		{Attempt: 2, ErrorType: "network.reset", PrevDelay: time.Second},
		{Attempt: 3, ErrorType: "db.deadlock", PrevDelay: 2 * time.Second},
		{Attempt: 1, ErrorType: "http.429", Request: errmatch.Request{Kind: errmatch.RetryAfter, Delay: time.Hour}},
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d, _ := p.DecideAt(fs[i%len(fs)], 0.5)
		sinkDur = d.Delay
	}
}
