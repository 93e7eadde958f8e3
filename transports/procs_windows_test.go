//go:build windows

package transports

import "os"

// killGroup kills a process (Windows has no process groups to signal).
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// killPid kills one process.
func killPid(pid int) { _ = killGroup(pid) }
