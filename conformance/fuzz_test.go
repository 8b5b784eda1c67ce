package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/retrykit/retrykit"
)

// The fuzz targets cover the three parsers of this package: vector files
// (Load), protocol requests (Serve, the adapter side) and protocol answers
// (decodeAnswer, the runner side). Seed corpora live in
// testdata/fuzz/FuzzXxx; run one with
//
//	go test -run '^$' -fuzz '^FuzzLoad$' -fuzztime 30s ./conformance/

// FuzzLoad feeds arbitrary bytes to Load as a vector file. Load must either
// reject the file with errors matching ErrInvalidVector, or return vectors
// whose protocol requests are well-formed lines that decode back to the same
// request, and which the comparison code can judge without panicking.
func FuzzLoad(f *testing.F) {
	// A few vectors of each real file: whole files are too large for the
	// fuzzer to mutate usefully.
	names, _ := fs.Glob(retrykit.Vectors, "*.json")
	for _, name := range names {
		data, err := fs.ReadFile(retrykit.Vectors, name)
		if err != nil {
			f.Fatal(err)
		}
		var file map[string]json.RawMessage
		var vs []json.RawMessage
		if json.Unmarshal(data, &file) != nil || json.Unmarshal(file["vectors"], &vs) != nil {
			continue // the schema file
		}
		file["vectors"], _ = json.Marshal(vs[:min(3, len(vs))])
		small, err := json.Marshal(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(small)
	}
	f.Add([]byte(`{"schema_version":1,"suite_version":"0","spec_version":"0","kind":"delay","notes":{},"vectors":[{"id":"a","requirement":"RET-04","section":"3","description":"d","flags":[],"input":{"policy":{"jitter":true},"attempt":2},"expected":{"min_ns":1,"max_ns":3}}]}`))
	f.Add([]byte(`{"schema_version":1,"suite_version":"0","spec_version":"0","kind":"validate","notes":{},"vectors":[{"id":"a","requirement":"RK-08","section":"14","description":"d","flags":[],"input":{"policy_raw":"{\"a\":1,\"a\":2}"},"expected":{"error":"validation.retry_policy_invalid"}}]}`))
	f.Add([]byte(`{"schema_version":1,"suite_version":"0","spec_version":"0","kind":"decide","notes":{"implementation-defined":"x"},"vectors":[{"id":"a","requirement":"RET-08","section":"7.2","description":"d","flags":["implementation-defined"],"input":{"attempt":1,"error":{"type":"x","code":"RETRY"},"rand":0.5},"expected":{"acceptable":[{"action":"discard"},{"action":"retry","delay_ns":5}]}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"vectors":[null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Load(fstest.MapFS{"fuzz.json": {Data: data}})
		if err != nil {
			if !errors.Is(err, ErrInvalidVector) {
				t.Fatalf("Load error %v does not match ErrInvalidVector", err)
			}
			return
		}
		cmp := comparison{hello: Hello{ResolutionNS: 1, Jitter: JitterInjectable}}
		for _, v := range s.Vectors {
			req := v.Request()
			req.ID = 1
			line := req.AppendJSON(nil)
			if !json.Valid(line) || bytes.ContainsAny(line, "\r\n") {
				t.Fatalf("vector %s: request line %q is not one JSON line", v.ID, line)
			}
			var back Request
			if err := back.UnmarshalJSON(line); err != nil {
				t.Fatalf("vector %s: request line %s does not decode: %v", v.ID, line, err)
			}
			if again := back.AppendJSON(nil); !bytes.Equal(again, line) {
				t.Fatalf("vector %s: request does not round-trip:\n%s\n%s", v.ID, line, again)
			}
			// Judging any answer must not panic, whatever the vector holds.
			_ = cmp.compare(v, referenceDo(req))
			_ = cmp.compare(v, Response{})
			_ = opaqueBounds(v)
		}
	})
}

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
		`{"id":11,"op":"scenario","config":{"rand":0.25,"error_history":9000000000000000000,"visibility_timeout_ms":5,"retention":{"max_age_ms":10,"max_count":1}},` +
			`"steps":[{"at_ms":0,"op":"enqueue","job":{"id":"a","type":"t","retry":{"max_attempts":2,"on_exhaustion":"dead_letter"}}},` +
			`{"at_ms":0,"op":"fetch","queues":["default"]},{"at_ms":5,"op":"fail","id":"a","error":{"type":"x","message":"m","code":"RETRY"}},` +
			`{"at_ms":9223372036854,"op":"retry","id":"a","retry":{"max_attempts":1}},{"at_ms":9223372036855,"op":"tick"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if err := Serve(context.Background(), Reference(), bytes.NewReader(data), &out); err != nil {
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
			_ = resp.shape(op)
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
