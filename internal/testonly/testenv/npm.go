package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// EverythingVersion is the pinned version of server-everything.
const EverythingVersion = "2026.8.31"

// RepoRoot returns the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Node returns the path of node, failing the test when it is missing: the
// real-peer tests are part of the suite and never skipped.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; the real-peer tests need Node.js 20 or newer (.ci/run installs it)")
	}
	return p
}

// EverythingJS returns the entry script of server-everything, installing
// the pinned version with npm on first use.
func EverythingJS(t testing.TB) string {
	t.Helper()
	Node(t)
	dir := filepath.Join(RepoRoot(), ".cache", "npm")
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err == nil {
		return script
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		t.Fatal(err)
	}
	defer unlockFile(lock)
	if _, err := os.Stat(script); err == nil {
		return script // another test binary installed it while we waited
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"mcprt-test-peers","private":true}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "@modelcontextprotocol/server-everything@"+EverythingVersion)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install server-everything@%s: %v\n%s", EverythingVersion, err, out)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("npm installed server-everything but %s is missing", script)
	}
	return script
}
