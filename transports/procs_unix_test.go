//go:build unix

package transports

import "syscall"

// killGroup kills a process group.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// killPid kills one process.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
