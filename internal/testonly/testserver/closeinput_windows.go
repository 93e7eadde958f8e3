//go:build windows

package testserver

import "errors"

// stdinCloser is not offered on Windows: the test server's
// --close-input-on needs a pipe whose read end can be closed under a
// blocked reader, which the tests do only on Unix.
func stdinCloser() (*inputCloser, error) {
	return nil, errors.New("testserver: --close-input-on over stdio needs Unix")
}
