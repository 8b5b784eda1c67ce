package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/retrykit/retrykit/conformance"
	"github.com/retrykit/retrykit/conformance/protocol"
)

// envSilentAdapter, set to N in the environment of this test binary, makes
// it (in TestMain) an adapter process that answers hello and its first N-1
// requests as the reference does, then reads every later request without
// answering: a hung adapter. Each process counts on its own, so a
// restarted one answers N-1 requests again. (The same adapter in Python
// is conformance/adapters/testdata/silent_adapter.py.)
const envSilentAdapter = "RETRYKIT_TEST_SILENT_ADAPTER"

// silentAdapter runs the adapter of envSilentAdapter on the standard streams.
func silentAdapter(n string) int {
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 {
		return 2
	}
	w := &silentAfter{w: os.Stdout, lines: k} // hello, then k-1 answers
	if err := protocol.Serve(context.Background(), conformance.Reference(), os.Stdin, w); err != nil {
		return 1
	}
	return 0
}

// silentAfter passes on the first lines lines written to it and drops the
// rest.
type silentAfter struct {
	w     *os.File
	lines int
}

func (s *silentAfter) Write(b []byte) (int, error) {
	n := len(b)
	keep := 0
	for keep < len(b) && s.lines > 0 {
		i := bytes.IndexByte(b[keep:], '\n')
		if i < 0 {
			keep = len(b)
			break
		}
		keep += i + 1
		s.lines--
	}
	if keep > 0 {
		if _, err := s.w.Write(b[:keep]); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// silentImpl returns the --impl command line of an adapter that stops
// answering at its 50th request.
func silentImpl(t *testing.T) string {
	t.Helper()
	t.Setenv(envSilentAdapter, "50")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return shellQuote(exe)
}

// TestConformanceSilentAdapterFails: an adapter that stops answering at
// its 50th request is named on standard error as it happens (the request
// it did not answer), the run is not a pass (exit status 1, errors in the
// report), and it is given up after its second timeout instead of being
// restarted, replayed and timed out again for every 49 requests (6 min 46 s
// and "863 pass, 1 error" before, nothing on standard error).
func TestConformanceSilentAdapterFails(t *testing.T) {
	impl := silentImpl(t)
	code, out, errOut := runCLI(t, "", "conformance", "--impl", impl, "--timeout", "2s", "--jitter-samples", "0", "--parallel", "1")
	if code != 1 {
		t.Errorf("exit status %d, want 1\n%s", code, out)
	}
	if !strings.Contains(errOut, "retrykit conformance: adapter timeout: no answer to request 50 of this adapter process") {
		t.Errorf("standard error does not name the request the adapter stopped answering:\n%s", errOut)
	}
	if !strings.Contains(errOut, "given up after 2 timeouts") {
		t.Errorf("standard error does not say the adapter was given up:\n%s", errOut)
	}
	if strings.Contains(out, "PASS") || !strings.Contains(out, "no answer to request 50 of this adapter process") {
		t.Errorf("report passes, or does not name the silence:\n%s", out)
	}
}

// TestFuzzSilentAdapterFails: fuzz against an adapter that stops answering
// at its 50th request names it on standard error and fails (exit status
// 1), within its --time, even with a per-request --timeout longer than the
// budget. (Before, with requests pipelined the silence was never blamed on
// a request: the adapter was restarted, the requests replayed, and the
// run could end "PASS" with exit status 0.)
func TestFuzzSilentAdapterFails(t *testing.T) {
	impl := silentImpl(t)
	code, out, errOut := runCLI(t, "", "fuzz", "--impl", impl, "--time", "6s", "--timeout", "1h", "--seed", "1", "--quiet")
	if code != 1 {
		t.Errorf("exit status %d, want 1\n%s", code, out)
	}
	if !strings.Contains(errOut, "retrykit fuzz: adapter timeout: no answer to request 50 of this adapter process") {
		t.Errorf("standard error does not name the request the adapter stopped answering:\n%s", errOut)
	}
	if strings.Contains(out, "PASS") || !strings.Contains(out, "ADAPTER FAILURE") {
		t.Errorf("report:\n%s", out)
	}
}
