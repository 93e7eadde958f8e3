//go:build windows

package testenv

import (
	"os"
	"os/exec"

	"golang.org/x/sys/windows"
)

// ownGroup starts cmd in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &windows.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills p (Windows: the process; its own children are the test's
// to end).
func killGroup(p *os.Process) { _ = p.Kill() }
