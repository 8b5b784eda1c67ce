package protocol_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// Serve answers request lines for an implementation, here retrykit's own.
func ExampleServe() {
	in := strings.NewReader(`{"id":1,"op":"parse_duration","value":"PT1.5S"}
{"id":2,"op":"match","patterns":["auth.*"],"error_type":"auth.expired"}
{"id":3,"op":"delay","policy":{"initial_interval":"PT10S"},"attempt":3,"rand":0.5}
{"id":4,"op":"validate","policy":{"max_attempts":-1}}
`)
	if err := protocol.Serve(context.Background(), conformance.Reference(), in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"id":1,"ns":1500000000}
	// {"id":2,"match":true}
	// {"id":3,"delay_ns":40000000000}
	// {"id":4,"error":{"type":"validation.retry_policy_invalid","message":"policy: max_attempts: must be a non-negative integer, got -1"}}
}
