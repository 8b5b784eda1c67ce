package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Hostile adapters through the command. Bounds are counted
// (processes left), not timed.

// liveGroupMembers returns the processes of group pgid, zombies included
// (kill(-pgid, 0) would still find those), from /proc.
func liveGroupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) {
			out = append(out, s[:i+1])
		}
	}
	return out
}

func needShell(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs sh and /proc")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
}

func TestConformanceEndsTheAdapterGroup(t *testing.T) {
	// --impl "sh -c 'sleep 1000 & exec retrykit adapter'" kept
	// the command alive after its report until the sleep ended. The
	// adapter's whole group is ended before the report is written.
	needShell(t)
	bin := retrykitBinary(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	impl := `sh -c 'echo $$ > ` + pidFile + `; sleep 1000 & exec ` + bin + ` adapter'`
	code, out, errOut := runCLI(t, "", "conformance", "--impl", impl, "--run", "delay-0001")
	if code != 0 || !strings.Contains(out, "PASS") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if left := liveGroupMembers(t, pgid); len(left) != 0 {
		t.Fatalf("processes of the adapter's group alive after the command returned: %q", left)
	}
}

func TestConformanceHostileHandshakes(t *testing.T) {
	needShell(t)
	dir := t.TempDir()
	hello := func(name, answer string) string {
		script := filepath.Join(dir, name)
		body := "#!/bin/sh\nread line\necho '" + answer + "'\ncat >/dev/null\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return "sh " + script
	}
	for _, tc := range []struct{ name, impl, want string }{
		{"hello answered with an error", hello("err.sh", `{"id":1,"error":{"type":"validation.invalid_request","message":"no hello"}}`),
			"the adapter answered hello with an error instead of describing itself: validation.invalid_request: no hello"},
		{"resolution too coarse", hello("coarse.sh", `{"id":1,"protocol":1,"implementation":"c","version":"0","ops":["delay"],"resolution_ns":9223372036854775807,"jitter":"injectable"}`),
			"resolution_ns 9223372036854775807 is coarser than the suite can judge: at most 1000000000 (1 s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "conformance", "--impl", tc.impl)
			if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "protocol 0") {
				t.Fatalf("exit %d, stdout %d bytes, stderr:\n%s", code, len(out), errOut)
			}
		})
	}
}

func TestAdapterRequestLinesInPlainWords(t *testing.T) {
	// An array request line dumped Go struct internals.
	in := "[1,2]\n" + `{"id":2,"op":"delay","attempt":"3"}` + "\n" + `{"id":3,"op":"hello"` + "\n"
	code, out, errOut := runCLI(t, in, "adapter")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wants := []string{
		`{"id":0,"error":{"type":"validation.invalid_request","message":"protocol: request: want a JSON object, got a JSON array"}}`,
		`{"id":2,"error":{"type":"validation.invalid_request","message":"protocol: request: field attempt: got a JSON string, want an integer in the 64-bit range"}}`,
		`"message":"protocol: request: not valid JSON at byte`,
	}
	if len(lines) != len(wants) {
		t.Fatalf("%d answers for %d lines:\n%s", len(lines), len(wants), out)
	}
	for i, w := range wants {
		if !strings.Contains(lines[i], w) || strings.Contains(lines[i], "struct") || strings.Contains(lines[i], "Go ") {
			t.Errorf("answer %d: %s\nwant %s", i, lines[i], w)
		}
	}
}
