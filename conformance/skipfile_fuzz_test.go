package conformance_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
)

// FuzzParseSkipList feeds arbitrary text to the skip-file parser (a file a
// user writes by hand and passes with --skip). It must never panic; a
// rejected file gets a package-prefixed error; an accepted one has only
// non-empty ids free of blanks, and written back one "id  # reason" line per
// entry it parses to the same list.
func FuzzParseSkipList(f *testing.F) {
	f.Add([]byte("# comment\n\nval-0001  # RET-10: reason here\ndelay-0002\tbecause\n  dur-0003\n"))
	f.Add([]byte("a\na\n"))
	f.Add([]byte("a ##b\r\nc\t\t# d # e\n#\n \t \n"))
	f.Add([]byte("x\r y\n"))
	f.Add(bytes.Repeat([]byte("z"), 70_000))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := conformance.ParseSkipList(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "conformance: skip file") {
				t.Fatalf("error %q is not prefixed \"conformance: skip file\"", err)
			}
			return
		}
		var out bytes.Buffer
		for id, reason := range s {
			if id == "" || strings.ContainsAny(id, " \t\n") || strings.HasPrefix(id, "#") {
				t.Fatalf("input %q: bad id %q", data, id)
			}
			if strings.Contains(reason, "\n") || reason != strings.TrimSpace(reason) {
				t.Fatalf("input %q: id %q: reason %q not one trimmed line", data, id, reason)
			}
			out.WriteString(id + "  # " + reason + "\n")
		}
		back, err := conformance.ParseSkipList(&out)
		if err != nil {
			t.Fatalf("input %q: written back as %q: %v", data, out.String(), err)
		}
		if len(back) != len(s) {
			t.Fatalf("input %q: %d entries, %d after a round trip", data, len(s), len(back))
		}
		for id, reason := range s {
			if got, ok := back[id]; !ok || got != reason {
				t.Fatalf("input %q: id %q: reason %q, %q (present %v) after a round trip", data, id, reason, got, ok)
			}
		}
	})
}
