//go:build windows

package transports

// tryWrite makes no attempt on Windows, whose anonymous pipes cannot be
// written without blocking: the caller writes the whole frame on a
// goroutine that may wait.
func tryWrite(rawFile, []byte) (int, error) { return 0, nil }
