package main

import (
	"runtime/debug"
	"strings"

	mcprt "github.com/mcprt/mcprt"
)

// versionString is what `runtime --version` prints: the module version the
// binary was built from (v1.2.3 for `go install ...@v1.2.3`, "(devel)" for
// a build in a checkout), the commit and whether the checkout had
// uncommitted changes (from the build info's vcs settings), the Go version,
// and the protocol implementation's version (mcprt.Version).
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build info) mcprt " + mcprt.Version
	}
	return describeBuild(info)
}

// describeBuild renders build info as one line.
func describeBuild(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	parts := []string{version}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "-dirty"
		}
		c := "commit " + rev
		if at != "" {
			c += " (" + at + ")"
		}
		parts = append(parts, c)
	}
	parts = append(parts, info.GoVersion, "mcprt "+mcprt.Version)
	return strings.Join(parts, ", ")
}
