//go:build ignore

// Conformance adapter (conformance/PROTOCOL.md, protocol 1) for the retry
// policy of the official OJS Go SDK (github.com/openjobspec/ojs-go-sdk,
// retry.go), for the scoreboard; built with protocol.go beside it against a
// copy of the SDK (docs/scoreboard/BUILD.md).
//
// The SDK computes nothing of a retry: its RetryPolicy is a Go value the
// client sends with a job (toWire, in milliseconds) for the server to
// apply. It parses no duration, reads no JSON policy, validates nothing,
// computes no delay and matches no error type. The one question of the
// protocol it answers is the default policy, which it states in
// DefaultRetryPolicy:
//
//	validate  without a policy: DefaultRetryPolicy(), its durations written
//	          in ISO 8601 seconds (unit conversion) and a nil
//	          NonRetryableErrors as []; RetryPolicy has no on_exhaustion,
//	          so the answer has none. With a policy (even null):
//	          unsupported, since the SDK has no reader for one.
//
// The other ops are unsupported. retrykit's backoff_strategy extension is
// declared unclaimed.
package main

import (
	"strconv"
	"strings"
	"time"

	ojs "github.com/openjobspec/ojs-go-sdk"
)

func main() { serve(answerFor) }

// iso writes d as an ISO 8601 duration in seconds ("PT1S", "PT300S",
// "PT0.5S").
func iso(d time.Duration) string {
	s := strconv.FormatInt(int64(d/time.Second), 10)
	if frac := int64(d % time.Second); frac != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(1e9+frac, 10)[1:], "0")
	}
	return "PT" + s + "S"
}

func answerFor(op string, r request) answer {
	switch op {
	case "hello":
		return answer{"protocol": 1, "implementation": "ojs-go-sdk", "version": "7528da5",
			"ops": []string{"validate"}, "resolution_ns": 1,
			"jitter": "opaque", // no delay op: the SDK draws nothing
			// retrykit's backoff_strategy extension is not the SDK's
			"unclaimed_flags": []string{"extension:backoff_strategy"}}
	case "validate":
		if r.has("policy") {
			return answer{"unsupported": true}
		}
		p := ojs.DefaultRetryPolicy()
		eff := map[string]any{
			"max_attempts": p.MaxAttempts, "initial_interval": iso(p.InitialInterval),
			"backoff_coefficient": p.BackoffCoefficient, "max_interval": iso(p.MaxInterval),
			"non_retryable_errors": p.NonRetryableErrors,
		}
		if p.NonRetryableErrors == nil {
			eff["non_retryable_errors"] = []string{}
		}
		if p.Jitter != nil {
			eff["jitter"] = *p.Jitter
		}
		return answer{"effective": eff}
	}
	return answer{"unsupported": true}
}
