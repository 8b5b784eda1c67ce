package conformance_test

import (
	"context"
	"fmt"
	"os"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// Run the suite against the built-in reference and print the verdict.
func Example() {
	suite, err := conformance.Load(retrykit.Vectors, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	rep := conformance.NewRunner(suite, conformance.WithRequirements("RET-06")).
		Run(context.Background(), conformance.Reference())
	fmt.Println("ok:", rep.OK(), "failures:", rep.Totals.Fail, "errors:", rep.Totals.Error)
	// Output: ok: true failures: 0 errors: 0
}

// A Go value implementing Implementation: here the reference with jitter
// whose own randomness is a constant, which the statistical check catches.
type constantJitter struct{}

func (constantJitter) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := conformance.Reference().Hello(ctx)
	h.Implementation = "constant-jitter"
	return h, err
}

func (constantJitter) Do(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if req.Op == protocol.OpDelay && req.Rand == nil {
		r := 0.5
		req.Rand = &r
	}
	return conformance.Reference().Do(ctx, req)
}

func ExampleImplementation() {
	suite, _ := conformance.Load(retrykit.Vectors, nil)
	rep := conformance.NewRunner(suite, conformance.WithIDs(conformance.JitterCheckID)).
		Run(context.Background(), constantJitter{})
	res := rep.Results[0]
	fmt.Println(res.ID, res.Requirement, res.Status)
	// Output: stat-jitter-uniform RET-05 fail
}

// Every report opens with the scores per level and the command of the
// spec-only run; failures would follow, grouped by cause. dur-0001 tests a
// MUST of the spec (RET-02), decide-0036 a SHOULD (prefix matching) and
// val-0003 a retrykit decision (RK-09).
func ExampleReport_Write() {
	suite, _ := conformance.Load(retrykit.Vectors, nil)
	rep := conformance.NewRunner(suite, conformance.WithIDs("dur-0001", "decide-0036", "val-0003")).
		Run(context.Background(), conformance.Reference())
	rep.Implementation.Version = "1.2.3"
	rep.Requirements = rep.Requirements[:0] // keep the example short
	_ = rep.Write(os.Stdout, "markdown")
	// Output:
	// ### retrykit 1.2.3 — OJS retry conformance suite 0.2.0 (spec 1.0.0-rc.1)
	//
	// | score | pass | fail | error | skip | not run |
	// |---|---:|---:|---:|---:|---:|
	// | spec requirements (MUST) | 1 | 0 | 0 | 0 | 0 |
	// | SHOULD-level and optional features | 1 | 0 | 0 | 0 | 0 |
	// | retrykit decisions (RK-nn) | 1 | 0 | 0 | 0 | 0 |
	//
	// Spec-only run (MUST level only): `retrykit conformance --spec-only`
	//
	// **pass 3  fail 0  error 0  skip 0  |  not run 0 (coverage 100.0% of selected)**
	//
	// | requirement | section | pass | fail | error | skip | not run |
	// |---|---|---:|---:|---:|---:|---:|
}
