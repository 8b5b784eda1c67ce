package fuzz_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// cpuTime returns the CPU time (user + system) of this process and of its
// waited-for children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// benchRun fuzzes impl with b.N cases spread over every op and reports
// cases per second of wall time and per second of CPU time (the runner
// and, once closed, the adapter process): the machine is shared, so the
// second is the steadier number.
func benchRun(b *testing.B, impl protocol.Implementation, ops []string, parallel int, closeImpl func()) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	res, err := fuzz.Run(context.Background(), impl, fuzz.Config{Cases: max(b.N, len(ops)), Seed: 7, Ops: ops, Parallel: parallel})
	if err != nil {
		b.Fatal(err)
	}
	wall := time.Since(start)
	closeImpl()
	cpu := cpuTime() - cpu0
	if !res.OK() {
		b.Fatalf("disagreement: %+v", res.Ops)
	}
	n := 0
	for _, o := range res.Ops {
		n += o.Cases
	}
	b.ReportMetric(float64(n)/wall.Seconds(), "cases/s")
	b.ReportMetric(float64(n)/cpu.Seconds(), "cases/cpu-s")
}

// policyOps are the five ops of the policy rules; scenarios (whole job
// lifecycles) are measured on their own.
var policyOps = []string{protocol.OpParseDuration, protocol.OpValidate, protocol.OpDelay, protocol.OpMatch, protocol.OpDecide}

// BenchmarkInProcess: the reference against itself, no process.
func BenchmarkInProcess(b *testing.B) { benchRun(b, conformance.Reference(), policyOps, 1, func() {}) }

// BenchmarkInProcessScenario: random job lifecycles of up to 16 steps.
func BenchmarkInProcessScenario(b *testing.B) {
	benchRun(b, conformance.Reference(), []string{protocol.OpScenario}, 1, func() {})
}

// BenchmarkAdapter: the reference over "retrykit adapter", 64 requests
// pipelined per rapid check.
func BenchmarkAdapter(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "retrykit")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/retrykit/retrykit/cmd/retrykit").CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	p := protocol.NewProcess([]string{bin, "adapter"})
	benchRun(b, p, policyOps, 64, func() { _ = p.Close() })
}
