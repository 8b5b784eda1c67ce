package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// A small profile file, worked out from asynq's formula
// n^4 + 15 + rand(30)*(n+1) s, n = attempt-1.
const asynqFile = `{"profile":"asynq","system":"s","version":"v","source":"u","formula":"f","draw":"d","exhaustion":"e","terminal":"t","max_attempts":26,"vectors":[
 {"id":"prof-asynq-0001","kind":"delay","attempt":1,"rand":0.0,"delay_ns":15000000000},
 {"id":"prof-asynq-0002","kind":"delay","attempt":2,"rands":[0.5],"delay_ns":46000000000},
 {"id":"prof-asynq-0003","kind":"bounds","attempt":3,"min_ns":31000000000,"max_ns":118000000000},
 {"id":"prof-asynq-0004","kind":"delay","attempt":1,"rands":[0.1,0.2],"delay_ns":1},
 {"id":"prof-asynq-0005","kind":"decision","attempt":26,"retry":false}]}`

// wrongByOne answers like the reference, plus one second on every delay.
type wrongByOne struct{ protocol.Implementation }

func (w wrongByOne) Do(ctx context.Context, r protocol.Request) (protocol.Response, error) {
	resp, err := w.Implementation.Do(ctx, r)
	if resp.DelayNS != nil {
		d := *resp.DelayNS + 1e9
		resp.DelayNS = &d
	}
	return resp, err
}

// noProfiles is the reference without profiles in its hello.
type noProfiles struct{ protocol.Implementation }

func (n noProfiles) Hello(ctx context.Context) (protocol.Hello, error) {
	h, err := n.Implementation.Hello(ctx)
	h.Profiles = nil
	return h, err
}

func TestProfileVectorsRunner(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "asynq.json"), []byte(asynqFile), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		impl protocol.Implementation
		code int
		want []string
	}{
		{"reference", conformance.Reference(), 0, []string{"asynq 3 0 2", "total: 3 passed, 0 failed, 2 not run"}},
		{"wrong", wrongByOne{conformance.Reference()}, 1, []string{"asynq 0 3 2", "prof-asynq-0001 (asynq, attempt 1): rand 0: delay_ns 16000000000 (16s), want 15000000000 (15s)",
			"prof-asynq-0003 (asynq, attempt 3): rand 0: delay_ns 32000000000 (32s), want 31000000000 (31s), bounds [31000000000, 118000000000]"}},
		{"unlisted", noProfiles{conformance.Reference()}, 0, []string{"asynq 0 0 5 not listed in hello"}},
	} {
		var out, errb bytes.Buffer
		code := runProfileVectors(context.Background(), tc.impl, dir, "text", &out, &errb)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out.String(), errb.String())
		}
		// Compare with runs of spaces collapsed, so the table's widths do not
		// matter.
		got := strings.Join(strings.Fields(out.String()), " ")
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
	}
	// Through the CLI, with the embedded suite and the built-in adapter.
	code, out, errOut := runCLI(t, "", "conformance", "--profiles-dir", dir)
	if code != 0 || !strings.Contains(out, "total: 3 passed") {
		t.Errorf("conformance --profiles-dir: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", "conformance", "--profiles-dir", filepath.Join(dir, "none")); code != 2 || !strings.Contains(errOut, "--profiles-dir") {
		t.Errorf("missing dir: exit %d, %q", code, errOut)
	}
}

// TestProfileMarkdownShowsTagsAsText: an adapter's name with a tag comes
// out of the profile report's Markdown as text (entities), not as an
// element; a "|" stays in its cell.
func TestProfileMarkdownShowsTagsAsText(t *testing.T) {
	got := mdEscape(`<img src=x onerror=alert(1)> a|b & c`)
	if want := `&lt;img src=x onerror=alert(1)&gt; a\|b &amp; c`; got != want {
		t.Errorf("mdEscape = %q, want %q", got, want)
	}
}
