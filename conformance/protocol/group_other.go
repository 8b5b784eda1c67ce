//go:build !unix

package protocol

import (
	"os/exec"
	"time"
)

// ownGroup does nothing where process groups are not available.
func ownGroup(*exec.Cmd) {}

// killGroup kills the adapter process itself where process groups are not
// available; processes it started are not reached.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// waitGroupGone does nothing where process groups are not available.
func waitGroupGone(*exec.Cmd, time.Duration) {}
