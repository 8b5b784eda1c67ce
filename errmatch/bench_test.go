package errmatch

import (
	"fmt"
	"testing"
)

// benchPatterns returns n realistic non_retryable_errors entries, about a
// third of them prefix patterns, spread over common namespaces so that the
// length and dot filters in Match do not reject the benchmark types early.
func benchPatterns(n int) []string {
	fixed := []string{"external.crm.api_deprecated", "auth.*", "validation.payload_invalid", "external.stripe.*"}
	domains := []string{"validation", "auth", "external", "resource", "rate_limit", "billing", "storage", "network"}
	subs := []string{"crm", "stripe", "s3", "payload", "token", "quota", "db", "dns", "smtp", "ledger"}
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		if i < len(fixed) {
			out = append(out, fixed[i])
			continue
		}
		d := domains[i%len(domains)]
		s := subs[(i/len(domains))%len(subs)]
		if i%3 == 0 {
			out = append(out, fmt.Sprintf("%s.%s%d.*", d, s, i))
		} else {
			out = append(out, fmt.Sprintf("%s.%s.err_%d", d, s, i))
		}
	}
	return out
}

var benchTypes = []struct{ name, errType string }{
	{"hit-exact", "external.crm.api_deprecated"},
	{"hit-prefix", "auth.token_expired"},
	{"miss-near", "external.crm.api_timeout"},
	{"miss-deep", "resource.storage.bucket.not_found"},
}

var sink bool

func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{1, 10, 200, 1000} {
		m, err := Compile(benchPatterns(n))
		if err != nil {
			b.Fatal(err)
		}
		for _, bt := range benchTypes {
			b.Run(fmt.Sprintf("patterns=%d/%s", n, bt.name), func(b *testing.B) {
				b.ReportAllocs()
				t := bt.errType
				for i := 0; i < b.N; i++ {
					sink = m.Match(t)
				}
			})
		}
	}
}

// BenchmarkMatchNaive is the plain loop, for comparison only.
func BenchmarkMatchNaive(b *testing.B) {
	for _, n := range []int{10, 200} {
		p := benchPatterns(n)
		b.Run(fmt.Sprintf("patterns=%d/miss-near", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sink = naiveMatch(p, "external.crm.api_timeout")
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	p := benchPatterns(200)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Compile(p); err != nil {
			b.Fatal(err)
		}
	}
}
