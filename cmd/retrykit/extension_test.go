package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantedImpl returns the command line of the Python example adapter with
// the given bugs planted (conformance/adapters/testdata/planted_adapter.py).
func plantedImpl(t *testing.T, bugs string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return py + " " + filepath.Join(repoRoot(t), "conformance", "adapters", "testdata", "planted_adapter.py") + " " + bugs
}

// An implementation that rejects retrykit's backoff_strategy extension
// field and also lacks the cap after jitter: the report names two causes,
// each a bug model, one of them telling the flag to unclaim, with the
// command that does it. Following the report (the cap fixed, the flag
// given), the next run is clean. Before, the 130 rejections stood apart
// as "rejects-valid … not reproduced by any bug model" with nothing
// pointing at the flag.
func TestMissingExtensionNamesTheFlag(t *testing.T) {
	impl := plantedImpl(t, "no-backoff-strategy+no-post-jitter-cap")
	code, out, errOut := runCLI(t, "", "conformance", "--impl", impl, "--jitter-samples", "200", "--timeout", "1m")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	head, _, _ := strings.Cut(out, "\nFAIL  ")
	for _, want := range []string{
		", 2 causes",
		"bug:backoff-strategy-unsupported: reproduces",
		"bug:no-post-jitter-cap: reproduces",
		"without it: retrykit conformance --impl '" + impl + "' --jitter-samples 200 --timeout 1m --unclaimed extension:backoff_strategy",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("report lacks %q:\n%s", want, head)
		}
	}
	for _, bad := range []string{"not reproduced by any bug model", "rejects-valid"} {
		if strings.Contains(head, bad) {
			t.Errorf("report has %q:\n%s", bad, head)
		}
	}
	if n := strings.Count(head, " passes, contradicts none\n"); n != 2 {
		t.Errorf("%d causes say the passes their model was replayed on, want 2:\n%s", n, head)
	}
	// The next run, as the report says: the cap fixed, the flag given.
	code, out, errOut = runCLI(t, "", "conformance", "--impl", plantedImpl(t, "no-backoff-strategy"), "--jitter-samples", "200", "--timeout", "1m",
		"--unclaimed", "extension:backoff_strategy")
	if code != 0 || !strings.HasPrefix(out, "PASS  MUST 415/415") {
		first, _, _ := strings.Cut(out, "\n")
		t.Errorf("after following the report: exit %d, %s\n%s", code, first, errOut)
	}
}

// fuzz --unclaimed works as conformance's: requests carrying the flag are
// not sent, so the real bug behind them shows; the report names its cause
// (the bug model and its fix), not only the vector flags; a flag no fuzz
// request carries is refused, naming the flag.
func TestFuzzUnclaimedAndCause(t *testing.T) {
	impl := plantedImpl(t, "no-backoff-strategy+no-post-jitter-cap")
	args := []string{"fuzz", "--impl", impl, "--ops", "validate,delay", "--cases", "600", "--seed", "7", "--timeout", "1m", "--quiet"}

	// Without the flag, the extension's rejections come first, and the
	// report says which flag would leave them out.
	code, out, errOut := runCLI(t, "", args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"cause:    bug:backoff-strategy-unsupported", "without it: retrykit fuzz", "--unclaimed extension:backoff_strategy"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runCLI(t, "", append(args, "--unclaimed", "extension:backoff_strategy")...)
	if code != 1 {
		t.Fatalf("with --unclaimed: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"not sent (unclaimed flags)",
		"cause:    bug:no-post-jitter-cap (RET-06, section 5.3)",
		"fix:      cap the delay at max_interval again after multiplying by the jitter",
		"flags:    class:post-jitter-cap",
		"--unclaimed extension:backoff_strategy\n", // the repeat command keeps the flag
	} {
		if !strings.Contains(out, want) {
			t.Errorf("with --unclaimed: report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "backoff-strategy-unsupported") {
		t.Errorf("with --unclaimed: the extension is still reported:\n%s", out)
	}

	code, _, errOut = runCLI(t, "", "fuzz", "--impl", impl, "--unclaimed", "extension:backof_strategy")
	if code != 2 || !strings.Contains(errOut, `--unclaimed: no fuzz request carries the flag "extension:backof_strategy"`) {
		t.Errorf("misspelt flag: exit %d, stderr %q", code, errOut)
	}
}
