package main

import (
	"path/filepath"
	"testing"
)

// --root takes a path (made absolute) or a file:// URI, which is sent as
// given, never joined onto the working directory.
func TestRootFlag(t *testing.T) {
	abs, _ := filepath.Abs("sub")
	for _, tc := range []struct{ in, uri, name string }{
		{"file:///work/project", "file:///work/project", "project"},
		{"file://localhost/work/a%20b", "file:///work/a%20b", "a b"},
		{"/work/project", "file:///work/project", "project"},
		{"sub", "file://" + filepath.ToSlash(abs), "sub"},
	} {
		r, err := rootOf(tc.in)
		if err != nil || r.URI != tc.uri || r.Name != tc.name {
			t.Errorf("--root %s: %+v %v, want %s (%s)", tc.in, r, err, tc.uri, tc.name)
		}
	}
	for _, bad := range []string{"file:relative/x", "file://otherhost/x", "file:"} {
		if _, err := rootOf(bad); err == nil {
			t.Errorf("--root %s was accepted", bad)
		}
	}
}
