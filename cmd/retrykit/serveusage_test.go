package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestServeUsageListsEveryFlag: the usage line of `serve --help` names
// every flag the help lists below it, and the --max-bytes help names
// everything that counts against it.
func TestServeUsageListsEveryFlag(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "serve", "--help")
	help := stdout + stderr
	if code != 0 {
		t.Fatalf("serve --help: exit %d\n%s", code, help)
	}
	usage, rest, ok := strings.Cut(help, "\n\n")
	if !ok || !strings.HasPrefix(usage, "usage: retrykit serve ") {
		t.Fatalf("no usage paragraph:\n%s", help)
	}
	_, flags, ok := strings.Cut(rest, "flags:\n")
	if !ok {
		t.Fatalf("no flags section:\n%s", help)
	}
	names := regexp.MustCompile(`(?m)^  --([a-z-]+)`).FindAllStringSubmatch(flags, -1)
	if len(names) < 12 {
		t.Fatalf("found %d flags in the help, want at least 12:\n%s", len(names), flags)
	}
	for _, m := range names {
		if !strings.Contains(usage, "[--"+m[1]+"]") && !strings.Contains(usage, "[--"+m[1]+" ") {
			t.Errorf("usage line lacks --%s:\n%s", m[1], usage)
		}
	}
	if strings.Contains(usage, "--plant") {
		t.Errorf("usage line shows the hidden --plant:\n%s", usage)
	}
	for _, line := range strings.Split(usage, "\n") {
		if len(line) > 80 {
			t.Errorf("usage line over 80 columns: %q", line)
		}
	}
	_, mb, _ := strings.Cut(flags, "--max-bytes")
	mb, _, _ = strings.Cut(mb, "\n  --")
	mb = strings.Join(strings.Fields(mb), " ")
	for _, part := range []string{"args", "meta", "extension fields", "tags", "unique key", "retry policy", "ACK result", "FAIL error history", "overhead per job", "429 queue_full"} {
		if !strings.Contains(mb, part) {
			t.Errorf("--max-bytes help does not name %q: %s", part, mb)
		}
	}
}
