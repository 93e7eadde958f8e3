//go:build unix

package tools

import (
	"os"
	"syscall"
)

// ownedByOther tells whether another user owns the file.
func ownedByOther(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) != os.Getuid()
}
