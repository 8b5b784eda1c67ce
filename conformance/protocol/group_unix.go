//go:build unix

package protocol

import (
	"os/exec"
	"syscall"
)

// ownGroup makes the adapter the leader of a new process group, so that
// everything it starts can be ended with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup ends every process of the adapter's group (its own pid) with
// SIGKILL. A group that is already gone is not an error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
