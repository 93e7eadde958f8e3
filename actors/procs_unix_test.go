//go:build unix

package actors

import (
	"syscall"
	"testing"
)

// freeze stops a process (SIGSTOP) so it answers nothing.
func freeze(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

// thaw lets a frozen process run again.
func thaw(pid int) error { return syscall.Kill(pid, syscall.SIGCONT) }
