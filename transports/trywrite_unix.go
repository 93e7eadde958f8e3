//go:build unix

package transports

import (
	"errors"
	"syscall"
)

// tryWrite makes one non-blocking write attempt and returns how much of b
// was written (possibly none, when the pipe or socket is full).
func tryWrite(f rawFile, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true // one attempt only: never wait here
	}); err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	if errors.Is(werr, syscall.EAGAIN) || errors.Is(werr, syscall.EINTR) {
		werr = nil
	}
	return n, werr
}
