package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The protocol parsers are fuzzed here and in serve_fuzz_test.go: answers
// (decodeAnswer, the runner side) and requests (Serve, the adapter side).
// Seed corpora live in testdata/fuzz/FuzzXxx; run one with
//
//	go test -run '^$' -fuzz '^FuzzDecodeAnswer$' -fuzztime 30s ./conformance/protocol/

// FuzzDecodeAnswer feeds arbitrary bytes to the runner's answer parser. A
// line it accepts must survive a write/read cycle unchanged (what the
// reports show as "got" is what the adapter said), and checking its shape
// against any op must not panic.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"protocol":1,"implementation":"x","version":"1","ops":["delay"],"resolution_ns":1,"jitter":"opaque"}`,
		`{"id":2,"ns":1500000000}`,
		`{"id":3,"effective":{"max_attempts":5,"initial_interval":"PT1S","backoff_coefficient":2,"max_interval":"PT5M","jitter":true,"non_retryable_errors":[],"on_exhaustion":"discard","backoff_strategy":"exponential"}}`,
		`{"id":4,"delay_ns":15000000000}`,
		`{"id":5,"match":true}`,
		`{"id":6,"action":"retry","delay_ns":1000000000}`,
		`{"id":7,"unsupported":true}`,
		`{"id":8,"error":{"type":"validation.retry_policy_invalid","message":"max_attempts: must be ≥ 0"}}`,
		`{"id":9,"error":null,"effective":null}`,
		`{"id":1e3}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		resp, err := decodeAnswer(line)
		if err != nil {
			return
		}
		for _, op := range []string{OpParseDuration, OpValidate, OpDelay, OpMatch, OpDecide, OpScenario, ""} {
			_ = resp.Check(op)
		}
		out := resp.AppendJSON(nil)
		if !json.Valid(out) || bytes.ContainsAny(out, "\r\n") {
			t.Fatalf("answer %q re-encodes as %q, not one JSON line", line, out)
		}
		back, err := decodeAnswer(out)
		if err != nil {
			t.Fatalf("re-encoded answer %q does not decode: %v", out, err)
		}
		if again := back.AppendJSON(nil); !bytes.Equal(again, out) {
			t.Fatalf("answer does not round-trip:\n%s\n%s", out, again)
		}
	})
}
