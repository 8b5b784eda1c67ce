package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/retrykit/retrykit"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// FuzzLoad covers the parser of this package, vector files (Load); the
// protocol parsers are fuzzed in package protocol. Seed corpora live in
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
		s, err := Load(fstest.MapFS{"fuzz.json": {Data: data}}, nil)
		if err != nil {
			if !errors.Is(err, ErrInvalidVector) {
				t.Fatalf("Load error %v does not match ErrInvalidVector", err)
			}
			return
		}
		cmp := comparison{hello: protocol.Hello{ResolutionNS: 1, Jitter: protocol.JitterInjectable}}
		for _, v := range s.Vectors {
			req := v.request()
			req.ID = 1
			line := req.AppendJSON(nil)
			if !json.Valid(line) || bytes.ContainsAny(line, "\r\n") {
				t.Fatalf("vector %s: request line %q is not one JSON line", v.ID, line)
			}
			var back protocol.Request
			if err := back.UnmarshalJSON(line); err != nil {
				t.Fatalf("vector %s: request line %s does not decode: %v", v.ID, line, err)
			}
			if again := back.AppendJSON(nil); !bytes.Equal(again, line) {
				t.Fatalf("vector %s: request does not round-trip:\n%s\n%s", v.ID, line, again)
			}
			// Judging any answer must not panic, whatever the vector holds.
			_ = cmp.compare(v, referenceDo(req))
			_ = cmp.compare(v, protocol.Response{})
			_ = opaqueBounds(v)
		}
	})
}
