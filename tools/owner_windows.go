//go:build windows

package tools

import "os"

// ownedByOther is false on Windows: a directory under the user's profile
// is the user's, and its ACL is not read here.
func ownedByOther(os.FileInfo) bool { return false }
