package fuzz_test

import (
	"context"
	"fmt"

	"github.com/retrykit/retrykit/cmd/retrykit/internal/fuzz"
	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// Run against the reference itself finds nothing; against a planted bug
// (error types compared on their first four segments) it finds and shrinks
// the minimal case.
func ExampleRun() {
	ctx := context.Background()
	res, _ := fuzz.Run(ctx, conformance.Reference(), fuzz.Config{Cases: 500, Seed: 1, Ops: []string{protocol.OpMatch, protocol.OpDelay}})
	for _, o := range res.Ops {
		fmt.Println(o.Op, o.Cases, o.Disagreement == nil)
	}
	res, _ = fuzz.Run(ctx, planted{"four-segments", fourSegments}, fuzz.Config{Cases: 500, Seed: 1, Ops: []string{protocol.OpMatch}})
	d := res.Ops[0].Disagreement
	fmt.Printf("%q vs %q: %s\n", d.Request.Patterns, d.Request.ErrorType, d.Reason)
	// Output:
	// match 250 true
	// delay 250 true
	// ["a.a.a.a"] vs "a.a.a.a.a": match: got true, want false
}
