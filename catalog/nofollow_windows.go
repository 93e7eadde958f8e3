//go:build windows

package catalog

// oNoFollow is zero on Windows, which has no O_NOFOLLOW: the lock file is
// checked with Lstat before it is opened instead (updateCache).
const oNoFollow = 0

func isSymlinkRefusal(error) bool { return false }
