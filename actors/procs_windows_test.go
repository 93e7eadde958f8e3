//go:build windows

package actors

import "testing"

// freeze skips the test: Windows cannot stop a process as SIGSTOP does.
func freeze(t *testing.T, _ int) {
	t.Helper()
	t.Skip("a process cannot be frozen on Windows")
}

// thaw has nothing to do on Windows.
func thaw(int) error { return nil }
