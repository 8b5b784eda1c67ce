package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// FuzzServe feeds arbitrary bytes to Serve (the adapter side of the
// protocol) with the reference behind it. Every non-empty input line must get
// exactly one answer line, a JSON object carrying an id, and Serve must not
// fail on input it merely cannot read.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"op":"hello"}` + "\n" + `{"id":2,"op":"parse_duration","value":"PT1.5S"}` + "\n",
		`{"id":3,"op":"validate","policy":{"max_attempts":5}}` + "\n" + `{"id":4,"op":"validate"}` + "\n",
		`{"id":5,"op":"delay","policy":{"initial_interval":"PT10S"},"attempt":3,"rand":0.25}` + "\n",
		`{"id":6,"op":"match","patterns":["auth.*"],"error_type":"auth.x"}` + "\n",
		`{"id":7,"op":"decide","policy":{"max_attempts":3},"attempt":1,"error":{"type":"io.timeout","code":"RETRY"},"rand":0.5}` + "\n",
		`{"id":8,"op":"decide","policy":null,"attempt":9223372036854775807,"error":{"code":null}}` + "\r\n",
		`{"id":9,"op":"scenario"}` + "\n" + `not json` + "\n\n" + `{"op":"hello"}`,
		`{"id":10,"op":"validate","policy":{"a":1,"a":2}}`,
		`{"id":14,"ID":15,"op":"hello"}` + "\n" + `{"id":0,"op":"hello"}` + "\n" + `{"id":-3,"op":"delay","attempt":"x"}`,
		"{\"id\":16,\"op\":\"match\",\"patterns\":[\"a\xff\",\"b\\ud800\",\"\\ud83d\\ude00\"],\"error_type\":\"a\\u00e9\\\"\"}",
		`{"id":17,"op":"scenario","config":{"rand":1,"error_history":-1},"steps":[{"at_ms":0,"op":"ack","id":"a","delivery":0}]}`,
		`{"id":12,"op":"delay","profile":"decorrelated_jitter","attempt":9223372036854775807,"rand":0.3}` + "\n" + `{"id":13,"op":"delay","profile":"x","policy":{}}`,
		`{"id":11,"op":"scenario","config":{"rand":0.25,"error_history":9000000000000000000,"visibility_timeout_ms":5,"retention":{"max_age_ms":10,"max_count":1}},` +
			`"steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","retry":{"max_attempts":2,"on_exhaustion":"dead_letter"}}},` +
			`{"at_ms":0,"op":"fetch","queues":["default"]},{"at_ms":5,"op":"fail","id":"a","error":{"type":"x","message":"m","code":"RETRY"}},` +
			`{"at_ms":9223372036854,"op":"retry","id":"a","retry":{"max_attempts":1}},{"at_ms":9223372036855,"op":"tick"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if err := protocol.Serve(context.Background(), conformance.Reference(), bytes.NewReader(data), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		want := 0
		for _, seg := range bytes.Split(data, []byte{'\n'}) {
			if len(seg) > 0 {
				want++
			}
		}
		lines := bytes.Split(out.Bytes(), []byte{'\n'})
		if len(lines) == 0 || len(lines[len(lines)-1]) != 0 {
			t.Fatalf("output does not end with a newline: %q", out.Bytes())
		}
		lines = lines[:len(lines)-1]
		if len(lines) != want {
			t.Fatalf("%d answer lines for %d request lines:\n%s", len(lines), want, out.Bytes())
		}
		for _, l := range lines {
			var a struct {
				ID *int64 `json:"id"`
			}
			if err := json.Unmarshal(l, &a); err != nil || a.ID == nil {
				t.Fatalf("answer %q is not a JSON object with an id (%v)", l, err)
			}
		}
	})
}
