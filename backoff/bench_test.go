package backoff

import (
	"math/rand/v2"
	"testing"
	"time"
)

var sink time.Duration

// benchConfigs are the strategies the hot-path benchmarks cover, each with
// an integral and a non-integral coefficient where the strategy uses it.
var benchConfigs = []struct {
	name string
	c    Config
}{
	{"exponential/2.0", Config{Strategy: Exponential, Initial: time.Second, Coefficient: 2, Max: 5 * time.Minute}},
	{"exponential/1.5", Config{Strategy: Exponential, Initial: time.Second, Coefficient: 1.5, Max: 5 * time.Minute}},
	{"exponential/1.5-uncapped", Config{Strategy: Exponential, Initial: time.Millisecond, Coefficient: 1.5, Max: 1 << 62}},
	{"polynomial/4.0", Config{Strategy: Polynomial, Initial: 15 * time.Second, Coefficient: 4, Max: time.Hour}},
	{"polynomial/2.5", Config{Strategy: Polynomial, Initial: time.Second, Coefficient: 2.5, Max: 1 << 62}},
	{"linear", Config{Strategy: Linear, Initial: 5 * time.Second, Coefficient: 1, Max: time.Hour}},
	{"none", Config{Strategy: None, Initial: 5 * time.Second, Coefficient: 1, Max: time.Hour}},
}

func mustNew(b *testing.B, c Config) *Backoff {
	b.Helper()
	bo, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	return bo
}

// BenchmarkDelay measures Delay with n cycling 1..20, jitter off, and with
// jitter on from a Fixed source, a seeded PCG source, and a *rand.Rand
// (PCG) source.
func BenchmarkDelay(b *testing.B) {
	for _, bc := range benchConfigs {
		b.Run(bc.name+"/nojitter", func(b *testing.B) { benchDelay(b, mustNew(b, bc.c), nil) })
		jc := bc.c
		jc.Jitter = true
		b.Run(bc.name+"/jitter-fixed", func(b *testing.B) { benchDelay(b, mustNew(b, jc), Fixed(0.25)) })
		b.Run(bc.name+"/jitter-seededpcg", func(b *testing.B) { benchDelay(b, mustNew(b, jc), NewPCG(1, 2)) })
		b.Run(bc.name+"/jitter-randpcg", func(b *testing.B) { benchDelay(b, mustNew(b, jc), rand.New(rand.NewPCG(1, 2))) })
	}
}

// benchDelay times bo.Delay(n, src) with n cycling 1..20. src is passed as
// a Source interface value, as a caller holding any Source would.
func benchDelay(b *testing.B, bo *Backoff, src Source) {
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
	sink = s
}

// BenchmarkDelayAt measures the pure form with an explicit draw.
func BenchmarkDelayAt(b *testing.B) {
	for _, bc := range benchConfigs {
		jc := bc.c
		jc.Jitter = true
		b.Run(bc.name, func(b *testing.B) {
			bo := mustNew(b, jc)
			b.ReportAllocs()
			n := 0
			r := 0.0
			var s time.Duration
			for i := 0; i < b.N; i++ {
				n++
				if n > 20 {
					n = 1
				}
				r += 0.0625
				if r >= 1 {
					r = 0
				}
				s += bo.DelayAt(n, r)
			}
			sink = s
		})
	}
}

// BenchmarkBase measures the table lookup alone.
func BenchmarkBase(b *testing.B) {
	bo := mustNew(b, benchConfigs[0].c)
	b.ReportAllocs()
	n := 0
	var s time.Duration
	for i := 0; i < b.N; i++ {
		n++
		if n > 20 {
			n = 1
		}
		s += bo.Base(n)
	}
	sink = s
}

// BenchmarkSlowPath measures attempts beyond the table (float coefficient
// close to 1, so the table never reaches Max).
func BenchmarkSlowPath(b *testing.B) {
	bo := mustNew(b, Config{Initial: time.Millisecond, Coefficient: 1.01, Max: time.Hour})
	b.ReportAllocs()
	var s time.Duration
	for i := 0; i < b.N; i++ {
		s += bo.Base(100 + i&1023)
	}
	sink = s
}

// BenchmarkNew measures building a Backoff and its table.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bo, _ := New(benchConfigs[0].c)
		sink = bo.Base(1)
	}
}
