package conformance_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/retrykit/retrykit/conformance"
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

// BenchmarkAdapterThroughput pipelines delay requests to a "retrykit
// adapter" subprocess. Target: ≥ 20 000 requests/s.
func BenchmarkAdapterThroughput(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "retrykit")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/retrykit").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	p := conformance.External([]string{bin, "adapter"})
	defer p.Close()
	if _, err := p.Hello(context.Background()); err != nil {
		b.Fatal(err)
	}
	suite := loadSuite(b)
	reqs := make([]conformance.Request, len(suite.Vectors))
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
	_ = os.Remove(bin)
}
