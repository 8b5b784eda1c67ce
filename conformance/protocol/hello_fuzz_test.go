package protocol

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeHello feeds arbitrary bytes to the runner's parser of the
// answer to hello, the first thing an adapter says. It must never panic;
// every error it or [Hello.Check] returns matches [ErrHello]; an accepted
// hello survives a write/read cycle.
func FuzzDecodeHello(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"protocol":1,"implementation":"my-queue","version":"2.4.0","ops":["parse_duration","validate","delay","match","decide"],"resolution_ns":1,"jitter":"injectable"}`,
		`{"id":1,"protocol":1,"implementation":"x","version":"1","ops":["delay"],"resolution_ns":1000000,"jitter":"opaque","unclaimed_flags":["extension:backoff_strategy"],"profiles":["river"]}`,
		`{"id":1,"protocol":2,"implementation":"x","resolution_ns":0}`,
		`{"id":1,"protocol":1,"implementation":"x","resolution_ns":1000000001,"jitter":"opaque"}`,
		`{"id":1,"error":{"type":"x","message":"no"}}`,
		`{"id":1,"unsupported":true}`,
		`{"id":1,"protocol":1e0}`,
		`[]`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := decodeHello(raw)
		if err != nil {
			if !errors.Is(err, ErrHello) {
				t.Fatalf("decodeHello(%q): error %v does not match ErrHello", raw, err)
			}
			return
		}
		if err := h.Check(); err != nil && !errors.Is(err, ErrHello) {
			t.Fatalf("hello %q: Check error %v does not match ErrHello", raw, err)
		}
		out, err := json.Marshal(h)
		if err != nil {
			t.Fatalf("hello %q: %v", raw, err)
		}
		back, err := decodeHello(out)
		if err != nil {
			t.Fatalf("hello %q re-encoded as %s does not decode: %v", raw, out, err)
		}
		if d := cmp.Diff(h, back, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("hello %q does not round-trip (-before +after):\n%s", raw, d)
		}
	})
}
