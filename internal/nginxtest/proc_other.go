//go:build !linux

package nginxtest

import (
	"os/exec"
	"syscall"
)

// sysProcAttr asks for nothing: process groups and a signal on the test's
// death are Linux's here, where CI runs.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

// groupMembers knows no processes without Linux's /proc.
func groupMembers(pgid int) []int { return nil }
