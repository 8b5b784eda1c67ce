package main

import (
	"errors"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesAnAddressSpaceTooSmall: under an address-space limit
// (ulimit -v) that cannot hold what --max-bytes lets the server use, serve
// refuses to start, naming RLIMIT_AS and what would fit, instead of dying
// later with every job. A cgo build at the default flags needs more than
// 2 GiB (its C library reserves about 0.5 GiB on top of the Go runtime's
// 1.2 GiB), so it is refused under 2 GiB too.
func TestServeRefusesAnAddressSpaceTooSmall(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS as Linux sets it")
	}
	bin := retrykitBinary(t)
	run := func(limitKiB, flags string) (int, string) {
		cmd := exec.Command("bash", "-c", "ulimit -v "+limitKiB+" && exec \"$0\" serve --addr 127.0.0.1:0 "+flags, bin)
		var out strings.Builder
		cmd.Stderr = &out
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode(), out.String()
			}
			return 0, out.String()
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			<-done
			return -1, out.String() // still serving
		}
	}
	code, stderr := run("2097152", "--max-bytes 4294967296")
	if code != 2 || !strings.Contains(stderr, "RLIMIT_AS") || !strings.Contains(stderr, "--max-bytes 4294967296") {
		t.Fatalf("4 GiB of job data under a 2 GiB address space: exit %d, %q", code, stderr)
	}
	// What is reserved at start grows with the machine's cores (the C
	// library's arenas), so under 2 GiB a smaller --max-bytes may fit or
	// nothing may; the message says which, and a value it names must start.
	if m := regexp.MustCompile(`--max-bytes (\d+) fits`).FindStringSubmatch(stderr); m != nil {
		if code, stderr := run("2097152", "--max-bytes "+m[1]); code != -1 {
			t.Fatalf("the --max-bytes %s named as fitting under 2 GiB: exit %d, %q", m[1], code, stderr)
		}
	} else if !strings.Contains(stderr, "no --max-bytes fits under this limit") {
		t.Fatalf("under 2 GiB the message names neither a --max-bytes that fits nor that none does: %q", stderr)
	}
	cgo, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(cgo)) == "1" {
		if code, stderr := run("2097152", ""); code != 2 || !strings.Contains(stderr, "CGO_ENABLED=0") {
			t.Fatalf("a cgo build at the defaults under 2 GiB: exit %d, %q", code, stderr)
		}
	}
	if code, stderr := run("4194304", ""); code != -1 {
		t.Fatalf("the defaults under 4 GiB: exit %d, %q", code, stderr)
	}
}
