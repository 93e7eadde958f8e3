//go:build unix

package testserver

import "syscall"

// probePid tells whether a process exists (signal 0).
func probePid(pid int) error { return syscall.Kill(pid, 0) }

// killPid kills one process.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
