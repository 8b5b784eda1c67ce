package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// serveOne sends one request line to the reference through Serve and
// returns the answer line.
func serveOne(t *testing.T, line string) string {
	t.Helper()
	var out bytes.Buffer
	if err := protocol.Serve(context.Background(), conformance.Reference(), strings.NewReader(line+"\n"), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// Strict request reading on the adapter side.
func TestServeStrictRequests(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       []string // substrings of the answer
	}{
		// The id is recovered strictly: out of range, repeated or beside a type
		// error, the answer carries id 0.
		{"id 0", `{"id":0,"op":"parse_duration","value":"PT1S"}`, []string{`{"id":0,"error"`, "id: must be in 1..2^53-1, got 0"}},
		{"negative id", `{"id":-4,"op":"parse_duration","value":"PT1S"}`, []string{`{"id":0,"error"`, "got -4"}},
		{"id 2^53", `{"id":9007199254740992,"op":"parse_duration","value":"PT1S"}`, []string{`{"id":0,"error"`}},
		{"largest id", `{"id":9007199254740991,"op":"parse_duration","value":"PT1S"}`, []string{`{"id":9007199254740991,"ns":1000000000}`}},
		{"id twice", `{"id":7,"id":8,"op":"parse_duration","value":"PT1S"}`, []string{`{"id":0,"error"`, `field \"id\": given more than once`}},
		{"id twice, another case", `{"id":7,"ID":8,"op":"parse_duration","value":"PT1S"}`, []string{`{"id":0,"error"`, "given more than once"}},
		{"op twice", `{"id":7,"op":"hello","op":"parse_duration","value":"PT1S"}`, []string{`{"id":0,"error"`, `field \"op\": given more than once`}},
		{"bad id with a type error", `{"id":-1,"op":"delay","attempt":"x"}`, []string{`{"id":0,"error"`}},
		{"good id with a type error", `{"id":5,"op":"delay","attempt":"x"}`, []string{`{"id":5,"error"`}},
		// Match took invalid UTF-8 as U+FFFD and matched.
		{"match invalid UTF-8", "{\"id\":1,\"op\":\"match\",\"patterns\":[\"a\xff\"],\"error_type\":\"a\xef\xbf\xbd\"}", []string{"validation.pattern_invalid", "patterns[0]: must be valid UTF-8"}},
		{"match lone surrogate", `{"id":1,"op":"match","patterns":["a\ud800"],"error_type":"a"}`, []string{"validation.pattern_invalid"}},
		{"match surrogate pair", `{"id":1,"op":"match","patterns":["a\ud83d\ude00\n\u00e9.*"],"error_type":"a` + "\U0001F600\\n\u00e9" + `.x"}`, []string{`"match":true`}},
		{"match escapes", `{"id":1,"op":"match","patterns":["a\"\\\/b"],"error_type":"a\"\\/b"}`, []string{`"match":true`}},
		{"match error_type bytes kept", "{\"id\":1,\"op\":\"match\",\"patterns\":[\"a\xef\xbf\xbd\"],\"error_type\":\"a\xff\"}", []string{`"match":false`}},
		{"match pattern not a string", `{"id":1,"op":"match","patterns":[5],"error_type":"a"}`, []string{"validation.invalid_request", "patterns[0]: got a JSON value, want a string"}},
		// The scenario op took what the schema forbids.
		{"scenario rand 1", `{"id":1,"op":"scenario","config":{"rand":1.0},"steps":[{"at_ms":0,"op":"tick"}]}`, []string{"validation.invalid_request", "config.rand: must be in [0, 1), got 1.0"}},
		{"scenario negative history", `{"id":1,"op":"scenario","config":{"error_history":-1},"steps":[{"at_ms":0,"op":"tick"}]}`, []string{"config.error_history: must be at least 10, got -1"}},
		{"scenario negative timeout", `{"id":1,"op":"scenario","config":{"visibility_timeout_ms":-5},"steps":[{"at_ms":0,"op":"tick"}]}`, []string{"config.visibility_timeout_ms: must be at least 1"}},
		{"scenario negative retention", `{"id":1,"op":"scenario","config":{"finished_retention":{"max_count":-1}},"steps":[{"at_ms":0,"op":"tick"}]}`, []string{"config.finished_retention.max_count: must be at least 1"}},
		{"scenario negative job timeout", `{"id":1,"op":"scenario","steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","visibility_timeout_ms":-1}}]}`, []string{"steps[0].job.visibility_timeout_ms: must be at least 1"}},
		{"scenario delivery 0", `{"id":1,"op":"scenario","steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t"}},{"at_ms":0,"op":"fetch","queues":["default"]},{"at_ms":0,"op":"ack","id":"a","delivery":0}]}`, []string{"steps[2].delivery: must be at least 1, got 0"}},
		{"scenario in range", `{"id":1,"op":"scenario","config":{"rand":0.999,"error_history":10,"visibility_timeout_ms":1,"retention":{"max_age_ms":1,"max_count":1}},"steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t"}},{"at_ms":0,"op":"fetch","queues":["default"]},{"at_ms":0,"op":"ack","id":"a","delivery":1}]}`, []string{`"steps":[`, `"state":"completed"`}},
	} {
		got := serveOne(t, tc.line)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: answer %s lacks %q", tc.name, got, w)
			}
		}
	}
}

// BenchmarkDecodeRequest reads a typical decide request line, duplicate
// field check and string decoding included.
func BenchmarkDecodeRequest(b *testing.B) {
	line := []byte(`{"id":6,"op":"decide","policy":{"max_attempts":3,"non_retryable_errors":["auth.*"]},"attempt":1,"error":{"type":"io.timeout","code":"RETRY"},"rand":0.5}`)
	b.ReportAllocs()
	for b.Loop() {
		var r protocol.Request
		if err := r.UnmarshalJSON(line); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDuplicateKey: a request line with a top-level field given twice is
// always rejected, whatever the other fields; one with distinct fields is
// read as before.
func FuzzDuplicateKey(f *testing.F) {
	f.Add("id", "op", `{"a":[1,{"id":2}],"b":"x\"}"}`)
	f.Add("ID", "Id", `"\u0069d"`)
	f.Fuzz(func(t *testing.T, k1, k2, v string) {
		var probe any
		if json.Unmarshal([]byte(v), &probe) != nil {
			return
		}
		q1, _ := json.Marshal(k1)
		q2, _ := json.Marshal(k2)
		line := `{"id":1,` + string(q1) + `:` + v + `,` + string(q2) + `:` + v + `,"op":"hello"}`
		var r protocol.Request
		err := r.UnmarshalJSON([]byte(line))
		var keys map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &keys) != nil {
			return
		}
		// Distinct under encoding/json's case folding: a strict decoder
		// accepts (unless a value has the wrong type for a known field).
		same := strings.EqualFold(k1, k2) || strings.EqualFold(k1, "id") || strings.EqualFold(k2, "id") ||
			strings.EqualFold(k1, "op") || strings.EqualFold(k2, "op")
		if same && err == nil {
			t.Fatalf("%s: accepted a field given twice", line)
		}
	})
}
