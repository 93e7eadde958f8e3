//go:build unix

package catalog

import (
	"errors"
	"syscall"
)

// oNoFollow makes opening the cache lock file fail on a symbolic link
// instead of following it (a link planted there could point anywhere).
const oNoFollow = syscall.O_NOFOLLOW

// isSymlinkRefusal tells the error O_NOFOLLOW gives on a symbolic link.
func isSymlinkRefusal(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}
