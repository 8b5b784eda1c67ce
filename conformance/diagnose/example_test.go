package diagnose_test

import (
	"encoding/json"
	"fmt"

	"github.com/retrykit/retrykit/conformance/diagnose"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// An implementation answered 15s where the reference answers 10s (the
// jittered delay was not capped again): the model "no-post-jitter-cap"
// gives the same answer, so it explains the failure; it is replayed on
// the one passing answer, on a policy without jitter, and passes it too.
func Example() {
	r := 0.999755859375
	failed := protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(`{"initial_interval":"PT10S","max_interval":"PT10S"}`), Attempt: 1, Rand: &r}
	passed := protocol.Request{Op: protocol.OpDelay, Policy: json.RawMessage(`{"jitter":false}`), Attempt: 2}
	got, want := int64(14997558593), int64(2_000_000_000)
	same := func(a, b protocol.Response) bool {
		return a.DelayNS != nil && b.DelayNS != nil && *a.DelayNS == *b.DelayNS
	}
	cases := []diagnose.Case{
		{ID: "v1", Request: failed, Answer: protocol.Response{DelayNS: &got}, Failed: true,
			Same: func(a protocol.Response) bool { return same(a, protocol.Response{DelayNS: &got}) }},
		{ID: "v2", Request: passed, Answer: protocol.Response{DelayNS: &want},
			Judge: func(a protocol.Response) bool { return same(a, protocol.Response{DelayNS: &want}) }},
	}
	findings, unexplained := diagnose.Diagnose(cases)
	for _, f := range findings {
		fmt.Printf("%s: explains %d, passes replayed %d\n", f.Model.Name, len(f.Explains), f.Replayed)
	}
	fmt.Println("unexplained:", len(unexplained))
	// Output:
	// no-post-jitter-cap: explains 1, passes replayed 1
	// unexplained: 0
}
