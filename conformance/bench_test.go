package conformance_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// BenchmarkSuiteInProcess runs every vector plus the statistical jitter
// check against the reference in-process. Target: < 250 ms per run.
func BenchmarkSuiteInProcess(b *testing.B) {
	suite := loadSuite(b)
	r := conformance.NewRunner(suite)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rep := r.Run(context.Background(), conformance.Reference()); !rep.OK() {
			b.Fatal("reference fails")
		}
	}
	b.ReportMetric(float64(len(suite.Vectors)+conformance.DefaultJitterSamples), "requests/op")
}

// buildRetrykit builds cmd/retrykit into a temporary directory.
func buildRetrykit(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "retrykit")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/retrykit").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkSuiteThroughAdapter runs the whole suite (every vector plus the
// statistical jitter check) through one long-lived "retrykit adapter"
// subprocess, as "retrykit conformance --impl" does. The requests/s metric
// is the end-to-end rate, target ≥ 20 000.
func BenchmarkSuiteThroughAdapter(b *testing.B) {
	bin := buildRetrykit(b)
	p := protocol.NewProcess([]string{bin, "adapter"})
	defer p.Close()
	suite := loadSuite(b)
	r := conformance.NewRunner(suite)
	if rep := r.Run(context.Background(), p); !rep.OK() { // warm up: start the process
		b.Fatal("reference through the adapter fails")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rep := r.Run(context.Background(), p); !rep.OK() {
			b.Fatal("reference through the adapter fails")
		}
	}
	b.StopTimer()
	n := float64(len(suite.Vectors) + conformance.DefaultJitterSamples)
	b.ReportMetric(n, "requests/op")
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkAdapterThroughput pipelines delay requests to a "retrykit
// adapter" subprocess. Target: ≥ 20 000 requests/s.
func BenchmarkAdapterThroughput(b *testing.B) {
	bin := buildRetrykit(b)
	p := protocol.NewProcess([]string{bin, "adapter"})
	defer p.Close()
	if _, err := p.Hello(context.Background()); err != nil {
		b.Fatal(err)
	}
	suite := loadSuite(b)
	reqs := make([]protocol.Request, len(suite.Vectors))
	for i, v := range suite.Vectors {
		reqs[i] = v.Request()
	}
	b.ResetTimer()
	b.SetParallelism(8) // 8 × GOMAXPROCS requests in flight
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := p.Do(context.Background(), reqs[i%len(reqs)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}
