//go:build windows

package testserver

import "os"

// probePid tells whether a process exists.
func probePid(pid int) error {
	_, err := os.FindProcess(pid)
	return err
}

// killPid kills one process.
func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
