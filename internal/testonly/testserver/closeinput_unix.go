//go:build unix

package testserver

import (
	"os"
	"syscall"
)

// stdinCloser returns stdin as a pollable file whose Close really closes the
// pipe's read end (the reading goroutine is woken, and fd 0 is pointed at
// /dev/null so no other descriptor holds the pipe).
func stdinCloser() (*inputCloser, error) {
	fd, err := syscall.Dup(0)
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	if err := syscall.Dup2(int(null.Fd()), 0); err != nil {
		return nil, err
	}
	_ = null.Close()
	f := os.NewFile(uintptr(fd), "stdin")
	return &inputCloser{r: f, close: func() { _ = f.Close() }, stop: make(chan struct{})}, nil
}
