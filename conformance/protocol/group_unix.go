//go:build unix

package protocol

import (
	"os/exec"
	"syscall"
	"time"
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

// waitGroupGone waits, up to max, until no process of the adapter's group
// exists any more, zombies included (SIGKILL is delivered asynchronously,
// and init reaps the orphans), so that a caller of Close finds the group
// gone, by kill(-pgid, 0) as well as in /proc.
func waitGroupGone(cmd *exec.Cmd, max time.Duration) {
	if cmd.Process == nil || cmd.Process.Pid <= 0 {
		return
	}
	deadline := time.Now().Add(max)
	for syscall.Kill(-cmd.Process.Pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
